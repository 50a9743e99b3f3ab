// Issue 32, wire answers that differ from Kafka's, with real clients on one broker (embedded store) and on a
// 3-broker cluster on a real ZooKeeper.
// 1. Admin requests right after CreateTopics (operation_timeout=0: answered once the znodes are written,
//    before the controller has made the partitions): confluent-kafka's create_partitions, delete_topics,
//    describe_configs and alter_configs, 5 new topics each, all succeed and take effect; KafkaJS's
//    deleteTopicRecords right after its createTopics succeeds too (a check: it did before).
// 2. A broker that does not host a partition its metadata knows answers NOT_LEADER_OR_FOLLOWER (6) to
//    Produce, Fetch, ListOffsets, OffsetForLeaderEpoch and DeleteRecords (Kafka's
//    ReplicaManager.getPartitionOrError), and UNKNOWN_TOPIC_OR_PARTITION (3) for a topic or partition that
//    does not exist.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { ErrorCode } from "../../src/protocol/errors.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { defaultDeleteRecordsRequest } from "../../src/protocol/generated/messages/DeleteRecordsRequest.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
} from "../../src/protocol/generated/messages/FetchRequest.js";
import {
  defaultListOffsetsPartition,
  defaultListOffsetsRequest,
} from "../../src/protocol/generated/messages/ListOffsetsRequest.js";
import {
  defaultOffsetForLeaderEpochRequest,
  defaultOffsetForLeaderPartition,
} from "../../src/protocol/generated/messages/OffsetForLeaderEpochRequest.js";
import {
  defaultPartitionProduceData,
  defaultProduceRequest,
  defaultTopicProduceData,
} from "../../src/protocol/generated/messages/ProduceRequest.js";
import { buildRecordBatch } from "../../src/protocol/records/index.js";
import { WireClient } from "../server/wire-client.js";
import { BrokerHarness, describeResult, runCommand } from "../support/broker-harness.js";
import { ClusterHarness, parseDescribe, waitFor, withLogTails } from "../support/cluster-harness.js";
import { runTributary } from "../support/tributary-cli.js";

const PYTHON = "/usr/bin/python3";
const DRIVER = resolve(process.cwd(), "test/support/clients/admin-race-confluent-kafka.py");
const TOPICS_PER_OPERATION = 5;

let single: BrokerHarness | undefined;
let cluster: ClusterHarness | undefined;

before(async () => {
  single = await BrokerHarness.start({ name: "wire-answers-single" });
  cluster = await ClusterHarness.start({ brokers: 3, name: "wire-answers" });
});

after(async () => {
  await single?.close();
  await cluster?.close();
});

