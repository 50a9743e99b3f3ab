// Test-only: a ZooKeeper-mode cluster on one machine — a ZooKeeperHarness (1 or 3 servers) and N
// BrokerHarness processes (broker.id 0..N-1), for the tests under test/cluster.
//
// `ClusterHarness.start({ brokers: N })` starts ZooKeeper, then the brokers in parallel, each with its
// own temporary log dir and a port from `freePort`, `zookeeper.connect=<ensemble>/kafka` and short
// timeouts (CLUSTER_DEFAULTS), and waits until every broker is registered under /brokers/ids and a
// controller is elected. Brokers are stopped and started again on the same dir and port
// (`stopBroker`, `startBroker`); SIGSTOP/SIGCONT suspend and resume one (`suspendBroker`,
// `resumeBroker`). What the cluster says is read the way an operator reads it: `describe(topic)` parses
// `tributary topics --describe`, `znode(path)`/`stat(path)` run `tributary zookeeper-shell`.
// `logTails()` gives the last lines of every broker and ZooKeeper server; `withLogTails` wraps a test
// body so a failure prints them. Every wait is bounded.
// With `linkProxy: true` every broker also gets a REPLICATION listener (inter.broker.listener.name), whose
// advertised address is a LinkProxy route, and its own LinkProxy routes to ZooKeeper as zookeeper.connect;
// clients still reach every broker directly on PLAINTEXT. `isolateBroker(i)` then cuts broker i from the
// other brokers and from ZooKeeper (a network partition), `healBroker(i)` heals it.

import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { WireClient } from "../server/wire-client.js";
import {
  BrokerHarness,
  type CommandResult,
  describeResult,
  freePort,
  runCommand,
  sleep,
  tributaryArgv,
  waitFor,
  withDeadline as withTimeout,
} from "./broker-harness.js";
import { LinkProxy } from "./link-proxy.js";
import { ZooKeeperHarness } from "./zookeeper-harness.js";

export { sleep, waitFor };

/** The session timeout the harness configures (ms), for tests that wait past it. */
export const SESSION_TIMEOUT_MS = 6000;

/**
 * Settings every broker of a test cluster gets (before `overrides`; offsets.topic.replication.factor and
 * transaction.state.log.replication.factor are min(3, N)).
 */
export const CLUSTER_DEFAULTS: Readonly<Record<string, string>> = {
  "zookeeper.session.timeout.ms": String(SESSION_TIMEOUT_MS),
  "controlled.shutdown.retry.backoff.ms": "200",
  "replica.lag.time.max.ms": "5000",
  "group.initial.rebalance.delay.ms": "0",
};

export interface ClusterOptions {
  readonly brokers: number;
  readonly zookeeperServers?: 1 | 3;
  /** The chroot under which the cluster lives; default "/kafka". "" for none. */
  readonly chroot?: string;
  /** Extra broker settings, for every broker. */
  readonly overrides?: Readonly<Record<string, string>>;
  /**
   * Settings of broker i only, given its PLAINTEXT (client) port — e.g. its own listeners (that port first)
   * with an inter-broker listener on port 0, or its own credentials. Applied after `overrides`.
   */
  readonly brokerOverrides?: (i: number, port: number) => Readonly<Record<string, string>>;
  /** broker.rack of broker i. */
  readonly racks?: readonly string[];
  /** Prefix of the temporary directories. */
  readonly name?: string;
  /**
   * Inter-broker and ZooKeeper traffic through a LinkProxy, for isolateBroker/healBroker (the brokers get a
   * REPLICATION listener for inter-broker traffic; `overrides` must not set listeners or zookeeper.connect).
   */
  readonly linkProxy?: boolean;
}

/** One partition line of `topics --describe`. */
export interface PartitionDescription {
  readonly topic: string;
  readonly partition: number;
  /** -1 when the tool prints `Leader: none`. */
  readonly leader: number;
  readonly replicas: number[];
  readonly isr: number[];
}

