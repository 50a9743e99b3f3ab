// Capture driver for @platformatic/kafka. Test-only.
//
// Runs an admin client, one producer per produce scenario and a group consumer against the capture
// server named in the JSON plan given as the first argument, so the server records the request frames
// @platformatic/kafka sends (it uses the recent, flexible API versions). Every wait is bounded. Exits
// non-zero if an expected step fails.
//
// Usage: node dist/test/support/clients/platformatic-kafka-driver.js plan.json
// Without a plan it does nothing (the test runner executes every .js under dist/test/).

import { readFileSync } from "node:fs";
import { Admin, ConfigResourceTypes, Consumer, Producer } from "@platformatic/kafka";
import type { CapturePlan, RecordSpec } from "../capture-plan.js";
import { withDeadline } from "../deadline.js";

function log(msg: string): void {
  process.stderr.write(`[platformatic-kafka] ${msg}\n`);
}

const buf = (s: string | null): Buffer | undefined => (s === null ? undefined : Buffer.from(s, "utf8"));

function message(topic: string, r: RecordSpec) {
  const headers = new Map<Buffer, Buffer>();
  for (const h of r.headers) {
    if (h.value === null) throw new Error("this driver does not send null header values");
    headers.set(Buffer.from(h.key, "utf8"), Buffer.from(h.value, "utf8"));
  }
  return { topic, partition: 0, key: buf(r.key), value: buf(r.value), headers };
}

async function run(plan: CapturePlan): Promise<void> {
  const base = { bootstrapBrokers: [plan.bootstrap], timeout: 10000, retries: 2, retryDelay: 100 };
  const admin = new Admin({ ...base, clientId: "capture-platformatic-admin" });
  const [a, b] = plan.admin.topics;
  await admin.createTopics({
    topics: [a],
    partitions: 2,
    replicas: 1,
    configs: [{ name: "retention.ms", value: "3600000" }],
  });
  await admin.createTopics({ topics: [b], partitions: 1, replicas: 1 });
  log(`listTopics: ${(await admin.listTopics()).sort().join(",")}`);
  log(`metadata: ${(await admin.metadata({ topics: [a] })).topics.size}`);
  await admin.createPartitions({ topics: [{ name: b, count: 2 }] });
  const configs = await admin.describeConfigs({
    resources: [
      { resourceType: ConfigResourceTypes.TOPIC, resourceName: a },
      { resourceType: ConfigResourceTypes.BROKER, resourceName: "0" },
    ],
  });
  log(`describeConfigs: ${configs.length} resources`);
  await admin.alterConfigs({
    resources: [
      {
        resourceType: ConfigResourceTypes.TOPIC,
        resourceName: a,
        configs: [{ name: "retention.ms", value: "7200000" }],
      },
    ],
  });
  await admin.incrementalAlterConfigs({
    resources: [
      {
        resourceType: ConfigResourceTypes.TOPIC,
        resourceName: a,
        configs: [{ name: "segment.bytes", value: "1048576", configOperation: 0 }],
      },
    ],
  });
  await admin.deleteTopics({ topics: [b] });

  for (const s of plan.produce) {
    const producer = new Producer({
      ...base,
      clientId: "capture-platformatic-producer",
      acks: s.acks,
      compression: s.compression,
      idempotent: s.idempotent === true,
      autocreateTopics: true,
    });
    const messages = s.records.map((r) => message(s.topic, r));
    await withDeadline(`produce to ${s.topic}`, 15000, producer.send({ messages }));
    await producer.close();
    log(`produced ${s.records.length} records to ${s.topic} (${s.compression})`);
  }

  const c = plan.consume;
  const consumer = new Consumer({
    ...base,
    clientId: "capture-platformatic-consumer",
    groupId: c.group,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    maxWaitTime: 200,
  });
  const stream = await consumer.consume({ topics: [c.topic], mode: "earliest", autocommit: false });
  let got = 0;
  await withDeadline(
    "consume",
    20000,
    (async () => {
      for await (const m of stream) {
        got++;
        if (got >= c.expect) {
          await m.commit();
          break;
        }
      }
    })(),
  );
  await new Promise((r) => setTimeout(r, 1500)); // a heartbeat or two
  await stream.close();
  await consumer.close();
  log(`consumed ${got}`);

  log(`listGroups: ${[...(await admin.listGroups()).keys()].join(",")}`);
  log(`describeGroups: ${(await admin.describeGroups({ groups: [c.group] })).size}`);
  await admin.deleteRecords({ topics: [{ name: c.topic, partitions: [{ partition: 0, offset: 1n }] }] });
  await admin.deleteGroups({ groups: [c.group] });
  await admin.close();
}

const planFile = process.argv[2];
if (planFile) {
  const plan = JSON.parse(readFileSync(planFile, "utf8")) as CapturePlan;
  run(plan).then(
    () => process.exit(0),
    (e: unknown) => {
      log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (e instanceof Error && "errors" in e) log(`caused by: ${String((e as { errors: unknown }).errors)}`);
      process.exit(1);
    },
  );
}
