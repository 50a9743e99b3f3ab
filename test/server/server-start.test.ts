// `tributary server-start` as a real child process: prints the bound port (port 0), answers ApiVersions,
// survives `kcat -L`, stops cleanly on SIGTERM / SIGINT (exit 0, `.kafka_cleanshutdown` written, next start
// sees a clean shutdown), and rejects bad configuration with exactly one line on stderr and exit 1.
// Runs `node bin/tributary.js` when this test is the repo's dist/ build, else the CLI compiled next to it
// (a private `tsc --outDir` build). Also: server-stop's process matching (never run for real here: it
// would signal every broker on the machine).

import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { TRIBUTARY_NODE_OPTIONS } from "../../src/cli/node-options.js";
import { findBrokerPids, nodeIdOfCommandLine } from "../../src/cli/tools/server-stop.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { defaultApiVersionsRequest } from "../../src/protocol/generated/messages/ApiVersionsRequest.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { WireClient } from "./wire-client.js";

const root = mkdtempSync(join(tmpdir(), "tributary-server-start-"));
const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const REPO = process.cwd();

const BIN = resolve(REPO, "bin/tributary.js");
const IS_REPO_BUILD = resolve(MAIN) === resolve(REPO, "dist/src/cli/main.js");

function command(args: string[]): string[] {
  if (IS_REPO_BUILD) return [...TRIBUTARY_NODE_OPTIONS, BIN, ...args];
  const script = `import(${JSON.stringify(`file://${MAIN}`)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  return [...TRIBUTARY_NODE_OPTIONS, "-e", script, ...args];
}

