// A ZooKeeper and N brokers on this machine, as child processes: what `tributary dev-cluster` runs.
//
// Layout of the cluster's directory (--dir, else a temporary directory removed when the cluster stops):
//   .lock (an --dir is locked for dev-cluster's life, common/dir-lock.ts: a second dev-cluster on it refuses
//   in one line naming the dir and the pid before it starts anything), zoo.cfg, zookeeper/ (its dataDir),
//   zookeeper.log (its output)
//   broker-<i>.properties (the broker's settings, to start it again by hand), broker-<i>/ (its log.dirs),
//   broker-<i>.log (its output)
// ZooKeeper is the Debian install (src/cli/zookeeper/zookeeper-command.ts), ready when `srvr` answers.
// Each broker is `tributary server-start --override broker.id=<i> --override zookeeper.connect=
// 127.0.0.1:<zk>/tributary --override listeners=PLAINTEXT://127.0.0.1:<port> --override log.dirs=… …`
// run by `node` with Tributary's Node options (src/cli/node-options.ts) and the same build as this
// process; it is ready when it logs "[KafkaServer id=<i>] started". Ports are free ones unless given.
// Each broker's metrics port (metrics.http.listener=http://127.0.0.1:<port>, unless an --override sets it)
// is a free port chosen when its broker-<i>.properties is first written and read back from that file on
// every later start on the same --dir, so a broker restarted by hand from its properties file, or by the
// next dev-cluster, keeps its /metrics address; a stored port some other process holds by then is
// replaced by a free one, in one line.
// Stopping sends SIGTERM to one broker at a time, the controller last (fewer controller moves), so
// each runs its controlled shutdown while the others are still there to take its leaderships; then
// ZooKeeper. Every wait is bounded; a process that does not stop in time is killed (SIGKILL).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { AdminClient } from "../../client/admin/admin-client.js";
import {
  DirLock,
  DirLockHeldError,
  DirLockUnavailableError,
  describeHolder,
  LOCK_FILE_NAME,
} from "../../common/dir-lock.js";
import { TRIBUTARY_NODE_OPTIONS } from "../node-options.js";
import {
  findZooKeeper,
  serverStatus,
  type ZooKeeperInstall,
  zooCfgText,
  zooKeeperServerArgv,
} from "../zookeeper/zookeeper-command.js";
import { describeExit, type ExitStatus, ManagedProcess } from "./managed-process.js";

export const HOST = "127.0.0.1";
/** The chroot every broker's zookeeper.connect carries. */
export const CHROOT = "/tributary";
/** Settings dev-cluster sets per broker itself; an --override of one of them is refused. */
export const MANAGED_SETTINGS: Readonly<Record<string, string>> = {
  "broker.id": "it is the broker's number (0, 1, …)",
  "zookeeper.connect": "it points at the cluster's own ZooKeeper",
  listeners: "each broker has its own port (choose them with --base-port)",
  "log.dirs": "each broker has its own directory (choose the parent with --dir)",
  "broker.rack": "use --racks",
};
/** ZooKeeper's heap unless KAFKA_HEAP_OPTS says otherwise (a development server needs little). */
const ZOOKEEPER_HEAP = ["-Xms32m", "-Xmx256m"];
const STARTED_LINE = (id: number): RegExp =>
  new RegExp(`\\[KafkaServer id=${id}\\] started \\(kafka\\.server\\.KafkaServer\\)`);
const METRICS_LINE = /Metrics HTTP endpoint listening on (http:\/\/\S+\/metrics)/;
const TAIL_LINES = 20;

