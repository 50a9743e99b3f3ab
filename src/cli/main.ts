// The `tributary <tool>` dispatcher: one sub-command per Kafka script (kafka-topics.sh → `topics`, …).
// Tools register here as they are built; an unknown tool or a bad flag is one line on stderr and a
// non-zero exit status, never a stack trace. Before any tool runs, the C library's allocator is tuned
// for large buffers (src/common/allocator-tuning.ts), as Kafka's scripts set the JVM's options, and the
// tools' output is guarded (tool-output.ts): a reader that goes away (`| head`) never kills a tool.

import { readFileSync } from "node:fs";
import { tuneAllocator } from "../common/allocator-tuning.js";
import { guardToolOutput, StdoutClosedError } from "./tool-output.js";

interface Tool {
  readonly summary: string;
  /** Loads the tool's module on use, so a tool does not pay for loading every other one. */
  readonly run: (args: string[]) => Promise<number>;
}

/** Every tool, by the name of its Kafka script. */
const TOOLS: Record<string, Tool> = {
  acls: {
    summary: "Add, remove and list ACLs (kafka-acls.sh)",
    run: async (a) => (await import("./tools/acls.js")).runAcls(a),
  },
  configs: {
    summary: "Describe or alter topic and broker configs (kafka-configs.sh)",
    run: async (a) => (await import("./tools/configs.js")).runConfigs(a),
  },
  "console-consumer": {
    summary: "Read records of a topic to stdout (kafka-console-consumer.sh)",
    run: async (a) => (await import("./tools/console-consumer.js")).runConsoleConsumer(a),
  },
  "console-producer": {
    summary: "Send stdin lines as records (kafka-console-producer.sh)",
    run: async (a) => (await import("./tools/console-producer.js")).runConsoleProducer(a),
  },
  console: {
    summary: "Start the web console: groups, lag over time, topics, brokers, /metrics (like Kafka-Eagle)",
    run: async (a) => (await import("../console/console-tool.js")).runConsole(a),
  },
  "consumer-groups": {
    summary: "List, describe, delete consumer groups or reset their offsets (kafka-consumer-groups.sh)",
    run: async (a) => (await import("./tools/consumer-groups.js")).runConsumerGroups(a),
  },
  "consumer-perf-test": {
    summary: "Measure consumer throughput (kafka-consumer-perf-test.sh)",
    run: async (a) => (await import("./tools/consumer-perf-test.js")).runConsumerPerfTest(a),
  },
  "decommission-broker": {
    summary: "Move every replica off a broker and wait until it can be stopped",
    run: async (a) => (await import("./tools/decommission-broker.js")).runDecommissionBroker(a),
  },
  "delete-records": {
    summary: "Delete records before the offsets of a JSON file (kafka-delete-records.sh)",
    run: async (a) => (await import("./tools/delete-records.js")).runDeleteRecords(a),
  },
  "dev-cluster": {
    summary: "Start a ZooKeeper and N brokers on this machine; Ctrl-C stops them (dev-cluster --brokers 3)",
    run: async (a) => (await import("./tools/dev-cluster.js")).runDevCluster(a),
  },
  "dump-log": {
    summary: "Dump the contents of log segments, indexes and snapshots (kafka-dump-log.sh)",
    run: async (a) => (await import("./tools/dump-log.js")).runDumpLog(a),
  },
  "get-offsets": {
    summary: "Print the offsets of topic partitions (kafka-get-offsets.sh)",
    run: async (a) => (await import("./tools/get-offsets.js")).runGetOffsets(a),
  },
  "leader-election": {
    summary: "Elect preferred or unclean partition leaders (kafka-leader-election.sh)",
    run: async (a) => (await import("./tools/leader-election.js")).runLeaderElection(a),
  },
  "log-dirs": {
    summary: "Query the log directories of brokers (kafka-log-dirs.sh)",
    run: async (a) => (await import("./tools/log-dirs.js")).runLogDirs(a),
  },
  "log-recover": {
    summary:
      "List, restore or produce again what log recovery quarantined instead of deleting (--log-dir D --list|--restore|--reproduce)",
    run: async (a) => (await import("./tools/log-recover.js")).runLogRecover(a),
  },
  "producer-perf-test": {
    summary: "Measure producer throughput and latency (kafka-producer-perf-test.sh)",
    run: async (a) => (await import("./tools/producer-perf-test.js")).runProducerPerfTest(a),
  },
  "reassign-partitions": {
    summary:
      "Move partitions between brokers: generate, execute, verify, cancel, list (kafka-reassign-partitions.sh)",
    run: async (a) => (await import("./tools/reassign-partitions.js")).runReassignPartitions(a),
  },
  "server-start": {
    summary: "Start a broker: server-start [server.properties] [--override k=v]... (kafka-server-start.sh)",
    run: async (a) => (await import("./tools/server-start.js")).runServerStart(a),
  },
  "server-stop": {
    summary: "Stop the running brokers with SIGTERM (kafka-server-stop.sh)",
    run: async (a) => (await import("./tools/server-stop.js")).runServerStop(a),
  },
  topics: {
    summary: "Create, delete, describe, or change a topic (kafka-topics.sh)",
    run: async (a) => (await import("./tools/topics.js")).runTopics(a),
  },
  transactions: {
    summary: "List, describe and abort transactions, describe producers (kafka-transactions.sh)",
    run: async (a) => (await import("./tools/transactions.js")).runTransactions(a),
  },
  "zookeeper-server-start": {
    summary: "Run a ZooKeeper server in the foreground with a zoo.cfg (zookeeper-server-start.sh)",
    run: async (a) => (await import("./tools/zookeeper-server-start.js")).runZooKeeperServerStart(a),
  },
  "zookeeper-shell": {
    summary: "Run ZooKeeper commands: ls, get, stat, create, set, delete (zookeeper-shell.sh)",
    run: async (a) => (await import("./tools/zookeeper-shell.js")).runZooKeeperShell(a),
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
  const width = Math.max(22, ...names.map((n) => n.length + 2));
  for (const name of names) lines.push(`  ${name.padEnd(width)}${TOOLS[name].summary}`);
  lines.push("", "Options:", "  --help       print this help", "  --version    print the Tributary version");
  return lines.join("\n");
}

export async function run(argv: string[]): Promise<number> {
  tuneAllocator();
  guardToolOutput();
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
    // A tool that only produces output stops when its reader has gone: a normal end.
    if (e instanceof StdoutClosedError) return 0;
    console.error(`tributary ${name}: ${(e as Error).message}`);
    return 1;
  }
}
