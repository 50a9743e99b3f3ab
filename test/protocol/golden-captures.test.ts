// Golden request frames captured from real Kafka clients (kcat/librdkafka, confluent-kafka,
// kafka-python, KafkaJS, ...) by `npm run capture:fixtures` and committed under
// test/fixtures/captures/<client>-<version>/. For every frame: the generated codec decodes it without
// error, consumes every byte, and re-encodes header + body at the same versions to exactly the captured
// bytes. The Produce frames' record batches decode to exactly the records the manifest says the client
// was asked to send. These tests read committed bytes only: no client needs to be installed.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { decodeRequest, requestHeaderVersion } from "../../src/protocol/framing.js";
import { ApiKey } from "../../src/protocol/generated/api-table.js";
import type { ProduceRequest } from "../../src/protocol/generated/messages/ProduceRequest.js";
import {
  readRequestHeader,
  writeRequestHeader,
} from "../../src/protocol/generated/messages/RequestHeader.js";
import { Reader } from "../../src/protocol/primitives/reader.js";
import { Writer } from "../../src/protocol/primitives/writer.js";
import { type DecodedRecordBatch, decodeRecordBatches } from "../../src/protocol/records/index.js";

const CAPTURES = fileURLToPath(new URL("../../../test/fixtures/captures/", import.meta.url));

type Codec = "none" | "gzip" | "snappy" | "lz4" | "zstd";
const CODEC_ID: Record<Codec, number> = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 };

interface RecordSpec {
  key: string | null;
  value: string | null;
  headers: Array<{ key: string; value: string | null }>;
}

interface Manifest {
  client: string;
  version: string;
  capturedAt: string;
  commands: string[];
  consumed: boolean;
  frames: Array<{ file: string; apiKey: number; apiName: string; apiVersion: number }>;
  produce: Array<{
    topic: string;
    compression: Codec;
    records: RecordSpec[];
    idempotent?: boolean;
    transactionalId?: string;
  }>;
  serverProblems: string[];
}

interface Capture {
  dir: string;
  path: string;
  manifest: Manifest;
}

function loadCaptures(): Capture[] {
  if (!existsSync(CAPTURES)) return [];
  return readdirSync(CAPTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(CAPTURES, d.name, "manifest.json")))
    .map((d) => ({
      dir: d.name,
      path: join(CAPTURES, d.name),
      manifest: JSON.parse(readFileSync(join(CAPTURES, d.name, "manifest.json"), "utf8")) as Manifest,
    }))
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

const captures = loadCaptures();

function hexAround(buf: Buffer, at: number): string {
  const from = Math.max(0, at - 8);
  return `${buf.subarray(from, at).toString("hex")}[${buf.subarray(at, at + 8).toString("hex")}]`;
}

/** Asserts two buffers are equal, naming the first differing byte when they are not. */
function assertSameBytes(actual: Buffer, expected: Buffer, what: string): void {
  if (actual.equals(expected)) return;
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  assert.fail(
    `${what}: re-encoded ${actual.length} bytes vs captured ${expected.length}; first difference at byte ${i}: ` +
      `re-encoded ${hexAround(actual, i)} captured ${hexAround(expected, i)}`,
  );
}

for (const c of captures) {
  test(`golden captures ${c.dir}: every frame decodes, consumes all bytes and re-encodes byte-identical`, async (t) => {
    const listed = new Set(c.manifest.frames.map((f) => f.file));
    const onDisk = readdirSync(c.path).filter((f) => f.endsWith(".bin"));
    assert.deepEqual(
      onDisk.filter((f) => !listed.has(f)),
      [],
      "every .bin file is listed in the manifest",
    );
    assert.ok(c.manifest.frames.length > 0, "the capture has frames");
    for (const f of c.manifest.frames) {
      await t.test(f.file, () => {
        const frame = readFileSync(join(c.path, f.file));
        const res = decodeRequest(frame);
        if (!res.ok) {
          const detail = res.kind === "malformed" ? res.message : res.kind;
          assert.fail(`${f.apiName} v${f.apiVersion} did not decode: ${detail}`);
        }
        const { api, header, headerVersion, body } = res.request;
        assert.equal(api.apiKey, f.apiKey);
        assert.equal(api.name, f.apiName);
        assert.equal(header.requestApiVersion, f.apiVersion);
        assert.equal(headerVersion, requestHeaderVersion(api, f.apiVersion));

        // Consumes every byte: decode again by hand and look at what is left.
        const r = new Reader(frame);
        readRequestHeader(r, headerVersion);
        api.readRequest(r, f.apiVersion);
        assert.equal(
          r.remaining,
          0,
          `${r.remaining} bytes left after the ${f.apiName} v${f.apiVersion} body`,
        );

        // Re-encodes byte-identical.
        const w = new Writer(frame.length + 64);
        writeRequestHeader(w, header, headerVersion);
        api.writeRequest(w, body, f.apiVersion);
        assertSameBytes(w.toBuffer(), frame, `${f.apiName} v${f.apiVersion}`);
      });
    }
  });
}

