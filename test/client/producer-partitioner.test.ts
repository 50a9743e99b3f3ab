// The producer's partitioner: Kafka's Utils.murmur2 against the vectors of Kafka's UtilsTest.testMurmur2,
// toPositive (not Math.abs), keyed partition choice, and the sticky partitioner of KIP-794 (one partition
// until batch.size bytes went there, then another partition with a leader).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  murmur2,
  partitionForKey,
  StickyPartitioner,
  toPositive,
} from "../../src/client/producer/partitioner.js";

describe("murmur2", () => {
  test("matches Kafka's UtilsTest.testMurmur2 vectors", () => {
    const cases: Record<string, number> = {
      "21": -973932308,
      foobar: -790332482,
      "a-little-bit-long-string": -985981536,
      "a-little-bit-longer-string": -1486304829,
      lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8: -58897971,
      abc: 479470107,
    };
    for (const [key, want] of Object.entries(cases)) assert.equal(murmur2(Buffer.from(key)), want, key);
  });

  test("every tail length (0-3 extra bytes) and the empty key", () => {
    // Values computed by hand from the algorithm of Kafka's Utils.murmur2 (seed 0x9747b28c).
    assert.equal(murmur2(Buffer.alloc(0)), 275646681);
    assert.equal(typeof murmur2(Buffer.from([0xff])), "number");
    const seen = new Set<number>();
    for (let n = 0; n < 9; n++) seen.add(murmur2(Buffer.alloc(n, 0xab)));
    assert.equal(seen.size, 9);
  });

  test("toPositive clears the sign bit like Kafka (not Math.abs)", () => {
    assert.equal(toPositive(-1), 0x7fffffff);
    assert.equal(toPositive(-2147483648), 0);
    assert.equal(toPositive(5), 5);
    // "21": murmur2 -973932308 → toPositive 1173551340 → partition of 10 = 0 (Math.abs would give 8).
    assert.equal(partitionForKey(Buffer.from("21"), 10), 1173551340 % 10);
    assert.notEqual(partitionForKey(Buffer.from("21"), 10), Math.abs(-973932308) % 10);
  });
});

describe("StickyPartitioner", () => {
  test("stays on one partition until batch.size bytes, then moves to another available one", () => {
    let next = 0;
    const picks = [2, 0, 1];
    const sticky = new StickyPartitioner(100, (bound) => picks[next++] % bound);
    const available = [0, 1, 2, 3];
    const first = sticky.partition("t", 4, available);
    assert.equal(first, 2);
    sticky.onAppend("t", first, 60, 4, available);
    assert.equal(sticky.partition("t", 4, available), 2, "still under batch.size");
    sticky.onAppend("t", first, 50, 4, available);
    const second = sticky.partition("t", 4, available);
    assert.notEqual(second, 2, "switched after batch.size bytes, never to the same partition");
    assert.equal(second, 0);
  });

  test("only picks partitions with a leader", () => {
    const sticky = new StickyPartitioner(10);
    for (let i = 0; i < 50; i++) {
      const p = sticky.partition("t", 8, [3, 5]);
      assert.ok(p === 3 || p === 5, `picked ${p}`);
      sticky.onAppend("t", p, 10, 8, [3, 5]);
    }
  });
});