export interface DevClusterSettings {
  readonly brokers: number;
  /** ZooKeeper's client port; a free one when absent. */
  readonly zookeeperPort?: number;
  /** Broker i listens on basePort + i; free ports when absent. */
  readonly basePort?: number;
  /** The cluster's directory (created when missing, kept); a temporary one (removed) when absent. */
  readonly dir?: string;
  /** broker.rack of broker i is racks[i % racks.length]; none when empty. */
  readonly racks: readonly string[];
  /** --override key=value for every broker, after dev-cluster's own settings. */
  readonly overrides: ReadonlyArray<readonly [string, string]>;
  /** Bound on ZooKeeper serving and on each broker's "started" line. Default 60 s. */
  readonly startTimeoutMs?: number;
  /** Bound on each broker's exit after SIGTERM (its controlled shutdown). Default 120 s. */
  readonly stopTimeoutMs?: number;
}

/** A failure dev-cluster explains in the lines it carries (the first is the summary). */
export class DevClusterError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines[0]);
    this.name = "DevClusterError";
  }
}

export interface BrokerProcess {
  readonly id: number;
  readonly port: number;
  readonly listener: string;
  readonly rack: string | undefined;
  readonly logDir: string;
  readonly propertiesFile: string;
  readonly process: ManagedProcess;
  metricsUrl: string | undefined;
}

type Print = (line: string) => void;

/**
 * The argv (after `node`) that runs `tributary <args>` with this build: bin/tributary.js when it loads
 * this very build (the repository's dist/), else an inline import of this build's src/cli/main.js (a
 * private `tsc --outDir` build).
 */