/** A partition's state znode (/brokers/topics/<t>/partitions/<p>/state). */
export interface PartitionState {
  readonly controller_epoch: number;
  readonly leader: number;
  readonly version: number;
  readonly leader_epoch: number;
  readonly isr: number[];
}

/** `zookeeper-shell stat` fields, as printed (cZxid, ctime, …, numChildren), zxids as bigint. */
export interface ZnodeStat {
  readonly czxid: bigint;
  readonly mzxid: bigint;
  readonly version: number;
  readonly ephemeralOwner: bigint;
  readonly raw: Record<string, string>;
}

type BrokerState = "running" | "stopped" | "suspended";

export class ClusterHarness {
  readonly brokers: BrokerHarness[] = [];
  private readonly states: BrokerState[] = [];
  private readonly isolated = new Set<number>();
  private closed = false;

  private constructor(
    readonly zk: ZooKeeperHarness,
    readonly chroot: string,
    /** The proxy of the inter-broker and ZooKeeper links (with `linkProxy: true`). */
    readonly proxy?: LinkProxy,
  ) {}

  static async start(options: ClusterOptions): Promise<ClusterHarness> {
    const n = options.brokers;
    const zk = await ZooKeeperHarness.start({ servers: options.zookeeperServers ?? 1 });
    const proxy = options.linkProxy ? new LinkProxy() : undefined;
    const cluster = new ClusterHarness(zk, options.chroot ?? "/kafka", proxy);
    try {
      const ports = new Set<number>();
      while (ports.size < n * (proxy ? 2 : 1)) ports.add(await freePort());
      const portList = [...ports].slice(0, n);
      const linkSettings = proxy ? await cluster.proxiedLinks([...ports].slice(n)) : [];
      const rf = String(Math.min(3, n));
      const started = await Promise.allSettled(
        portList.map((port, i) =>
          BrokerHarness.start({
            name: `tributary-cluster-b${i}`,
            port,
            startTimeoutMs: 45_000,
            overrides: {
              ...CLUSTER_DEFAULTS,
              "offsets.topic.replication.factor": rf,
              "transaction.state.log.replication.factor": rf,
              "transaction.state.log.min.isr": "1",
              ...(options.racks?.[i] !== undefined ? { "broker.rack": options.racks[i] } : {}),
              ...options.overrides,
              ...options.brokerOverrides?.(i, port),
              "zookeeper.connect": cluster.zookeeperConnect,
              ...linkSettings[i]?.(port),
              "broker.id": String(i),
            },
          }),
        ),
      );
      const failed = started.find((s) => s.status === "rejected");
      if (failed) {
        // (A broker that failed to start closed itself; its output is in the reason.)
        await Promise.all(started.map((s) => (s.status === "fulfilled" ? s.value.close() : undefined)));
        throw (failed as PromiseRejectedResult).reason;
      }
      for (const s of started) {
        cluster.brokers.push((s as PromiseFulfilledResult<BrokerHarness>).value);
        cluster.states.push("running");
      }
      const all = cluster.brokers.map((_, i) => i);
      await cluster.waitForRegistered(all, 30_000);
      await cluster.waitForController(30_000);
      await cluster.waitForMetadataBrokers(all, 30_000);
    } catch (e) {
      const tails = cluster.logTails();
      await cluster.close();
      throw new Error(`${(e as Error).message}\n${tails}`);
    }
    return cluster;
  }

