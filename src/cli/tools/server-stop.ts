// `tributary server-stop [--node-id N]`: Kafka's kafka-server-stop.sh. Finds the running
// `tributary server-start` processes (a node process whose command line runs the tributary CLI with the
// server-start tool, found with `ps` as the script does) and sends each SIGTERM, which makes the broker
// shut down cleanly. With --node-id (Kafka 3.7's filter) only the broker whose broker.id (or node.id) is N:
// its --override, else its properties file. Prints "No kafka server to stop" and returns 1 when there is
// none. Returns without waiting, as the script does.

import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { loadPropertiesFile } from "../../client/producer/properties-file.js";

const USAGE = [
  "Usage: tributary server-stop [--node-id N]",
  "",
  "Sends SIGTERM to every running `tributary server-start` broker on this machine, or with --node-id only",
  "to the broker whose broker.id (or node.id) is N.",
].join("\n");

/**
 * The broker.id (or node.id) a `server-start` command line gives its broker: the last --override of
 * either, else the properties file's (a relative path resolved from `cwd`); undefined when neither says.
 */
export function nodeIdOfCommandLine(argv: readonly string[], cwd: string): number | undefined {
  const start = argv.indexOf("server-start");
  if (start < 0) return undefined;
  let file: string | undefined;
  let id: string | undefined;
  for (let i = start + 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--override") {
      const m = /^(broker\.id|node\.id)=(.*)$/.exec(argv[++i] ?? "");
      if (m) id = m[2].trim();
    } else if (!a.startsWith("-") && file === undefined) file = a;
  }
  if (id === undefined && file !== undefined) {
    try {
      const props = loadPropertiesFile(isAbsolute(file) ? file : join(cwd, file));
      id = props["broker.id"] ?? props["node.id"];
    } catch {
      return undefined;
    }
  }
  return id !== undefined && /^-?\d+$/.test(id) ? Number(id) : undefined;
}

/** The node id of a running broker process, from /proc (Linux); undefined when it cannot be told. */
function nodeIdOfProcess(pid: number): number | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return nodeIdOfCommandLine(argv, readlinkSync(`/proc/${pid}/cwd`));
  } catch {
    return undefined;
  }
}

/** Pids of running brokers, from `ps -eo pid=,comm=,args=` output. */
export function findBrokerPids(psOutput: string, selfPid: number = process.pid): number[] {
  const pids: number[] = [];
  for (const line of psOutput.split("\n")) {
    const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    const comm = m[2];
    const argv = m[3].split(/\s+/);
    if (pid === selfPid || !/^node/.test(comm)) continue;
    const runsCli = argv.some((a) => /tributary(\.js)?$/.test(a) || /cli\/main\.js/.test(a));
    if (runsCli && argv.includes("server-start")) pids.push(pid);
  }
  return pids;
}

export async function runServerStop(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let nodeId: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const m = /^--node-id(?:=(.*))?$/.exec(args[i]);
    if (!m) {
      console.error(
        `tributary server-stop: unexpected argument ${args[i]} (it takes only --node-id N; see --help)`,
      );
      return 1;
    }
    const v = m[1] ?? args[++i];
    if (v === undefined || !/^\d+$/.test(v)) {
      console.error(
        `tributary server-stop: invalid value '${v ?? ""}' for --node-id: expected a broker id (an integer >= 0)`,
      );
      return 1;
    }
    nodeId = Number(v);
  }
  let ps: string;
  try {
    ps = execFileSync("ps", ["-eo", "pid=,comm=,args="], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  } catch (e) {
    console.error(
      `tributary server-stop: cannot list processes with ps: ${(e as Error).message.split("\n")[0]}`,
    );
    return 1;
  }
  const pids = findBrokerPids(ps).filter((pid) => nodeId === undefined || nodeIdOfProcess(pid) === nodeId);
  if (pids.length === 0) {
    console.log("No kafka server to stop");
    return 1;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // exited meanwhile
    }
  }
  return 0;
}
