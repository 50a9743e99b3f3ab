// Issue 31 items 5 and 7, the replica fetcher without broker processes: a follower's real ReplicaManager
// and logs (temp dir) fetch through a real ReplicaFetcherManager over TCP from a FakeLeader that holds
// chosen answers.
// - Kafka's PartitionFetchState rule: a fetch response for a partition that was added again at a new
//   leader epoch while the request was out is dropped (its records are not appended; a DEBUG line says
//   so), the next fetch carries the new epoch, in the same fetcher and fetch session.
// - Adding a partition already fetched from the same leader at the same leader epoch (a LeaderAndIsr
//   repeated) keeps its fetch state, fetcher, connection and incremental session: the answer in flight is
//   appended, and the next fetch continues the session.
// - The same for OffsetForLeaderEpoch (a leader below Fetch v12): an answer for a partition added again at a
//   newer leader epoch meanwhile truncates nothing; the partition is asked again at its new epoch.
// - shutdown() is final: a connect in flight (ApiVersions held by the leader) is aborted at once, nothing
//   is sent after it even when the leader answers later, and later adds are ignored.
// - InterBrokerConnections.close() aborts a connect in flight and refuses later connects.

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { type LogLevel, setLogLevel, setLogSink } from "../../../src/common/logger.js";
import { ApiKey } from "../../../src/protocol/generated/api-table.js";
import type { FetchRequest } from "../../../src/protocol/generated/messages/FetchRequest.js";
import type { FetchResponse } from "../../../src/protocol/generated/messages/FetchResponse.js";
import type { OffsetForLeaderEpochRequest } from "../../../src/protocol/generated/messages/OffsetForLeaderEpochRequest.js";
import type { OffsetForLeaderEpochResponse } from "../../../src/protocol/generated/messages/OffsetForLeaderEpochResponse.js";
import { buildRecordBatch } from "../../../src/protocol/records/index.js";
import { InterBrokerConnections } from "../../../src/server/inter-broker-connections.js";
import { ReplicaFetcherManager } from "../../../src/server/replication/replica-fetcher-manager.js";
import type { ReplicaFetcherConfig } from "../../../src/server/replication/replica-fetcher-thread.js";
import { waitFor } from "../../support/broker-harness.js";
import { emptyFetchResponse, FakeLeader, partitionData } from "../../support/fake-leader.js";
import { type Broker, leaderState, startBroker } from "./replication-test-utils.js";

const TOPIC = "followed";
const TP = { topic: TOPIC, partition: 0 };
const LEADER = 1;
const SESSION = 77;

const CONFIG: ReplicaFetcherConfig = {
  brokerId: 0,
  fetchMaxBytes: 1024 * 1024,
  responseMaxBytes: 10 * 1024 * 1024,
  maxWaitMs: 500,
  minBytes: 1,
  backoffMs: 100,
  socketTimeoutMs: 5000,
  brokerEpoch: () => 1n,
};

let broker: Broker;
let leader: FakeLeader;
let manager: ReplicaFetcherManager;
const lines: string[] = [];
let restoreSink: ReturnType<typeof setLogSink>;

beforeEach(async () => {
  lines.length = 0;
  restoreSink = setLogSink((line) => lines.push(line));
  setLogLevel("DEBUG");
  broker = startBroker();
  leader = await FakeLeader.start();
  manager = new ReplicaFetcherManager(broker.replicaManager, CONFIG, () => leader.endpoint, broker.time);
});

afterEach(async () => {
  await manager.shutdown();
  await leader.close();
  broker.cleanup();
  setLogSink(restoreSink);
  setLogLevel((process.env.TRIBUTARY_LOG_LEVEL as LogLevel) ?? "INFO");
});

