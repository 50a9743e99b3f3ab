// `tributary producer-perf-test` against a real broker: ProducerPerformance's exact summary and window
// line formats (also checked with a fixed clock), the records really written (kcat counts them and
// checks the payload size and alphabet), --throughput throttling, --warmup-records (KIP-1052: the
// steady-state summary after the whole run's), --payload-file, and bad flags → one line, exit 1.

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { describe, test } from "node:test";
import { ProducerPerfStats } from "../../../src/cli/tools/producer-perf-test.js";
import { type CommandResult, describeResult, readWithKcat } from "../../support/broker-harness.js";
import { cliToolFixture } from "../../support/cli-tool-fixture.js";
import { runTributary } from "../../support/tributary-cli.js";

const fx = cliToolFixture({ name: "producer-perf", overrides: { "num.partitions": "3" } });

function tributary(args: string[]): Promise<CommandResult> {
  return runTributary(args, { timeoutMs: 60_000 });
}

const SUMMARY =
  /^(\d+) records sent, \d+\.\d{6} records\/sec \(\d+\.\d{2} MB\/sec\), \d+\.\d{2} ms avg latency, \d+\.00 ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$/;
const WINDOW =
  /^\d+ records sent, \d+\.\d records\/sec \(\d+\.\d{2} MB\/sec\), \d+\.\d ms avg latency, \d+\.0 ms max latency\.$/;

/** producer-perf-test of `records` × 100 bytes to `topic`, unthrottled, against the fixture's broker. */
function perfTest(topic: string, records: number, flags: string[], props: string[] = []) {
  return tributary([
    "producer-perf-test",
    "--topic",
    topic,
    "--num-records",
    String(records),
    ...flags,
    "--record-size",
    "100",
    "--throughput",
    "-1",
    "--producer-props",
    `bootstrap.servers=${fx.broker.bootstrap}`,
    ...props,
  ]);
}

