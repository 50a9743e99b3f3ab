// Capture driver for KafkaJS. Test-only.
//
// Runs an admin client, one producer per produce scenario (plus a transactional one when the plan
// asks) and a group consumer against the capture server named in the JSON plan given as the first
// argument, so the server records the request frames KafkaJS sends. Every wait is bounded. Exits
// non-zero if an expected step fails.
//
// Usage: node dist/test/support/clients/kafkajs-driver.js plan.json
// Without a plan it does nothing (the test runner executes every .js under dist/test/).

import { readFileSync } from "node:fs";
import kafkajs from "kafkajs";
import type { CapturePlan, ProduceScenario, RecordSpec } from "../capture-plan.js";
import { withDeadline } from "../deadline.js";

const { Kafka, logLevel, CompressionTypes, ConfigResourceTypes } = kafkajs;

function log(msg: string): void {
  process.stderr.write(`[kafkajs] ${msg}\n`);
}

function message(r: RecordSpec): {
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
} {
  const headers: Record<string, string> = {};
  for (const h of r.headers) {
    if (h.value === null) throw new Error("KafkaJS cannot send a null header value");
    headers[h.key] = h.value;
  }
  return { key: r.key, value: r.value, headers };
}

function compression(s: ProduceScenario): kafkajs.CompressionTypes {
  switch (s.compression) {
    case "none":
      return CompressionTypes.None;
    case "gzip":
      return CompressionTypes.GZIP;
    default:
      throw new Error(`KafkaJS has no built-in ${s.compression} codec`);
  }
}

async function run(plan: CapturePlan): Promise<void> {
  const kafka = new Kafka({
    clientId: "capture-kafkajs",
    brokers: [plan.bootstrap],
    logLevel: logLevel.ERROR,
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { retries: 2, initialRetryTime: 100 },
  });

  const admin = kafka.admin();
  await admin.connect();
  const [a, b] = plan.admin.topics;
  await admin.createTopics({
    topics: [
      {
        topic: a,
        numPartitions: 2,
        replicationFactor: 1,
        configEntries: [{ name: "retention.ms", value: "3600000" }],
      },
      { topic: b, numPartitions: 1, replicationFactor: 1 },
    ],
    timeout: 5000,
  });
  log(`listTopics: ${(await admin.listTopics()).sort().join(",")}`);
  log(`fetchTopicMetadata: ${(await admin.fetchTopicMetadata({ topics: [a] })).topics.length}`);
  log(`describeCluster: ${(await admin.describeCluster()).clusterId}`);
  await admin.createPartitions({ topicPartitions: [{ topic: b, count: 2 }], timeout: 5000 });
  const configs = await admin.describeConfigs({
    resources: [
      { type: ConfigResourceTypes.TOPIC, name: a },
      { type: ConfigResourceTypes.BROKER, name: "0" },
    ],
    includeSynonyms: false,
  });
  log(`describeConfigs: ${configs.resources.length} resources`);
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: a,
        configEntries: [{ name: "retention.ms", value: "7200000" }],
      },
    ],
  });
  await admin.deleteTopics({ topics: [b], timeout: 5000 });

  for (const s of plan.produce) {
    const producer = s.transactionalId
      ? kafka.producer({ transactionalId: s.transactionalId, idempotent: true, maxInFlightRequests: 1 })
      : kafka.producer({
          idempotent: s.idempotent === true,
          ...(s.idempotent ? { maxInFlightRequests: 1 } : {}),
        });
    await producer.connect();
    const record = {
      topic: s.topic,
      compression: compression(s),
      acks: -1,
      messages: s.records.map(message),
    };
    const send = s.transactionalId
      ? (async () => {
          const txn = await producer.transaction();
          await txn.send({ ...record, messages: record.messages.map((m) => ({ ...m, partition: 0 })) });
          await txn.commit();
        })()
      : producer.send({ ...record, messages: record.messages.map((m) => ({ ...m, partition: 0 })) });
    await withDeadline<unknown>(`produce to ${s.topic}`, 15000, send);
    await producer.disconnect();
    log(`produced ${s.records.length} records to ${s.topic} (${s.compression})`);
  }

  const c = plan.consume;
  log(`fetchTopicOffsets: ${JSON.stringify(await admin.fetchTopicOffsets(c.topic))}`);
  const consumer = kafka.consumer({
    groupId: c.group,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
    retry: { retries: 2 },
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [c.topic], fromBeginning: true });
  let got = 0;
  const done = new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: true,
      eachMessage: async () => {
        got++;
        if (got >= c.expect) resolve();
      },
    });
  });
  await withDeadline("consume", 20000, done);
  await new Promise((r) => setTimeout(r, 1500)); // a heartbeat or two and the auto-commit
  await consumer.disconnect();
  log(`consumed ${got}`);

  log(`listGroups: ${JSON.stringify((await admin.listGroups()).groups)}`);
  log(`describeGroups: ${(await admin.describeGroups([c.group])).groups.length}`);
  log(`fetchOffsets: ${JSON.stringify(await admin.fetchOffsets({ groupId: c.group, topics: [c.topic] }))}`);
  await admin.deleteTopicRecords({ topic: c.topic, partitions: [{ partition: 0, offset: "1" }] });
  log(
    `describeAcls: ${(await admin.describeAcls({ resourceType: kafkajs.AclResourceTypes.ANY, resourcePatternType: kafkajs.ResourcePatternTypes.ANY, operation: kafkajs.AclOperationTypes.ANY, permissionType: kafkajs.AclPermissionTypes.ANY })).resources.length}`,
  );
  await admin.deleteGroups([c.group]);
  await admin.disconnect();
}

const planFile = process.argv[2];
if (planFile) {
  const plan = JSON.parse(readFileSync(planFile, "utf8")) as CapturePlan;
  run(plan).then(
    () => process.exit(0),
    (e: unknown) => {
      log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(1);
    },
  );
}
