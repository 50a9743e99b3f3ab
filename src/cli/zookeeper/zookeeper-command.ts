// Launching ZooKeeper from the Debian install (DESIGN §7): finds `zookeeper.jar` (/usr/share/java), the
// config dir holding log4j.properties (/etc/zookeeper/conf), the logging jars (slf4j-log4j12, log4j 1.2:
// zookeeper.jar's manifest Class-Path names every other dependency) and `java` on the PATH, and builds
// the java argv for `org.apache.zookeeper.server.quorum.QuorumPeerMain <zoo.cfg>`, as the package's
// zkServer.sh does. Also writes zoo.cfg text with the settings our tests and tools need
// (admin.enableServer=false, the four-letter words whitelisted) and asks a server a four-letter word
// (`srvr`) to know whether it serves and in which mode (standalone, leader, follower).
// A missing install is one line: "ZooKeeper is not installed: … not found (apt-get install zookeeper)".

import { accessSync, constants, existsSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, dirname, join } from "node:path";

export const DEFAULT_ZOOKEEPER_JAR = "/usr/share/java/zookeeper.jar";
export const DEFAULT_ZOOKEEPER_CONF_DIR = "/etc/zookeeper/conf";
/** Overrides of the install paths (tests point them at a missing file). */
export const ZOOKEEPER_JAR_ENV = "TRIBUTARY_ZOOKEEPER_JAR";
export const ZOOKEEPER_CONF_DIR_ENV = "TRIBUTARY_ZOOKEEPER_CONF_DIR";
export const QUORUM_PEER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
/** The four-letter words written into configs (`srvr` is what readiness checks use). */
export const FOUR_LETTER_WORDS = "srvr,stat,ruok,mntr,conf,cons";
/** The logging backend zookeeper.jar's manifest leaves out, found beside it. */
const LOGGING_JARS = ["slf4j-log4j12.jar", "log4j-1.2.jar"];

export class ZooKeeperNotInstalledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ZooKeeperNotInstalledError";
  }
}

export interface ZooKeeperInstall {
  readonly java: string;
  readonly jar: string;
  /** The java classpath: the config dir (log4j.properties), zookeeper.jar, the logging jars. */
  readonly classpath: readonly string[];
}

export interface FindZooKeeperOptions {
  /** Default: $TRIBUTARY_ZOOKEEPER_JAR, else /usr/share/java/zookeeper.jar. */
  readonly jar?: string;
  /** Default: $TRIBUTARY_ZOOKEEPER_CONF_DIR, else /etc/zookeeper/conf (skipped when absent). */
  readonly confDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `java` from $JAVA_HOME/bin, else the first on $PATH; undefined when there is none. */
export function findJava(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates: string[] = [];
  if (env.JAVA_HOME) candidates.push(join(env.JAVA_HOME, "bin", "java"));
  for (const dir of (env.PATH ?? "").split(delimiter)) if (dir) candidates.push(join(dir, "java"));
  return candidates.find(isExecutable);
}

/** The Debian ZooKeeper install, or ZooKeeperNotInstalledError with one line saying what is missing. */
export function findZooKeeper(options: FindZooKeeperOptions = {}): ZooKeeperInstall {
  const env = options.env ?? process.env;
  const jar = options.jar ?? env[ZOOKEEPER_JAR_ENV] ?? DEFAULT_ZOOKEEPER_JAR;
  if (!existsSync(jar)) {
    throw new ZooKeeperNotInstalledError(
      `ZooKeeper is not installed: ${jar} not found (apt-get install zookeeper)`,
    );
  }
  const java = findJava(env);
  if (!java) {
    throw new ZooKeeperNotInstalledError(
      "ZooKeeper needs Java: no java on PATH or in JAVA_HOME (apt-get install zookeeper pulls one)",
    );
  }
  const confDir = options.confDir ?? env[ZOOKEEPER_CONF_DIR_ENV] ?? DEFAULT_ZOOKEEPER_CONF_DIR;
  const classpath = [
    ...(existsSync(confDir) ? [confDir] : []),
    jar,
    ...LOGGING_JARS.map((j) => join(dirname(jar), j)).filter((j) => existsSync(j)),
  ];
  return { java, jar, classpath };
}

export interface ServerArgvOptions {
  /** JVM options; default Kafka's zookeeper-server-start.sh heap (-Xmx512M -Xms512M). */
  readonly jvmOptions?: readonly string[];
  /** zookeeper.log.dir (only used by file appenders); default the working directory. */
  readonly logDir?: string;
}

/** The argv (after `java`) that runs a ZooKeeper server with `configFile`, logging to the console. */
export function zooKeeperServerArgv(
  install: ZooKeeperInstall,
  configFile: string,
  options: ServerArgvOptions = {},
): string[] {
  return [
    ...(options.jvmOptions ?? ["-Xmx512M", "-Xms512M"]),
    `-Dzookeeper.log.dir=${options.logDir ?? "."}`,
    "-Dzookeeper.root.logger=INFO,CONSOLE",
    "-cp",
    install.classpath.join(delimiter),
    QUORUM_PEER_MAIN,
    configFile,
  ];
}

/**
 * zoo.cfg text: `settings` in order, plus `admin.enableServer=false` and the four-letter-word whitelist
 * unless given. Values are written as they are (`server.1` → `127.0.0.1:2888:3888`).
 */
export function zooCfgText(settings: Readonly<Record<string, string | number>>): string {
  const all: Record<string, string | number> = { ...settings };
  all["admin.enableServer"] ??= "false";
  all["4lw.commands.whitelist"] ??= FOUR_LETTER_WORDS;
  return `${Object.entries(all)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;
}

/** Sends a four-letter word (`srvr`, `ruok`, `mntr`, …) to a server's client port; its whole answer. */
export function fourLetterWord(host: string, port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to '${word}' from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on("connect", () => socket.end(word));
    socket.on("data", (b) => chunks.push(b));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}

export interface ServerStatus {
  /** `standalone`, `leader`, `follower` or `observer`. */
  readonly mode: string;
  readonly zxid: bigint;
  readonly version: string;
}

/** Parses a `srvr` answer; undefined when the server does not serve (no quorum, not whitelisted). */
export function parseSrvr(text: string): ServerStatus | undefined {
  const field = (name: string): string | undefined =>
    new RegExp(`^${name}: (.*)$`, "m").exec(text)?.[1]?.trim();
  const mode = field("Mode");
  if (!mode) return undefined;
  const zxid = field("Zxid");
  return { mode, zxid: zxid ? BigInt(zxid) : 0n, version: field("Zookeeper version") ?? "" };
}

/** The server's status from `srvr`, or undefined when it does not answer or does not serve yet. */
export async function serverStatus(
  host: string,
  port: number,
  timeoutMs = 2000,
): Promise<ServerStatus | undefined> {
  try {
    return parseSrvr(await fourLetterWord(host, port, "srvr", timeoutMs));
  } catch {
    return undefined;
  }
}