  /**
   * The settings that put broker i's inter-broker and ZooKeeper links behind the proxy: a REPLICATION
   * listener on `replicationPorts[i]`, advertised at the proxy's route to it, and zookeeper.connect naming
   * broker i's own routes to every ZooKeeper server. One function per broker, of its PLAINTEXT port.
   */
  private async proxiedLinks(
    replicationPorts: readonly number[],
  ): Promise<Array<(port: number) => Record<string, string>>> {
    const proxy = this.proxy!;
    const zkPorts = this.zk.connectString.split(",").map((hp) => Number(hp.slice(hp.lastIndexOf(":") + 1)));
    return Promise.all(
      replicationPorts.map(async (q, i) => {
        const advertised = await proxy.brokerRoute(i, q);
        const zkRoutes = await Promise.all(zkPorts.map((zp) => proxy.zooKeeperRoute(i, zp)));
        return (port: number) => ({
          listeners: `PLAINTEXT://127.0.0.1:${port},REPLICATION://127.0.0.1:${q}`,
          "advertised.listeners": `PLAINTEXT://127.0.0.1:${port},REPLICATION://127.0.0.1:${advertised}`,
          "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT",
          "inter.broker.listener.name": "REPLICATION",
          "zookeeper.connect": `${zkRoutes.map((r) => `127.0.0.1:${r}`).join(",")}${this.chroot}`,
        });
      }),
    );
  }

  /**
   * Cuts broker i off from every other broker (both directions) and from ZooKeeper: open connections are
   * dropped, new ones blackholed. Clients still reach it. Needs `linkProxy: true`.
   */
  isolateBroker(i: number): void {
    if (!this.proxy) throw new Error("isolateBroker needs a cluster started with linkProxy: true");
    this.broker(i);
    this.proxy.isolate(
      i,
      this.brokers.map((_, k) => k).filter((k) => k !== i),
    );
    this.isolated.add(i);
  }

  /** Heals every link of broker i cut by isolateBroker. */
  healBroker(i: number): void {
    if (!this.proxy) throw new Error("healBroker needs a cluster started with linkProxy: true");
    this.proxy.rejoin(i);
    this.isolated.delete(i);
  }

  /** The brokers cut off now. */
  isolatedIds(): number[] {
    return [...this.isolated].sort((a, b) => a - b);
  }

  /** `zookeeper.connect` of the brokers: every ZooKeeper server and the chroot. */
  get zookeeperConnect(): string {
    return `${this.zk.connectString}${this.chroot}`;
  }

  get size(): number {
    return this.brokers.length;
  }

  broker(i: number): BrokerHarness {
    const b = this.brokers[i];
    if (!b) throw new Error(`no broker ${i} (there are ${this.brokers.length})`);
    return b;
  }

  /** Ids of the brokers that run and are not suspended. */
  liveIds(): number[] {
    return this.brokers.map((_, i) => i).filter((i) => this.states[i] === "running");
  }

  isLive(i: number): boolean {
    return this.states[i] === "running";
  }

  /** `host:port,…` of the live brokers (all of them when `except` is not given). */
  bootstrap(except: readonly number[] = []): string {
    return this.liveIds()
      .filter((i) => !except.includes(i))
      .map((i) => this.broker(i).bootstrap)
      .join(",");
  }

  /**
   * Stops broker i: SIGTERM (a controlled shutdown) or SIGKILL waits for the exit; SIGSTOP suspends it
   * (resume with startBroker or resumeBroker).
   */
  async stopBroker(i: number, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    const b = this.broker(i);
    if (signal === "SIGSTOP") {
      this.suspendBroker(i);
      return null;
    }
    if (this.states[i] === "suspended") process.kill(b.pid!, "SIGCONT");
    this.states[i] = "stopped";
    return b.stop(signal, 30_000);
  }

  /** SIGSTOP of broker i's process. */
  suspendBroker(i: number): void {
    const b = this.broker(i);
    if (!b.isRunning) throw new Error(`broker ${i} does not run`);
    process.kill(b.pid!, "SIGSTOP");
    this.states[i] = "suspended";
  }

  /** SIGCONT of a suspended broker. */
  resumeBroker(i: number): void {
    const b = this.broker(i);
    if (this.states[i] !== "suspended") throw new Error(`broker ${i} is not suspended`);
    process.kill(b.pid!, "SIGCONT");
    this.states[i] = "running";
  }

  /** SIGCONT of every suspended broker (for an afterEach, so a failed test leaves none frozen). */
  resumeSuspended(): void {
    for (const i of this.brokers.keys()) if (this.states[i] === "suspended") this.resumeBroker(i);
  }

