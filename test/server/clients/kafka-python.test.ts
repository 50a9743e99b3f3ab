// kafka-python 2.0 (python3-kafka) against a real Tributary broker started by the harness (issue 4,
// "Must show"): admin create/list/describe/delete topics; producer (acks=all and acks=1, gzip and none)
// and a consumer with assign + seek (no group) reading every message back. Driven through
// test/support/clients/broker-kafka-python.py, one scenario a run.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { BrokerHarness, describeResult, pushTo, runCommand } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";

const PYTHON = "/usr/bin/python3";
const DRIVER = resolve(process.cwd(), "test/support/clients/broker-kafka-python.py");
const COUNT = 5000;
describe("kafka-python against a single Tributary broker", {
  skip: skipUnlessInstalled("python3", "kafka-python"),
  timeout: 180_000,
}, () => {
  let broker: BrokerHarness;

  // biome-ignore lint/suspicious/noExplicitAny: the driver's JSON, asserted field by field
  async function driver(scenario: string, args: object = {}, timeoutMs = 90_000): Promise<any> {
    const r = await runCommand(PYTHON, [DRIVER, broker.bootstrap, scenario, JSON.stringify(args)], {
      timeoutMs,
    });
    assert.equal(r.code, 0, `${describeResult(`kafka-python ${scenario}`, r)}\n${broker.output}`);
    return JSON.parse(r.stdout);
  }

  before(async () => {
    broker = await BrokerHarness.start({ name: "kafka-python-test" });
  });
  after(async () => {
    await broker?.close();
  });

  test("KafkaAdminClient: create, list, describe and delete topics; describe the cluster", async () => {
    const r = await driver("admin");
    assert.deepEqual(r.create, { "kp-admin": 0, "kp-doomed": 0 });
    assert.equal(r.create_again, "TopicAlreadyExistsError");
    assert.deepEqual(r.topics, ["kp-admin", "kp-doomed"]);
    assert.deepEqual(r.describe, [
      {
        topic: "kp-admin",
        error_code: 0,
        partitions: [
          [0, 0, [0], [0]],
          [1, 0, [0], [0]],
          [2, 0, [0], [0]],
        ],
      },
    ]);
    assert.equal(r.cluster.controller_id, 0);
    assert.ok(
      typeof r.cluster.cluster_id === "string" && r.cluster.cluster_id.length > 0,
      JSON.stringify(r.cluster),
    );
    assert.deepEqual(r.cluster.brokers, [[0, broker.host, broker.port]]);
    assert.deepEqual(r.delete, { "kp-doomed": 0 });
    assert.deepEqual(r.topics_after_delete, ["kp-admin"]);
  });

  for (const [acks, compression] of [
    ["all", "gzip"],
    [1, null],
  ] as const) {
    test(`KafkaProducer acks=${acks} compression=${compression}, KafkaConsumer assign + seek reads all ${COUNT} back`, async () => {
      const topic = `kp-data-${acks}`;
      const seek = 11;
      const r = await driver("roundtrip", { topic, partitions: 3, count: COUNT, acks, compression, seek });
      assert.deepEqual(r.created, { [topic]: 0 });
      assert.deepEqual(r.partitions, [0, 1, 2]);
      const acked = new Map<string, number[]>();
      for (const [p, o] of r.acked as Array<[number, number]>) {
        pushTo(acked, String(p), o);
      }
      const seen = new Set<string>();
      for (const [p, msgs] of Object.entries(
        r.messages as Record<string, Array<[number, string, string, Record<string, string>]>>,
      )) {
        assert.equal(r.ends[p], msgs.length, `end offset of partition ${p}`);
        assert.deepEqual(
          msgs.map((m) => m[0]),
          [...(acked.get(p) ?? [])].sort((a, b) => a - b),
          `partition ${p}: consumed offsets = acknowledged offsets`,
        );
        msgs.forEach((m, i) => {
          assert.equal(m[0], i, `partition ${p}: dense offsets`);
          const n = Number(m[2].slice(2));
          assert.equal(m[1], `key-${n % 37}`);
          assert.deepEqual(m[3], { i: String(n) });
          seen.add(m[2]);
        });
        const values = msgs.map((m) => m[2]);
        assert.deepEqual(values, [...values].sort(), `partition ${p}: order kept`);
      }
      assert.equal(seen.size, COUNT);
      const p0 = r.messages["0"].length;
      assert.deepEqual(
        r.after_seek,
        Array.from({ length: p0 - seek }, (_, i) => seek + i),
      );
    });
  }
});
