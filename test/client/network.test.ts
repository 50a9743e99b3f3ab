// The client network layer against a real broker (test/support/broker-harness.ts): BrokerConnection
// (ApiVersions negotiation and its fallback, pipelining, one-way Produce, request timeouts, a lost
// connection failing every pending request with a typed error) and ClusterClient (bootstrap list,
// Metadata, leaders, cached connections, retries with backoff).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KafkaClientError } from "../../src/client/errors.js";
import { BrokerConnection } from "../../src/client/network/broker-connection.js";
import { ClusterClient, parseHostPort } from "../../src/client/network/cluster-client.js";
import { ApiKey, Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
} from "../../src/protocol/generated/messages/FetchRequest.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { buildRecordBatch } from "../../src/protocol/records/index.js";
import { BrokerHarness, freePort } from "../support/broker-harness.js";

let broker: BrokerHarness;

before(async () => {
  broker = await BrokerHarness.start({ name: "tributary-client-net" });
});
after(async () => {
  await broker?.close();
});

async function createTopic(conn: BrokerConnection, name: string, partitions: number): Promise<void> {
  const res = await conn.send(Apis.CreateTopics, conn.versionFor(Apis.CreateTopics), {
    topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  assert.equal(res.topics[0].errorCode, 0, res.topics[0].errorMessage ?? "");
}

/** A Fetch that waits up to `maxWaitMs` for data on an empty partition. */
function longPollFetch(conn: BrokerConnection, topic: string, maxWaitMs: number, timeoutMs?: number) {
  return conn.send(
    Apis.Fetch,
    conn.versionFor(Apis.Fetch, { max: 12 }),
    {
      ...defaultFetchRequest(),
      maxWaitMs,
      minBytes: 1,
      maxBytes: 1 << 20,
      topics: [
        {
          topic,
          topicId: "AAAAAAAAAAAAAAAAAAAAAA",
          partitions: [{ ...defaultFetchPartition(), partition: 0, partitionMaxBytes: 1 << 20 }],
        },
      ],
    },
    timeoutMs === undefined ? {} : { timeoutMs },
  );
}

function isClientError(code: number, retriable?: boolean) {
  return (e: unknown): boolean => {
    assert.ok(e instanceof KafkaClientError, `expected a KafkaClientError, got ${String(e)}`);
    assert.equal(e.code, code, `${e.errorName}: ${e.message}`);
    if (retriable !== undefined) assert.equal(e.retriable, retriable);
    return true;
  };
}

describe("BrokerConnection", () => {
  test("negotiates versions with ApiVersions v3: min(client max, broker max) per API", async () => {
    const conn = await BrokerConnection.connect(broker.host, broker.port, { clientId: "net-test" });
    try {
      assert.equal(conn.apiVersionsVersion, 3);
      const metadata = conn.brokerVersionRange(ApiKey.Metadata);
      assert.ok(metadata, "broker lists Metadata");
      assert.equal(conn.versionFor(Apis.Metadata), Math.min(Apis.Metadata.maxVersion, metadata.maxVersion));
      assert.equal(conn.versionFor(Apis.Metadata, { max: 4 }), 4);
      // An API the broker does not serve (a KRaft-only one) is UNSUPPORTED_VERSION, not retriable.
      assert.equal(conn.brokerVersionRange(ApiKey.BrokerHeartbeat), undefined);
      assert.throws(
        () => conn.versionFor(Apis.BrokerHeartbeat),
        isClientError(ErrorCode.UNSUPPORTED_VERSION, false),
      );
    } finally {
      conn.close();
    }
  });

  test("falls back when the broker answers ApiVersions with UNSUPPORTED_VERSION", async () => {
    // v5 does not exist: the broker answers at v0 with UNSUPPORTED_VERSION and its own range (0-4).
    const conn = await BrokerConnection.connect(broker.host, broker.port, { apiVersionsVersion: 5 });
    try {
      const range = conn.brokerVersionRange(ApiKey.ApiVersions);
      assert.ok(range);
      assert.equal(conn.apiVersionsVersion, range.maxVersion);
      assert.ok(conn.versionFor(Apis.Metadata) >= 1);
    } finally {
      conn.close();
    }
  });

  test("pipelines many requests and matches each response to its request", async () => {
    const conn = await BrokerConnection.connect(broker.host, broker.port);
    try {
      const topics = ["pipe-a", "pipe-b", "pipe-c"];
      for (const [i, t] of topics.entries()) await createTopic(conn, t, i + 1);
      const v = conn.versionFor(Apis.Metadata);
      const sends = Array.from({ length: 60 }, (_, i) => {
        const topic = topics[i % 3];
        return conn
          .send(Apis.Metadata, v, {
            ...defaultMetadataRequest(),
            topics: [{ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name: topic }],
            allowAutoTopicCreation: false,
          })
          .then((res) => ({ topic, res }));
      });
      assert.ok(conn.inFlightCount > 1, "requests are in flight together");
      for (const { topic, res } of await Promise.all(sends)) {
        assert.equal(res.topics.length, 1);
        assert.equal(res.topics[0].name, topic);
        assert.equal(res.topics[0].partitions.length, topics.indexOf(topic) + 1);
      }
      assert.equal(conn.inFlightCount, 0);
    } finally {
      conn.close();
    }
  });

  test("sendOneWay: a Produce with acks=0 gets no response and the next request still matches", async () => {
    const conn = await BrokerConnection.connect(broker.host, broker.port);
    try {
      await createTopic(conn, "oneway", 1);
      const records = buildRecordBatch({
        records: [{ value: Buffer.from("a") }, { value: Buffer.from("b") }, { value: Buffer.from("c") }],
        timestamp: 1_700_000_000_000n,
      });
      const pv = conn.versionFor(Apis.Produce, { min: 3 });
      const produce = {
        transactionalId: null,
        acks: 0,
        timeoutMs: 1000,
        topicData: [{ name: "oneway", partitionData: [{ index: 0, records }] }],
      };
      await conn.sendOneWay(Apis.Produce, pv, produce);
      await conn.sendOneWay(Apis.Produce, pv, produce);
      const lv = conn.versionFor(Apis.ListOffsets);
      const res = await conn.send(Apis.ListOffsets, lv, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [
          {
            name: "oneway",
            partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }],
          },
        ],
        timeoutMs: 1000,
      });
      assert.equal(res.topics[0].partitions[0].errorCode, 0);
      assert.equal(res.topics[0].partitions[0].offset, 6n);
    } finally {
      conn.close();
    }
  });

  test("a request timeout rejects with REQUEST_TIMED_OUT and disconnects; others get NETWORK_EXCEPTION", async () => {
    const conn = await BrokerConnection.connect(broker.host, broker.port, { requestTimeoutMs: 300 });
    await createTopic(conn, "idle", 1);
    const closed = new Promise<KafkaClientError | undefined>((r) => conn.onClose(r));
    const longPoll = (timeoutMs?: number) => longPollFetch(conn, "idle", 5000, timeoutMs);
    const started = Date.now();
    const first = assert.rejects(longPoll(), isClientError(ErrorCode.REQUEST_TIMED_OUT, true));
    const second = assert.rejects(longPoll(10_000), isClientError(ErrorCode.NETWORK_EXCEPTION, true));
    await first;
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 290 && elapsed < 3000, `timed out after ${elapsed} ms`);
    await second;
    const cause = await closed;
    assert.ok(cause instanceof KafkaClientError);
    assert.equal(conn.closed, true);
    await assert.rejects(
      conn.send(Apis.Metadata, 1, { ...defaultMetadataRequest(), topics: null }),
      isClientError(ErrorCode.NETWORK_EXCEPTION, true),
    );
  });

  test("connection refused is a retriable NETWORK_EXCEPTION naming the address", async () => {
    const port = await freePort();
    await assert.rejects(BrokerConnection.connect("127.0.0.1", port), (e: unknown) => {
      isClientError(ErrorCode.NETWORK_EXCEPTION, true)(e);
      assert.match((e as Error).message, new RegExp(`127\\.0\\.0\\.1:${port}`));
      return true;
    });
  });
});