describe("producer-perf-test", () => {
  test("the summary line, and kcat reads every record with --record-size uppercase letters", async () => {
    const r = await perfTest("perf", 3000, [], ["acks=1", "linger.ms=5"]);
    assert.equal(r.code, 0, describeResult("producer-perf-test", r));
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    const m = SUMMARY.exec(lines[lines.length - 1]);
    assert.ok(m, `summary line: ${lines[lines.length - 1]}`);
    assert.equal(m[1], "3000");
    const got = await readWithKcat(fx.broker.bootstrap, "perf");
    assert.equal(got.length, 3000);
    for (const rec of got) assert.match(rec.value, /^[A-Z]{100}$/);
  });

  test("--throughput throttles, and a window line is printed every 5 s", async () => {
    const started = Date.now();
    const r = await tributary([
      "producer-perf-test",
      "--topic",
      "perf-slow",
      "--num-records",
      "1500",
      "--record-size",
      "10",
      "--throughput",
      "250",
      "--producer-props",
      `bootstrap.servers=${fx.broker.bootstrap}`,
    ]);
    const took = Date.now() - started;
    assert.equal(r.code, 0, describeResult("producer-perf-test", r));
    assert.ok(took >= 5000, `1500 records at 250/s took ${took} ms`);
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    assert.ok(lines.length >= 2, r.stdout);
    for (const l of lines.slice(0, -1)) assert.match(l, WINDOW);
    assert.match(lines[lines.length - 1], SUMMARY);
  });

  test("--warmup-records: the whole-run summary, then the steady-state one (KIP-1052)", async () => {
    const r = await perfTest("perf-warmup", 2000, ["--warmup-records", "500"]);
    assert.equal(r.code, 0, describeResult("producer-perf-test", r));
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    assert.equal(
      lines[0],
      "Warmup first 500 records. Steady state results will print after the complete test summary.",
    );
    const whole = SUMMARY.exec(lines[lines.length - 2]);
    assert.ok(whole, `whole-run summary: ${lines[lines.length - 2]}`);
    assert.equal(whole[1], "2000");
    assert.match(
      lines[lines.length - 1],
      /^1500 steady state records sent, \d+\.\d{6} records\/sec \(\d+\.\d{2} MB\/sec\), \d+\.\d{2} ms avg latency, \d+\.00 ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$/,
    );
    assert.equal((await readWithKcat(fx.broker.bootstrap, "perf-warmup")).length, 2000);
  });

  test("--payload-file with --producer.config", async () => {
    const dir = mkdtempSync(resolve(tmpdir(), "perf-payload-"));
    writeFileSync(resolve(dir, "payloads.txt"), "alpha\nbeta\ngamma\n");
    writeFileSync(
      resolve(dir, "producer.properties"),
      `bootstrap.servers=${fx.broker.bootstrap}\ncompression.type=lz4\n`,
    );
    const r = await tributary([
      "producer-perf-test",
      "--topic",
      "perf-payloads",
      "--num-records",
      "300",
      "--payload-file",
      resolve(dir, "payloads.txt"),
      "--throughput",
      "-1",
      "--producer.config",
      resolve(dir, "producer.properties"),
    ]);
    assert.equal(r.code, 0, describeResult("producer-perf-test", r));
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    assert.equal(lines[0], `Reading payloads from: ${resolve(dir, "payloads.txt")}`);
    assert.equal(lines[1], "Number of messages read: 3");
    assert.match(lines[lines.length - 1], SUMMARY);
    const got = await readWithKcat(fx.broker.bootstrap, "perf-payloads");
    assert.equal(got.length, 300);
    assert.deepEqual([...new Set(got.map((g) => g.value))].sort(), ["alpha", "beta", "gamma"]);
  });

  test("--payload-monotonic: each record's value is its index", async () => {
    const r = await tributary([
      "producer-perf-test",
      ...["--topic", "perf-monotonic", "--num-records", "50", "--payload-monotonic", "--throughput", "-1"],
      ...["--producer-props", `bootstrap.servers=${fx.broker.bootstrap}`, "partitioner.ignore.keys=true"],
    ]);
    assert.equal(r.code, 0, describeResult("producer-perf-test --payload-monotonic", r));
    assert.match(r.stdout.replace(/\n$/, "").split("\n").at(-1)!, SUMMARY);
    const got = await readWithKcat(fx.broker.bootstrap, "perf-monotonic");
    assert.deepEqual(
      got.map((g) => Number(g.value)).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  test("bad flags: one line, exit 1", async () => {
    /** Otherwise valid flags with --num-records `n` and `extra`. */
    const argsWith = (n: string, extra: string[] = []): string[] => [
      "--topic",
      "t",
      "--num-records",
      n,
      ...extra,
      "--record-size",
      "1",
      "--throughput",
      "-1",
      "--producer-props",
      "a=b",
    ];
    const cases: Array<[string[], RegExp]> = [
      [
        ["--num-records", "10", "--record-size", "1", "--throughput", "-1", "--producer-props", "a=b"],
        /argument --topic is required/,
      ],
      [argsWith("ten"), /argument --num-records: could not convert 'ten'/],
      [
        ["--topic", "t", "--num-records", "10", "--throughput", "-1", "--producer-props", "a=b"],
        /exactly one of --record-size or --payload-file or --payload-monotonic/,
      ],
      [
        argsWith("10", ["--payload-monotonic"]),
        /exactly one of --record-size or --payload-file or --payload-monotonic/,
      ],
      [
        ["--topic", "t", "--num-records", "10", "--record-size", "1", "--throughput", "-1"],
        /Either --producer-props or --producer.config must be specified/,
      ],
      [argsWith("0"), /--num-records should be greater than zero/],
      [
        argsWith("10", ["--warmup-records", "10"]),
        /^tributary producer-perf-test: The value for --warmup-records must be strictly fewer than the number of records in the test, --num-records\.$/,
      ],
      [
        [
          "--topic",
          "t",
          "--num-records",
          "1",
          "--record-size",
          "1",
          "--throughput",
          "-1",
          "--producer-props",
          "acks=x",
          `bootstrap.servers=${fx.broker.bootstrap}`,
        ],
        /Invalid value x for configuration acks/,
      ],
      [["--topic", "t", "--bogus"], /unrecognized argument '--bogus'/],
    ];
    for (const [args, want] of cases) {
      const r = await tributary(["producer-perf-test", ...args]);
      assert.equal(r.code, 1, describeResult(args.join(" "), r));
      const err = r.stderr.replace(/\n$/, "").split("\n");
      assert.equal(err.length, 1, describeResult(args.join(" "), r));
      assert.match(err[0], want);
    }
  });
});

/** Stats printing into `out` on a clock the test moves (`clock.now`). */
function fixedClockStats(
  numRecords: number,
  clock: { now: number },
  out: string[],
  steadyState = false,
): ProducerPerfStats {
  return new ProducerPerfStats(
    numRecords,
    (l) => out.push(l),
    () => clock.now,
    5000,
    steadyState,
  );
}

describe("ProducerPerfStats", () => {
  test("prints ProducerPerformance's lines with a fixed clock", () => {
    const clock = { now: 1000 };
    const out: string[] = [];
    const stats = fixedClockStats(10, clock, out);
    for (let i = 0; i < 10; i++) {
      clock.now += 1000;
      stats.record(i + 1, 1024, clock.now);
    }
    // Windows close at 5 s and 10 s; each holds 5 records of 1 KiB.
    assert.deepEqual(out, [
      "5 records sent, 1.0 records/sec (0.00 MB/sec), 3.0 ms avg latency, 5.0 ms max latency.",
      "5 records sent, 1.0 records/sec (0.00 MB/sec), 8.0 ms avg latency, 10.0 ms max latency.",
    ]);
    stats.printTotal();
    assert.equal(
      out[2],
      "10 records sent, 1.000000 records/sec (0.00 MB/sec), 5.50 ms avg latency, 10.00 ms max latency, 6 ms 50th, 10 ms 95th, 10 ms 99th, 10 ms 99.9th.",
    );
  });

  test("the steady-state Stats of --warmup-records: 'In steady state.', its windows, its summary", () => {
    const clock = { now: 0 };
    const out: string[] = [];
    const whole = fixedClockStats(20, clock, out);
    let steady: ProducerPerfStats | undefined;
    for (let i = 0; i < 20; i++) {
      clock.now += 1000;
      if (i === 8) {
        steady = fixedClockStats(12, clock, out, true);
        whole.suppressPrinting();
      }
      whole.record(2, 100, clock.now);
      steady?.record(2, 100, clock.now);
    }
    // The whole run printed its first window (at 5 s) only; the steady state announces itself once.
    assert.deepEqual(out, [
      "5 records sent, 1.0 records/sec (0.00 MB/sec), 2.0 ms avg latency, 2.0 ms max latency.",
      "In steady state.",
      // Created at 9 s with its first record: 6 records by 14 s.
      "6 records sent, 1.2 records/sec (0.00 MB/sec), 2.0 ms avg latency, 2.0 ms max latency.",
      "5 records sent, 1.0 records/sec (0.00 MB/sec), 2.0 ms avg latency, 2.0 ms max latency.",
    ]);
    out.length = 0;
    whole.printTotal();
    steady?.printTotal();
    assert.match(out[0], /^20 records sent, /);
    assert.equal(
      out[1],
      "12 steady state records sent, 1.090909 records/sec (0.00 MB/sec), 2.00 ms avg latency, 2.00 ms max latency, 2 ms 50th, 2 ms 95th, 2 ms 99th, 2 ms 99.9th.",
    );
  });
});
