// confluent-kafka (python3-confluent-kafka 1.7 over librdkafka 2.0) against a real Tributary broker
// started by the harness (issue 4, "Must show"): AdminClient create (incl. validate_only), describe
// configs, alter configs, create partitions, delete topics; Producer with acks=all (several codecs);
// Consumer with assign + seek reading everything back; list offsets (watermarks, offsets for times) and
// delete records. Driven through test/support/clients/broker-confluent-kafka.py, one scenario a run.
//
// The Debian binding's AdminClient has neither delete_records nor list_offsets: offsets are listed with
// the Consumer (ListOffsets earliest/latest/by time), and DeleteRecords is sent with KafkaJS's admin,
// confluent-kafka then checking the new low watermark.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { BrokerHarness, describeResult, pushTo, runCommand, sleep } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";

const PYTHON = "/usr/bin/python3";
const DRIVER = resolve(process.cwd(), "test/support/clients/broker-confluent-kafka.py");
const PER_CODEC = 10_000;
const CODECS = ["lz4", "snappy", "gzip"] as const;

describe("confluent-kafka against a single Tributary broker", {
  skip: skipUnlessInstalled("python3", "confluent-kafka"),
  timeout: 180_000,
}, () => {
  let broker: BrokerHarness;

  // biome-ignore lint/suspicious/noExplicitAny: the driver's JSON, asserted field by field
  async function driver(scenario: string, args: object = {}, timeoutMs = 60_000): Promise<any> {
    const r = await runCommand(PYTHON, [DRIVER, broker.bootstrap, scenario, JSON.stringify(args)], {
      timeoutMs,
    });
    assert.equal(r.code, 0, `${describeResult(`confluent-kafka ${scenario}`, r)}\n${broker.output}`);
    return JSON.parse(r.stdout);
  }

  before(async () => {
    broker = await BrokerHarness.start({ name: "confluent-kafka-test" });
  });
  after(async () => {
    await broker?.close();
  });

  test("AdminClient: create topics (and validate_only), describe and alter configs, create partitions, delete topics", async () => {
    const r = await driver("admin");
    assert.deepEqual(r.create, { "cf-admin": null, "cf-grow": null, "cf-doomed": null });
    assert.deepEqual(r.create_again, { "cf-admin": "TOPIC_ALREADY_EXISTS" });
    assert.deepEqual(r.create_validate_only, { "cf-validate-only": null });
    assert.deepEqual(r.partitions_after_create, {
      "cf-admin": [0, 1, 2],
      "cf-grow": [0],
      "cf-doomed": [0, 1],
      "cf-validate-only": null, // validate_only creates nothing
    });
    assert.deepEqual(r.brokers, { "0": broker.bootstrap });
    assert.equal(typeof r.cluster_id, "string");
    assert.ok(r.cluster_id.length > 0);
    assert.equal(r.controller_id, 0);
    assert.deepEqual(r.leaders, { "0": [0, [0], [0]], "1": [0, [0], [0]], "2": [0, [0], [0]] });

    // DescribeConfigs: the override with source DYNAMIC_TOPIC_CONFIG (1), a default with DEFAULT_CONFIG (5).
    assert.deepEqual(r.configs_before["retention.ms"], {
      value: "3600000",
      source: 1,
      is_default: false,
      read_only: false,
    });
    assert.equal(r.configs_before["cleanup.policy"].value, "delete");
    assert.equal(r.configs_before["cleanup.policy"].is_default, true);
    assert.equal(r.configs_before["cleanup.policy"].source, 5);
    assert.equal(r.configs_before["segment.bytes"].value, "1073741824");

    assert.deepEqual(Object.values(r.alter), [null]);
    assert.equal(r.configs_after["retention.ms"].value, "7200000");
    assert.equal(r.configs_after["cleanup.policy"].value, "compact");
    assert.equal(r.configs_after["cleanup.policy"].source, 1);
    assert.equal(r.broker_configs["broker.id"], "0");
    assert.equal(r.broker_configs["log.dirs"], broker.logDir);

    assert.deepEqual(r.create_partitions, { "cf-grow": null });
    assert.deepEqual(r.create_partitions_shrink, { "cf-grow": "INVALID_PARTITIONS" });
    assert.deepEqual(r.partitions_after_grow, { "cf-grow": [0, 1, 2, 3] });

    assert.deepEqual(r.delete, { "cf-doomed": null });
    assert.deepEqual(r.delete_unknown, { "cf-never-was": "UNKNOWN_TOPIC_OR_PART" });
    assert.deepEqual(r.topics_after_delete, ["cf-admin", "cf-grow"]);
  });

  test(`Producer acks=all (${CODECS.join(", ")}) then Consumer assign + seek reads all ${PER_CODEC * CODECS.length} back`, async () => {
    const topic = "cf-data";
    assert.deepEqual((await driver("create", { topics: [{ name: topic, partitions: 4 }] })).create, {
      [topic]: null,
    });
    const acked = new Map<number, number[]>();
    for (const codec of CODECS) {
      const p = await driver("produce", { topic, count: PER_CODEC, compression: codec, prefix: codec });
      assert.deepEqual([p.acked, p.undelivered, p.errors], [PER_CODEC, 0, []], `produce ${codec}`);
      for (const [part, off] of p.offsets as Array<[number, number]>) {
        pushTo(acked, part, off);
      }
    }
    const seek = 17;
    const c = await driver("consume", { topic, seek });
    assert.equal(c.timed_out, false, "the consumer did not reach the end of every partition");
    const total = Object.values(c.messages as Record<string, unknown[]>).reduce((n, l) => n + l.length, 0);
    assert.equal(total, PER_CODEC * CODECS.length);

    const values = new Set<string>();
    for (const [p, msgs] of Object.entries(
      c.messages as Record<string, Array<[number, string, string, Record<string, string>]>>,
    )) {
      const part = Number(p);
      assert.deepEqual(c.watermarks[p], [0, msgs.length], `watermarks of partition ${p}`);
      // Every acknowledged offset is there, with dense offsets from 0.
      assert.deepEqual(
        msgs.map((m) => m[0]),
        [...(acked.get(part) ?? [])].sort((a, b) => a - b),
        `partition ${p}: consumed offsets = acknowledged offsets`,
      );
      msgs.forEach((m, i) => {
        assert.equal(m[0], i);
        const [codec, n] = m[2].split("-");
        assert.equal(m[1], `key-${Number(n) % 101}`);
        assert.deepEqual(m[3], { i: String(Number(n)) });
        values.add(`${codec}-${n}`);
      });
      for (const codec of CODECS) {
        const seq = msgs.filter((m) => m[2].startsWith(`${codec}-`)).map((m) => m[2]);
        assert.deepEqual(seq, [...seq].sort(), `partition ${p}: ${codec} messages out of order`);
      }
    }
    assert.equal(values.size, PER_CODEC * CODECS.length, "some messages came back twice or not at all");
    // After seek(partition 0, 17): offsets 17.. end of partition 0, once each.
    const p0 = (c.messages["0"] as unknown[]).length;
    assert.deepEqual(
      c.after_seek,
      Array.from({ length: p0 - seek }, (_, i) => seek + i),
    );
  });

  test("list offsets (watermarks, offsets for times) and delete records", async () => {
    const topic = "cf-times";
    assert.deepEqual((await driver("create", { topics: [{ name: topic, partitions: 2 }] })).create, {
      [topic]: null,
    });
    const first = await driver("produce", { topic, count: 200, prefix: "first" });
    assert.equal(first.acked, 200);
    await sleep(50);
    const t = Date.now();
    await sleep(50);
    const second = await driver("produce", { topic, count: 200, prefix: "second" });
    assert.equal(second.acked, 200);
    const end = new Map<number, number>();
    for (const [p, o] of [...first.offsets, ...second.offsets] as Array<[number, number]>)
      end.set(p, Math.max(end.get(p) ?? 0, o + 1));
    const firstSecond = new Map<number, number>();
    for (const [p, o] of second.offsets as Array<[number, number]>)
      firstSecond.set(p, Math.min(firstSecond.get(p) ?? Number.MAX_SAFE_INTEGER, o));

    const future = Date.now() + 3_600_000;
    const o = await driver("offsets", { topic, times: [0, t, future] });
    for (const p of [0, 1]) {
      assert.deepEqual(o.watermarks[String(p)], [0, end.get(p)], `partition ${p} watermarks`);
      assert.equal(o.for_times["0"][String(p)], 0, `partition ${p}: offset for time 0`);
      assert.equal(
        o.for_times[String(t)][String(p)],
        firstSecond.get(p),
        `partition ${p}: offset for time ${t}`,
      );
      assert.equal(o.for_times[String(future)][String(p)], -1, `partition ${p}: offset for a future time`);
    }

    // DeleteRecords (with KafkaJS: the Debian confluent-kafka has no delete_records), then the new low
    // watermark through confluent-kafka and a consumer that starts there.
    const kafka = new kafkajs.Kafka({
      clientId: "cf-test-delete",
      brokers: [broker.bootstrap],
      logLevel: kafkajs.logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] }); // KafkaJS needs the leaders loaded first
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: "50" }] });
    } finally {
      await admin.disconnect();
    }
    const after = await driver("offsets", { topic });
    assert.deepEqual(after.watermarks["1"], [50, end.get(1)]);
    assert.deepEqual(after.watermarks["0"], [0, end.get(0)]);
    const c = await driver("consume", { topic, seek: 0 });
    assert.equal(c.messages["1"].length, (end.get(1) ?? 0) - 50);
    assert.equal(c.messages["1"][0][0], 50);
  });
});
