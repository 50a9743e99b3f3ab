// Issue 17's replication throughput: a follower's fetch waiting in the purgatory on two partitions is
// completed after the whole produce request is appended, not after its first partition (Kafka completes
// delayed fetches after the appends), so one fetch response carries both partitions' batches and an
// acks=all produce of two partitions needs one follower round trip instead of two. With min.bytes=1 the
// waiting fetch completes on the first visible batch (without reading it to count its bytes) and returns
// whole batches; real logs in a temp dir.

import assert from "node:assert/strict";
import { test } from "node:test";
import { leaderState, records, startBroker } from "./replication-test-utils.js";

test("a waiting follower fetch answers with every partition of the produce request that woke it", async () => {
  const b = startBroker();
  try {
    const tps = [0, 1].map((partition) => ({ topic: "t", partition }));
    b.replicaManager.becomeLeaderOrFollower(
      tps.map((tp) => leaderState(tp.topic, tp.partition, { replicas: [0, 1], isr: [0, 1] })),
    );
    let answered: Array<{ partition: number; bytes: number }> | undefined;
    const fetching = b.replicaManager
      .fetchMessages(
        {
          replicaId: 1,
          maxWaitMs: 500,
          minBytes: 1,
          maxBytes: 1 << 20,
          isolation: "log-end",
          fetchOnlyFromLeader: true,
        },
        tps.map((tp) => ({
          topicPartition: tp,
          fetchOffset: 0n,
          currentLeaderEpoch: 0,
          logStartOffset: 0n,
          partitionMaxBytes: 1 << 20,
        })),
      )
      .then((r) => {
        answered = r.map((d) => ({ partition: d.topicPartition.partition, bytes: d.records.length }));
      });
    await Promise.resolve();
    assert.equal(answered, undefined, "nothing to read yet: the fetch waits");
    assert.equal(b.replicaManager.delayedFetchPurgatory.numDelayed, 1);

    const produced = records(5);
    void b.replicaManager.appendRecords(
      30_000,
      1,
      tps.map((tp) => ({ topicPartition: tp, records: produced })),
    );
    await fetching;
    assert.deepEqual(answered, [
      { partition: 0, bytes: produced.length },
      { partition: 1, bytes: produced.length },
    ]);
    assert.equal(b.replicaManager.delayedFetchPurgatory.numDelayed, 0);
  } finally {
    b.cleanup();
  }
});
