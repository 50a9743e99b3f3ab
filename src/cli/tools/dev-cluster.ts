// `tributary dev-cluster [--brokers N] [--zookeeper-port P] [--base-port P] [--dir D] [--racks r1,r2,...]
// [--override key=value]...`: a ZooKeeper and N brokers on this machine, to try every cluster scenario with
// one command (src/cli/dev-cluster/dev-cluster.ts runs them). Prints a line per process saying where it
// listens (and its pid, its directory, the file its output goes to), then the bootstrap servers. Runs
// until Ctrl-C or SIGTERM, then stops the brokers one at a time with SIGTERM (controlled shutdown),
// then ZooKeeper, and exits 0 (1 when a process had to be killed). A second Ctrl-C kills everything at
// once. A bad flag is one line naming the flag, the value and what was expected.

import { type OptionDef, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import {
  DevCluster,
  DevClusterError,
  type DevClusterSettings,
  MANAGED_SETTINGS,
} from "../dev-cluster/dev-cluster.js";
import { ZooKeeperNotInstalledError } from "../zookeeper/zookeeper-command.js";

const MAX_BROKERS = 50;

const OPTIONS: readonly OptionDef[] = [
  {
    name: "brokers",
    description: `The number of brokers to start (1 to ${MAX_BROKERS}).`,
    arg: { type: "String", describedAs: "number of brokers" },
    defaultValue: "3",
  },
  {
    name: "zookeeper-port",
    description: "ZooKeeper's client port. Default: a free port.",
    arg: { type: "String", describedAs: "port" },
  },
  {
    name: "base-port",
    description: "Broker i listens on base-port + i (9092, 9093, ...). Default: free ports.",
    arg: { type: "String", describedAs: "port" },
  },
  {
    name: "dir",
    description:
      "The cluster's directory (ZooKeeper's data, each broker's log dir and output), created when missing " +
      "and kept, so the next run with the same --dir finds the cluster's topics again. Default: a temporary " +
      "directory removed when the cluster stops.",
    arg: { type: "String", describedAs: "directory" },
  },
  {
    name: "racks",
    description: "broker.rack of the brokers in turn: broker i gets the (i mod count)-th name.",
    arg: { type: "String", describedAs: "r1,r2,..." },
  },
  {
    name: "override",
    description:
      "A broker setting for every broker (Kafka's names, as server-start --override), e.g. " +
      "default.replication.factor=3. May be repeated.",
    arg: { type: "String", describedAs: "key=value" },
  },
];

const SPEC: ToolSpec = {
  name: "dev-cluster",
  description:
    "Starts a ZooKeeper and N brokers on this machine (127.0.0.1) as child processes, and stops them all " +
    "on Ctrl-C (brokers first, with a controlled shutdown). ZooKeeper is the Debian package's " +
    "(apt-get install zookeeper).",
  options: OPTIONS,
};

function invalid(flag: string, value: string, expected: string): UsageError {
  return new UsageError(`Invalid value '${value}' for --${flag}: expected ${expected}`);
}

function intOption(
  args: ParsedArgs,
  flag: string,
  min: number,
  max: number,
  what: string,
): number | undefined {
  const v = args.value(flag);
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max)
    throw invalid(flag, v, `${what} from ${min} to ${max}`);
  return n;
}

/** The settings from the command line; UsageError naming the first bad flag. */
export function devClusterSettings(args: ParsedArgs): DevClusterSettings {
  const brokers = intOption(args, "brokers", 1, MAX_BROKERS, "a whole number") ?? 3;
  const zookeeperPort = intOption(args, "zookeeper-port", 1, 65535, "a port number");
  const basePort = intOption(
    args,
    "base-port",
    1,
    65535 - brokers + 1,
    `a port number (${brokers} ports from it)`,
  );
  if (basePort !== undefined && zookeeperPort !== undefined) {
    if (zookeeperPort >= basePort && zookeeperPort < basePort + brokers)
      throw invalid(
        "zookeeper-port",
        String(zookeeperPort),
        `a port outside the brokers' ${basePort}-${basePort + brokers - 1}`,
      );
  }
  const dir = args.value("dir");
  if (dir !== undefined && dir.trim() === "") throw invalid("dir", dir, "a directory");
  let racks: string[] = [];
  const racksText = args.value("racks");
  if (racksText !== undefined) {
    racks = racksText.split(",").map((r) => r.trim());
    if (racks.some((r) => r === "")) throw invalid("racks", racksText, "rack names separated by commas");
  }
  const overrides: Array<[string, string]> = [];
  for (const o of args.values("override")) {
    const eq = o.indexOf("=");
    if (eq <= 0 || o.slice(0, eq).trim() === "") throw invalid("override", o, "key=value");
    const key = o.slice(0, eq).trim();
    const why = MANAGED_SETTINGS[key];
    if (why !== undefined)
      throw invalid("override", o, `a setting other than ${key}: dev-cluster sets it, ${why}`);
    overrides.push([key, o.slice(eq + 1)]);
  }
  return { brokers, zookeeperPort, basePort, dir, racks, overrides };
}

export async function runDevCluster(argv: string[]): Promise<number> {
  return runTool(SPEC, argv, (args) => devCluster(devClusterSettings(args)), {
    allowNoArgs: true,
    errorPrefix: "tributary dev-cluster: ",
  });
}

async function devCluster(settings: DevClusterSettings): Promise<number> {
  const out = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  let cluster: DevCluster | undefined;
  let signals = 0;
  let onFirstSignal!: () => void;
  const signalled = new Promise<void>((resolve) => {
    onFirstSignal = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => (): void => {
    signals++;
    if (signals === 1) {
      out(
        `Received ${signal}: stopping the cluster (${signal === "SIGINT" ? "Ctrl-C" : "a signal"} again kills every process at once)`,
      );
      onFirstSignal();
    } else {
      out(`Received ${signal} again: killing every process (SIGKILL)`);
      cluster?.killAll();
    }
  };
  const onInt = onSignal("SIGINT");
  const onTerm = onSignal("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  try {
    try {
      cluster = DevCluster.create(settings, out);
      await cluster.start();
    } catch (e) {
      if (e instanceof ZooKeeperNotInstalledError) {
        process.stderr.write(`${e.message}\n`);
        return 1;
      }
      if (e instanceof DevClusterError) {
        for (const line of e.lines) process.stderr.write(`${line}\n`);
        return 1;
      }
      throw e;
    }
    const bootstrap = cluster.bootstrapServers;
    out(`Bootstrap servers: ${bootstrap} (zookeeper.connect=${cluster.zookeeperConnect})`);
    out(`Try: npx tributary topics --bootstrap-server ${bootstrap} --describe`);
    out(`     npx tributary zookeeper-shell ${cluster.zookeeperConnect} ls /brokers/ids`);
    out("Ctrl-C stops the cluster.");
    await signalled;
    return (await cluster.stop()) ? 0 : 1;
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  }
}
