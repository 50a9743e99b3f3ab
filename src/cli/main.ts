// The `tributary <tool>` dispatcher: one sub-command per Kafka script (kafka-topics.sh → `topics`, …).
// Tools register here as they are built; an unknown tool or a bad flag is one line on stderr and a
// non-zero exit status, never a stack trace.

import { readFileSync } from "node:fs";
import { runDumpLog } from "./tools/dump-log.js";
import { runServerStart } from "./tools/server-start.js";
import { runServerStop } from "./tools/server-stop.js";

interface Tool {
  readonly summary: string;
  readonly run: (args: string[]) => Promise<number>;
}

/** Tools that exist today. Later issues add server-start, topics, dump-log, … */
const TOOLS: Record<string, Tool> = {
  "dump-log": {
    summary: "Dump the contents of log segments, indexes and snapshots (kafka-dump-log.sh)",
    run: runDumpLog,
  },
  "server-start": {
    summary: "Start a broker: server-start [server.properties] [--override k=v]... (kafka-server-start.sh)",
    run: runServerStart,
  },
  "server-stop": {
    summary: "Stop the running brokers with SIGTERM (kafka-server-stop.sh)",
    run: runServerStop,
  },
};

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
  return String(pkg.version);
}

function usage(): string {
  const lines = ["Usage: tributary <tool> [options]", "", "Tools:"];
  const names = Object.keys(TOOLS);
  if (names.length === 0)
    lines.push("  (none yet: the broker and the operator tools arrive with the next issues)");
  for (const name of names) lines.push(`  ${name.padEnd(22)}${TOOLS[name].summary}`);
  lines.push("", "Options:", "  --help       print this help", "  --version    print the Tributary version");
  return lines.join("\n");
}

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return 0;
  }
  if (name === "--version") {
    console.log(version());
    return 0;
  }
  const tool = TOOLS[name];
  if (!tool) {
    console.error(
      `tributary: unknown tool '${name}' (expected one of: ${Object.keys(TOOLS).join(", ") || "none yet"}; see --help)`,
    );
    return 1;
  }
  try {
    return await tool.run(rest);
  } catch (e) {
    console.error(`tributary ${name}: ${(e as Error).message}`);
    return 1;
  }
}