/** This broker follows these partitions of TOPIC (leader broker 1) at `leaderEpoch`, as a LeaderAndIsr makes it. */
function follow(leaderEpoch: number, partitions: readonly number[] = [0]): void {
  const errors = broker.replicaManager.becomeLeaderOrFollower(
    partitions.map((p) =>
      leaderState(TOPIC, p, { leader: LEADER, leaderEpoch, replicas: [LEADER, 0], isr: [LEADER, 0] }),
    ),
  );
  // A repeat at the current leader epoch changes nothing on the replica manager (STALE_CONTROLLER_EPOCH,
  // ignored); the fetcher manager is still asked, as a test of its own rule for an unchanged partition.
  for (const p of partitions) {
    const r = errors.get(`${TOPIC}-${p}`);
    assert.ok(r === undefined || r.errorCode === 0 || r.ignored === true, `${TOPIC}-${p}: ${r?.errorCode}`);
  }
  manager.addFetcherForPartitions(
    partitions.map((p) => ({
      topicPartition: { topic: TOPIC, partition: p },
      leaderId: LEADER,
      leaderEpoch,
    })),
  );
}

function logEnd(partition = 0): bigint {
  const log = broker.replicaManager.getPartition({ topic: TOPIC, partition })?.log;
  assert.ok(log, "the follower's log exists");
  return log.logEndOffset;
}

/** A batch as the leader stores it: `count` records from `baseOffset`, stamped with leader epoch `epoch`. */
function leaderBatch(baseOffset: bigint, count: number, epoch: number): Buffer {
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({ value: Buffer.from(`v${Number(baseOffset) + i}`) })),
    baseOffset,
    partitionLeaderEpoch: epoch,
    timestamp: 1_700_000_000_000n,
  });
}

/** An answer for TOPIC: partition 0 (or those given) with a high watermark and records. */
function fetchResponse(
  sessionId: number,
  highWatermark: bigint,
  records: Buffer | null,
  more: ReadonlyArray<{ partition: number; highWatermark: bigint; records: Buffer | null }> = [],
): FetchResponse {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId,
    responses: [
      {
        topic: TOPIC,
        topicId: "AAAAAAAAAAAAAAAAAAAAAA",
        partitions: [
          partitionData(0, highWatermark, records),
          ...more.map((m) => partitionData(m.partition, m.highWatermark, m.records)),
        ],
      },
    ],
    nodeEndpoints: [],
  };
}

/** A partition's fetch data in a request (undefined when the request does not name it). */
function partitionOf(
  req: FetchRequest,
  partition = 0,
): FetchRequest["topics"][number]["partitions"][number] | undefined {
  return req.topics.find((t) => t.topic === TOPIC)?.partitions.find((p) => p.partition === partition);
}