  /** Starts broker i again on its log dir and port (resumes it when suspended). */
  async startBroker(i: number): Promise<void> {
    if (this.states[i] === "suspended") return this.resumeBroker(i);
    const b = this.broker(i);
    if (b.isRunning) return;
    await b.restart();
    this.states[i] = "running";
  }

  // ---- tools ----

  /** `tributary <args>` with a deadline. */
  tributary(args: readonly string[], timeoutMs = 30_000): Promise<CommandResult> {
    return runCommand(process.execPath, tributaryArgv(args), { timeoutMs });
  }

  /** `tributary topics --bootstrap-server <live brokers> <args>`; throws unless it exits 0. */
  async topics(args: readonly string[], via?: string): Promise<string> {
    const bootstrap = via ?? this.bootstrap();
    const r = await this.tributary(["topics", "--bootstrap-server", bootstrap, ...args]);
    if (r.code !== 0) throw new Error(describeResult(`topics ${args.join(" ")}`, r));
    return r.stdout;
  }

  async createTopic(
    topic: string,
    partitions: number,
    replicationFactor: number,
    configs: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const args = [
      "--create",
      "--topic",
      topic,
      "--partitions",
      String(partitions),
      "--replication-factor",
      String(replicationFactor),
    ];
    for (const [k, v] of Object.entries(configs)) args.push("--config", `${k}=${v}`);
    await this.topics(args);
  }

  /** The partition lines of `topics --describe --topic <topic>`, sorted by partition. */
  async describe(topic: string, via?: string): Promise<PartitionDescription[]> {
    return parseDescribe(await this.topics(["--describe", "--topic", topic], via));
  }

  /** `tributary zookeeper-shell <ensemble><chroot> <args>` (no check of the exit status). */
  zkShell(args: readonly string[], chroot = this.chroot): Promise<CommandResult> {
    return this.tributary(["zookeeper-shell", `${this.zk.connectString}${chroot}`, ...args]);
  }

  /** The data of a znode (under the chroot) as text, or undefined when it does not exist. */
  async znode(path: string): Promise<string | undefined> {
    const r = await this.zkShell(["get", path]);
    if (r.code !== 0) {
      if (/Node does not exist/i.test(r.stdout + r.stderr)) return undefined;
      throw new Error(describeResult(`zookeeper-shell get ${path}`, r));
    }
    return shellPayload(r.stdout)[0];
  }

  /** A znode's data parsed as JSON, or undefined when it does not exist. */
  async znodeJson<T = unknown>(path: string): Promise<T | undefined> {
    const data = await this.znode(path);
    if (data === undefined) return undefined;
    try {
      return JSON.parse(data) as T;
    } catch {
      throw new Error(`znode ${path} is not JSON: ${JSON.stringify(data)}`);
    }
  }

  /** The children of a znode, or undefined when it does not exist. */
  async children(path: string): Promise<string[] | undefined> {
    const r = await this.zkShell(["ls", path]);
    if (r.code !== 0) {
      if (/Node does not exist/i.test(r.stdout + r.stderr)) return undefined;
      throw new Error(describeResult(`zookeeper-shell ls ${path}`, r));
    }
    const line = shellPayload(r.stdout).find((l) => l.startsWith("["));
    if (line === undefined) throw new Error(describeResult(`zookeeper-shell ls ${path}`, r));
    const inner = line.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(", ");
  }

  /** `zookeeper-shell stat <path>`, or undefined when the znode does not exist. */
  async stat(path: string): Promise<ZnodeStat | undefined> {
    const r = await this.zkShell(["stat", path]);
    if (r.code !== 0) {
      if (/Node does not exist/i.test(r.stdout + r.stderr)) return undefined;
      throw new Error(describeResult(`zookeeper-shell stat ${path}`, r));
    }
    const stat = parseStat(r.stdout);
    if (stat === undefined) throw new Error(describeResult(`zookeeper-shell stat ${path}`, r));
    return stat;
  }

