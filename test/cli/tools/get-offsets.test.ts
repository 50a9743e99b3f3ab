// `tributary get-offsets` end to end: the real executable against a real broker, printing
// GetOffsetShell's `topic:partition:offset` lines for latest/earliest/max-timestamp/timestamps, with
// --topic/--partitions and --topic-partitions filters; offsets cross-checked with kcat -Q.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { describeResult, runCommand } from "../../support/broker-harness.js";
import { cliToolFixture, lines, ok, oneLineError, tributary } from "../../support/cli-tool-fixture.js";
import { produceWithTimestamps } from "../../support/produce-timestamps.js";

/** Appends one batch with these record timestamps (acks=1). */
function produce(topic: string, partition: number, timestamps: readonly number[]): Promise<void> {
  return produceWithTimestamps(fx.admin, topic, partition, timestamps);
}

const fx = cliToolFixture({
  name: "tributary-get-offsets-tool",
  admin: true,
  setup: async () => {
    await fx.createTopics([
      { name: "go", partitions: 12 },
      { name: "other", partitions: 1 },
    ]);
    await produce("go", 0, [1000, 2000, 3000]);
    await produce("go", 0, [4000, 5000]);
    await produce("go", 2, [1500]);
    await produce("go", 10, [700, 800]);
    await produce("other", 0, [100]);
  },
});
const getOffsets = fx.tool("get-offsets");

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
      fx.broker.bootstrap,
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