/** The driver's {topic: null or "ERROR: message"} for `operation` on `count` topics `${prefix}0…`. */
async function afterCreate(
  bootstrap: string,
  operation: string,
  prefix: string,
): Promise<Record<string, unknown>> {
  const r = await runCommand(PYTHON, [DRIVER, bootstrap, operation, prefix, String(TOPICS_PER_OPERATION)], {
    timeoutMs: 120_000,
  });
  assert.equal(r.code, 0, describeResult(`confluent-kafka ${operation}`, r));
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function tool(args: readonly string[]): Promise<string> {
  const r = await runTributary(args);
  assert.equal(r.code, 0, describeResult(args.join(" "), r));
  return r.stdout;
}

const names = (prefix: string): string[] =>
  Array.from({ length: TOPICS_PER_OPERATION }, (_, i) => `${prefix}${i}`);

interface Target {
  readonly tag: string;
  /** The bootstrap list the clients get. */
  readonly bootstrap: () => string;
  /** Each broker's own bootstrap, to check that every broker shows an outcome. */
  readonly each: () => string[];
}

const TARGETS: readonly Target[] = [
  { tag: "single", bootstrap: () => single!.bootstrap, each: () => [single!.bootstrap] },
  {
    tag: "cluster",
    bootstrap: () => cluster!.bootstrap(),
    each: () => cluster!.brokers.map((b) => b.bootstrap),
  },
];

/**
 * Per confluent-kafka operation, how its outcome is checked once every call succeeded: through
 * `bootstrap`, and on each broker of `each` where brokers could differ.
 */
const OPERATIONS: ReadonlyArray<{
  readonly operation: string;
  readonly prefix: string;
  readonly check: (topics: string[], bootstrap: string, each: string[]) => Promise<void>;
}> = [
  {
    operation: "create_partitions",
    prefix: "grow",
    check: (topics, bootstrap) =>
      waitFor(`${topics} with 4 led partitions each`, 20_000, async () => {
        const parts = parseDescribe(await tool(["topics", "--bootstrap-server", bootstrap, "--describe"]));
        return topics.every((t) => parts.filter((p) => p.topic === t && p.leader >= 0).length === 4)
          ? true
          : undefined;
      }).then(() => undefined),
  },
  {
    operation: "delete_topics",
    prefix: "doomed",
    check: (topics, bootstrap) =>
      waitFor(`${topics} deleted`, 30_000, async () => {
        const list = (await tool(["topics", "--bootstrap-server", bootstrap, "--list"])).split("\n");
        return topics.some((t) => list.includes(t)) ? undefined : true;
      }).then(() => undefined),
  },
  { operation: "describe_configs", prefix: "described", check: async () => {} },
  {
    operation: "alter_configs",
    prefix: "altered",
    // Every broker's metadata cache gets the change (a broker that loaded the topic's config for its
    // LeaderAndIsr before UpdateMetadata announced the topic included), within the propagation delay.
    check: async (topics, _bootstrap, each) => {
      for (const via of each) {
        let out = "";
        const stale = (): string[] => {
          const sections = out.split(/^Dynamic configs for topic /m);
          return topics.filter(
            (t) => !/retention\.ms=7200000/.test(sections.find((x) => x.startsWith(`${t} are:`)) ?? ""),
          );
        };
        await waitFor(`${topics} altered as ${via} describes them`, 10_000, async () => {
          out = await tool(["configs", "--bootstrap-server", via, "--describe", "--entity-type", "topics"]);
          return stale().length === 0 ? true : undefined;
        }).catch((e) => {
          throw new Error(`${(e as Error).message}: ${stale().join(",")} not altered in\n${out}`);
        });
      }
    },
  },
];

/**
 * KafkaJS: createTopics (which waits until the Metadata of one broker shows the leaders), then at once
 * deleteTopicRecords on every partition: the leader may not yet have applied its LeaderAndIsr, and answers
 * then as Kafka (UNKNOWN_TOPIC_OR_PARTITION, retriable) until it has.
 */
async function deleteRecordsAfterCreate(bootstrap: string, tag: string): Promise<void> {
  const kafka = new kafkajs.Kafka({
    clientId: "wire-answers",
    brokers: bootstrap.split(","),
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const topic of names(`records-${tag}-`)) {
      const created = await admin.createTopics({
        topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
      });
      assert.equal(created, true, topic);
      // KafkaJS finds leaders in its own metadata only; a broker whose metadata cache has not got the topic
      // yet answers Metadata UNKNOWN_TOPIC_OR_PARTITION (as Kafka), which fetchTopicMetadata does not retry.
      await waitFor(`${topic} in KafkaJS's metadata`, 10_000, () =>
        admin.fetchTopicMetadata({ topics: [topic] }).then(
          () => true,
          () => undefined,
        ),
      );
      await admin.deleteTopicRecords({
        topic,
        partitions: [0, 1, 2].map((partition) => ({ partition, offset: "-1" })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}

describe("admin requests right after CreateTopics", { timeout: 300_000 }, () => {
  for (const target of TARGETS) {
    for (const { operation, prefix, check } of OPERATIONS) {
      test(`${target.tag}: confluent-kafka ${operation} on ${TOPICS_PER_OPERATION} new topics`, async () => {
        await withLogTails(
          () => (target.tag === "cluster" ? cluster : undefined),
          async () => {
            const p = `${prefix}-${target.tag}-`;
            const allNull = Object.fromEntries(names(p).map((n) => [n, null]));
            assert.deepEqual(await afterCreate(target.bootstrap(), operation, p), allNull);
            await check(names(p), target.bootstrap(), target.each());
          },
        );
      });
    }
    test(`${target.tag}: KafkaJS deleteTopicRecords`, async () => {
      await withLogTails(
        () => (target.tag === "cluster" ? cluster : undefined),
        () => deleteRecordsAfterCreate(target.bootstrap(), target.tag),
      );
    });
  }
});

/** Per API, the error code broker `via` answers for `topic`-`partition`. */
async function answers(via: number, topic: string, partition: number): Promise<Record<string, number>> {
  const client = await WireClient.connect(cluster!.broker(via).port);
  try {
    const produce = await client.request(Apis.Produce, 9, {
      ...defaultProduceRequest(),
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          ...defaultTopicProduceData(),
          name: topic,
          partitionData: [
            {
              ...defaultPartitionProduceData(),
              index: partition,
              records: buildRecordBatch({
                records: [{ value: Buffer.from("v") }],
                timestamp: BigInt(Date.now()),
              }),
            },
          ],
        },
      ],
    });
    const fetch = await client.request(Apis.Fetch, 12, {
      ...defaultFetchRequest(),
      maxWaitMs: 0,
      topics: [
        {
          ...defaultFetchTopic(),
          topic,
          partitions: [
            { ...defaultFetchPartition(), partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 },
          ],
        },
      ],
    });
    const listOffsets = await client.request(Apis.ListOffsets, 5, {
      ...defaultListOffsetsRequest(),
      topics: [
        {
          name: topic,
          partitions: [{ ...defaultListOffsetsPartition(), partitionIndex: partition, timestamp: -1n }],
        },
      ],
    });
    const epochs = await client.request(Apis.OffsetForLeaderEpoch, 3, {
      ...defaultOffsetForLeaderEpochRequest(),
      replicaId: -1,
      topics: [{ topic, partitions: [{ ...defaultOffsetForLeaderPartition(), partition, leaderEpoch: 0 }] }],
    });
    const deleteRecords = await client.request(Apis.DeleteRecords, 1, {
      ...defaultDeleteRecordsRequest(),
      timeoutMs: 5000,
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset: -1n }] }],
    });
    return {
      Produce: produce.responses[0].partitionResponses[0].errorCode,
      Fetch: fetch.responses[0].partitions[0].errorCode,
      ListOffsets: listOffsets.topics[0].partitions[0].errorCode,
      OffsetForLeaderEpoch: epochs.topics[0].partitions[0].errorCode,
      DeleteRecords: deleteRecords.topics[0].partitions[0].errorCode,
    };
  } finally {
    client.close();
  }
}

