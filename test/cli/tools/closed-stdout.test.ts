// The tools when the reader of their output goes away (`tributary … | head`), each the real executable
// against a real broker: a tool that streams output (console-consumer, dump-log, producer-perf-test)
// stops within seconds of its reader closing, console-consumer with Kafka's line on stderr and its group
// left; a tool that changes state (reassign-partitions --verify clearing throttles, configs --alter,
// delete-records) finishes its work with stdout closed from its first write, and exits with its usual
// status; none prints a stack trace. "Closed from the start" is `| head` that has already exited: every
// write the tool makes fails with EPIPE, deterministically, where a reader closing after a line races
// the tool's next write.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { GroupAdmin } from "../../../src/client/admin/group-admin.js";
import { type CommandResult, describeResult, runCommand } from "../../support/broker-harness.js";
import { cliToolFixture, lines } from "../../support/cli-tool-fixture.js";
import { tributaryArgv } from "../../support/tributary-cli.js";

const RECORDS = 30_000;

const fx = cliToolFixture({
  name: "tributary-closed-stdout",
  admin: true,
  setup: async () => {
    await fx.createTopics([
      { name: "big", partitions: 1 },
      { name: "small", partitions: 2 },
    ]);
    const input = Array.from({ length: RECORDS }, (_, i) => `record-${i}`).join("\n");
    const k = await runCommand("/usr/bin/kcat", ["-b", fx.broker.bootstrap, "-P", "-t", "big", "-p", "0"], {
      input,
      timeoutMs: 60_000,
    });
    assert.equal(k.code, 0, describeResult("kcat -P", k));
    for (const p of [0, 1]) {
      const s = await runCommand(
        "/usr/bin/kcat",
        ["-b", fx.broker.bootstrap, "-P", "-t", "small", "-p", String(p)],
        { input: "a\nb\nc\nd" },
      );
      assert.equal(s.code, 0, describeResult("kcat -P small", s));
    }
  },
});

interface ClosedRun extends CommandResult {
  /** The first line the reader got (undefined when stdout was closed from the start). */
  readonly firstLine: string | undefined;
  /** Milliseconds from the reader closing to the tool's exit. */
  readonly exitAfterCloseMs: number;
}

/**
 * Runs `tributary <args>` with stdout a pipe whose reader closes: at once ("start"), or once the first
 * line has arrived ("first-line"). Bounded by `timeoutMs` (SIGKILL, and the result says so).
 */
function runWithClosingReader(
  args: readonly string[],
  when: "start" | "first-line",
  timeoutMs = 30_000,
): Promise<ClosedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, tributaryArgv(args), { stdio: ["ignore", "pipe", "pipe"] });
    let closedAt = Date.now();
    let firstLine: string | undefined;
    let seen = "";
    let err = "";
    const close = (): void => {
      child.stdout.destroy();
      closedAt = Date.now();
    };
    if (when === "start") close();
    else
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        seen += d;
        const nl = seen.indexOf("\n");
        if (firstLine === undefined && nl >= 0) {
          firstLine = seen.slice(0, nl);
          close();
        }
      });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: firstLine ?? "",
        stderr: killed ? `${err}\n[test] killed after ${timeoutMs} ms` : err,
        firstLine,
        exitAfterCloseMs: Date.now() - closedAt,
      });
    });
  });
}