  /**
   * A znode's data and stat from one read (`zookeeper-shell get -s`), so the two belong together; undefined
   * when the znode does not exist.
   */
  async znodeWithStat(path: string): Promise<{ data: string; stat: ZnodeStat } | undefined> {
    const r = await this.zkShell(["get", "-s", path]);
    if (r.code !== 0) {
      if (/Node does not exist/i.test(r.stdout + r.stderr)) return undefined;
      throw new Error(describeResult(`zookeeper-shell get -s ${path}`, r));
    }
    const stat = parseStat(r.stdout);
    const data = shellPayload(r.stdout)[0];
    if (stat === undefined || data === undefined)
      throw new Error(describeResult(`zookeeper-shell get -s ${path}`, r));
    return { data, stat };
  }

  /** A replica's records as `tributary dump-log --print-data-log` reads its segments: offset → value. */
  async partitionLog(brokerId: number, topic: string, partition: number): Promise<Map<number, string>> {
    const dir = join(this.broker(brokerId).logDir, `${topic}-${partition}`);
    const out = new Map<number, string>();
    if (!existsSync(dir)) return out;
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".log"))
      .sort()
      .map((f) => join(dir, f));
    if (files.length === 0) return out;
    const r = await this.tributary(["dump-log", "--files", files.join(","), "--print-data-log"]);
    if (r.code !== 0) throw new Error(describeResult(`dump-log ${dir}`, r));
    for (const m of r.stdout.matchAll(/^\| offset: (\d+) .*? payload: (.*)$/gm)) out.set(Number(m[1]), m[2]);
    return out;
  }

  /**
   * A replica's batches as `tributary dump-log` lists them, one `"<baseOffset>..<lastOffset> epoch <E> crc <C>"`
   * per batch across its segments: replicas of one partition must agree batch for batch (positions and segment
   * boundaries may differ, as segments roll by time on each broker).
   */
  async partitionBatches(brokerId: number, topic: string, partition: number): Promise<string[]> {
    const dir = join(this.broker(brokerId).logDir, `${topic}-${partition}`);
    if (!existsSync(dir)) return [];
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".log"))
      .sort()
      .map((f) => join(dir, f));
    if (files.length === 0) return [];
    const r = await this.tributary(["dump-log", "--files", files.join(",")]);
    if (r.code !== 0) throw new Error(describeResult(`dump-log ${dir}`, r));
    return [
      ...r.stdout.matchAll(
        /^baseOffset: (\d+) lastOffset: (\d+) .*?partitionLeaderEpoch: (-?\d+) .*? crc: (\d+) isvalid: true$/gm,
      ),
    ].map((m) => `${m[1]}..${m[2]} epoch ${m[3]} crc ${m[4]}`);
  }

  /** The broker id in /controller, or undefined when there is no controller. */
  async controllerId(): Promise<number | undefined> {
    const c = await this.znodeJson<{ brokerid: number }>("/controller");
    return c?.brokerid;
  }

  /** /controller_epoch as a number (undefined before the first election). */
  async controllerEpoch(): Promise<number | undefined> {
    const e = await this.znode("/controller_epoch");
    return e === undefined ? undefined : Number(e);
  }

  /** /brokers/topics/<topic>/partitions/<p>/state. */
  async partitionState(topic: string, partition: number): Promise<PartitionState | undefined> {
    return this.znodeJson<PartitionState>(`/brokers/topics/${topic}/partitions/${partition}/state`);
  }

  /** /brokers/topics/<topic>: the assignment, partition → replicas. */
  async assignment(topic: string): Promise<Map<number, number[]>> {
    const t = await this.znodeJson<{ partitions: Record<string, number[]> }>(`/brokers/topics/${topic}`);
    if (!t) throw new Error(`no znode /brokers/topics/${topic}`);
    return new Map(Object.entries(t.partitions).map(([p, r]) => [Number(p), r]));
  }

  /** The registered broker ids (children of /brokers/ids), sorted. */
  async registeredIds(): Promise<number[]> {
    return ((await this.children("/brokers/ids")) ?? []).map(Number).sort((a, b) => a - b);
  }

  // ---- waits ----

  /** Polls `check` until it returns a value other than undefined; throws after `ms`. */
  waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
    return waitFor(what, ms, check);
  }

  /** Waits until exactly `ids` are registered under /brokers/ids (other ids allowed when `exact` is false). */
  waitForRegistered(ids: readonly number[], ms = 20_000, exact = false): Promise<number[]> {
    return this.waitFor(`brokers ${ids.join(",")} registered in /brokers/ids`, ms, async () => {
      const got = await this.registeredIds();
      const ok = ids.every((i) => got.includes(i)) && (!exact || got.length === ids.length);
      return ok ? got : undefined;
    });
  }

  /** Waits until /controller names a broker (other than those in `not`); its id. */
  waitForController(ms = 20_000, not: readonly number[] = []): Promise<number> {
    return this.waitFor(
      `a controller${not.length > 0 ? ` other than ${not.join(",")}` : ""}`,
      ms,
      async () => {
        const id = await this.controllerId();
        return id !== undefined && id >= 0 && !not.includes(id) ? id : undefined;
      },
    );
  }

  /**
   * Waits until the Metadata of the broker(s) `via` (default: every live broker) lists exactly the
   * brokers `ids` (its metadata cache, fed by the controller's UpdateMetadata).
   */
  waitForMetadataBrokers(ids: readonly number[], ms = 20_000, via?: readonly number[]): Promise<true> {
    const want = [...ids].sort((a, b) => a - b).join(",");
    return this.waitFor(`metadata listing brokers ${want}`, ms, async () => {
      for (const i of via ?? this.liveIds()) {
        const md = await this.metadata(i);
        if (md.brokers.join(",") !== want) return undefined;
      }
      return true;
    });
  }

  /** Waits until `check` accepts `describe(topic)` (asked of `via`, or all live brokers). */
  waitForDescribe(
    topic: string,
    what: string,
    ms: number,
    check: (parts: PartitionDescription[]) => boolean,
    via?: string,
  ): Promise<PartitionDescription[]> {
    let last: PartitionDescription[] | undefined;
    return this.waitFor(`${topic}: ${what}`, ms, async () => {
      last = await this.describe(topic, via);
      return check(last) ? last : undefined;
    }).catch((e) => {
      throw new Error(`${(e as Error).message}\nlast describe:\n${formatDescribe(last)}`);
    });
  }

  /**
   * A Metadata request (v7, no topics) to broker i: the broker ids it lists and the controller id it
   * names.
   */
  async metadata(i: number, timeoutMs = 5000): Promise<{ brokers: number[]; controllerId: number }> {
    const client = await WireClient.connect(this.broker(i).port);
    try {
      const res = await withTimeout(
        `Metadata from broker ${i}`,
        timeoutMs,
        client.request(Apis.Metadata, 7, { ...defaultMetadataRequest(), topics: [] }),
      );
      return {
        brokers: res.brokers.map((b) => b.nodeId).sort((a, b) => a - b),
        controllerId: res.controllerId,
      };
    } finally {
      client.socket.destroy();
    }
  }

  // ---- diagnostics ----

  /** The last `lines` lines of every broker (stdout and stderr) and every ZooKeeper server. */
  logTails(lines = 60): string {
    const parts: string[] = [];
    for (const [i, b] of this.brokers.entries()) {
      const cut = this.isolated.has(i) ? ", isolated" : "";
      parts.push(`--- broker ${i} (port ${b.port}, ${this.states[i]}${cut}) stdout, last lines ---`);
      parts.push(tail(b.stdout, lines));
      const err = tail(b.stderr, lines).trim();
      if (err.replace(/=== start #\d+ ===/g, "").trim() !== "") {
        parts.push(`--- broker ${i} stderr, last lines ---`);
        parts.push(err);
      }
    }
    parts.push(this.zk.logs(lines));
    return parts.join("\n");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      this.brokers.map(async (b, i) => {
        if (this.states[i] === "suspended" && b.isRunning) process.kill(b.pid!, "SIGCONT");
        await b.close();
      }),
    );
    await this.proxy?.close();
    await this.zk.close();
  }
}

