// Malformed input never escapes as an exception and never allocates from a size field: every
// truncation and random corruption of real client requests, and hand-made hostile lengths, varints,
// API keys and versions, give a typed failure from decodeRequest.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { decodeRequest } from "../../src/protocol/framing.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ProtocolDecodeError } from "../../src/protocol/primitives/errors.js";
import { Reader } from "../../src/protocol/primitives/reader.js";
import { Random } from "../support/random.js";

const CAPTURES = join(process.cwd(), "test/fixtures/captures");

function captures(): Array<{ name: string; frame: Buffer }> {
  const out: Array<{ name: string; frame: Buffer }> = [];
  for (const dir of readdirSync(CAPTURES)) {
    for (const f of readdirSync(join(CAPTURES, dir))) {
      if (f.endsWith(".bin")) out.push({ name: `${dir}/${f}`, frame: readFileSync(join(CAPTURES, dir, f)) });
    }
  }
  return out;
}

function header(apiKey: number, version: number, clientId = "t"): Buffer {
  const b = Buffer.alloc(10 + clientId.length);
  b.writeInt16BE(apiKey, 0);
  b.writeInt16BE(version, 2);
  b.writeInt32BE(77, 4);
  b.writeInt16BE(clientId.length, 8);
  b.write(clientId, 10);
  return b;
}

test("every truncation of every captured client request is a typed 'malformed' failure", () => {
  const all = captures();
  assert.ok(all.length > 50, "fixtures are present");
  let cases = 0;
  for (const { name, frame } of all) {
    assert.equal(decodeRequest(frame).ok, true, `${name} decodes whole`);
    const step = Math.max(1, Math.floor(frame.length / 200));
    for (let cut = 8; cut < frame.length; cut += step) {
      const res = decodeRequest(frame.subarray(0, cut));
      assert.equal(res.ok, false, `${name} cut at ${cut} must not decode`);
      if (!res.ok) assert.equal(res.kind, "malformed", `${name} cut at ${cut}`);
      cases++;
    }
  }
  assert.ok(cases > 1000);
});

test("random corruption of captured requests never throws", () => {
  const rnd = new Random(7);
  for (const { frame } of captures()) {
    for (let i = 0; i < 40; i++) {
      const bad = Buffer.from(frame);
      const flips = rnd.int(1, 4);
      for (let k = 0; k < flips; k++) bad[rnd.int(4, bad.length - 1)] = rnd.int(0, 255);
      assert.doesNotThrow(() => decodeRequest(bad));
    }
  }
});

test("huge or negative array, string and bytes lengths are rejected before allocating", () => {
  // Metadata v1: topics array length int32.
  const hugeArray = Buffer.concat([header(3, 1), Buffer.from([0x7f, 0xff, 0xff, 0xff])]);
  const res = decodeRequest(hugeArray);
  assert.equal(res.ok, false);
  assert.match(
    !res.ok && res.kind === "malformed" ? res.message : "",
    /array of 2147483647 elements but only 0 bytes remain/,
  );

  const negArray = Buffer.concat([header(3, 1), Buffer.from([0xff, 0xff, 0xff, 0xfe])]);
  assert.match(JSON.stringify(decodeRequest(negArray)), /negative array length -2/);

  // Metadata v1 with one topic whose name claims 32767 bytes.
  const hugeString = Buffer.concat([header(3, 1), Buffer.from([0, 0, 0, 1, 0x7f, 0xff, 0x41])]);
  assert.match(
    JSON.stringify(decodeRequest(hugeString)),
    /string length 32767 exceeds the 1 bytes remaining/,
  );

  // Produce v3: records bytes length 2^31-1 with 2 bytes present.
  const produce = Buffer.concat([
    header(0, 3),
    Buffer.from([0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30, 0, 0, 0, 1, 0, 1, 0x74, 0, 0, 0, 1, 0, 0, 0, 0]),
    Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2]),
  ]);
  assert.match(
    JSON.stringify(decodeRequest(produce)),
    /bytes length 2147483647 exceeds the 2 bytes remaining/,
  );
});

test("bad varints and compact lengths are typed errors", () => {
  const r = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
  assert.throws(() => r.uvarint(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from([0x80, 0x80])).uvarint(), /truncated varint/);
  assert.throws(() => new Reader(Buffer.alloc(11, 0xff)).varlong(), /varlong longer than 10 bytes/);
  // Flexible Metadata v12 with a compact topics array claiming 2^28 elements.
  const flex = Buffer.concat([
    Buffer.from([0, 3, 0, 12, 0, 0, 0, 1, 0, 1, 0x74, 0]),
    Buffer.from([0x80, 0x80, 0x80, 0x80, 0x01]),
  ]);
  assert.match(JSON.stringify(decodeRequest(flex)), /array of 268435455 elements but only 0 bytes remain/);
});

test("unknown API keys and unsupported versions are reported with the correlation id", () => {
  const unknown = decodeRequest(header(9999, 0));
  assert.deepStrictEqual(unknown, {
    ok: false,
    kind: "unknown-api",
    apiKey: 9999,
    apiVersion: 0,
    correlationId: 77,
  });
  const negative = decodeRequest(header(-5, 0));
  assert.equal(!negative.ok && negative.kind, "unknown-api");
  const tooNew = decodeRequest(header(Apis.Produce.apiKey, Apis.Produce.maxVersion + 1));
  assert.equal(!tooNew.ok && tooNew.kind, "unsupported-version");
  assert.equal(!tooNew.ok && tooNew.correlationId, 77);
  const short = decodeRequest(Buffer.from([0, 1, 0]));
  assert.equal(!short.ok && short.kind, "malformed");
});
