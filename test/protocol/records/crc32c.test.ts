// CRC32C: every implementation the machine can run (the addon's AVX-512 VPCLMULQDQ and SSE4.2 paths
// forced one by one against @node-rs/crc32, and the @node-rs/crc32 fallback against a bytewise JS
// reference), the iSCSI test vectors, every length 0..4096 at every alignment 0..63, random lengths up to
// 4 MiB, `init` chaining and Uint8Array views; that the addon is built and chosen on x86-64 with SSE4.2; and that the module falls
// back quietly to @node-rs/crc32 where the addon's build output is missing.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { crc32c as nodeRsCrc32c } from "@node-rs/crc32";
import fc from "fast-check";
import {
  availableCrc32cImplementations,
  CRC32C_IMPLEMENTATION,
  type Crc32c,
  crc32c,
  crc32cWith,
} from "../../../src/protocol/records/crc32c.js";

const implementations = availableCrc32cImplementations();
const random = randomBytes(8 << 20);

/** Bytewise table CRC32C straight from the reflected polynomial: the oracle for @node-rs/crc32 itself. */
const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  return c >>> 0;
});
function referenceCrc32c(data: Uint8Array, init = 0): number {
  let c = ~init >>> 0;
  for (let i = 0; i < data.length; i++) c = TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

function cpuFlags(): Set<string> {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("flags"));
    return new Set(line?.split(":")[1]?.trim().split(/\s+/) ?? []);
  } catch {
    return new Set();
  }
}

test("the addon is built and chosen on x86-64 with SSE4.2 (AVX-512 VPCLMULQDQ when the CPU has it)", (t) => {
  const flags = cpuFlags();
  if (process.arch !== "x64" || !flags.has("sse4_2")) {
    t.skip(`not an x86-64 CPU with sse4_2 (${process.arch}): the fallback is expected`);
    return;
  }
  assert.notEqual(
    CRC32C_IMPLEMENTATION,
    "@node-rs/crc32",
    "native/crc32c was not built: run `node native/build.js` and see native/crc32c/build.log",
  );
  const avx512 = flags.has("avx512f") && flags.has("vpclmulqdq") && flags.has("pclmulqdq");
  assert.equal(CRC32C_IMPLEMENTATION, avx512 ? "avx512-vpclmulqdq" : "sse4.2");
  assert.deepEqual(implementations, [...(avx512 ? ["avx512-vpclmulqdq"] : []), "sse4.2", "@node-rs/crc32"]);
  assert.equal(crc32c, crc32cWith(CRC32C_IMPLEMENTATION));
});

test("iSCSI (RFC 3720 B.4) test vectors and Kafka's check value, every implementation", () => {
  const ascending = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  const vectors: Array<[Buffer, number]> = [
    [Buffer.alloc(0), 0],
    [Buffer.from("123456789"), 0xe3069283],
    [Buffer.alloc(32, 0x00), 0x8a9136aa],
    [Buffer.alloc(32, 0xff), 0x62a8ab43],
    [ascending, 0x46dd794e],
    [Buffer.from(ascending).reverse(), 0x113fdb5c],
  ];
  for (const name of implementations) {
    const crc = crc32cWith(name);
    for (const [data, expected] of vectors)
      assert.equal(crc(data), expected, `${name} of ${data.toString("hex")}`);
  }
  for (const [data, expected] of vectors) assert.equal(referenceCrc32c(data), expected);
});