/** Answers Fetch number n (0-based) with whatever `answers[n]` gives; later ones get an empty answer. */
function scriptFetches(answers: Array<(req: FetchRequest) => Promise<FetchResponse>>): void {
  let n = 0;
  leader.onFetch = async (req) => {
    const answer = answers[n++];
    if (answer !== undefined) return answer(req);
    await new Promise((r) => setTimeout(r, 100));
    return { ...emptyFetchResponse(req, SESSION), responses: [] };
  };
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function waitForFetches(n: number): Promise<void> {
  await waitFor(`${n} fetch request(s) at the leader`, 5000, async () =>
    leader.fetches().length >= n ? true : undefined,
  );
}

test("a fetch answer for a partition added again at a new leader epoch meanwhile is dropped, not appended", async () => {
  const held = deferred<FetchResponse>();
  scriptFetches([() => held.promise]);
  follow(1, [0, 1]);
  await waitForFetches(1);
  const first = partitionOf(leader.fetches()[0].body);
  assert.equal(first?.fetchOffset, 0n);
  assert.equal(first?.currentLeaderEpoch, 1);
  assert.equal(partitionOf(leader.fetches()[0].body, 1)?.currentLeaderEpoch, 1);

  // Partition 0 gets a new leader epoch (same leader) while the fetch is out; then the answer, made at
  // epoch 1 for both partitions, arrives. Partition 1 did not change: its records are taken.
  follow(2, [0]);
  held.resolve(
    fetchResponse(SESSION, 5n, leaderBatch(0n, 5, 1), [
      { partition: 1, highWatermark: 3n, records: leaderBatch(0n, 3, 1) },
    ]),
  );
  await waitForFetches(2);

  assert.equal(
    logEnd(0),
    0n,
    "records of an answer to a request made at the old leader epoch are not appended",
  );
  assert.equal(logEnd(1), 3n, "the unchanged partition's records are appended");
  const thread = manager.fetcherFor(TP);
  assert.ok(thread);
  assert.equal(thread.fetchState(TP)?.currentLeaderEpoch, 2);
  assert.equal(thread.droppedResponses, 1);
  assert.ok(
    lines.some((l) =>
      /DEBUG .*Dropping the fetch response for followed-0: .*leader epoch 1.*currentLeaderEpoch=2/.test(l),
    ),
    lines.join("\n"),
  );
  // The next fetch: same connection, the session the leader opened, the partition at its new epoch.
  const second = leader.fetches()[1];
  assert.equal(second.connection, leader.fetches()[0].connection);
  assert.equal(leader.connections, 1);
  assert.equal(second.body.sessionId, SESSION);
  assert.equal(second.body.sessionEpoch, 1);
  assert.equal(partitionOf(second.body)?.currentLeaderEpoch, 2);
  assert.equal(partitionOf(second.body)?.fetchOffset, 0n);
  assert.equal(partitionOf(second.body, 1)?.fetchOffset, 3n);
  assert.equal(manager.fetchers().length, 1, "the same fetcher");
});

test("a fetch answer matching the partition's state is appended (the same rule lets data through)", async () => {
  const held = deferred<FetchResponse>();
  scriptFetches([() => held.promise]);
  follow(1);
  await waitForFetches(1);
  held.resolve(fetchResponse(SESSION, 5n, leaderBatch(0n, 5, 1)));
  await waitForFetches(2);
  assert.equal(logEnd(), 5n);
  assert.equal(partitionOf(leader.fetches()[1].body)?.fetchOffset, 5n);
  assert.equal(partitionOf(leader.fetches()[1].body)?.lastFetchedEpoch, 1);
  assert.equal(manager.fetcherFor(TP)?.fetchState(TP)?.state, "Fetching");
});

test("adding a partition again at the same leader and leader epoch keeps its state, fetcher, connection and session", async () => {
  const held = deferred<FetchResponse>();
  scriptFetches([async () => fetchResponse(SESSION, 5n, leaderBatch(0n, 5, 1)), () => held.promise]);
  follow(1);
  await waitForFetches(2);
  const [thread] = manager.fetchers();
  assert.equal(logEnd(), 5n);

  // The same LeaderAndIsr again while the second fetch is out.
  follow(1);
  held.resolve(fetchResponse(SESSION, 8n, leaderBatch(5n, 3, 1)));
  await waitForFetches(3);
  assert.equal(logEnd(), 8n, "the answer in flight is appended");
  const fetches = leader.fetches();
  assert.equal(leader.connections, 1, "one connection");
  assert.equal(fetches[2].connection, fetches[0].connection);
  assert.equal(fetches[2].body.sessionId, SESSION, "the incremental session goes on");
  assert.equal(fetches[2].body.sessionEpoch, 2);
  assert.deepEqual(manager.fetchers(), [thread], "the same fetcher");
  assert.equal(lines.filter((l) => /Added fetcher/.test(l)).length, 1, lines.join("\n"));
  assert.equal(thread.fetchState(TP)?.fetchOffset, 8n);
  assert.equal(thread.droppedResponses, 0);
});

test("with a leader below Fetch v12, an OffsetForLeaderEpoch answer for a partition added again at a new leader epoch meanwhile truncates nothing", async () => {
  leader.fetchMaxVersion = 11;
  scriptFetches([
    async () =>
      fetchResponse(SESSION, 5n, leaderBatch(0n, 5, 1), [{ partition: 1, highWatermark: 0n, records: null }]),
  ]);
  follow(1, [0, 1]);
  await waitFor("offsets 0-4 (leader epoch 1) fetched", 5000, async () =>
    logEnd(0) === 5n ? true : undefined,
  );
  assert.equal(leader.requests.filter((r) => r.apiKey === ApiKey.OffsetForLeaderEpoch).length, 0);

  const held = deferred<OffsetForLeaderEpochResponse>();
  const asked: OffsetForLeaderEpochRequest[] = [];
  const answer = (endOffset: bigint): OffsetForLeaderEpochResponse => ({
    throttleTimeMs: 0,
    topics: [{ topic: TOPIC, partitions: [{ errorCode: 0, partition: 0, leaderEpoch: 1, endOffset }] }],
  });
  leader.onOffsetForLeaderEpoch = (req) => {
    asked.push(req);
    // The first answer (epoch 1 ends at 2) would cut offsets 2-4; it arrives after the next epoch.
    return asked.length === 1 ? held.promise : answer(5n);
  };
  // Leader epoch 2 (same leader): partition 0 is checked by OffsetForLeaderEpoch before fetching again.
  follow(2, [0]);
  await waitFor("an OffsetForLeaderEpoch request", 5000, async () => (asked.length >= 1 ? true : undefined));
  assert.deepEqual(asked[0].topics[0].partitions, [{ partition: 0, currentLeaderEpoch: 2, leaderEpoch: 1 }]);

  // Leader epoch 3 while it is out; then its answer, made for epoch 2, arrives.
  follow(3, [0]);
  held.resolve(answer(2n));
  await waitFor("a fetch of partition 0 at leader epoch 3", 5000, async () =>
    leader.fetches().some((f) => partitionOf(f.body)?.currentLeaderEpoch === 3) ? true : undefined,
  );
  assert.equal(logEnd(0), 5n, "nothing truncated by an answer to a request made at leader epoch 2");
  assert.equal(asked[1]?.topics[0].partitions[0].currentLeaderEpoch, 3);
  const refetch = leader.fetches().find((f) => partitionOf(f.body)?.currentLeaderEpoch === 3);
  assert.equal(partitionOf(refetch!.body)?.fetchOffset, 5n);
  assert.ok(
    lines.some((l) =>
      /DEBUG .*Dropping the OffsetForLeaderEpoch response for followed-0: .*leader epoch 2/.test(l),
    ),
    lines.join("\n"),
  );
});

test("shutdown aborts a connect in flight: nothing is sent after it, and later adds are ignored", async () => {
  const gate = deferred<void>();
  leader.holdApiVersions = gate.promise;
  follow(1);
  await waitFor("the fetcher's ApiVersions at the leader", 5000, async () =>
    leader.requests.length >= 1 ? true : undefined,
  );
  assert.equal(leader.open.size, 1);

  const started = Date.now();
  await manager.shutdown();
  assert.ok(Date.now() - started < 1000, `shutdown took ${Date.now() - started} ms`);
  await waitFor("the fetcher's socket closed", 2000, async () => (leader.open.size === 0 ? true : undefined));

  // The leader answers the ApiVersions now: no Fetch may follow, on that connection or a new one.
  leader.holdApiVersions = undefined;
  gate.resolve();
  follow(2);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(leader.fetches().length, 0, "no Fetch after shutdown");
  assert.equal(leader.connections, 1, "no connection after shutdown");
  assert.equal(manager.fetchers().length, 0);
  assert.ok(
    lines.some((l) => /Not adding fetchers for 1 partition/.test(l)),
    lines.join("\n"),
  );
});

test("InterBrokerConnections.close() aborts a connect in flight and refuses later connects", async () => {
  const gate = deferred<void>();
  leader.holdApiVersions = gate.promise;
  const connections = new InterBrokerConnections("test-client", () => leader.endpoint, 5000);
  const pending = connections.get(LEADER);
  await waitFor("ApiVersions at the leader", 5000, async () =>
    leader.requests.length >= 1 ? true : undefined,
  );
  connections.close();
  await assert.rejects(
    Promise.race([
      pending,
      new Promise((_, reject) => setTimeout(() => reject(new Error("still connecting")), 1000)),
    ]),
    /aborted/,
  );
  await waitFor("the socket closed", 2000, async () => (leader.open.size === 0 ? true : undefined));
  gate.resolve();
  await assert.rejects(connections.get(LEADER), /shutting down/);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(leader.connections, 1, "no connection after close()");
});
