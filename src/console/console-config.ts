// The console's configuration: clusters (an alias each, as EFAK's kafka.eagle.zk.cluster.alias, with
// their bootstrap servers), where it listens, how often the collector samples, and where history goes.
// Read from a properties file (`console.properties`) or a JSON file of the same keys, then the command
// line on top. Every bad value is a ConfigError with one line naming the key and what was expected.
//
//   console.cluster.alias=prod,test            prod.bootstrap.servers=host1:9092,host2:9092
//   prod.zookeeper.connect=zk1:2181/kafka      (optional: the ZooKeeper browser)
//   prod.metrics.port=9404 | prod.metrics.urls=0=http://h:9404/metrics,…   (optional: broker metrics)
//   console.listen.host=127.0.0.1              console.port=8048
//   console.sample.interval.ms=5000            console.history.url=sqlite:console-history.db | mysql://u:p@h/db
//   console.history.retention.days=7

import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseProperties } from "../client/producer/properties-file.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export interface ClusterConfig {
  readonly alias: string;
  readonly bootstrapServers: string;
  /** host:port[,host:port][/chroot] of the cluster's ZooKeeper, for the (read-only) ZooKeeper browser. */
  readonly zookeeperConnect?: string;
  /** Where each broker serves Prometheus /metrics: explicit URLs by broker id, and/or a port on each broker's host. */
  readonly metricsUrls?: Readonly<Record<number, string>>;
  readonly metricsPort?: number;
}

export interface ConsoleConfig {
  readonly clusters: readonly ClusterConfig[];
  readonly host: string;
  readonly port: number;
  readonly sampleIntervalMs: number;
  /** `sqlite:<file>` or `mysql://…` (a `jdbc:mysql://` prefix is accepted and dropped). */
  readonly historyUrl: string;
  readonly retentionDays: number;
}

export const DEFAULTS = {
  host: "127.0.0.1",
  port: 8048,
  // Charts show a line within seconds; a round costs a broker ~16 ms of CPU with 2 groups, ~66 ms with
  // 100 (0.3 % and 1.3 % of a core at 5 s: docs/benchmarks.md, test/console/sample-cost.bench.ts).
  sampleIntervalMs: 5_000,
  retentionDays: 7,
  historyFile: "console-history.db",
} as const;

const ALIAS = /^[A-Za-z0-9._-]+$/;
const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** Reads a `.json` file (an object of the properties keys) or a properties file; one line on error. */
export function loadConfigFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? e}`);
  }
  if (!path.endsWith(".json")) return parseProperties(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`config file ${path}: expected a JSON object of settings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v === "object" && v !== null)
      throw new ConfigError(`config file ${path}: ${k} must be a string or number`);
    out[k] = String(v);
  }
  return out;
}

/** Checks `servers` is host:port[,host:port…]; returns it trimmed. */
export function checkBootstrap(servers: string, what: string): string {
  const list = servers.split(",").map((s) => s.trim());
  for (const s of list)
    if (!HOST_PORT.test(s) || Number(s.slice(s.lastIndexOf(":") + 1)) > 65535)
      throw new ConfigError(`${what}: '${s}' is not host:port (expected HOST1:PORT1,HOST2:PORT2)`);
  return list.join(",");
}

function intSetting(
  props: Record<string, string>,
  key: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = props[key];
  if (raw === undefined) return fallback;
  const n = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new ConfigError(`${key}: '${raw}' is not a whole number from ${min} to ${max}`);
  return n;
}