for (const name of implementations) {
  const crc: Crc32c = crc32cWith(name);
  // The addon's paths are checked against @node-rs/crc32, the fallback against the (slower) JS reference.
  const fallback = name === "@node-rs/crc32";
  const oracle: Crc32c = fallback ? referenceCrc32c : nodeRsCrc32c;
  const versus = fallback ? "the JS reference" : "@node-rs/crc32";
  const offsets = fallback ? 8 : 64;

  test(`${name}: every length 0..4096 at every alignment 0..${offsets - 1} equals ${versus}`, () => {
    for (let offset = 0; offset < offsets; offset++) {
      for (let length = 0; length <= 4096; length++) {
        const data = random.subarray(offset, offset + length);
        const expected = oracle(data);
        if (crc(data) !== expected) assert.fail(`${name}: offset ${offset} length ${length}`);
      }
    }
  });

  test(`${name}: lengths around the block sizes of the SIMD paths, with init`, () => {
    // 3 × 256 and 3 × 8192 (SSE4.2 streams), 2 × 512 and multiples of 512 (AVX-512 blocks)
    const edges = [768, 1024, 1536, 24_576, 49_152, 73_728, 65_536, 1 << 20];
    for (const edge of edges) {
      for (let length = edge - 17; length <= edge + 17; length++) {
        const data = random.subarray(5, 5 + length);
        assert.equal(crc(data, 0xdeadbeef), oracle(data, 0xdeadbeef), `${name}: length ${length}`);
      }
    }
  });

  test(`${name}: random lengths up to 4 MiB, offsets and inits equal ${versus}`, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 << 20 }),
        fc.integer({ min: 0, max: 4095 }),
        fc.nat({ max: 0xffffffff }),
        (length, offset, init) => {
          const data = random.subarray(offset, offset + length);
          assert.equal(crc(data, init), oracle(data, init));
        },
      ),
      { numRuns: fallback ? 15 : 60 },
    );
  });

  test(`${name}: init chaining, crc32c(b, crc32c(a)) === crc32c(a ‖ b)`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 300_000 }), (a, b) => {
        const whole = random.subarray(3, 3 + a + b);
        const chained = crc(whole.subarray(a), crc(whole.subarray(0, a)));
        assert.equal(chained, oracle(whole));
        assert.equal(crc(whole), crc(whole, 0));
      }),
      { numRuns: fallback ? 20 : 100 },
    );
    // inits with the top bit set, as every other CRC has it, and given as a negative int32
    const data = random.subarray(0, 5000);
    assert.equal(crc(data, 0xfffffffe), oracle(data, 0xfffffffe));
    assert.equal(crc(data, -2), oracle(data, 0xfffffffe));
    assert.equal(crc(Buffer.alloc(0), 0xfffffffe), 0xfffffffe);
  });

  test(`${name}: Uint8Array views with a byteOffset read exactly their own bytes`, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 70_000 }),
        (offset, length) => {
          const backing = new Uint8Array(random.buffer, random.byteOffset, offset + length + 64);
          const view = new Uint8Array(backing.buffer, backing.byteOffset + offset, length);
          const copy = Buffer.from(view); // its own memory, offset 0
          assert.equal(crc(view), oracle(copy));
          const onNewBuffer = new Uint8Array(new ArrayBuffer(offset + length), offset, length);
          onNewBuffer.set(view);
          assert.equal(crc(onNewBuffer), oracle(copy));
        },
      ),
      { numRuns: 300 },
    );
  });
}

test("the addon rejects what is not bytes instead of reading garbage", (t) => {
  if (CRC32C_IMPLEMENTATION === "@node-rs/crc32") {
    t.skip("addon not in use");
    return;
  }
  const bad: unknown[] = [
    undefined,
    42,
    "abc",
    [1, 2, 3],
    new Uint32Array(4),
    new DataView(new ArrayBuffer(4)),
  ];
  for (const value of bad) assert.throws(() => crc32c(value as Uint8Array), TypeError);
  assert.throws(() => crc32c(Buffer.alloc(1), "1" as unknown as number), TypeError);
});

test("without the addon's build output the module falls back to @node-rs/crc32, quietly", async () => {
  // The compiled module alone in a tree with no native/ next to it (node_modules linked for the fallback).
  const here = dirname(fileURLToPath(import.meta.url));
  const compiled = join(here, "../../../src/protocol/records/crc32c.js");
  const root = mkdtempSync(join(tmpdir(), "crc32c-fallback-"));
  try {
    const target = join(root, "out/src/protocol/records/crc32c.js");
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(compiled, target);
    mkdirSync(join(root, "out/src/common"), { recursive: true });
    copyFileSync(
      join(here, "../../../src/common/native-addon.js"),
      join(root, "out/src/common/native-addon.js"),
    );
    symlinkSync(join(process.cwd(), "node_modules"), join(root, "node_modules"), "dir");
    const isolated = (await import(
      pathToFileURL(target).href
    )) as typeof import("../../../src/protocol/records/crc32c.js");
    assert.equal(isolated.CRC32C_IMPLEMENTATION, "@node-rs/crc32");
    assert.deepEqual(isolated.availableCrc32cImplementations(), ["@node-rs/crc32"]);
    assert.throws(() => isolated.crc32cWith("sse4.2"), /not available/);
    assert.equal(isolated.crc32c(Buffer.from("123456789")), 0xe3069283);
    const data = random.subarray(7, 7 + 100_000);
    assert.equal(isolated.crc32c(data, 77), crc32c(data, 77));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
