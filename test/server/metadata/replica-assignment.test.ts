// Replica placement against Kafka's own expectations: the fixed-start-index outputs of Kafka's AdminTest /
// AdminRackAwareTest (same input, same output), the distribution properties its RackAwareTest checks, and
// a cluster of 6 brokers in 3 racks.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCode, KafkaError } from "../../../src/protocol/errors.js";
import {
  assignReplicasToBrokers,
  type BrokerPlacement,
  brokerPlacements,
  RackAwareMode,
  rackAlternatedBrokerList,
  startIndexForNewPartitions,
} from "../../../src/server/metadata/replica-assignment.js";

const unracked = (...ids: number[]): BrokerPlacement[] => ids.map((id) => ({ id, rack: null }));
const racked = (racks: Record<number, string>): BrokerPlacement[] =>
  Object.entries(racks).map(([id, rack]) => ({ id: Number(id), rack }));

/** A [0, 1) source returning the given values in turn (then the last one again). */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}

/** A seeded [0, 1) source (mulberry32), so a failure can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Distribution {
  readonly leaders: Map<number, number>;
  readonly replicas: Map<number, number>;
  readonly partitionRacks: Map<number, string[]>;
}

/** Kafka's RackAwareTest.getReplicaDistribution. */
function distribution(assignment: Map<number, number[]>, brokers: readonly BrokerPlacement[]): Distribution {
  const rackOf = new Map(brokers.map((b) => [b.id, b.rack ?? ""]));
  const leaders = new Map(brokers.map((b) => [b.id, 0]));
  const replicas = new Map(brokers.map((b) => [b.id, 0]));
  const partitionRacks = new Map<number, string[]>();
  for (const [p, list] of assignment) {
    leaders.set(list[0], leaders.get(list[0])! + 1);
    for (const b of list) replicas.set(b, replicas.get(b)! + 1);
    partitionRacks.set(
      p,
      list.map((b) => rackOf.get(b)!),
    );
  }
  return { leaders, replicas, partitionRacks };
}

const spread = (counts: Map<number, number>): number =>
  Math.max(...counts.values()) - Math.min(...counts.values());

/** Kafka's RackAwareTest.checkReplicaDistribution. */
function checkReplicaDistribution(
  assignment: Map<number, number[]>,
  brokers: readonly BrokerPlacement[],
  numPartitions: number,
  replicationFactor: number,
  verify: { rackAware?: boolean; leaders?: boolean; replicas?: boolean } = {},
): void {
  assert.equal(assignment.size, numPartitions);
  for (const [p, list] of assignment) {
    assert.equal(list.length, replicationFactor, `partition ${p}`);
    assert.equal(new Set(list).size, list.length, `partition ${p}: a broker twice in ${list}`);
  }
  const d = distribution(assignment, brokers);
  if (verify.rackAware ?? true) {
    for (const [p, racks] of d.partitionRacks)
      assert.equal(new Set(racks).size, replicationFactor, `partition ${p}: racks ${racks}`);
  }
  if (verify.leaders ?? true) {
    for (const [b, n] of d.leaders) assert.equal(n, numPartitions / brokers.length, `leaders on ${b}`);
  }
  if (verify.replicas ?? true) {
    for (const [b, n] of d.replicas)
      assert.equal(n, (numPartitions * replicationFactor) / brokers.length, `replicas on ${b}`);
  }
}

function throwsKafka(fn: () => unknown, code: number, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof KafkaError);
    assert.equal(e.code, code);
    assert.equal(e.message, message);
    return true;
  });
}