interface Broker {
  child: ChildProcess;
  port: number;
  out: () => string;
  err: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts a broker; `direct` runs bin/tributary.js as the executable (its first line picks node). */
async function startBroker(logDir: string, extra: string[] = [], direct = false): Promise<Broker> {
  const args = [
    "server-start",
    "--override",
    `log.dirs=${logDir}`,
    "--override",
    "listeners=PLAINTEXT://127.0.0.1:0",
    "--override",
    "metrics.http.listener=",
    ...extra,
  ];
  const child = direct
    ? spawn(BIN, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] })
    : spawn(process.execPath, command(args), { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.on("exit", (code, signal) => {
      children.delete(child);
      res({ code, signal });
    });
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = /Awaiting socket connections on 127\.0\.0\.1:(\d+)\./.exec(out);
    if (m && /\[KafkaServer id=\d+\] started/.test(out))
      return { child, port: Number(m[1]), out: () => out, err: () => err, exit };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      assert.fail(`broker did not start:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

function runCli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, command(args), { cwd: REPO, encoding: "utf8", timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("tributary server-start", () => {
  test("starts on port 0, answers, survives kcat -L, SIGTERM → clean shutdown, exit 0", async () => {
    const logDir = join(root, "logs");
    const b = await startBroker(logDir);
    const c = await WireClient.connect(b.port);
    const res = await c.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
    assert.equal(res.errorCode, 0);
    c.close();

    const kcat = spawnSync("kcat", ["-b", `127.0.0.1:${b.port}`, "-L", "-m", "5"], {
      encoding: "utf8",
      timeout: 20_000,
    });
    if (kcat.error === undefined) {
      assert.equal(kcat.status, 0, kcat.stderr);
      assert.match(kcat.stdout, new RegExp(`broker 0 at 127\\.0\\.0\\.1:${b.port} \\(controller\\)`));
      // Produce through the real pipeline (auto-created topic), to read back after the restart.
      const produce = spawnSync("kcat", ["-b", `127.0.0.1:${b.port}`, "-P", "-t", "restart-topic", "-K:"], {
        input: "k1:v1\nk2:v2\nk3:v3\n",
        encoding: "utf8",
        timeout: 20_000,
      });
      assert.equal(produce.status, 0, produce.stderr);
      assert.equal(b.child.exitCode, null, "the broker still runs after kcat");
    }

    b.child.kill("SIGTERM");
    const { code, signal } = await b.exit;
    assert.equal(signal, null);
    assert.equal(code, 0, b.err());
    assert.ok(existsSync(join(logDir, ".kafka_cleanshutdown")), "clean shutdown marker written");
    assert.match(b.out(), /\[KafkaServer id=0\] shut down completed/);
    assert.doesNotMatch(b.err(), /\n\s+at /, "no stack trace");

    // The next start sees the clean shutdown; SIGINT stops it as well.
    const b2 = await startBroker(logDir);
    assert.match(b2.out(), /clean shutdown: true/);
    if (kcat.error === undefined) {
      const consume = spawnSync(
        "kcat",
        [
          "-b",
          `127.0.0.1:${b2.port}`,
          "-C",
          "-t",
          "restart-topic",
          "-o",
          "beginning",
          "-e",
          "-f",
          "%k=%s\\n",
        ],
        { encoding: "utf8", timeout: 20_000 },
      );
      assert.equal(consume.status, 0, consume.stderr);
      assert.equal(consume.stdout, "k1=v1\nk2=v2\nk3=v3\n");
    }
    b2.child.kill("SIGINT");
    assert.equal((await b2.exit).code, 0, b2.err());
    assert.ok(existsSync(join(logDir, ".kafka_cleanshutdown")));
  });

  test("its stdout and stderr readers gone, it keeps serving without spinning and stops on SIGTERM", async () => {
    // A broker whose terminal or parent pipe closed used to fail every log write, log that failure,
    // fail again: a loop at ~50 % of a core that never ended (seen on orphaned test brokers).
    const b = await startBroker(join(root, "orphan-logs"));
    b.child.stdout!.destroy();
    b.child.stderr!.destroy();
    const c = await WireClient.connect(b.port);
    // Requests that make it log (auto-created topic), after its output is gone.
    const md = await c.request(Apis.Metadata, 12, {
      ...defaultMetadataRequest(),
      topics: [{ topicId: "AAAAAAAAAAAAAAAAAAAAAA", name: "orphan-topic" }],
      allowAutoTopicCreation: true,
    });
    assert.equal(md.topics.length, 1);
    await new Promise((r) => setTimeout(r, 1000));
    const ticks = (): number => {
      const f = readFileSync(`/proc/${b.child.pid}/stat`, "utf8").split(" ");
      return Number(f[13]) + Number(f[14]);
    };
    const before = ticks();
    await new Promise((r) => setTimeout(r, 2000));
    const used = ticks() - before;
    assert.ok(used < 50, `${used} clock ticks of CPU in 2 s while idle`);
    const res = await c.request(Apis.ApiVersions, 3, defaultApiVersionsRequest());
    assert.equal(res.errorCode, 0);
    c.close();
    b.child.kill("SIGTERM");
    assert.deepEqual(await b.exit, { code: 0, signal: null });
  });

  test("bad configuration: exactly one line on stderr, exit 1, no stack trace", () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ["--override", "num.partitions=abc"],
        /Invalid value abc for configuration num\.partitions: expected an integer >= 1/,
      ],
      [["--override", "listeners=PLAINTEXT:9092"], /configuration listeners: expected listeners of the form/],
      [["--override", "socket.request.max.bytes=-4"], /socket\.request\.max\.bytes/],
      [[join(root, "missing.properties")], /Cannot read .*missing\.properties: ENOENT/],
      [["--override"], /--override needs a property=value argument/],
    ];
    for (const [args, expected] of cases) {
      const r = runCli(["server-start", "--override", `log.dirs=${join(root, "bad")}`, ...args]);
      assert.equal(r.status, 1, `${args.join(" ")}: ${r.stderr}`);
      const lines = r.stderr.split("\n").filter((l) => l !== "");
      assert.equal(lines.length, 1, `one line for ${args.join(" ")}:\n${r.stderr}`);
      assert.match(lines[0], /^tributary server-start: /);
      assert.match(lines[0], expected);
    }
  });

  test("a port already in use: exit 1 with the reason, no stack trace", async () => {
    const b = await startBroker(join(root, "logs-a"));
    try {
      const r = runCli([
        "server-start",
        "--override",
        `log.dirs=${join(root, "logs-b")}`,
        "--override",
        `listeners=PLAINTEXT://127.0.0.1:${b.port}`,
      ]);
      assert.equal(r.status, 1);
      assert.match(
        r.stderr,
        /tributary server-start: Socket server failed to bind to 127\.0\.0\.1:\d+: Address already in use\./,
      );
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      b.child.kill("SIGTERM");
      assert.equal((await b.exit).code, 0);
    }
  });

  test("the executable's first line starts node with the options of node-options.ts", async (t) => {
    const shebang = readFileSync(BIN, "utf8").split("\n")[0];
    assert.equal(shebang, `#!/usr/bin/env -S node ${TRIBUTARY_NODE_OPTIONS.join(" ")}`);
    if (!IS_REPO_BUILD) {
      t.skip("bin/tributary.js runs the repository's dist/, not this build");
      return;
    }
    // Run as `tributary` is run (the kernel reads the first line): node's command line carries them.
    const b = await startBroker(join(root, "logs-direct"), [], true);
    const cmdline = readFileSync(`/proc/${b.child.pid}/cmdline`, "utf8").split("\0");
    for (const o of TRIBUTARY_NODE_OPTIONS) assert.ok(cmdline.includes(o), `${o} in ${cmdline.join(" ")}`);
    assert.equal(findBrokerPids(`${b.child.pid} node ${cmdline.join(" ")}`, -1).length, 1);
    b.child.kill("SIGTERM");
    assert.equal((await b.exit).code, 0, b.err());
  });

  test("--help", () => {
    const r = runCli(["server-start", "--help"]);
    assert.equal(r.status, 0);
    assert.match(
      r.stdout,
      /Usage: tributary server-start \[server\.properties\] \[--override property=value\]\*/,
    );
    const s = runCli(["server-stop", "--help"]);
    assert.equal(s.status, 0);
    assert.match(s.stdout, /Usage: tributary server-stop/);
  });
});