const every = (code: number) => ({
  Produce: code,
  Fetch: code,
  ListOffsets: code,
  OffsetForLeaderEpoch: code,
  DeleteRecords: code,
});

describe("a broker that does not host a partition", { timeout: 120_000 }, () => {
  test("NOT_LEADER_OR_FOLLOWER for a partition in its metadata, UNKNOWN_TOPIC_OR_PARTITION otherwise", async () => {
    await withLogTails(
      () => cluster,
      async () => {
        const c = cluster!;
        // One partition, one replica, on broker 0.
        await c.topics(["--create", "--topic", "solo", "--replica-assignment", "0"]);
        for (const via of [1, 2]) {
          await c.waitForDescribe(
            "solo",
            "led by broker 0",
            20_000,
            (ps) => ps[0]?.leader === 0,
            c.broker(via).bootstrap,
          );
        }
        // The leader itself answers (a control: the requests are well formed).
        assert.deepEqual(await answers(0, "solo", 0), every(ErrorCode.NONE));
        for (const via of [1, 2]) {
          assert.deepEqual(
            await answers(via, "solo", 0),
            every(ErrorCode.NOT_LEADER_OR_FOLLOWER),
            `broker ${via}`,
          );
          assert.deepEqual(
            await answers(via, "solo", 1),
            every(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            `broker ${via}, solo-1`,
          );
          assert.deepEqual(
            await answers(via, "no-such-topic", 0),
            every(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            `broker ${via}, no-such-topic`,
          );
        }
      },
    );
  });
});
