// The commands of `tributary zookeeper-shell` (Kafka's zookeeper-shell.sh, i.e. ZooKeeper's ZooKeeperMain)
// on one ZooKeeperSession: ls [-s] [-w] [-R], get [-s] [-w], stat [-w], create [-s] [-e], set [-s] [-v],
// delete [-v], deleteall. Output is ZooKeeperMain's, line for line: `[a, b]` for ls, the data (or `null`)
// for get, the Stat block (`cZxid = 0x…`, `ctime = <java.util.Date>`, …), `Created /path` and errors on
// stderr in its words ("Node does not exist: /x", "Node already exists: /x", …), a command's usage line
// when its arguments are wrong. Also the `WATCHER::` block ZooKeeperMain prints for a watched event.

import { MetadataStoreError } from "../../server/metadata/metadata-store.js";
import type { ZkStat, ZooKeeperSession } from "../../server/metadata/zookeeper-session.js";

export interface ShellIo {
  out(line: string): void;
  err(line: string): void;
}

/** Java's long as Long.toHexString prints it (two's complement for a negative value). */
function hex(v: bigint): string {
  return `0x${BigInt.asUintN(64, v).toString(16)}`;
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** java.util.Date#toString in the local time zone: `Tue Dec 01 14:46:00 UTC 2026`. */
export function javaDateString(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, "0");
  const zone =
    new Intl.DateTimeFormat("en-US", { timeZoneName: "short" })
      .formatToParts(d)
      .find((x) => x.type === "timeZoneName")?.value ?? "UTC";
  return `${DAYS[d.getDay()]} ${MONTHS[d.getMonth()]} ${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${zone} ${d.getFullYear()}`;
}

/** ZooKeeperMain's stat block. */
export function statLines(stat: ZkStat): string[] {
  return [
    `cZxid = ${hex(stat.czxid)}`,
    `ctime = ${javaDateString(stat.ctime)}`,
    `mZxid = ${hex(stat.mzxid)}`,
    `mtime = ${javaDateString(stat.mtime)}`,
    `pZxid = ${hex(stat.pzxid)}`,
    `cversion = ${stat.cversion}`,
    `dataVersion = ${stat.version}`,
    `aclVersion = ${stat.aversion}`,
    `ephemeralOwner = ${hex(stat.ephemeralOwner)}`,
    `dataLength = ${stat.dataLength}`,
    `numChildren = ${stat.numChildren}`,
  ];
}

/** The lines ZooKeeperMain's watcher prints for an event (`state` SyncConnected, Disconnected, Closed, …). */
export function watcherLines(state: string, type = "None", path: string | null = null): string[] {
  return ["", "WATCHER::", "", `WatchedEvent state:${state} type:${type} path:${path}`];
}

/** ZooKeeperMain's (CliWrapperException's) wording of a failed request. */
export function errorLine(e: unknown): string {
  if (!(e instanceof MetadataStoreError)) return (e as Error)?.message ?? String(e);
  switch (e.code) {
    case "NoNode":
      return `Node does not exist: ${e.path}`;
    case "NodeExists":
      return `Node already exists: ${e.path}`;
    case "NotEmpty":
      return `Node not empty: ${e.path}`;
    case "BadVersion":
      return `version No is not valid : ${e.path}`;
    case "NoChildrenForEphemerals":
      return `Ephemerals cannot have children: ${e.path}`;
    case "NoAuth":
      return `Insufficient permission : ${e.path}`;
    case "BadArguments":
      return e.message.startsWith("KeeperErrorCode") ? `Arguments are not valid : ${e.path}` : e.message;
    default:
      return e.message;
  }
}

interface CommandSpec {
  readonly usage: string;
  readonly flags: readonly string[];
  /** Flags that take a value. */
  readonly valued?: readonly string[];
  readonly minArgs: number;
  readonly maxArgs: number;
}

export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  create: { usage: "create [-s] [-e] path [data]", flags: ["s", "e"], minArgs: 1, maxArgs: 2 },
  delete: { usage: "delete [-v version] path", flags: [], valued: ["v"], minArgs: 1, maxArgs: 1 },
  deleteall: { usage: "deleteall path", flags: [], minArgs: 1, maxArgs: 1 },
  get: { usage: "get [-s] [-w] path", flags: ["s", "w"], minArgs: 1, maxArgs: 1 },
  ls: { usage: "ls [-s] [-w] [-R] path", flags: ["s", "w", "R"], minArgs: 1, maxArgs: 1 },
  quit: { usage: "quit", flags: [], minArgs: 0, maxArgs: 0 },
  set: { usage: "set [-s] [-v version] path data", flags: ["s"], valued: ["v"], minArgs: 2, maxArgs: 2 },
  stat: { usage: "stat [-w] path", flags: ["w"], minArgs: 1, maxArgs: 1 },
};

/** The usage ZooKeeperMain prints for an unknown command. */
export function commandsUsage(): string[] {
  return ["ZooKeeper -server host:port cmd args", ...Object.values(COMMANDS).map((c) => `\t${c.usage}`)];
}