describe("tributary server-stop", () => {
  test("finds node processes running the tributary CLI's server-start, and only those", () => {
    const ps = [
      "  101 node            node /repo/bin/tributary.js server-start --override log.dirs=/tmp/x",
      '  102 node            /usr/bin/node -e import("/tmp/core-dist/src/cli/main.js").then(...) server-start',
      "  103 sh              sh -c npm run build && node bin/tributary.js server-start",
      "  104 node            node bin/tributary.js server-stop",
      "  105 node            node /usr/bin/tributary server-start",
      "  106 node            node other.js server-start",
      "  107 node            node bin/tributary.js dump-log --files x.log",
    ].join("\n");
    assert.deepEqual(findBrokerPids(ps, 104), [101, 102, 105]);
    assert.deepEqual(findBrokerPids(ps, 101), [102, 105]);
  });

  test("--node-id stops only the broker with that broker.id (its --override or its properties file)", async () => {
    // Ids no other broker on this machine uses: server-stop signals every matching broker it finds.
    const id = 7000 + (process.pid % 1000);
    const props = join(root, "stop-by-id.properties");
    writeFileSync(props, `broker.id=${id + 1}\n`);
    assert.equal(nodeIdOfCommandLine(["node", "x.js", "server-start", props], "/"), id + 1);
    assert.equal(
      nodeIdOfCommandLine(["node", "x.js", "server-start", props, "--override", `node.id=${id}`], "/"),
      id,
    );
    assert.equal(nodeIdOfCommandLine(["node", "x.js", "server-start"], "/"), undefined);
    const b = await startBroker(join(root, "logs-stop-by-id"), ["--override", `broker.id=${id}`]);
    const other = runCli(["server-stop", "--node-id", String(id + 2)]);
    assert.equal(other.status, 1);
    assert.equal(other.stdout, "No kafka server to stop\n");
    assert.equal(b.child.exitCode, null, "still running");
    const bad = runCli(["server-stop", "--node-id", "x"]);
    assert.equal(bad.status, 1);
    assert.equal(
      bad.stderr,
      "tributary server-stop: invalid value 'x' for --node-id: expected a broker id (an integer >= 0)\n",
    );
    const stop = runCli(["server-stop", `--node-id=${id}`]);
    assert.equal(stop.status, 0, stop.stderr);
    assert.equal((await b.exit).code, 0, b.err());
  });
});
