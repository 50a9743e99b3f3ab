// `tributary zookeeper-shell host:port[/chroot] [command args...]`: Kafka's zookeeper-shell.sh (ZooKeeper's
// ZooKeeperMain). With a command, connects, runs it, and exits (1 when it failed); without one, reads
// commands line by line from stdin until `quit` or the end of input. Prints what ZooKeeperMain prints:
// `Connecting to …`, the `WATCHER::` block of the connection event, then each command's output
// (src/cli/zookeeper/zookeeper-shell-commands.ts). The session is closed at the end, so nodes made with
// `create -e` go with it. No connection within 30 s is one line and exit status 1.

import { createInterface } from "node:readline";
import { MetadataStoreError } from "../../server/metadata/metadata-store.js";
import {
  InvalidConnectStringError,
  parseConnectString,
} from "../../server/metadata/zookeeper-connect-string.js";
import { type ZkSessionState, ZooKeeperSession } from "../../server/metadata/zookeeper-session.js";
import {
  type ShellIo,
  splitCommandLine,
  watcherLines,
  ZooKeeperShellCommands,
} from "../zookeeper/zookeeper-shell-commands.js";

const USAGE = [
  "USAGE: tributary zookeeper-shell zookeeper_host:port[/path] [args...]",
  "",
  "Runs one ZooKeeper command, or reads commands from stdin when none is given:",
  "  ls [-s] [-w] [-R] path | get [-s] [-w] path | stat [-w] path | create [-s] [-e] path [data]",
  "  set [-s] [-v version] path data | delete [-v version] path | deleteall path | quit",
].join("\n");

/** ZooKeeperMain's default session timeout. */
const SESSION_TIMEOUT_MS = 30_000;
const CONNECTION_TIMEOUT_MS = 30_000;

export interface ZooKeeperShellOptions {
  readonly io?: ShellIo;
  /** Where commands come from when none is given (default stdin). */
  readonly input?: NodeJS.ReadableStream;
  readonly connectionTimeoutMs?: number;
}

const STDIO: ShellIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export async function runZooKeeperShell(
  args: string[],
  options: ZooKeeperShellOptions = {},
): Promise<number> {
  const io = options.io ?? STDIO;
  if (args[0] === "--help" || args[0] === "-h") {
    io.out(USAGE);
    return 0;
  }
  if (args.length === 0 || args[0].startsWith("-")) {
    io.err(USAGE.split("\n")[0]);
    return 1;
  }
  const [server, ...command] = args;
  let connectString: string;
  try {
    const parsed = parseConnectString(server);
    connectString = `${parsed.hosts}${parsed.chroot ?? ""}`;
  } catch (e) {
    if (e instanceof InvalidConnectStringError) {
      io.err(e.message);
      return 1;
    }
    throw e;
  }
  io.out(`Connecting to ${server}`);
  const interactive = command.length === 0;
  if (interactive) {
    io.out("Welcome to ZooKeeper!");
    io.out("JLine support is disabled");
  }
  let connected: () => void = () => {};
  const connectedOnce = new Promise<void>((r) => {
    connected = r;
  });
  let first = true;
  const session = new ZooKeeperSession(connectString, {
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    onStateChange: (state: ZkSessionState) => {
      if (state === "SyncConnected" && first) {
        first = false;
        for (const l of watcherLines("SyncConnected")) io.out(l);
        connected();
      } else {
        for (const l of watcherLines(state)) io.out(l);
      }
    },
  });
  session.start();
  const timeoutMs = options.connectionTimeoutMs ?? CONNECTION_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    connectedOnce.then(() => true),
    new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (!inTime) {
    session.abandon();
    io.err(`Timed out waiting for connection while in state: CONNECTING (${server})`);
    return 1;
  }
  const shell = new ZooKeeperShellCommands(session, io);
  try {
    if (!interactive) return await shell.execute(command);
    const lines = createInterface({ input: options.input ?? process.stdin, terminal: false });
    let quit = false;
    for await (const line of lines) {
      const words = splitCommandLine(line);
      if (words.length === 0) continue;
      if (words[0] === "quit") {
        quit = true;
        break;
      }
      await shell.execute(words);
    }
    lines.close();
    // `quit` closes the session and the watcher hears it; the end of input just ends (as ZooKeeperMain).
    if (quit) for (const l of watcherLines("Closed")) io.out(l);
    return 0;
  } catch (e) {
    io.err(e instanceof MetadataStoreError ? e.message : String((e as Error)?.message ?? e));
    return 1;
  } finally {
    await session.close();
  }
}
