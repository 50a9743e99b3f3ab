// `tributary server-start [server.properties] [--override key=value]...`: Kafka's kafka-server-start.sh
// (kafka.Kafka main). Loads the config (a bad file or value is one line on stderr and exit status 1, no
// stack trace), starts the broker, prints Kafka's startup lines (the acceptor's "Awaiting socket
// connections on host:port." gives the bound port, for port 0), and on SIGTERM or SIGINT shuts down
// cleanly (the LogManager writes `.kafka_cleanshutdown`) and returns 0. Without a properties file the
// defaults run a single broker on PLAINTEXT://:9092 with log.dirs=/tmp/kafka-logs.

import { Logger } from "../../common/logger.js";
import { KafkaServer } from "../../server/broker-server.js";
import { KafkaConfig } from "../../server/kafka-config.js";
import { ConfigException } from "../../server/kafka-config-def.js";

const USAGE = [
  "Usage: tributary server-start [server.properties] [--override property=value]*",
  "",
  "Starts a broker. Every setting has Kafka's name and default; --override wins over the file.",
  "Without zookeeper.connect the broker runs as a one-node cluster on an embedded metadata store.",
].join("\n");

export function parseServerStartArgs(args: readonly string[]): {
  file: string | undefined;
  overrides: string[];
} {
  let file: string | undefined;
  const overrides: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--override") {
      const v = args[++i];
      if (v === undefined) throw new ConfigException("--override needs a property=value argument");
      overrides.push(v);
    } else if (a.startsWith("--override=")) {
      overrides.push(a.slice("--override=".length));
    } else if (a.startsWith("-")) {
      throw new ConfigException(`Unknown option ${a} (expected --override property=value; see --help)`);
    } else if (file === undefined) {
      file = a;
    } else {
      throw new ConfigException(`Unexpected argument ${a}: only one properties file is accepted`);
    }
  }
  return { file, overrides };
}

export async function runServerStart(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let config: KafkaConfig;
  try {
    const { file, overrides } = parseServerStartArgs(args);
    config = KafkaConfig.load(file, overrides);
  } catch (e) {
    console.error(`tributary server-start: ${oneLine(e)}`);
    return 1;
  }
  const logger = new Logger("kafka.Kafka");
  const server = new KafkaServer(config);
  const onUncaught = (e: unknown): void => {
    logger.error(`Uncaught exception (the broker keeps running): ${(e as Error)?.stack ?? e}`);
  };
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);

  let stopping: Promise<number> | undefined;
  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => {
    resolveStopped = resolve;
  });
  let startup: Promise<void> = Promise.resolve();
  const stop = (signal: string): void => {
    if (stopping !== undefined) return;
    logger.info(`Received ${signal}, shutting down`);
    // A signal during startup: let startup finish (or fail), then shut down.
    stopping = startup
      .catch(() => {})
      .then(() => server.shutdown())
      .then(
        () => 0,
        (e) => {
          console.error(`tributary server-start: shutdown failed: ${oneLine(e)}`);
          return 1;
        },
      );
    void stopping.then(resolveStopped);
  };
  const onTerm = (): void => stop("SIGTERM");
  const onInt = (): void => stop("SIGINT");
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onInt);
  try {
    try {
      startup = server.startup();
      await startup;
    } catch (e) {
      console.error(`tributary server-start: ${oneLine(e)}`);
      return 1;
    }
    const code = await stopped;
    return code;
  } finally {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUncaught);
    // Nothing of the broker should keep the process alive now; if something does, exit anyway.
    setTimeout(() => process.exit(process.exitCode ?? 0), 3000).unref();
  }
}

function oneLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.split(/\r?\n/)[0];
}