/**
 * Runs a test body against a cluster; when it throws, prints every broker's and ZooKeeper's log tail
 * (to stderr, so node:test shows it with the failure) and rethrows. With CLUSTER_TEST_LOGS=1 in the
 * environment the tails are printed after a passing body too.
 */
export async function withLogTails<T>(
  cluster: () => ClusterHarness | undefined,
  body: () => Promise<T>,
): Promise<T> {
  try {
    const result = await body();
    const c = cluster();
    if (c && process.env.CLUSTER_TEST_LOGS)
      process.stderr.write(`\n===== cluster logs =====\n${c.logTails()}\n`);
    return result;
  } catch (e) {
    const c = cluster();
    if (c) process.stderr.write(`\n===== cluster logs at the failure =====\n${c.logTails()}\n`);
    throw e;
  }
}

/** Parses `topics --describe` output: its partition lines, sorted by topic and partition. */
export function parseDescribe(stdout: string): PartitionDescription[] {
  const out: PartitionDescription[] = [];
  const ids = (s: string): number[] => (s.trim() === "" ? [] : s.split(",").map((x) => Number(x.trim())));
  for (const line of stdout.split("\n")) {
    const m = /^\s*Topic: (\S+)\s+Partition: (\d+)\s+Leader: (\S+)\s+Replicas: ([\d,]*)\s+Isr: ([\d,]*)/.exec(
      line,
    );
    if (!m) continue;
    out.push({
      topic: m[1],
      partition: Number(m[2]),
      leader: m[3] === "none" ? -1 : Number(m[3]),
      replicas: ids(m[4]),
      isr: ids(m[5]),
    });
  }
  return out.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
}

