// `tributary server-stop`: Kafka's kafka-server-stop.sh. Finds the running `tributary server-start`
// processes (a node process whose command line runs the tributary CLI with the server-start tool, found
// with `ps` as the script does) and sends each SIGTERM, which makes the broker shut down cleanly. Prints
// "No kafka server to stop" and returns 1 when there is none. Returns without waiting, as the script does.

import { execFileSync } from "node:child_process";

const USAGE = [
  "Usage: tributary server-stop",
  "",
  "Sends SIGTERM to every running `tributary server-start` broker on this machine.",
].join("\n");

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
  if (args.length > 0) {
    console.error(`tributary server-stop: unexpected argument ${args[0]} (it takes none; see --help)`);
    return 1;
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
  const pids = findBrokerPids(ps);
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