export function tributaryCommand(args: readonly string[]): string[] {
  const main = fileURLToPath(new URL("../main.js", import.meta.url));
  const bin = fileURLToPath(new URL("../../../../bin/tributary.js", import.meta.url));
  if (existsSync(bin) && resolve(dirname(bin), "../dist/src/cli/main.js") === main)
    return [...TRIBUTARY_NODE_OPTIONS, bin, ...args];
  const url = pathToFileURL(main).href;
  const script = `import(${JSON.stringify(url)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  return [...TRIBUTARY_NODE_OPTIONS, "-e", script, ...args];
}

/** A port to reserve: `port` 0 is any free one; `orFree` allows a free one when `port` is taken. */
interface WantedPort {
  readonly port: number;
  readonly what: string;
  readonly orFree?: boolean;
}

/** Listens on 127.0.0.1:port; the bound port, or the listen error. */
function bind(server: Server, port: number): Promise<number> {
  return new Promise<number>((res, rej) => {
    server.once("error", rej);
    server.listen(port, HOST, () => {
      server.off("error", rej);
      const addr = server.address();
      if (addr === null || typeof addr === "string") rej(new Error("no TCP address"));
      else res(addr.port);
    });
  });
}

/**
 * Binds every port of `wanted` on 127.0.0.1 at once (the given ports first, so a free port picked for one
 * entry is never another entry's given port); the bound ports in `wanted`'s order. A given port that is
 * taken is a DevClusterError, unless its entry says `orFree`: then it gets a free one, and `taken` lists it.
 */
async function reservePorts(
  wanted: readonly WantedPort[],
): Promise<{ ports: number[]; taken: Array<{ index: number; port: number }> }> {
  const servers: Server[] = [];
  try {
    const ports = new Array<number>(wanted.length).fill(0);
    const taken: Array<{ index: number; port: number }> = [];
    const order = wanted
      .map((_, i) => i)
      .sort((a, b) => Number(wanted[a].port === 0) - Number(wanted[b].port === 0));
    for (const i of order) {
      const w = wanted[i];
      let server = createServer();
      servers.push(server);
      try {
        ports[i] = await bind(server, w.port);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EADDRINUSE" && w.orFree === true) {
          taken.push({ index: i, port: w.port });
          server = createServer();
          servers.push(server);
          ports[i] = await bind(server, 0);
          continue;
        }
        throw new DevClusterError([
          code === "EADDRINUSE"
            ? `Port ${w.port} (${w.what}) is already in use on ${HOST}`
            : `Cannot listen on ${HOST}:${w.port} (${w.what}): ${(e as Error).message}`,
        ]);
      }
    }
    return { ports, taken };
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
  }
}

/** The metrics port a broker-<i>.properties written earlier holds (metrics.http.listener), or undefined. */
export function storedMetricsPort(propertiesFile: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(propertiesFile, "utf8");
  } catch {
    return undefined;
  }
  const m = /^metrics\.http\.listener=http:\/\/127\.0\.0\.1:(\d+)\s*$/m.exec(text);
  const port = m ? Number(m[1]) : 0;
  return port > 0 && port < 65536 ? port : undefined;
}

function failure(summary: string, p: ManagedProcess): DevClusterError {
  const tail = p.tail(TAIL_LINES);
  return new DevClusterError([
    summary,
    ...(tail.length > 0 ? [`Last lines of ${p.logFile}:`, ...tail.map((l) => `  ${l}`)] : []),
  ]);
}

/** Locks an --dir for dev-cluster's life; a DevClusterError (one line naming it) when that cannot be done. */
function lockDir(dir: string): DirLock {
  try {
    return DirLock.tryAcquire(dir);
  } catch (e) {
    if (e instanceof DirLockHeldError)
      throw new DevClusterError([
        `Cannot use --dir ${dir}: another dev-cluster is using it (${describeHolder(e.holderPid)} holds ${join(dir, LOCK_FILE_NAME)})`,
      ]);
    if (e instanceof DirLockUnavailableError) throw new DevClusterError([e.message]);
    throw new DevClusterError([`Cannot lock --dir ${dir}: ${(e as Error).message}`]);
  }
}

function splitOptions(text: string | undefined): string[] {
  return (text ?? "").split(/\s+/).filter((s) => s !== "");
}

export class DevCluster {
  zookeeper: ManagedProcess | undefined;
  zookeeperPort = 0;
  readonly brokers: BrokerProcess[] = [];
  private stopping: Promise<boolean> | undefined;
  private killed = false;
  private readonly onProcessExit = (): void => this.killAll();

  private constructor(
    readonly dir: string,
    /** A temporary directory, removed when the cluster stops. */
    readonly temporary: boolean,
    private readonly install: ZooKeeperInstall,
    private readonly settings: DevClusterSettings,
    private readonly print: Print,
    /** The lock of an --dir, held until the cluster has stopped. */
    private readonly lock: DirLock | undefined,
  ) {}

  get zookeeperConnect(): string {
    return `${HOST}:${this.zookeeperPort}${CHROOT}`;
  }

  get bootstrapServers(): string {
    return this.brokers.map((b) => `${HOST}:${b.port}`).join(",");
  }

  /**
   * Checks that ZooKeeper is installed (ZooKeeperNotInstalledError, one line), makes the cluster's
   * directory and locks an --dir (DevClusterError when another process holds it); start() runs the
   * processes.
   */
  static create(settings: DevClusterSettings, print: Print): DevCluster {
    const install = findZooKeeper();
    let dir: string;
    let lock: DirLock | undefined;
    if (settings.dir !== undefined) {
      dir = resolve(settings.dir);
      try {
        mkdirSync(dir, { recursive: true });
      } catch (e) {
        throw new DevClusterError([`Cannot create --dir ${dir}: ${(e as Error).message}`]);
      }
      lock = lockDir(dir);
      if (!lock.locked)
        print(
          `WARN: ${dir} is not locked (${lock.unlockedReason}): nothing stops a second dev-cluster from using it`,
        );
    } else {
      // A new temporary directory nobody else knows of: nothing to lock.
      dir = mkdtempSync(join(tmpdir(), "tributary-dev-cluster-"));
    }
    return new DevCluster(dir, settings.dir === undefined, install, settings, print, lock);
  }

  /**
   * Starts ZooKeeper, then every broker, printing a line for each once it serves. On a failure stops
   * what was started and throws DevClusterError (its lines say what failed, with the process's last lines).
   */
  async start(): Promise<void> {
    process.on("exit", this.onProcessExit);
    try {
      await this.launch(this.install);
    } catch (e) {
      await this.stopAll(true);
      if (this.temporary && e instanceof DevClusterError && e.lines.length > 1)
        this.print(`The processes' output is kept in ${this.dir}`);
      else if (this.temporary) rmSync(this.dir, { recursive: true, force: true });
      throw e;
    }
  }

  private async launch(install: ZooKeeperInstall): Promise<void> {
    const s = this.settings;
    const timeoutMs = s.startTimeoutMs ?? 60_000;
    const propertiesFile = (id: number): string => join(this.dir, `broker-${id}.properties`);
    // Metrics ports: dev-cluster's unless an --override sets metrics.http.listener; the one an earlier run
    // on this --dir wrote in broker-<i>.properties, else a free one.
    const ownMetrics = !s.overrides.some(([k]) => k === "metrics.http.listener");
    const storedMetrics = Array.from({ length: s.brokers }, (_, i) =>
      ownMetrics && !this.temporary ? storedMetricsPort(propertiesFile(i)) : undefined,
    );
    const wanted: WantedPort[] = [
      { port: s.zookeeperPort ?? 0, what: "ZooKeeper" },
      ...Array.from({ length: s.brokers }, (_, i) => ({
        port: s.basePort === undefined ? 0 : s.basePort + i,
        what: `broker ${i}`,
      })),
      ...(ownMetrics
        ? storedMetrics.map((port, i) => ({ port: port ?? 0, what: `broker ${i}'s metrics`, orFree: true }))
        : []),
    ];
    const { ports, taken } = await reservePorts(wanted);
    const metricsPortOf = (id: number): number => ports[1 + s.brokers + id];
    this.print(
      `Starting ZooKeeper and ${s.brokers} broker${s.brokers === 1 ? "" : "s"} in ${this.dir}${this.temporary ? " (removed when the cluster stops; --dir keeps it)" : ""}`,
    );
    for (const t of taken) {
      const id = t.index - 1 - s.brokers;
      const given = wanted.find((w, i) => i !== t.index && w.port === t.port);
      this.print(
        `WARN: port ${t.port}, broker ${id}'s metrics port in ${propertiesFile(id)}, is ${given ? `given to ${given.what}` : "in use by another process"}: broker ${id}'s metrics move to port ${metricsPortOf(id)}`,
      );
    }

    // ZooKeeper: Kafka's config/zookeeper.properties (maxClientCnxns=0) on 127.0.0.1.
    this.zookeeperPort = ports[0];
    const dataDir = join(this.dir, "zookeeper");
    mkdirSync(dataDir, { recursive: true });
    const cfg = join(this.dir, "zoo.cfg");
    writeFileSync(
      cfg,
      zooCfgText({
        tickTime: 2000,
        initLimit: 10,
        syncLimit: 5,
        dataDir,
        clientPort: this.zookeeperPort,
        clientPortAddress: HOST,
        maxClientCnxns: 0,
      }),
    );
    const heap = splitOptions(process.env.KAFKA_HEAP_OPTS);
    const jvmOptions = [
      ...(heap.length > 0 ? heap : ZOOKEEPER_HEAP),
      ...splitOptions(process.env.KAFKA_OPTS),
    ];
    const zk = ManagedProcess.spawn(
      "ZooKeeper",
      install.java,
      zooKeeperServerArgv(install, cfg, { jvmOptions, logDir: this.dir }),
      join(this.dir, "zookeeper.log"),
      { cwd: this.dir },
    );
    this.zookeeper = zk;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((await serverStatus(HOST, this.zookeeperPort, 1000)) !== undefined) break;
      if (!zk.running) throw failure(`ZooKeeper did not start: ${describeExit(zk.exitStatus!)}`, zk);
      if (Date.now() > deadline)
        throw failure(
          `ZooKeeper did not answer 'srvr' on ${HOST}:${this.zookeeperPort} within ${timeoutMs} ms`,
          zk,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
    this.print(
      `ZooKeeper (pid ${zk.pid}) listening on ${HOST}:${this.zookeeperPort} (data in ${dataDir}, output in ${zk.logFile})`,
    );

    // Brokers, all at once.
    const few = Math.min(3, s.brokers);
    for (let id = 0; id < s.brokers; id++) {
      const port = ports[id + 1];
      const rack = s.racks.length > 0 ? s.racks[id % s.racks.length] : undefined;
      const logDir = join(this.dir, `broker-${id}`);
      const listener = `PLAINTEXT://${HOST}:${port}`;
      const settings: Array<[string, string]> = [
        ["broker.id", String(id)],
        ["zookeeper.connect", this.zookeeperConnect],
        ["listeners", listener],
        ["log.dirs", logDir],
        ...(ownMetrics
          ? [["metrics.http.listener", `http://${HOST}:${metricsPortOf(id)}`] as [string, string]]
          : []),
        ...(rack !== undefined ? [["broker.rack", rack] as [string, string]] : []),
        // Fewer than 3 brokers cannot hold the internal topics at Kafka's replication factor of 3.
        ...(few < 3
          ? ([
              ["offsets.topic.replication.factor", String(few)],
              ["transaction.state.log.replication.factor", String(few)],
              ["transaction.state.log.min.isr", String(Math.min(2, few))],
            ] as Array<[string, string]>)
          : []),
        ...s.overrides.map(([k, v]) => [k, v] as [string, string]),
      ];
      writeFileSync(
        propertiesFile(id),
        [
          `# Broker ${id} of the dev-cluster in ${this.dir} (written by tributary dev-cluster).`,
          `# Start it again by hand with: npx tributary server-start ${propertiesFile(id)}`,
          ...settings.map(([k, v]) => `${k}=${v}`),
          "",
        ].join("\n"),
      );
      const args = ["server-start"];
      for (const [k, v] of settings) args.push("--override", `${k}=${v}`);
      const p = ManagedProcess.spawn(
        `Broker ${id}`,
        process.execPath,
        tributaryCommand(args),
        join(this.dir, `broker-${id}.log`),
      );
      this.brokers.push({
        id,
        port,
        listener,
        rack,
        logDir,
        propertiesFile: propertiesFile(id),
        process: p,
        metricsUrl: undefined,
      });
    }
    const results = await Promise.all(
      this.brokers.map(async (b) => ({ b, ok: await b.process.waitForLine(STARTED_LINE(b.id), timeoutMs) })),
    );
    const failed = results.filter((r) => !r.ok).map((r) => r.b);
    if (failed.length > 0) {
      const lines: string[] = [];
      for (const b of failed) {
        const p = b.process;
        const why = p.running
          ? `no "started" line within ${timeoutMs} ms`
          : `it stopped (${describeExit(p.exitStatus!)})`;
        lines.push(...failure(`Broker ${b.id} did not start: ${why}`, p).lines);
      }
      const summary =
        failed.length === 1
          ? lines[0]
          : `${failed.length} brokers did not start (${failed.map((b) => b.id).join(", ")})`;
      throw new DevClusterError([summary, ...(failed.length === 1 ? lines.slice(1) : lines)]);
    }
    for (const b of this.brokers) {
      const m = b.process
        .tail(10_000)
        .map((l) => METRICS_LINE.exec(l))
        .find((x) => x !== null);
      b.metricsUrl = m?.[1];
      this.print(
        `Broker ${b.id} (pid ${b.process.pid}) listening on ${b.listener}${b.rack !== undefined ? ` in rack ${b.rack}` : ""} (logs in ${b.logDir}, output in ${b.process.logFile}${b.metricsUrl ? `, metrics on ${b.metricsUrl}` : ""})`,
      );
    }
    this.watchExits();
  }

  /** A process that ends while the cluster runs (not stopped by dev-cluster) is reported. */
  private watchExits(): void {
    for (const b of this.brokers) {
      void b.process.exited.then((status) => {
        if (this.stopping !== undefined) return;
        this.print(
          `Broker ${b.id} (pid ${b.process.pid}) exited (${describeExit(status)}); start it again with: npx tributary server-start ${b.propertiesFile}`,
        );
      });
    }
    const zk = this.zookeeper;
    void zk?.exited.then((status) => {
      if (this.stopping !== undefined) return;
      this.print(
        `ZooKeeper (pid ${zk.pid}) exited (${describeExit(status)}): the brokers have lost it; see ${zk.logFile}`,
      );
    });
  }

  /** The controller's id as a running broker says it (-1 when none answers quickly). */
  private async controllerId(running: readonly BrokerProcess[]): Promise<number> {
    const admin = new AdminClient({
      bootstrapServers: running.map((b) => `${HOST}:${b.port}`).join(","),
      clientId: "dev-cluster",
      requestTimeoutMs: 2000,
      connectTimeoutMs: 1000,
      defaultApiTimeoutMs: 3000,
    });
    try {
      return (await admin.describeCluster()).controllerId;
    } catch {
      return -1;
    } finally {
      await admin.close().catch(() => {});
    }
  }

  /**
   * Stops the brokers (SIGTERM, one at a time, the controller last), then ZooKeeper; removes a temporary
   * directory. True when every process exited by itself in time. Safe to call twice (waits for the first).
   */
  stop(): Promise<boolean> {
    this.stopping ??= this.stopAll(false);
    return this.stopping;
  }

  private async stopAll(quiet: boolean): Promise<boolean> {
    this.stopping ??= Promise.resolve(true); // exits from now on are ours
    const s = this.settings;
    const stopTimeoutMs = s.stopTimeoutMs ?? 120_000;
    let clean = true;
    const report = (
      name: string,
      r: { status: ExitStatus; killed: boolean },
      startedAt: number,
      expected: (s: ExitStatus) => boolean,
    ): void => {
      const secs = ((Date.now() - startedAt) / 1000).toFixed(2);
      if (r.killed) {
        clean = false;
        this.print(`${name} did not stop within ${stopTimeoutMs / 1000} s; killed it`);
      } else if (!quiet) {
        const how = expected(r.status) ? "" : ` (${describeExit(r.status)})`;
        this.print(`${name} stopped${how} after ${secs} s`);
      }
    };
    let running = this.brokers.filter((b) => b.process.running);
    if (!quiet && running.length > 0)
      this.print(
        `Stopping ${running.length} broker${running.length === 1 ? "" : "s"} (SIGTERM: controlled shutdown, the controller last), then ZooKeeper`,
      );
    while (running.length > 0) {
      let next = running[0];
      if (running.length > 1 && !quiet && !this.killed) {
        const controller = await this.controllerId(running);
        next = running.find((b) => b.id !== controller) ?? next;
      }
      if (running.length === 1 && !quiet && !this.killed && this.brokers.length > 1)
        this.print(
          `Broker ${next.id} is the last: the replicated partitions it leads have nowhere to move, so its controlled shutdown retries (controlled.shutdown.max.retries × controlled.shutdown.retry.backoff.ms) before it stops`,
        );
      const t0 = Date.now();
      report(
        `Broker ${next.id}`,
        await next.process.stop("SIGTERM", quiet ? 30_000 : stopTimeoutMs),
        t0,
        (st) => st.code === 0,
      );
      running = this.brokers.filter((b) => b.process.running);
    }
    const zk = this.zookeeper;
    if (zk?.running) {
      const t0 = Date.now();
      // The JVM ends on SIGTERM with 143 (128 + 15).
      report("ZooKeeper", await zk.stop("SIGTERM", 15_000), t0, (st) => st.code === 143 || st.code === 0);
    }
    process.off("exit", this.onProcessExit);
    // Every process is gone: another dev-cluster may use the directory now.
    this.lock?.release();
    if (this.temporary && !quiet) {
      rmSync(this.dir, { recursive: true, force: true });
      this.print(`Removed ${this.dir}`);
    }
    return clean && !this.killed;
  }

  /** SIGKILL to everything still running (this process is exiting without having stopped the cluster). */
  killAll(): void {
    this.killed = true;
    for (const b of this.brokers) b.process.signal("SIGKILL");
    this.zookeeper?.signal("SIGKILL");
  }
}