/** Normalises and checks a history URL; a bare path means SQLite. Relative files are against `base`. */
export function normaliseHistoryUrl(url: string, base: string): string {
  const u = url.trim().replace(/^jdbc:/, "");
  if (u.startsWith("mysql://") || u.startsWith("mariadb://")) {
    try {
      const parsed = new URL(u);
      if (!parsed.hostname) throw new Error("no host");
      if (parsed.pathname.length < 2) throw new Error("no database");
    } catch {
      throw new ConfigError(`console.history.url: '${url}' is not mysql://user:password@host:port/database`);
    }
    return u;
  }
  const file = u.startsWith("sqlite:") ? u.slice("sqlite:".length) : u;
  if (file === "" || /^[a-z]+:\/\//.test(file))
    throw new ConfigError(`console.history.url: '${url}' is neither sqlite:<file> nor mysql://…`);
  if (file === ":memory:") return "sqlite::memory:";
  return `sqlite:${isAbsolute(file) ? file : resolve(base, file)}`;
}

/**
 * The configuration from `props` (file settings with command-line settings already merged on top).
 * `baseDir` is where relative history files go: beside the config file, else the working directory.
 */
export function buildConfig(props: Record<string, string>, baseDir: string): ConsoleConfig {
  const aliases = (props["console.cluster.alias"] ?? props["kafka.eagle.zk.cluster.alias"] ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if (aliases.length === 0)
    throw new ConfigError(
      "no cluster: give --bootstrap-server, --cluster alias=host:port, or console.cluster.alias in the config file",
    );
  const seen = new Set<string>();
  const clusters = aliases.map((alias): ClusterConfig => {
    if (!ALIAS.test(alias))
      throw new ConfigError(`cluster alias '${alias}': use letters, digits, '.', '_' or '-'`);
    if (seen.has(alias)) throw new ConfigError(`cluster alias '${alias}' is given twice`);
    seen.add(alias);
    const key = `${alias}.bootstrap.servers`;
    const servers = props[key];
    if (!servers) throw new ConfigError(`${key} is missing (the bootstrap servers of cluster '${alias}')`);
    const zkKey = `${alias}.zookeeper.connect`;
    const zk = props[zkKey]?.trim();
    if (zk !== undefined && !/^[^/,\s]+:\d+(,[^/,\s]+:\d+)*(\/[^\s]*)?$/.test(zk))
      throw new ConfigError(`${zkKey}: '${zk}' is not host:port[,host:port][/chroot]`);
    const urlsKey = `${alias}.metrics.urls`;
    const metricsUrls: Record<number, string> = {};
    for (const entry of (props[urlsKey] ?? "")
      .split(",")
      .map((e) => e.trim())
      .filter((e) => e !== "")) {
      const eq = entry.indexOf("=");
      const id = Number(entry.slice(0, eq));
      let ok = eq > 0 && Number.isSafeInteger(id) && id >= 0;
      try {
        ok &&= ["http:", "https:"].includes(new URL(entry.slice(eq + 1)).protocol);
      } catch {
        ok = false;
      }
      if (!ok) throw new ConfigError(`${urlsKey}: '${entry}' is not <broker id>=http://host:port/metrics`);
      metricsUrls[id] = entry.slice(eq + 1);
    }
    const portKey = `${alias}.metrics.port`;
    const metricsPort = props[portKey] === undefined ? undefined : intSetting(props, portKey, 0, 1, 65535);
    return {
      alias,
      bootstrapServers: checkBootstrap(servers, key),
      ...(zk ? { zookeeperConnect: zk } : {}),
      ...(Object.keys(metricsUrls).length > 0 ? { metricsUrls } : {}),
      ...(metricsPort !== undefined ? { metricsPort } : {}),
    };
  });
  const host = (props["console.listen.host"] ?? DEFAULTS.host).trim();
  if (host === "") throw new ConfigError("console.listen.host: expected an address such as 127.0.0.1");
  return {
    clusters,
    host,
    port: intSetting(props, "console.port", DEFAULTS.port, 0, 65535),
    sampleIntervalMs: intSetting(
      props,
      "console.sample.interval.ms",
      DEFAULTS.sampleIntervalMs,
      100,
      86_400_000,
    ),
    historyUrl: normaliseHistoryUrl(props["console.history.url"] ?? DEFAULTS.historyFile, baseDir),
    retentionDays: intSetting(props, "console.history.retention.days", DEFAULTS.retentionDays, 1, 3650),
  };
}

export function configBaseDir(configFile: string | undefined): string {
  return configFile ? dirname(resolve(configFile)) : process.cwd();
}
