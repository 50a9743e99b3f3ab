// Log dir locks with real broker processes (issue 31, item 6): a second `tributary server-start` on a log
// dir a running broker holds exits 1 within seconds with one line on stderr naming the dir and the pid of
// the broker holding it, before it binds a port or reads anything: every file of the first broker's log
// dir keeps its size and mtime (no index rebuilt, no metadata store compacted, no clean-shutdown marker),
// and the first broker still serves a produce and a fetch (kcat). The same through a symlink to the dir
// (the lock is on the file, not the path) next to a free dir, which the refused broker leaves unlocked.
// Without the native addon (a build of the CLI with no native/ beside it) a broker refuses to start in one
// line saying how to build it, or, with TRIBUTARY_ALLOW_UNLOCKED_DIRS=true, starts with a WARN per dir.

import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TRIBUTARY_NODE_OPTIONS } from "../../src/cli/node-options.js";
import {
  BrokerHarness,
  describeResult,
  readWithKcat,
  runCommand,
  tributaryArgv,
} from "../support/broker-harness.js";
import { runTributary } from "../support/tributary-cli.js";

const root = mkdtempSync(join(tmpdir(), "tributary-log-dir-lock-"));
const brokers: BrokerHarness[] = [];
after(async () => {
  for (const b of brokers) await b.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every file under `dir` (recursively) with its size and modification time. */
function fileStates(dir: string): Record<string, string> {
  const states: Record<string, string> = {};
  for (const name of (readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const st = statSync(join(dir, name));
    if (st.isFile()) states[name] = `${st.size} bytes, mtime ${st.mtimeMs}`;
  }
  return states;
}

/** The periodic checkpoint writers of the first broker stay quiet, so its files change only when used. */
const QUIET = {
  "replica.high.watermark.checkpoint.interval.ms": "3600000",
  "log.flush.offset.checkpoint.interval.ms": "3600000",
  "log.flush.start.offset.checkpoint.interval.ms": "3600000",
};

async function produce(bootstrap: string, topic: string, value: string): Promise<void> {
  const r = await runCommand("/usr/bin/kcat", ["-b", bootstrap, "-P", "-t", topic, "-p", "0"], {
    input: `${value}\n`,
    timeoutMs: 30_000,
  });
  assert.equal(r.code, 0, describeResult("kcat -P", r));
}

function serverStartArgs(logDirs: string): string[] {
  return [
    "server-start",
    "--override",
    `log.dirs=${logDirs}`,
    "--override",
    "listeners=PLAINTEXT://127.0.0.1:0",
    "--override",
    "metrics.http.listener=",
  ];
}

describe("log dir locks (real broker processes)", () => {
  it("refuses a second broker on a log dir in use, in one line naming the dir and the holder's pid, touching nothing", async () => {
    const first = await BrokerHarness.start({ name: "tributary-locked", overrides: QUIET });
    brokers.push(first);
    const create = await runTributary([
      "topics",
      "--bootstrap-server",
      first.bootstrap,
      "--create",
      "--topic",
      "locked",
      "--partitions",
      "1",
    ]);
    assert.equal(create.code, 0, describeResult("topics --create", create));
    await produce(first.bootstrap, "locked", "one");
    assert.deepEqual(
      (await readWithKcat(first.bootstrap, "locked")).map((m) => m.value),
      ["one"],
    );
    const before = fileStates(first.logDir);
    assert.ok(
      Object.keys(before).some((f) => f.endsWith(".index")),
      JSON.stringify(before),
    );

    const t0 = Date.now();
    const second = await runCommand(process.execPath, tributaryArgv(serverStartArgs(first.logDir)), {
      timeoutMs: 20_000,
    });
    const refusedMs = Date.now() - t0;
    assert.equal(second.code, 1, describeResult("the second broker", second));
    assert.equal(
      second.stderr,
      `tributary server-start: Failed to acquire lock on file .lock in ${first.logDir}. A Kafka instance in another process or thread is using this directory (the lock is held by pid ${first.pid}).\n`,
    );
    assert.ok(refusedMs < 10_000, `refused after ${refusedMs} ms`);
    assert.doesNotMatch(second.stdout, /Awaiting socket connections|Loaded|Cluster ID/, second.stdout);

    // The same dir through a symlink, after a free dir: refused too; the free dir is left unlocked.
    const link = join(root, "link-to-logs");
    symlinkSync(first.logDir, link);
    const free = join(root, "free");
    const third = await runCommand(process.execPath, tributaryArgv(serverStartArgs(`${free},${link}`)), {
      timeoutMs: 20_000,
    });
    assert.equal(third.code, 1, describeResult("the third broker", third));
    assert.equal(
      third.stderr,
      `tributary server-start: Failed to acquire lock on file .lock in ${link}. A Kafka instance in another process or thread is using this directory (the lock is held by pid ${first.pid}).\n`,
    );
    assert.deepEqual(readdirSync(free), [".lock"]);

    assert.deepEqual(fileStates(first.logDir), before, "the first broker's files are untouched");
    assert.equal(first.isRunning, true, first.output);
    await produce(first.bootstrap, "locked", "two");
    assert.deepEqual(
      (await readWithKcat(first.bootstrap, "locked")).map((m) => m.value),
      ["one", "two"],
    );
    assert.equal(await first.stop("SIGTERM"), 0, first.output);
    console.log(`second broker refused in ${refusedMs} ms`);
  });

  it("without the native addon, refuses to start unless TRIBUTARY_ALLOW_UNLOCKED_DIRS=true, then WARNs", async () => {
    // This build's compiled files without native/ beside them: the addon cannot load, as after an install
    // on a machine without a C compiler.
    const dist = fileURLToPath(new URL("../..", import.meta.url));
    const out = join(root, "no-native");
    cpSync(join(dist, "src"), join(out, "src"), { recursive: true });
    writeFileSync(join(out, "package.json"), '{"type":"module"}\n');
    symlinkSync(resolve(process.cwd(), "node_modules"), join(out, "node_modules"));
    const main = pathToFileURL(join(out, "src/cli/main.js")).href;
    const argv = (args: string[]): string[] => [
      ...TRIBUTARY_NODE_OPTIONS,
      "-e",
      `import(${JSON.stringify(main)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`,
      ...args,
    ];
    const logDir = join(root, "unlocked-logs");
    const refused = await runCommand(process.execPath, argv(serverStartArgs(logDir)), { timeoutMs: 20_000 });
    assert.equal(refused.code, 1, describeResult("without the addon", refused));
    assert.equal(
      refused.stderr,
      `tributary server-start: Cannot lock ${logDir}: the native file-lock addon is not built (run \`npm run build:native\`; a failed build leaves the compiler's output in native/file-lock/build.log); set TRIBUTARY_ALLOW_UNLOCKED_DIRS=true to run with it unlocked (nothing then stops a second process from using it)\n`,
    );
    assert.deepEqual(readdirSync(logDir), [], "nothing written in the dir");

    const previous = process.env.TRIBUTARY_DIST;
    process.env.TRIBUTARY_DIST = out;
    process.env.TRIBUTARY_ALLOW_UNLOCKED_DIRS = "true";
    let broker: BrokerHarness;
    try {
      broker = await BrokerHarness.start({ name: "tributary-unlocked" });
    } finally {
      if (previous === undefined) delete process.env.TRIBUTARY_DIST;
      else process.env.TRIBUTARY_DIST = previous;
      delete process.env.TRIBUTARY_ALLOW_UNLOCKED_DIRS;
    }
    brokers.push(broker);
    assert.match(
      broker.stderr,
      new RegExp(
        `WARN Log dir ${broker.logDir} is not locked \\(the native file-lock addon is not built .*\\): nothing stops another broker from using it at the same time`,
      ),
      broker.output,
    );
    assert.equal(await broker.stop("SIGTERM"), 0, broker.output);
  });
});