describe("assignReplicasToBrokers: Kafka's fixed-start-index examples", () => {
  it("AdminTest.testReplicaAssignment: rack-unaware, 5 brokers, 10 partitions, RF 3, start 0", () => {
    const brokers = unracked(0, 1, 2, 3, 4);
    assert.deepEqual(Object.fromEntries(assignReplicasToBrokers(brokers, 10, 3, Math.random, 0)), {
      0: [0, 1, 2],
      1: [1, 2, 3],
      2: [2, 3, 4],
      3: [3, 4, 0],
      4: [4, 0, 1],
      5: [0, 2, 3],
      6: [1, 3, 4],
      7: [2, 4, 0],
      8: [3, 0, 1],
      9: [4, 1, 2],
    });
    throwsKafka(
      () => assignReplicasToBrokers(brokers, 10, 0),
      ErrorCode.INVALID_REPLICATION_FACTOR,
      "Replication factor must be larger than 0.",
    );
    throwsKafka(
      () => assignReplicasToBrokers(brokers, 10, 6),
      ErrorCode.INVALID_REPLICATION_FACTOR,
      "Replication factor: 6 larger than available brokers: 5.",
    );
    throwsKafka(
      () => assignReplicasToBrokers(brokers, 0, 1),
      ErrorCode.INVALID_PARTITIONS,
      "Number of partitions must be larger than 0.",
    );
  });

  it("AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers", () => {
    const rackMap = { 0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1" };
    assert.deepEqual(rackAlternatedBrokerList(racked(rackMap)), [0, 3, 1, 5, 4, 2]);
    const { 5: _, ...without5 } = rackMap;
    assert.deepEqual(rackAlternatedBrokerList(racked(without5)), [0, 3, 1, 4, 2]);
    assert.deepEqual(Object.fromEntries(assignReplicasToBrokers(racked(rackMap), 7, 3, Math.random, 0, 0)), {
      0: [0, 3, 1],
      1: [3, 1, 5],
      2: [1, 5, 4],
      3: [5, 4, 2],
      4: [4, 2, 0],
      5: [2, 0, 3],
      // after a full round the followers shift (instead of repeating 0,3,1)
      6: [0, 4, 2],
    });
  });

  it("AdminUtils' doc example: rack-alternated list 0, 3, 6, 1, 4, 7, 2, 5, 8", () => {
    const brokers = racked({ 0: "rack1", 1: "rack1", 2: "rack1", 3: "rack2", 4: "rack2", 5: "rack2" });
    brokers.push(...racked({ 6: "rack3", 7: "rack3", 8: "rack3" }));
    assert.deepEqual(rackAlternatedBrokerList(brokers), [0, 3, 6, 1, 4, 7, 2, 5, 8]);
  });

  it("the random start index and shift are drawn as Kafka draws them (start, then shift)", () => {
    // 5 brokers: random() = 0.4 → start index 2, then 0.2 → shift 1.
    const a = assignReplicasToBrokers(unracked(0, 1, 2, 3, 4), 3, 3, sequence(0.4, 0.2));
    assert.deepEqual(Object.fromEntries(a), { 0: [2, 4, 0], 1: [3, 0, 1], 2: [4, 1, 2] });
    // The same with the start index and shift fixed at 2: both are the fixed index.
    assert.deepEqual(
      Object.fromEntries(assignReplicasToBrokers(unracked(0, 1, 2, 3, 4), 1, 3, Math.random, 2)),
      {
        0: [2, 0, 1],
      },
    );
  });

  it("brokers are placed in id order, whatever order they are given in", () => {
    const a = assignReplicasToBrokers(unracked(4, 2, 0, 3, 1), 10, 3, Math.random, 0);
    assert.deepEqual(a.get(5), [0, 2, 3]);
    assert.deepEqual(a.get(9), [4, 1, 2]);
  });
});

describe("assignReplicasToBrokers: Kafka's RackAwareTest distributions", () => {
  const sixInThree = racked({ 0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1" });

  it("rack-aware, fixed start 2 and random starts: one replica per rack, even leaders and replicas", () => {
    checkReplicaDistribution(assignReplicasToBrokers(sixInThree, 6, 3, Math.random, 2, 0), sixInThree, 6, 3);
    for (let seed = 1; seed <= 20; seed++)
      checkReplicaDistribution(assignReplicasToBrokers(sixInThree, 6, 3, seeded(seed)), sixInThree, 6, 3);
  });

  it("uneven replicas (13 partitions) still one per rack", () => {
    checkReplicaDistribution(
      assignReplicasToBrokers(sixInThree, 13, 3, Math.random, 0, 0),
      sixInThree,
      13,
      3,
      {
        leaders: false,
        replicas: false,
      },
    );
  });

  it("uneven racks: leaders stay even", () => {
    const brokers = racked({ 0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1" });
    for (let seed = 1; seed <= 10; seed++) {
      checkReplicaDistribution(assignReplicasToBrokers(brokers, 12, 3, seeded(seed)), brokers, 12, 3, {
        replicas: false,
      });
    }
  });

  it("RF 2 with 6 and 12 partitions, and an expansion numbered from partition 12", () => {
    for (let seed = 1; seed <= 10; seed++) {
      checkReplicaDistribution(assignReplicasToBrokers(sixInThree, 12, 2, seeded(seed)), sixInThree, 12, 2);
      checkReplicaDistribution(assignReplicasToBrokers(sixInThree, 6, 2, seeded(seed)), sixInThree, 6, 2);
    }
    const brokers = racked({ 6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1" });
    const a = assignReplicasToBrokers(brokers, 12, 2, seeded(7), -1, 12);
    assert.deepEqual(
      [...a.keys()],
      Array.from({ length: 12 }, (_, i) => 12 + i),
    );
    checkReplicaDistribution(a, brokers, 12, 2);
    const three = racked({ 0: "rack1", 1: "rack2", 4: "rack3" });
    checkReplicaDistribution(assignReplicasToBrokers(three, 3, 2, seeded(3)), three, 3, 2);
  });

  it("96 partitions × RF 3 on 12 brokers in 3 racks", () => {
    const brokers = racked({
      0: "rack1",
      1: "rack2",
      2: "rack2",
      3: "rack3",
      4: "rack3",
      5: "rack1",
      6: "rack1",
      7: "rack2",
      8: "rack2",
      9: "rack3",
      10: "rack1",
      11: "rack3",
    });
    for (let seed = 1; seed <= 10; seed++)
      checkReplicaDistribution(assignReplicasToBrokers(brokers, 96, 3, seeded(seed)), brokers, 96, 3);
  });

  it("more replicas than racks: every rack used; fewer: no rack twice; one rack: leaders even", () => {
    const brokers = racked({ 0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2" });
    for (let seed = 1; seed <= 10; seed++) {
      const more = distribution(assignReplicasToBrokers(brokers, 6, 5, seeded(seed)), brokers);
      for (const racks of more.partitionRacks.values()) assert.equal(new Set(racks).size, 3);
      const less = distribution(assignReplicasToBrokers(brokers, 6, 2, seeded(seed)), brokers);
      for (const racks of less.partitionRacks.values()) assert.equal(new Set(racks).size, 2);
    }
    const single = racked({ 0: "rack1", 1: "rack1", 2: "rack1", 3: "rack1", 4: "rack1", 5: "rack1" });
    const d = distribution(assignReplicasToBrokers(single, 6, 3, seeded(1)), single);
    for (const racks of d.partitionRacks.values()) assert.equal(new Set(racks).size, 1);
    for (const n of d.leaders.values()) assert.equal(n, 1);
  });

  it("skips a broker that already holds a replica (RF 4 on racks a, b, c, a, a; start 2)", () => {
    const brokers = racked({ 0: "a", 1: "b", 2: "c", 3: "a", 4: "a" });
    checkReplicaDistribution(assignReplicasToBrokers(brokers, 6, 4, Math.random, 2), brokers, 6, 4, {
      rackAware: false,
      leaders: false,
      replicas: false,
    });
  });
});

describe("assignReplicasToBrokers in a multi-broker cluster", () => {
  it("6 brokers in 3 racks, 60 partitions × RF 3: leaders and replicas even, 3 racks per partition", () => {
    const brokers = racked({ 0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c" });
    // Every start index × shift Kafka may draw, plus seeded draws.
    const sources: Array<() => number> = [];
    for (let start = 0; start < 6; start++)
      for (let shift = 0; shift < 6; shift++) sources.push(sequence((start + 0.5) / 6, (shift + 0.5) / 6));
    for (let seed = 1; seed <= 20; seed++) sources.push(seeded(seed));
    for (const random of sources) {
      const a = assignReplicasToBrokers(brokers, 60, 3, random);
      const d = distribution(a, brokers);
      assert.ok(spread(d.leaders) <= 1, `leaders ${JSON.stringify([...d.leaders])}`);
      assert.ok(spread(d.replicas) <= 1, `replicas ${JSON.stringify([...d.replicas])}`);
      for (const [p, racks] of d.partitionRacks)
        assert.equal(new Set(racks).size, 3, `partition ${p} on racks ${racks}`);
    }
  });

  it("rack-unaware, 4 brokers × 4 partitions × RF 4: every broker holds every partition, leads one", () => {
    const brokers = unracked(0, 1, 2, 3);
    assert.deepEqual(Object.fromEntries(assignReplicasToBrokers(brokers, 4, 4, Math.random, 0)), {
      0: [0, 1, 2, 3],
      1: [1, 2, 3, 0],
      2: [2, 3, 0, 1],
      3: [3, 0, 1, 2],
    });
    for (let seed = 1; seed <= 10; seed++) {
      const a = assignReplicasToBrokers(brokers, 4, 4, seeded(seed));
      const d = distribution(a, brokers);
      for (const list of a.values()) assert.deepEqual([...list].sort(), [0, 1, 2, 3]);
      for (const n of d.leaders.values()) assert.equal(n, 1);
    }
  });

  it("rack-unaware spreads leaders and replicas evenly (7 brokers, 70 partitions, RF 3)", () => {
    const brokers = unracked(0, 1, 2, 3, 4, 5, 6);
    for (let seed = 1; seed <= 10; seed++) {
      const d = distribution(assignReplicasToBrokers(brokers, 70, 3, seeded(seed)), brokers);
      assert.equal(spread(d.leaders), 0);
      assert.equal(spread(d.replicas), 0);
    }
  });

  it("RF above the brokers: INVALID_REPLICATION_FACTOR with Kafka's message", () => {
    throwsKafka(
      () => assignReplicasToBrokers(unracked(0, 1, 2), 3, 4),
      ErrorCode.INVALID_REPLICATION_FACTOR,
      "Replication factor: 4 larger than available brokers: 3.",
    );
    throwsKafka(
      () => assignReplicasToBrokers([], 1, 1),
      ErrorCode.INVALID_REPLICATION_FACTOR,
      "Replication factor: 1 larger than available brokers: 0.",
    );
  });

  it("some brokers with a rack and others without: refused unless racks are dropped", () => {
    const mixed: BrokerPlacement[] = [
      { id: 0, rack: "a" },
      { id: 1, rack: null },
      { id: 2, rack: "b" },
    ];
    throwsKafka(
      () => assignReplicasToBrokers(mixed, 3, 2),
      ErrorCode.UNKNOWN_SERVER_ERROR,
      "Not all brokers have rack information for replica rack aware assignment.",
    );
    throwsKafka(
      () => assignReplicasToBrokers(brokerPlacements(mixed, RackAwareMode.Enforced), 3, 2),
      ErrorCode.UNKNOWN_SERVER_ERROR,
      "Not all brokers have rack information for replica rack aware assignment.",
    );
    for (const mode of [RackAwareMode.Safe, RackAwareMode.Disabled]) {
      const placed = brokerPlacements(mixed, mode);
      assert.deepEqual(placed, unracked(0, 1, 2));
      assert.deepEqual(
        Object.fromEntries(assignReplicasToBrokers(placed, 3, 2, Math.random, 0)),
        Object.fromEntries(assignReplicasToBrokers(unracked(0, 1, 2), 3, 2, Math.random, 0)),
      );
    }
    // Safe keeps the racks when every broker has one; Disabled drops them.
    const all = racked({ 2: "b", 0: "a" });
    assert.deepEqual(brokerPlacements(all, RackAwareMode.Safe), racked({ 0: "a", 2: "b" }));
    assert.deepEqual(brokerPlacements(all, RackAwareMode.Disabled), unracked(0, 2));
  });

  it("new partitions start after partition 0's first replica (Kafka's createNewPartitionsAssignment)", () => {
    const brokers = unracked(1, 3, 5);
    assert.equal(startIndexForNewPartitions(brokers, 3), 1);
    assert.equal(startIndexForNewPartitions(brokers, 4), 2); // first id >= 4
    assert.equal(startIndexForNewPartitions(brokers, 9), 0); // none: 0
    assert.equal(startIndexForNewPartitions(brokers, 0), 0);
    // Adding 3 partitions to a 3-partition topic whose partition 0 starts on broker 3: partition ids 3..5,
    // leaders continue the round-robin (3, 5, 1), and partition 3 (a full round done) bumps the shift.
    const a = assignReplicasToBrokers(brokers, 3, 2, Math.random, startIndexForNewPartitions(brokers, 3), 3);
    assert.deepEqual(Object.fromEntries(a), { 3: [3, 5], 4: [5, 1], 5: [1, 3] });
  });

  it("one broker: every partition on it", () => {
    const a = assignReplicasToBrokers(unracked(7), 3, 1, () => 0.99);
    assert.deepEqual(Object.fromEntries(a), { 0: [7], 1: [7], 2: [7] });
  });
});
