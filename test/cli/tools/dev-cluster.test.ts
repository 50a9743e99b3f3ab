// `tributary dev-cluster` end to end: the real executable starts a real ZooKeeper and three brokers; the
// topics tool creates a topic with 3 partitions × RF 3 on them and describes it (leaders on 3 brokers);
// SIGINT stops everything (exit 0, no process left, no port answering, the temporary directory gone).
// Also: bad flags are one line; a broker that cannot start is reported with its last lines and the
// cluster is stopped; a taken port and a missing ZooKeeper install are one line. --dir is locked: a second
// dev-cluster on it refuses in one line naming the dir and the first one's pid, before it writes or starts
// anything, and the first cluster keeps serving. Each broker's metrics port is a fixed one in its
// broker-<i>.properties, serving /metrics, and the same after a restart on the same --dir (issue 32); a
// stored port taken by another process meanwhile is one WARN line and another port.

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  type BackgroundCommand,
  describeResult,
  runCommand,
  sleep,
  startCommand,
  tributaryArgv,
  waitFor,
} from "../../support/broker-harness.js";
import { runTributary } from "../../support/tributary-cli.js";

/** Pids printed in dev-cluster's lines ("ZooKeeper (pid N)", "Broker i (pid N)"). */
function printedPids(stdout: string): number[] {
  return [...stdout.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when something accepts a TCP connection on 127.0.0.1:port within 1 s. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Processes a failed test may leave behind (the cluster's children run in their own process groups). */
const leftovers = new Set<number>();
after(() => {
  for (const pid of leftovers) if (alive(pid)) process.kill(pid, "SIGKILL");
});

describe("tributary dev-cluster", () => {
  it("starts ZooKeeper and 3 brokers, serves a RF 3 topic, and stops them all on SIGINT", async () => {
    const started = Date.now();
    // A shorter backoff keeps the last broker's controlled shutdown (it has nobody to hand its
    // leaderships to, so it retries) to a few seconds; it also shows --override reaching every broker.
    const dc: BackgroundCommand = startCommand(
      process.execPath,
      tributaryArgv([
        "dev-cluster",
        "--brokers",
        "3",
        "--override",
        "controlled.shutdown.retry.backoff.ms=1000",
      ]),
    );
    let stopped = false;
    try {
      const bootstrap = await waitFor("the bootstrap line", 45_000, async () => {
        for (const pid of printedPids(dc.stdout())) leftovers.add(pid);
        const m = /^Bootstrap servers: (\S+) \(zookeeper\.connect=(\S+)\)$/m.exec(dc.stdout());
        if (m) return m[1];
        const early = await Promise.race([dc.exited, sleep(0).then(() => undefined)]);
        if (early) throw new Error(describeResult("dev-cluster exited early", early));
        return undefined;
      }).catch(async (e) => {
        const r = await dc.stop("SIGKILL");
        throw new Error(`${(e as Error).message}\n${describeResult("dev-cluster", r)}`);
      });
      const out = dc.stdout();
      const dir = /^Starting ZooKeeper and 3 brokers in (\S+) /m.exec(out)?.[1];
      assert.ok(dir, out);
      const zkLine =
        /^ZooKeeper \(pid \d+\) listening on 127\.0\.0\.1:(\d+) \(data in (\S+), output in (\S+)\)$/m.exec(
          out,
        );
      assert.ok(zkLine, out);
      assert.equal(zkLine[2], `${dir}/zookeeper`);
      assert.equal(zkLine[3], `${dir}/zookeeper.log`);
      const brokerLines = [
        ...out.matchAll(
          /^Broker (\d) \(pid \d+\) listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+) \(logs in (\S+), output in (\S+?),/gm,
        ),
      ];
      assert.deepEqual(
        brokerLines.map((m) => [m[1], m[3], m[4]]),
        [0, 1, 2].map((i) => [String(i), `${dir}/broker-${i}`, `${dir}/broker-${i}.log`]),
        out,
      );
      const brokerPorts = brokerLines.map((m) => Number(m[2]));
      assert.equal(bootstrap, brokerPorts.map((p) => `127.0.0.1:${p}`).join(","));
      assert.match(
        out,
        new RegExp(`^Try: npx tributary topics --bootstrap-server ${bootstrap} --describe$`, "m"),
      );
      assert.equal(printedPids(out).length, 4, out);
      assert.match(
        readFileSync(`${dir}/broker-1.properties`, "utf8"),
        /^controlled\.shutdown\.retry\.backoff\.ms=1000$/m,
      );
      assert.match(readFileSync(`${dir}/broker-2.log`, "utf8"), /\[KafkaServer id=2\] started/);

      const create = await runTributary([
        "topics",
        "--bootstrap-server",
        bootstrap,
        "--create",
        "--topic",
        "spread",
        "--partitions",
        "3",
        "--replication-factor",
        "3",
      ]);
      assert.equal(create.code, 0, describeResult("topics --create", create));
      assert.equal(create.stdout, "Created topic spread.\n");
      // Every broker learns the topic from the controller's UpdateMetadata: describe until all leaders show.
      const partitions = await waitFor("3 partitions with leaders", 15_000, async () => {
        const d = await runTributary([
          "topics",
          "--bootstrap-server",
          bootstrap,
          "--describe",
          "--topic",
          "spread",
        ]);
        assert.equal(d.code, 0, describeResult("topics --describe", d));
        const rows = [
          ...d.stdout.matchAll(
            /^\tTopic: spread\tPartition: (\d+)\tLeader: (\d+)\tReplicas: ([\d,]+)\tIsr: ([\d,]+)$/gm,
          ),
        ];
        return rows.length === 3 ? { rows, text: d.stdout } : undefined;
      });
      assert.match(
        partitions.text,
        /^Topic: spread\tTopicId: \S+\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: /m,
      );
      const leaders = new Set(partitions.rows.map((r) => r[2]));
      assert.equal(leaders.size, 3, `leaders spread over the 3 brokers:\n${partitions.text}`);
      for (const r of partitions.rows) {
        assert.equal(r[2], r[3].split(",")[0], `the leader is the preferred replica:\n${partitions.text}`);
        assert.deepEqual(r[4].split(",").sort(), ["0", "1", "2"], partitions.text);
      }

      const t0 = Date.now();
      const r = await dc.stop("SIGINT", 60_000);
      stopped = true;
      const stopMs = Date.now() - t0;
      assert.equal(r.code, 0, describeResult("dev-cluster after SIGINT", r));
      const lines = r.stdout.split("\n");
      const from = lines.indexOf("Ctrl-C stops the cluster.");
      assert.ok(from > 0, r.stdout);
      const shutdown = lines.slice(from + 1).filter((l) => l !== "");
      assert.match(shutdown[0], /^Received SIGINT: stopping the cluster/);
      assert.match(
        shutdown[1],
        /^Stopping 3 brokers \(SIGTERM: controlled shutdown, the controller last\), then ZooKeeper$/,
      );
      const stoppedBrokers = shutdown.flatMap(
        (l) => /^Broker (\d) stopped after [\d.]+ s$/.exec(l)?.[1] ?? [],
      );
      assert.deepEqual([...stoppedBrokers].sort(), ["0", "1", "2"], r.stdout);
      assert.match(shutdown.at(-2) ?? "", /^ZooKeeper stopped after [\d.]+ s$/, r.stdout);
      assert.equal(shutdown.at(-1), `Removed ${dir}`);
      assert.equal(r.stderr, "");
      for (const pid of printedPids(r.stdout)) assert.equal(alive(pid), false, `pid ${pid} is gone`);
      for (const port of [...brokerPorts, Number(zkLine[1])])
        assert.equal(await answers(port), false, `nothing answers on port ${port}`);
      assert.equal(existsSync(dir), false, "the temporary directory is removed");
      console.log(
        `dev-cluster: up and serving in ${t0 - started} ms (topic created and described included), stopped in ${stopMs} ms`,
      );
    } finally {
      if (!stopped) await dc.stop("SIGKILL");
    }
  });

  it("locks --dir (a second dev-cluster refuses in one line naming the dir and the pid) and keeps each broker's metrics port across restarts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tributary-dev-cluster-dir-"));
    const props = join(dir, "broker-0.properties");
    /** Starts dev-cluster on `dir` and waits for its bootstrap line. */
    const startOnDir = async (): Promise<{ dc: BackgroundCommand; bootstrap: string }> => {
      const dc = startCommand(
        process.execPath,
        tributaryArgv(["dev-cluster", "--brokers", "1", "--dir", dir]),
      );
      const bootstrap = await waitFor("the bootstrap line", 45_000, async () => {
        for (const pid of printedPids(dc.stdout())) leftovers.add(pid);
        const m = /^Bootstrap servers: (\S+) /m.exec(dc.stdout());
        if (m) return m[1];
        const early = await Promise.race([dc.exited, sleep(0).then(() => undefined)]);
        if (early) throw new Error(describeResult("dev-cluster exited early", early));
        return undefined;
      }).catch(async (e) => {
        const r = await dc.stop("SIGKILL");
        throw new Error(`${(e as Error).message}\n${describeResult("dev-cluster", r)}`);
      });
      return { dc, bootstrap };
    };
    /** The metrics port broker-0.properties holds: a fixed one, printed, and serving /metrics. */
    const metricsPort = async (out: string): Promise<number> => {
      const m = /^metrics\.http\.listener=http:\/\/127\.0\.0\.1:(\d+)$/m.exec(readFileSync(props, "utf8"));
      assert.ok(m, readFileSync(props, "utf8"));
      const port = Number(m[1]);
      assert.ok(port > 0, `a fixed port, not :0 (${m[0]})`);
      const url = `http://127.0.0.1:${port}/metrics`;
      assert.match(out, new RegExp(`^Broker 0 \\(pid \\d+\\) listening on .*, metrics on ${url}\\)$`, "m"));
      const res = await fetch(url);
      assert.equal(res.status, 200, url);
      assert.match(await res.text(), /^kafka_server_/m, `${url} serves the broker's metrics`);
      return port;
    };
    let running: BackgroundCommand | undefined;
    const stopRunning = async (): Promise<void> => {
      const r = await running!.stop("SIGINT", 60_000);
      running = undefined;
      assert.equal(r.code, 0, describeResult("dev-cluster after SIGINT", r));
    };
    try {
      const first = await startOnDir();
      const dc = first.dc;
      running = dc;
      const written = ["zoo.cfg", "broker-0.properties"].map((f) => statSync(join(dir, f)).mtimeMs);
      const t0 = Date.now();
      const second = await runTributary(["dev-cluster", "--brokers", "1", "--dir", dir], {
        timeoutMs: 60_000,
      });
      const refusedMs = Date.now() - t0;
      for (const pid of printedPids(second.stdout)) leftovers.add(pid);
      assert.equal(second.code, 1, describeResult("the second dev-cluster", second));
      assert.equal(
        second.stderr,
        `Cannot use --dir ${dir}: another dev-cluster is using it (pid ${dc.pid} holds ${dir}/.lock)\n`,
      );
      assert.equal(second.stdout, "", "nothing started: no ZooKeeper, no broker");
      assert.deepEqual(
        ["zoo.cfg", "broker-0.properties"].map((f) => statSync(join(dir, f)).mtimeMs),
        written,
        "the first cluster's files are not rewritten",
      );
      for (const pid of printedPids(dc.stdout())) assert.ok(alive(pid), `pid ${pid} still runs`);
      const listed = await runTributary(["topics", "--bootstrap-server", first.bootstrap, "--list"]);
      assert.equal(listed.code, 0, describeResult("topics --list on the first cluster", listed));
      const port = await metricsPort(dc.stdout());
      await stopRunning();
      assert.ok(existsSync(join(dir, "broker-0")), "--dir is kept");

      // The next dev-cluster on the same --dir: the same metrics port.
      const again = await startOnDir();
      running = again.dc;
      assert.equal(await metricsPort(again.dc.stdout()), port, "the same metrics port after a restart");
      await stopRunning();

      // The stored port taken by another process meanwhile: one line, and another port.
      const squatter = createServer();
      await new Promise<void>((res) => squatter.listen(port, "127.0.0.1", () => res()));
      try {
        const moved = await startOnDir();
        running = moved.dc;
        const out = moved.dc.stdout();
        const newPort = await metricsPort(out);
        assert.notEqual(newPort, port);
        assert.deepEqual(
          out.split("\n").filter((l) => l.includes("metrics port")),
          [
            `WARN: port ${port}, broker 0's metrics port in ${props}, is in use by another process: broker 0's metrics move to port ${newPort}`,
          ],
        );
        await stopRunning();
      } finally {
        await new Promise<void>((res) => squatter.close(() => res()));
      }
      console.log(
        `second dev-cluster refused in ${refusedMs} ms; metrics port ${port} kept across a restart`,
      );
    } finally {
      if (running !== undefined) await running.stop("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("explains a bad flag in one line", async () => {
    const cases: Array<[string[], string]> = [
      [["--brokers", "0"], "Invalid value '0' for --brokers: expected a whole number from 1 to 50"],
      [["--brokers", "three"], "Invalid value 'three' for --brokers: expected a whole number from 1 to 50"],
      [
        ["--base-port", "70000"],
        "Invalid value '70000' for --base-port: expected a port number (3 ports from it) from 1 to 65533",
      ],
      [
        ["--zookeeper-port", "-1"],
        "Invalid value '-1' for --zookeeper-port: expected a port number from 1 to 65535",
      ],
      [["--racks", "a,,b"], "Invalid value 'a,,b' for --racks: expected rack names separated by commas"],
      [["--override", "novalue"], "Invalid value 'novalue' for --override: expected key=value"],
      [
        ["--override", "listeners=PLAINTEXT://:9092"],
        "Invalid value 'listeners=PLAINTEXT://:9092' for --override: expected a setting other than listeners: dev-cluster sets it, each broker has its own port (choose them with --base-port)",
      ],
      [["--brokers"], "Option brokers requires an argument"],
      [["--bogus"], "bogus is not a recognized option"],
    ];
    for (const [flags, line] of cases) {
      const r = await runTributary(["dev-cluster", ...flags]);
      assert.notEqual(r.code, 0, describeResult(flags.join(" "), r));
      assert.equal(r.stderr, `${line}\n`, flags.join(" "));
      assert.equal(r.stdout, "");
    }
    const help = await runTributary(["dev-cluster", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^--brokers <String: number of brokers>/m);
  });

  it("says in one line that a port is taken or ZooKeeper is not installed", async () => {
    const server = createServer();
    await new Promise<void>((res) => server.listen(0, "127.0.0.1", () => res()));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await runTributary(["dev-cluster", "--brokers", "1", "--base-port", String(port)]);
      assert.equal(r.code, 1, describeResult("port in use", r));
      assert.equal(r.stderr, `Port ${port} (broker 0) is already in use on 127.0.0.1\n`);
    } finally {
      await new Promise<void>((res) => server.close(() => res()));
    }
    const jar = "/nonexistent/zookeeper.jar";
    const r = await runCommand(process.execPath, tributaryArgv(["dev-cluster"]), {
      env: { ...process.env, TRIBUTARY_ZOOKEEPER_JAR: jar },
    });
    assert.equal(r.code, 1, describeResult("no ZooKeeper", r));
    assert.equal(r.stderr, `ZooKeeper is not installed: ${jar} not found (apt-get install zookeeper)\n`);
  });

  it("reports a broker that cannot start with its last lines, and stops the rest", async () => {
    const r = await runTributary(["dev-cluster", "--brokers", "1", "--override", "num.partitions=many"], {
      timeoutMs: 60_000,
    });
    for (const pid of printedPids(r.stdout)) leftovers.add(pid);
    assert.equal(r.code, 1, describeResult("broker failing", r));
    const err = r.stderr.split("\n");
    assert.match(err[0], /^Broker 0 did not start: it stopped \(exit code 1\)$/, r.stderr);
    assert.match(err[1], /^Last lines of \S+\/broker-0\.log:$/, r.stderr);
    assert.match(r.stderr, /^ {2}tributary server-start: .*num\.partitions/m);
    const zkPid = printedPids(r.stdout);
    assert.equal(zkPid.length, 1, r.stdout);
    assert.equal(alive(zkPid[0]), false, "ZooKeeper was stopped");
    const kept = /^The processes' output is kept in (\S+)$/m.exec(r.stdout)?.[1];
    assert.ok(kept, r.stdout);
    assert.ok(existsSync(`${kept}/broker-0.log`));
    rmSync(kept, { recursive: true, force: true });
  });
});