function assertNoStackTrace(r: CommandResult, what: string): void {
  assert.doesNotMatch(r.stderr, /^\s+at /m, `${what}: no stack trace\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /EPIPE|Unhandled 'error' event/, `${what}: no EPIPE\n${r.stderr}`);
}

const bootstrap = (): string[] => ["--bootstrap-server", fx.broker.bootstrap];

/**
 * Runs `<argv> | head -n 1` in bash, in a process group of its own, killed whole after `timeoutMs`: a tool
 * that never exits must not outlive the test holding the pipes open. stderr gets the tool's stderr and
 * then "tool exit N".
 */
function pipeIntoHead(argv: readonly string[], timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash script; PIPESTATUS is bash's variable
    const script = '"$@" | head -n 1; echo "tool exit ${PIPESTATUS[0]}" >&2';
    const child = spawn("bash", ["-c", script, "bash", ...argv], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      process.kill(-child.pid!, "SIGKILL");
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: out,
        stderr: killed ? `${err}\n[test] killed after ${timeoutMs} ms` : err,
      });
    });
  });
}

describe("a tool whose output is piped into a reader that goes away", () => {
  test("console-consumer | head -n 1: one line, Kafka's line on stderr, its group left, exit 0 within seconds", async () => {
    const argv = tributaryArgv([
      "console-consumer",
      ...bootstrap(),
      "--topic",
      "big",
      "--from-beginning",
      "--max-messages",
      "20000",
      "--group",
      "head-group",
    ]);
    const started = Date.now();
    const r = await pipeIntoHead([process.execPath, ...argv], 40_000);
    const tookMs = Date.now() - started;
    assert.equal(r.code, 0, describeResult("console-consumer | head -n 1", r));
    assert.equal(r.stdout, "record-0\n");
    assert.deepEqual(
      lines(r.stderr).filter((l) => !l.startsWith("Processed a total of")),
      ["Unable to write to standard out, closing consumer.", "tool exit 0"],
      r.stderr,
    );
    assert.match(r.stderr, /^Processed a total of \d+ messages$/m);
    assertNoStackTrace(r, "console-consumer");
    // Joining the group and the first fetch included; it used to run until killed.
    assert.ok(tookMs < 20_000, `the pipeline took ${tookMs} ms`);
    // The consumer was closed (LeaveGroup), not abandoned: the group is empty at once, not after its
    // session timeout (45 s).
    const groups = new GroupAdmin(fx.admin.cluster, { timeoutMs: 10_000 });
    const [g] = await groups.describeGroups(["head-group"]);
    assert.equal(g.state, "Empty", JSON.stringify(g));
    assert.equal(g.members.length, 0);
  });

  test("console-consumer whose reader closes after the first line exits within 5 s (exit 0)", async () => {
    const r = await runWithClosingReader(
      ["console-consumer", ...bootstrap(), "--topic", "big", "--from-beginning", "--max-messages", "25000"],
      "first-line",
    );
    assert.equal(r.code, 0, describeResult("console-consumer", r));
    assert.equal(r.firstLine, "record-0");
    assert.match(r.stderr, /^Unable to write to standard out, closing consumer\.$/m);
    assertNoStackTrace(r, "console-consumer");
    assert.ok(r.exitAfterCloseMs < 5_000, `exited ${r.exitAfterCloseMs} ms after its reader closed`);
  });

  test("dump-log --deep-iteration --print-data-log of a 30,000-record segment stops within 3 s (exit 0)", async () => {
    const dir = join(fx.broker.logDir, "big-0");
    const segment = readdirSync(dir).find((f) => f.endsWith(".log"));
    assert.ok(segment, `a segment in ${dir}`);
    const r = await runWithClosingReader(
      ["dump-log", "--files", join(dir, segment), "--deep-iteration", "--print-data-log"],
      "first-line",
    );
    assert.equal(r.code, 0, describeResult("dump-log", r));
    assert.equal(r.firstLine, `Dumping ${join(dir, segment)}`);
    assert.equal(r.stderr, "");
    assert.ok(r.exitAfterCloseMs < 3_000, `exited ${r.exitAfterCloseMs} ms after its reader closed`);
  });

  test("producer-perf-test stops sending at its next line after its reader closed (exit 0)", async () => {
    // 2,000 records/s for 500,000 records would be ~4 minutes; the window line comes every 5 s.
    const r = await runWithClosingReader(
      [
        "producer-perf-test",
        "--topic",
        "perf",
        "--num-records",
        "500000",
        "--record-size",
        "10",
        "--throughput",
        "2000",
        "--producer-props",
        `bootstrap.servers=${fx.broker.bootstrap}`,
      ],
      "first-line",
      40_000,
    );
    assert.equal(r.code, 0, describeResult("producer-perf-test", r));
    assert.match(r.firstLine ?? "", /^\d+ records sent, /);
    assert.equal(r.stderr, "");
    assert.ok(r.exitAfterCloseMs < 8_000, `exited ${r.exitAfterCloseMs} ms after its reader closed`);
  });

  test("reassign-partitions --verify with stdout closed clears every throttle, then exits 0", async () => {
    const configs = async (...args: string[]): Promise<void> => {
      const r = await runCommand(process.execPath, tributaryArgv(["configs", ...bootstrap(), ...args]));
      assert.equal(r.code, 0, describeResult("configs --alter", r));
    };
    await configs(
      "--alter",
      "--entity-type",
      "brokers",
      "--entity-name",
      "0",
      "--add-config",
      "leader.replication.throttled.rate=1000000,follower.replication.throttled.rate=1000000",
    );
    await configs(
      "--alter",
      "--entity-type",
      "topics",
      "--entity-name",
      "small",
      "--add-config",
      "leader.replication.throttled.replicas=[0:0,1:0],follower.replication.throttled.replicas=[0:0,1:0]",
    );
    const throttles = async (): Promise<string[]> => {
      const res = await fx.admin.describeConfigs([
        { type: "broker", name: "0" },
        { type: "topic", name: "small" },
      ]);
      // Dynamic settings only (sources 1 and 2: DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG).
      return res
        .flatMap((x) =>
          x.entries.filter((e) => e.name.includes("throttled") && (e.source === 1 || e.source === 2)),
        )
        .map((e) => `${e.name}=${e.value}`);
    };
    assert.equal((await throttles()).length, 4, "the throttles are set");
    const plan = join(fx.broker.root, "reassignment.json");
    writeFileSync(
      plan,
      JSON.stringify({
        version: 1,
        partitions: [
          { topic: "small", partition: 0, replicas: [0] },
          { topic: "small", partition: 1, replicas: [0] },
        ],
      }),
    );
    const r = await runWithClosingReader(
      ["reassign-partitions", ...bootstrap(), "--reassignment-json-file", plan, "--verify"],
      "start",
    );
    assert.equal(r.code, 0, describeResult("reassign-partitions --verify", r));
    assert.equal(r.stderr, "");
    assert.deepEqual(await throttles(), [], "every throttle cleared");
  });

  test("configs --alter and delete-records with stdout closed do their work and exit 0", async () => {
    const alter = await runWithClosingReader(
      [
        "configs",
        ...bootstrap(),
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        "small",
        "--add-config",
        "retention.ms=123456",
      ],
      "start",
    );
    assert.equal(alter.code, 0, describeResult("configs --alter", alter));
    assert.equal(alter.stderr, "");
    const [cfg] = await fx.admin.describeConfigs([{ type: "topic", name: "small" }], {
      configNames: ["retention.ms"],
    });
    assert.equal(cfg.entries.find((e) => e.name === "retention.ms")?.value, "123456");

    const file = join(fx.broker.root, "offsets.json");
    writeFileSync(
      file,
      JSON.stringify({ partitions: [{ topic: "small", partition: 1, offset: 2 }], version: 1 }),
    );
    const del = await runWithClosingReader(
      ["delete-records", ...bootstrap(), "--offset-json-file", file],
      "start",
    );
    assert.equal(del.code, 0, describeResult("delete-records", del));
    assert.equal(del.stderr, "");
    const [earliest] = await fx.admin.listOffsets([{ topic: "small", partition: 1, spec: "earliest" }]);
    assert.equal(earliest.offset, 2n);
  });

  for (const args of [
    ["topics", "--list"],
    ["topics", "--describe"],
    ["consumer-groups", "--describe", "--all-groups"],
    ["consumer-groups", "--list"],
    ["get-offsets"],
    ["configs", "--describe", "--entity-type", "brokers", "--entity-name", "0"],
    ["log-dirs", "--describe"],
  ]) {
    test(`${args.join(" ")} with stdout closed: exit 0, no stack trace`, async () => {
      const r = await runWithClosingReader([args[0], ...bootstrap(), ...args.slice(1)], "start");
      assert.equal(r.code, 0, describeResult(args.join(" "), r));
      // Only what the tool writes to stderr anyway (consumer-groups: "… has no active members.").
      assertNoStackTrace(r, args.join(" "));
    });
  }
});
