// `tributary consumer-perf-test` against a real broker: ConsumerPerformance's header and CSV line
// (yyyy-MM-dd HH:mm:ss:SSS dates, %.4f numbers, key + value bytes counted), --show-detailed-stats
// lines, the timeout WARNING, --group (rebalance.time.ms is the real time to get partitions, here at least
// the broker's group.initial.rebalance.delay.ms; the group's commits make a second run find nothing new),
// and bad flags → one line, exit 1.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatDate } from "../../../src/cli/tools/consumer-perf-test.js";
import { KafkaProducer } from "../../../src/client/producer/kafka-producer.js";
import { type CommandResult, describeResult } from "../../support/broker-harness.js";
import { cliToolFixture } from "../../support/cli-tool-fixture.js";
import { runTributary } from "../../support/tributary-cli.js";

const fx = cliToolFixture({
  name: "consumer-perf",
  overrides: { "num.partitions": "4", "group.initial.rebalance.delay.ms": "500" },
  setup: async () => {
    const p = new KafkaProducer({ "bootstrap.servers": fx.broker.bootstrap, "linger.ms": "5" });
    const sends = [];
    // 4000 records of 1 KiB value + 4-byte key: 4000 * 1028 bytes.
    for (let i = 0; i < 4000; i++)
      sends.push(p.send({ topic: "cperf", key: `k${i % 10}00`, value: Buffer.alloc(1024, 66) }));
    await Promise.all(sends);
    await p.close();
  },
});

function tributary(args: string[]): Promise<CommandResult> {
  return runTributary(args, { timeoutMs: 60_000 });
}

/** Runs consumer-perf-test on topic cperf for `messages` records. */
function perfTest(messages: string, ...extra: string[]): Promise<CommandResult> {
  return tributary([
    "consumer-perf-test",
    "--bootstrap-server",
    fx.broker.bootstrap,
    "--topic",
    "cperf",
    "--messages",
    messages,
    ...extra,
  ]);
}

const DATE = String.raw`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}:\d{3}`;
const NUM = String.raw`\d+\.\d{4}`;
const HEADER =
  "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";

describe("consumer-perf-test", () => {
  test("header and CSV line with Kafka's formats; bytes are key + value", async () => {
    const r = await perfTest("4000");
    assert.equal(r.code, 0, describeResult("consumer-perf-test", r));
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    assert.equal(lines.length, 2, r.stdout);
    assert.equal(lines[0], HEADER);
    const m = new RegExp(
      `^(${DATE}), (${DATE}), (${NUM}), ${NUM}, (\\d+), ${NUM}, (\\d+), (\\d+), ${NUM}, ${NUM}$`,
    ).exec(lines[1]);
    assert.ok(m, lines[1]);
    assert.equal(m[3], ((4000 * 1028) / (1024 * 1024)).toFixed(4));
    assert.equal(m[4], "4000");
    assert.ok(Number(m[5]) >= 500, `rebalance.time.ms ${m[5]} includes the initial rebalance delay`);
  });

  test("--group: the group's committed offsets carry over to the next run", async () => {
    const run = (timeout: string) =>
      perfTest("4000", "--group", "perf-group", "--timeout", timeout, "--hide-header");
    const first = await run("10000");
    assert.equal(first.code, 0, describeResult("consumer-perf-test --group", first));
    const m = new RegExp(
      `^(${DATE}), (${DATE}), ${NUM}, ${NUM}, 4000, ${NUM}, (\\d+), (\\d+), ${NUM}, ${NUM}$`,
    ).exec(first.stdout.trim());
    assert.ok(m, first.stdout);
    assert.ok(Number(m[3]) >= 500, `rebalance.time.ms ${m[3]}`);
    const second = await run("1000");
    assert.equal(second.code, 0, describeResult("consumer-perf-test --group, second run", second));
    const lines = second.stdout.trim().split("\n");
    assert.match(lines[0], /^WARNING: Exiting before consuming the expected number of messages/);
    assert.match(lines[1], new RegExp(`^${DATE}, ${DATE}, 0\\.0000, ${NUM}, 0, `));
  });

  test("--show-detailed-stats prints time, threadId, ... lines; --hide-header drops the header", async () => {
    const r = await perfTest(
      "4000",
      "--show-detailed-stats",
      "--reporting-interval",
      "1",
      "--hide-header",
      "--fetch-size",
      "20000",
      // Kafka's flag for the socket's receive buffer: accepted (Node cannot set SO_RCVBUF).
      "--socket-buffer-size",
      "1048576",
    );
    assert.equal(r.code, 0, describeResult("consumer-perf-test", r));
    const lines = r.stdout
      .replace(/\n$/, "")
      .split("\n")
      .filter((l) => l !== "");
    assert.ok(lines.length >= 1, r.stdout);
    for (const l of lines)
      assert.match(l, new RegExp(`^${DATE}, 0, ${NUM}, ${NUM}, \\d+, ${NUM}, \\d+, -?\\d+, ${NUM}, ${NUM}$`));
  });

  test("too few messages: Kafka's WARNING after --timeout", async () => {
    const r = await perfTest("5000", "--timeout", "1000");
    assert.equal(r.code, 0, describeResult("consumer-perf-test", r));
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    assert.equal(
      lines[1],
      "WARNING: Exiting before consuming the expected number of messages: timeout (1000 ms) exceeded. You can use the --timeout option to increase the timeout.",
    );
    assert.match(lines[2], new RegExp(`^${DATE}, ${DATE}, ${NUM}, ${NUM}, 4000, `));
  });

  test("bad flags: one line, exit 1", async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ["--bootstrap-server", fx.broker.bootstrap, "--topic", "cperf"],
        /Missing required argument "\[messages\]"/,
      ],
      [
        ["--bootstrap-server", fx.broker.bootstrap, "--messages", "10"],
        /Exactly one of the following arguments is required/,
      ],
      [
        ["--bootstrap-server", fx.broker.bootstrap, "--topic", "cperf", "--messages", "x"],
        /Cannot parse argument 'x' of option messages/,
      ],
      [
        [
          "--bootstrap-server",
          fx.broker.bootstrap,
          "--topic",
          "cperf",
          "--messages",
          "1",
          "--reporting-interval",
          "0",
        ],
        /Reporting interval must be greater than 0/,
      ],
      [
        ["--bootstrap-server", fx.broker.bootstrap, "--topic", "nope", "--messages", "1"],
        /Topic 'nope' does not exist/,
      ],
      [["--wat"], /wat is not a recognized option/],
    ];
    for (const [args, want] of cases) {
      const r = await tributary(["consumer-perf-test", ...args]);
      assert.equal(r.code, 1, describeResult(args.join(" "), r));
      const err = r.stderr.replace(/\n$/, "").split("\n");
      assert.equal(err.length, 1, describeResult(args.join(" "), r));
      assert.match(err[0], want);
    }
  });

  test("formatDate follows SimpleDateFormat for Kafka's default pattern", () => {
    const d = new Date(2024, 0, 2, 3, 4, 5, 6).getTime();
    assert.equal(formatDate(d, "yyyy-MM-dd HH:mm:ss:SSS"), "2024-01-02 03:04:05:006");
    assert.equal(formatDate(d, "dd/MM/yy 'at' HH"), "02/01/24 at 03");
  });
});
