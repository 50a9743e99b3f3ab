// decommission-broker's plan (src/cli/tools/decommission-planning.ts), without processes: only partitions
// with a replica on the removed broker are in it, that replica is replaced in place, the replacements are
// rack-aware and even (replicas and preferred leaders) over the remaining brokers, and impossible plans
// are one clear line. The real tool on a real cluster is in test/cluster/reassign-partitions.test.ts.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { UsageError } from "../../../src/cli/args.js";
import { planBrokerRemoval } from "../../../src/cli/tools/decommission-planning.js";
import type { TopicAssignments } from "../../../src/cli/tools/reassignment-planning.js";

function topics(spec: Record<string, number[][]>): TopicAssignments {
  return new Map(Object.entries(spec).map(([t, parts]) => [t, new Map(parts.map((r, p) => [p, r]))]));
}

const noRacks = (ids: number[]) => ids.map((id) => ({ id, rack: null }));

/** Replicas per broker (and first replicas per broker) of `all` with `plan` applied. */
function counts(all: TopicAssignments, plan: TopicAssignments): { replicas: number[]; leaders: number[] } {
  const replicas: number[] = [];
  const leaders: number[] = [];
  for (const [t, parts] of all)
    for (const [p, r] of parts) {
      const now = plan.get(t)?.get(p) ?? r;
      now.forEach((b, i) => {
        replicas[b] = (replicas[b] ?? 0) + 1;
        if (i === 0) leaders[b] = (leaders[b] ?? 0) + 1;
      });
    }
  return { replicas, leaders };
}

describe("decommission-broker's plan", () => {
  it("moves only partitions with a replica on the broker, replacing it in place", () => {
    const all = topics({
      a: [
        [0, 1],
        [1, 2],
        [2, 3],
        [3, 0],
        [1, 0],
        [3, 1],
      ],
      b: [[0, 1, 2]],
    });
    const plan = planBrokerRemoval(all, noRacks([0, 1, 2, 3]), 3, true);
    assert.deepEqual([...plan.keys()], ["a"]);
    assert.deepEqual([...plan.get("a")!.keys()], [2, 3, 5]);
    const [p2, p3, p5] = [2, 3, 5].map((p) => plan.get("a")!.get(p)!);
    assert.equal(p2[0], 2);
    assert.ok([0, 1].includes(p2[1]), String(p2));
    assert.equal(p3[1], 0);
    assert.ok([1, 2].includes(p3[0]), String(p3));
    assert.equal(p5[1], 1);
    assert.ok([0, 2].includes(p5[0]), String(p5));
  });

  it("spreads the moved replicas and preferred leaderships evenly over the remaining brokers", () => {
    // 12 partitions RF 2 round-robin over 0..3: 6 replicas and 3 preferred leaderships per broker.
    const parts = Array.from({ length: 12 }, (_, p) => [p % 4, (p + 1) % 4]);
    const all = topics({ t: parts });
    const plan = planBrokerRemoval(all, noRacks([0, 1, 2, 3]), 3, true);
    assert.equal(plan.get("t")!.size, 6);
    const { replicas } = counts(all, plan);
    assert.deepEqual(replicas, [8, 8, 8]);
    // A replaced preferred leader goes, between equally loaded brokers, to the one leading fewer.
    const led = topics({
      t: [[3, 0]],
      u: [
        [1, 2],
        [1, 2],
      ],
    });
    assert.deepEqual(
      planBrokerRemoval(led, noRacks([0, 1, 2, 3]), 3, true)
        .get("t")!
        .get(0),
      [2, 0],
    );
    const followed = topics({
      t: [[0, 3]],
      u: [
        [1, 2],
        [1, 2],
      ],
    });
    assert.deepEqual(
      planBrokerRemoval(followed, noRacks([0, 1, 2, 3]), 3, true)
        .get("t")!
        .get(0),
      [0, 1],
    );
    // Already uneven: the moves go to the least loaded broker first.
    const skewed = topics({
      t: [[3, 0]],
      u: [
        [0, 1],
        [0, 1],
        [0, 2],
      ],
    });
    assert.deepEqual(
      planBrokerRemoval(skewed, noRacks([0, 1, 2, 3]), 3, true)
        .get("t")!
        .get(0),
      [2, 0],
    );
  });

  it("keeps a partition on as many racks as it can", () => {
    const brokers = [
      { id: 0, rack: "a" },
      { id: 1, rack: "a" },
      { id: 2, rack: "b" },
      { id: 3, rack: "b" },
      { id: 4, rack: "c" },
      { id: 5, rack: "c" },
    ];
    const all = topics({
      t: [
        [2, 0, 4],
        [0, 2, 1],
        [2, 4, 5],
      ],
      load: [[3], [3], [3], [3]], // broker 3 (rack b) is the busiest
    });
    const plan = planBrokerRemoval(all, brokers, 2, true).get("t")!;
    // Racks a and c are taken: only 3 is on b.
    assert.deepEqual(plan.get(0), [3, 0, 4]);
    // Rack a twice already: b or c (not 1, whose rack is a, though the least loaded).
    assert.ok([3, 4, 5].includes(plan.get(1)![1]), String(plan.get(1)));
    // Racks c twice: a or b.
    assert.ok([0, 1, 3].includes(plan.get(2)![0]), String(plan.get(2)));
    // Without rack awareness the least loaded brokers win.
    const flat = planBrokerRemoval(all, brokers, 2, false).get("t")!;
    assert.deepEqual(flat.get(0), [1, 0, 4]);
  });

  it("refuses impossible plans in one line", () => {
    assert.throws(
      () => planBrokerRemoval(topics({ t: [[0, 1, 2]] }), noRacks([0, 1, 2]), 2, true),
      (e: unknown) =>
        e instanceof UsageError &&
        e.message ===
          "Replication factor: 3 larger than available brokers: 2 (t-0 has replicas 0,1,2; the remaining brokers are 0,1)",
    );
    const mixed = [
      { id: 0, rack: "a" },
      { id: 1, rack: null },
      { id: 2, rack: "b" },
    ];
    assert.throws(
      () => planBrokerRemoval(topics({ t: [[2, 0]] }), mixed, 2, true),
      /^UsageError: Not all brokers have rack information\. Add --disable-rack-aware/,
    );
    assert.deepEqual(
      planBrokerRemoval(topics({ t: [[2, 0]] }), mixed, 2, false)
        .get("t")!
        .get(0),
      [1, 0],
    );
  });
});