/**
 * The partitions that break the leader-election rule when only `live` brokers run: a partition whose ISR
 * has a live member must be led by a live member of its ISR; one whose ISR has none has no leader (no
 * unclean election) — never a dead broker.
 */
export function electionViolations(
  parts: readonly PartitionDescription[],
  live: readonly number[],
): PartitionDescription[] {
  return parts.filter((p) => {
    const liveIsr = p.isr.filter((r) => live.includes(r));
    return liveIsr.length > 0 ? !liveIsr.includes(p.leader) : p.leader !== -1;
  });
}

/** Partition lines in the tool's format, for assertion messages. */
export function formatDescribe(parts: readonly PartitionDescription[] | undefined): string {
  if (!parts) return "(none)";
  return parts
    .map(
      (p) =>
        `\tTopic: ${p.topic}\tPartition: ${p.partition}\tLeader: ${p.leader < 0 ? "none" : p.leader}\tReplicas: ${p.replicas.join(",")}\tIsr: ${p.isr.join(",")}`,
    )
    .join("\n");
}

/** The lines zookeeper-shell printed after its connection banner (the command's own output). */
/** The `name = value` stat lines of a zookeeper-shell output, or undefined without them. */
function parseStat(stdout: string): ZnodeStat | undefined {
  const raw: Record<string, string> = {};
  for (const line of stdout.split("\n")) {
    const m = /^(\w+) = (.*)$/.exec(line.trim());
    if (m) raw[m[1]] = m[2];
  }
  if (raw.cZxid === undefined) return undefined;
  return {
    czxid: BigInt(raw.cZxid),
    mzxid: BigInt(raw.mZxid),
    version: Number(raw.dataVersion),
    ephemeralOwner: BigInt(raw.ephemeralOwner),
    raw,
  };
}

function shellPayload(stdout: string): string[] {
  const lines = stdout.split("\n");
  let i = lines.findIndex((l) => l.startsWith("WatchedEvent state:SyncConnected"));
  i = i < 0 ? 0 : i + 1;
  return lines
    .slice(i)
    .filter((l) => l.trim() !== "" && !l.startsWith("WATCHER::") && !l.startsWith("WatchedEvent"));
}

function tail(text: string, lines: number): string {
  return text.split("\n").slice(-lines).join("\n");
}