describe("ClusterClient", () => {
  test("parses bootstrap.servers and rejects a bad entry", () => {
    assert.deepEqual(parseHostPort(" localhost:9092 "), { host: "localhost", port: 9092 });
    assert.deepEqual(parseHostPort("[::1]:9093"), { host: "::1", port: 9093 });
    assert.throws(() => parseHostPort("localhost"), isClientError(ErrorCode.INVALID_CONFIG));
    assert.throws(
      () => new ClusterClient({ bootstrapServers: "h:0" }),
      isClientError(ErrorCode.INVALID_CONFIG),
    );
  });

  test("bootstraps past a dead server, refreshes metadata, finds leaders, caches connections", async () => {
    const dead = await freePort();
    const cluster = new ClusterClient({
      bootstrapServers: `127.0.0.1:${dead},${broker.bootstrap}`,
      clientId: "cluster-test",
    });
    try {
      const any = await cluster.anyConnection();
      assert.equal(any.port, broker.port);
      await createTopic(any, "cluster-t", 3);
      const md = await cluster.refreshMetadata();
      assert.ok(md.clusterId);
      assert.deepEqual([...md.brokers.keys()], [0]);
      assert.equal(md.controllerId, 0);
      const t = md.topics.get("cluster-t");
      assert.ok(t);
      assert.deepEqual(
        t.partitions.map((p) => [p.partition, p.leader, p.replicas, p.isr]),
        [
          [0, 0, [0], [0]],
          [1, 0, [0], [0]],
          [2, 0, [0], [0]],
        ],
      );
      assert.equal(cluster.leaderFor("cluster-t", 2), 0);
      assert.equal(cluster.leaderFor("cluster-t", 3), undefined);
      const c1 = await cluster.connectionTo(0);
      const c2 = await cluster.connectionTo(0);
      assert.equal(c1, c2, "one cached connection per broker");
      // A closed connection is replaced by a fresh one.
      c1.close();
      const c3 = await cluster.connectionTo(0);
      assert.notEqual(c3, c1);
      assert.equal(c3.closed, false);
      await assert.rejects(cluster.connectionTo(7), isClientError(ErrorCode.BROKER_NOT_AVAILABLE));
      await assert.rejects(cluster.topicMetadata("no-such-topic"), (e: unknown) => {
        isClientError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)(e);
        assert.match((e as Error).message, /no-such-topic/);
        return true;
      });
      assert.equal(cluster.metadata.topics.has("no-such-topic"), true, "topic errors are kept");
      assert.equal(cluster.metadata.topics.has("cluster-t"), true, "a topic refresh keeps other topics");
    } finally {
      await cluster.close();
    }
  });

  test("withRetries retries retriable errors after retry.backoff.ms and gives up at the timeout", async () => {
    const cluster = new ClusterClient({ bootstrapServers: broker.bootstrap, retryBackoffMs: 50 });
    try {
      let attempts = 0;
      const started = Date.now();
      const v = await cluster.withRetries("flaky", async () => {
        if (++attempts < 3) throw KafkaClientError.of("LEADER_NOT_AVAILABLE");
        return "ok";
      });
      assert.equal(v, "ok");
      assert.equal(attempts, 3);
      assert.ok(Date.now() - started >= 95, "two backoffs of 50 ms");
      attempts = 0;
      await assert.rejects(
        cluster.withRetries("fatal", async () => {
          attempts++;
          throw KafkaClientError.of("TOPIC_AUTHORIZATION_FAILED");
        }),
        isClientError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, false),
      );
      assert.equal(attempts, 1, "non-retriable errors are not retried");
      attempts = 0;
      await assert.rejects(
        cluster.withRetries(
          "always",
          async () => {
            attempts++;
            throw KafkaClientError.of("NOT_LEADER_OR_FOLLOWER");
          },
          300,
        ),
        (e: unknown) => {
          isClientError(ErrorCode.NOT_LEADER_OR_FOLLOWER, true)(e);
          assert.match((e as Error).message, /always: .*gave up after 300 ms/);
          return true;
        },
      );
      assert.ok(attempts >= 2 && attempts <= 8, `${attempts} attempts in 300 ms`);
    } finally {
      await cluster.close();
    }
  });

  test("findCoordinator: the coordinator node, or UNSUPPORTED_VERSION when the broker has no FindCoordinator", async () => {
    const cluster = new ClusterClient({ bootstrapServers: broker.bootstrap });
    try {
      const conn = await cluster.anyConnection();
      if (conn.brokerVersionRange(ApiKey.FindCoordinator)) {
        const node = await cluster.findCoordinator("net-group", "group");
        assert.equal(node.nodeId, 0);
        assert.equal(node.port, broker.port);
      } else {
        await assert.rejects(
          cluster.findCoordinator("net-group", "group"),
          isClientError(ErrorCode.UNSUPPORTED_VERSION, false),
        );
      }
    } finally {
      await cluster.close();
    }
  });

  test("a broker that goes away fails pending requests with NETWORK_EXCEPTION and notifies onClose", async () => {
    const own = await BrokerHarness.start({ name: "tributary-client-net-stop" });
    try {
      const cluster = new ClusterClient({ bootstrapServers: own.bootstrap, defaultApiTimeoutMs: 1000 });
      await cluster.refreshMetadata();
      const conn = await cluster.connectionTo(0);
      await createTopic(conn, "gone", 1);
      const closed = new Promise<KafkaClientError | undefined>((r) => conn.onClose(r));
      const pending = conn.send(Apis.Metadata, conn.versionFor(Apis.Metadata), {
        ...defaultMetadataRequest(),
        topics: null,
      });
      const pendingFetch = assert.rejects(
        longPollFetch(conn, "gone", 20_000),
        isClientError(ErrorCode.NETWORK_EXCEPTION, true),
      );
      await pending;
      await own.stop("SIGKILL");
      await pendingFetch;
      const cause = await closed;
      assert.ok(cause instanceof KafkaClientError && cause.code === ErrorCode.NETWORK_EXCEPTION);
      await assert.rejects(cluster.refreshMetadata(), isClientError(ErrorCode.NETWORK_EXCEPTION, true));
      await cluster.close();
    } finally {
      await own.close();
    }
  });
});