/** Splits a line as ZooKeeperMain does: on blanks, with "double" or 'single' quoted words kept whole. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

interface ParsedCommand {
  readonly flags: Set<string>;
  readonly values: Map<string, string>;
  readonly args: string[];
}

function parseCommand(spec: CommandSpec, words: readonly string[]): ParsedCommand | string {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const args: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w.length > 1 && w.startsWith("-")) {
      const name = w.slice(1);
      if (spec.flags.includes(name)) flags.add(name);
      else if (spec.valued?.includes(name)) {
        const v = words[++i];
        if (v === undefined) {
          return `org.apache.commons.cli.MissingArgumentException: Missing argument for option: ${name}`;
        }
        values.set(name, v);
      } else return `org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: ${w}`;
    } else args.push(w);
  }
  if (args.length < spec.minArgs || args.length > spec.maxArgs) return spec.usage;
  return { flags, values, args };
}

const WATCHED_TYPES: Record<string, string> = {
  NodeCreated: "NodeCreated",
  NodeDeleted: "NodeDeleted",
  NodeDataChanged: "NodeDataChanged",
  NodeChildrenChanged: "NodeChildrenChanged",
};

export class ZooKeeperShellCommands {
  constructor(
    private readonly session: ZooKeeperSession,
    private readonly io: ShellIo,
  ) {}

  private watcher = (event: { type: string; path: string }): void => {
    for (const l of watcherLines("SyncConnected", WATCHED_TYPES[event.type] ?? event.type, event.path)) {
      this.io.out(l);
    }
  };

  /**
   * Runs one command (its words); its exit status as ZooKeeperMain's: 0, 1 when it failed (the error is on
   * stderr), 127 for an unknown command.
   */
  async execute(words: readonly string[]): Promise<number> {
    const [name, ...rest] = words;
    const spec = COMMANDS[name];
    if (!spec) {
      for (const l of commandsUsage()) this.io.err(l);
      this.io.err(`Command not found: Command not found ${name}`);
      return 127;
    }
    const parsed = parseCommand(spec, rest);
    if (typeof parsed === "string") {
      this.io.err(parsed); // the command's usage line, or commons-cli's complaint (as ZooKeeperMain)
      return 1;
    }
    let version = -1;
    const v = parsed.values.get("v");
    if (v !== undefined) {
      if (!/^-?\d+$/.test(v)) {
        this.io.err(`version ${v} is not a number`);
        return 1;
      }
      version = Number(v);
    }
    try {
      await this.run(name, parsed, version);
      return 0;
    } catch (e) {
      this.io.err(errorLine(e));
      return 1;
    }
  }

  private async run(name: string, c: ParsedCommand, version: number): Promise<void> {
    const s = this.session;
    const path = c.args[0];
    const watch = c.flags.has("w") ? this.watcher : undefined;
    switch (name) {
      case "ls": {
        if (c.flags.has("R")) {
          for (const p of await this.subtree(path)) this.io.out(p);
          return;
        }
        const { children, stat } = await s.getChildren(path, watch);
        this.io.out(`[${[...children].sort().join(", ")}]`);
        if (c.flags.has("s")) for (const l of statLines(stat)) this.io.out(l);
        return;
      }
      case "get": {
        const { data, stat } = await s.getData(path, watch);
        this.io.out(data === undefined ? "null" : data.toString("utf8"));
        if (c.flags.has("s")) for (const l of statLines(stat)) this.io.out(l);
        return;
      }
      case "stat": {
        const stat = await s.exists(path, watch);
        if (!stat) throw new MetadataStoreError("NoNode", path);
        for (const l of statLines(stat)) this.io.out(l);
        return;
      }
      case "create": {
        const data = c.args[1] === undefined ? undefined : Buffer.from(c.args[1], "utf8");
        const created = await s.create(path, data, {
          ephemeral: c.flags.has("e"),
          sequential: c.flags.has("s"),
        });
        this.io.err(`Created ${created}`);
        return;
      }
      case "set": {
        const stat = await s.setData(path, Buffer.from(c.args[1], "utf8"), version);
        if (c.flags.has("s")) for (const l of statLines(stat)) this.io.out(l);
        return;
      }
      case "delete":
        await s.remove(path, version);
        return;
      case "deleteall": {
        const order = (await this.subtree(path)).reverse();
        for (let i = 0; i < order.length; i += 1000) {
          await s.multi(order.slice(i, i + 1000).map((p) => ({ type: "delete" as const, path: p })));
        }
        return;
      }
    }
  }

  /** `path` and every node under it, breadth first, children sorted (ZKUtil.listSubTreeBFS). */
  private async subtree(path: string): Promise<string[]> {
    const tree: string[] = [];
    const queue = [path];
    while (queue.length > 0) {
      const p = queue.shift() as string;
      let children: string[];
      try {
        children = (await this.session.getChildren(p)).children;
      } catch (e) {
        if (p !== path && e instanceof MetadataStoreError && e.code === "NoNode") continue;
        throw e;
      }
      tree.push(p);
      for (const child of [...children].sort()) queue.push(p === "/" ? `/${child}` : `${p}/${child}`);
    }
    return tree;
  }
}
