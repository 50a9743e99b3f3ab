// `tributary zookeeper-server-start zookeeper.properties`: Kafka's zookeeper-server-start.sh. Runs the
// Debian-installed ZooKeeper (src/cli/zookeeper/zookeeper-command.ts) in the foreground with that config:
// the server's output is this process's, SIGINT and SIGTERM are passed on, and the exit status is the
// server's (128 + the signal's number when a signal ended it). The heap is Kafka's default
// (-Xmx512M -Xms512M) unless KAFKA_HEAP_OPTS says otherwise; KAFKA_OPTS adds JVM options, as in Kafka.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import {
  findZooKeeper,
  ZooKeeperNotInstalledError,
  zooKeeperServerArgv,
} from "../zookeeper/zookeeper-command.js";

const USAGE = [
  "USAGE: tributary zookeeper-server-start zookeeper.properties",
  "",
  "Runs a ZooKeeper server (the Debian package's, `apt-get install zookeeper`) in the foreground with the",
  "given config (zoo.cfg format: tickTime, dataDir, clientPort, server.N=host:peerPort:electionPort, ...).",
  "Environment: KAFKA_HEAP_OPTS (default -Xmx512M -Xms512M), KAFKA_OPTS (more JVM options).",
].join("\n");

function splitOptions(text: string | undefined): string[] {
  return (text ?? "").split(/\s+/).filter((s) => s !== "");
}

export async function runZooKeeperServerStart(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  const files = args.filter((a) => a !== "-daemon");
  if (files.length !== 1 || files[0].startsWith("-")) {
    console.error(
      files.length === 0
        ? "tributary zookeeper-server-start: missing the config file (USAGE: zookeeper-server-start zookeeper.properties)"
        : `tributary zookeeper-server-start: unexpected argument ${files.find((f, i) => i > 0 || f.startsWith("-"))} (one config file; see --help)`,
    );
    return 1;
  }
  if (args.includes("-daemon")) {
    console.error(
      "tributary zookeeper-server-start: -daemon is not supported; run it in the background instead",
    );
    return 1;
  }
  const config = files[0];
  if (!existsSync(config)) {
    console.error(`tributary zookeeper-server-start: config file ${config} not found`);
    return 1;
  }
  let argv: string[];
  let java: string;
  try {
    const install = findZooKeeper();
    java = install.java;
    const heap = splitOptions(process.env.KAFKA_HEAP_OPTS);
    const jvmOptions = [
      ...(heap.length > 0 ? heap : ["-Xmx512M", "-Xms512M"]),
      ...splitOptions(process.env.KAFKA_OPTS),
    ];
    argv = zooKeeperServerArgv(install, config, { jvmOptions });
  } catch (e) {
    if (e instanceof ZooKeeperNotInstalledError) {
      console.error(e.message);
      return 1;
    }
    throw e;
  }
  const child = spawn(java, argv, { stdio: "inherit" });
  const forward = (signal: NodeJS.Signals) => (): void => {
    child.kill(signal);
  };
  const onInt = forward("SIGINT");
  const onTerm = forward("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  try {
    return await new Promise<number>((resolve) => {
      child.once("error", (e) => {
        console.error(`tributary zookeeper-server-start: cannot run ${java}: ${e.message}`);
        resolve(1);
      });
      child.once("exit", (code, signal) => {
        if (code !== null) resolve(code);
        else resolve(128 + (signal ? (constants.signals[signal] ?? 0) : 0));
      });
    });
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  }
}
