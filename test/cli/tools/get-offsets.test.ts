// `tributary get-offsets` end to end: the real executable against a real broker, printing
// GetOffsetShell's `topic:partition:offset` lines for latest/earliest/max-timestamp/timestamps, with
// --topic/--partitions and --topic-partitions filters; offsets cross-checked with kcat -Q.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AdminClient } from "../../../src/client/admin/admin-client.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { buildRecordBatch } from "../../../src/protocol/records/index.js";
import {
  BrokerHarness,
  type CommandResult,
  describeResult,
  runCommand,
} from "../../support/broker-harness.js";
import { runTributary } from "../../support/tributary-cli.js";

let broker: BrokerHarness;
let admin: AdminClient;

/** Runs `tributary <args>`. */
function tributary(...args: string[]): Promise<CommandResult> {
  return runTributary(args, { timeoutMs: 30_000 });
}

function getOffsets(...args: string[]): Promise<CommandResult> {
  return tributary("get-offsets", "--bootstrap-server", broker.bootstrap, ...args);
}

function lines(s: string): string[] {
  return s === "" ? [] : s.replace(/\n$/, "").split("\n");
}

function ok(r: CommandResult, what: string): string[] {
  assert.equal(r.code, 0, describeResult(what, r));
  assert.equal(r.stderr, "", describeResult(what, r));
  return lines(r.stdout);
}

function oneLineError(r: CommandResult, what: string): string {
  assert.equal(r.code, 1, describeResult(what, r));
  const err = lines(r.stderr);
  assert.equal(err.length, 1, describeResult(what, r));
  assert.doesNotMatch(r.stderr + r.stdout, /^\s+at /m, "no stack trace");
  return err[0];
}

/** Appends one batch with these record timestamps (acks=1). */
async function produce(topic: string, partition: number, timestamps: readonly number[]): Promise<void> {
  const conn = await admin.cluster.connectionTo(0);
  const records = buildRecordBatch({
    records: timestamps.map((t, i) => ({ value: Buffer.from(`v${i}`), timestamp: BigInt(t) })),
    timestamp: BigInt(timestamps[0]),
  });
  const res = await conn.send(Apis.Produce, conn.versionFor(Apis.Produce, { min: 3 }), {
    transactionalId: null,
    acks: 1,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  assert.equal(res.responses[0].partitionResponses[0].errorCode, 0);
}

before(async () => {
  broker = await BrokerHarness.start({ name: "tributary-get-offsets-tool" });
  admin = new AdminClient({ bootstrapServers: broker.bootstrap });
  for (const [name, n] of [
    ["go", 12],
    ["other", 1],
  ] as const) {
    const [r] = await admin.createTopics([{ name, numPartitions: n, replicationFactor: 1 }]);
    assert.equal(r.error, undefined);
  }
  await produce("go", 0, [1000, 2000, 3000]);
  await produce("go", 0, [4000, 5000]);
  await produce("go", 2, [1500]);
  await produce("go", 10, [700, 800]);
  await produce("other", 0, [100]);
});
after(async () => {
  await admin?.close();
  await broker?.close();
});

describe("tributary get-offsets", () => {
  test("latest offsets of every partition, sorted as Kafka sorts topic-partition names", async () => {
    const out = ok(await getOffsets("--topic", "go"), "latest");
    // TopicPartition.toString order: go-0, go-1, go-10, go-11, go-2, …
    assert.deepEqual(out, [
      "go:0:5",
      "go:1:0",
      "go:10:2",
      "go:11:0",
      "go:2:1",
      "go:3:0",
      "go:4:0",
      "go:5:0",
      "go:6:0",
      "go:7:0",
      "go:8:0",
      "go:9:0",
    ]);
    assert.deepEqual(ok(await getOffsets("--topic", "go", "--partitions", "0,10", "--time", "-1"), "-1"), [
      "go:0:5",
      "go:10:2",
    ]);
  });

  test("--time earliest, a timestamp, max-timestamp; no line when no offset matches", async () => {
    assert.deepEqual(
      ok(await getOffsets("--topic", "go", "--partitions", "0", "--time", "earliest"), "earliest"),
      ["go:0:0"],
    );
    assert.deepEqual(ok(await getOffsets("--topic", "go", "--partitions", "0,2", "--time", "2500"), "ts"), [
      "go:0:2",
    ]);
    assert.deepEqual(
      ok(await getOffsets("--topic", "go", "--partitions", "0", "--time", "99999"), "late ts"),
      [],
    );
    const max = ok(
      await getOffsets("--topic", "go", "--partitions", "2", "--time", "max-timestamp"),
      "max-ts",
    );
    assert.deepEqual(max, ["go:2:0"]);
  });

  test("offsets agree with kcat -Q (timestamp lookup)", async () => {
    const r = await runCommand("/usr/bin/kcat", [
      "-b",
      broker.bootstrap,
      "-Q",
      "-t",
      "go:0:2500",
      "-t",
      "go:10:750",
    ]);
    assert.equal(r.code, 0, describeResult("kcat -Q", r));
    const kcat = lines(r.stdout)
      .map((l) => /^(\S+) \[(\d+)\] offset (-?\d+)$/.exec(l.trim()))
      .filter((m) => m !== null)
      .map((m) => `${m[1]}:${m[2]}:${m[3]}`)
      .sort();
    const ours = [
      ...ok(await getOffsets("--topic-partitions", "go:0", "--time", "2500"), "ts 2500"),
      ...ok(await getOffsets("--topic-partitions", "go:10", "--time", "750"), "ts 750"),
    ].sort();
    assert.deepEqual(ours, kcat);
  });

  test("--topic-partitions patterns and the topic regular expression", async () => {
    assert.deepEqual(ok(await getOffsets("--topic-partitions", "go:9-,other"), "patterns"), [
      "go:10:2",
      "go:11:0",
      "go:9:0",
      "other:0:1",
    ]);
    assert.deepEqual(
      ok(await getOffsets("--topic-partitions", ":-1", "--time", "-2"), "all topics, partition 0"),
      ["go:0:0", "other:0:0"],
    );
    assert.deepEqual(ok(await getOffsets("--topic", "oth.*"), "regex"), ["other:0:1"]);
  });

  test("errors: one line with Kafka's 'Error occurred:' prefix, exit 1", async () => {
    const cases: Array<[string[], string]> = [
      [
        ["--topic", "nope"],
        "Error occurred: Could not match any topic-partitions with the specified filters",
      ],
      [
        ["--topic", "go", "--time", "yesterday"],
        "Error occurred: Malformed time argument yesterday. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long format timestamp",
      ],
      [
        ["--topic", "go", "--partitions", "1,x"],
        "Error occurred: --partitions expects a comma separated list of numeric partition ids, but received: 1,x",
      ],
      [
        ["--topic-partitions", "go:1", "--topic", "go"],
        "Error occurred: --topic-partitions cannot be used with --topic or --partitions",
      ],
      [["--topic-partitions", "go:a"], "Error occurred: Invalid rule specification: go:a"],
      [["--topic", "go", "--bogus"], "Error occurred: bogus is not a recognized option"],
    ];
    for (const [args, expected] of cases)
      assert.equal(oneLineError(await getOffsets(...args), args.join(" ")), expected);
    assert.equal(
      oneLineError(await tributary("get-offsets", "--topic", "go"), "no bootstrap"),
      'Error occurred: Missing required argument "[bootstrap-server]"',
    );
  });
});