test("golden captures cover kcat, confluent-kafka, kafka-python and KafkaJS with the core APIs", () => {
  const byClient = new Map(captures.map((c) => [c.manifest.client, c]));
  for (const client of ["kcat", "confluent-kafka", "kafka-python", "kafkajs"]) {
    const c = byClient.get(client);
    assert.ok(c, `no capture for ${client} under test/fixtures/captures`);
    const m = c.manifest;
    assert.match(m.version, /\d+\.\d+/, `${client} manifest names an exact version`);
    assert.ok(m.commands.length > 0, `${client} manifest names the commands used`);
    assert.ok(!Number.isNaN(Date.parse(m.capturedAt)), `${client} manifest has a capture date`);
    assert.deepEqual(m.serverProblems, [], `${client}: the capture server met no problem`);
    const apis = new Set(m.frames.map((f) => f.apiName));
    const required = ["ApiVersions", "Metadata", "Produce", ...(m.consumed ? ["Fetch"] : [])];
    for (const name of required) assert.ok(apis.has(name), `${client} capture has a ${name} request`);
  }
});

// ---- record batches in Produce requests ---------------------------------------------------------

const text = (b: Buffer | null): string | null => (b === null ? null : b.toString("utf8"));

function produceFrames(c: Capture): ProduceRequest[] {
  const out: ProduceRequest[] = [];
  for (const f of c.manifest.frames) {
    if (f.apiKey !== ApiKey.Produce) continue;
    const res = decodeRequest(readFileSync(join(c.path, f.file)));
    assert.ok(res.ok, `${c.dir}/${f.file} decodes`);
    out.push(res.request.body as ProduceRequest);
  }
  return out;
}

/** Which clients' produce scenarios must be present, and with which codecs. */
const REQUIRED_SCENARIOS: Record<string, Codec[]> = {
  kcat: ["none", "gzip", "snappy", "lz4", "zstd"],
  "confluent-kafka": ["none", "gzip", "snappy", "lz4", "zstd"],
  kafkajs: ["none", "gzip"],
  "kafka-python": ["none", "gzip"],
};

for (const c of captures.filter((x) => x.manifest.produce.length > 0)) {
  test(`golden captures ${c.dir}: Produce record batches decode to exactly the records sent`, async (t) => {
    const requests = produceFrames(c);
    const required = REQUIRED_SCENARIOS[c.manifest.client] ?? [];
    for (const codec of required) {
      assert.ok(
        c.manifest.produce.some((s) => s.compression === codec),
        `${c.manifest.client} has a ${codec} produce scenario`,
      );
    }
    for (const s of c.manifest.produce) {
      await t.test(`${s.topic} (${s.compression})`, () => {
        const batches: DecodedRecordBatch[] = [];
        for (const req of requests) {
          for (const td of req.topicData) {
            if (td.name !== s.topic) continue;
            for (const pd of td.partitionData) {
              if (pd.records !== null && pd.records.length > 0)
                batches.push(...decodeRecordBatches(pd.records));
            }
          }
        }
        assert.ok(batches.length > 0, `a Produce request carries records for ${s.topic}`);
        for (const b of batches) {
          // librdkafka sends a batch uncompressed when compressing does not make it smaller (a single
          // short record), so a batch is either in the scenario's codec or uncompressed.
          const codec = b.header.attributes & 0x07;
          assert.ok(
            codec === CODEC_ID[s.compression] || codec === 0,
            `batch compression ${codec} is ${s.compression} or none`,
          );
          if (s.transactionalId) assert.ok((b.header.attributes & 0x10) !== 0, "batch is transactional");
          if (s.idempotent || s.transactionalId)
            assert.ok(b.header.producerId >= 0n, "batch has a producer id");
        }
        assert.ok(
          batches.some((b) => (b.header.attributes & 0x07) === CODEC_ID[s.compression]),
          `at least one batch for ${s.topic} is ${s.compression}`,
        );
        const got: RecordSpec[] = batches
          .flatMap((b) => b.records)
          .map((r) => ({
            key: text(r.key),
            value: text(r.value),
            headers: r.headers.map((h) => ({ key: h.key, value: text(h.value) })),
          }));
        assert.deepEqual(got, s.records);
      });
    }
  });
}
