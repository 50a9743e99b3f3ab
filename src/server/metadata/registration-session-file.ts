// The ZooKeeper session of this broker's last registration, kept in its first locked log dir as
// `<log.dir>/broker-registration-session` (Tributary's own file; Kafka has none), so that a broker
// restarted before ZooKeeper has expired its previous session can tell its own leftover
// /brokers/ids/<id> from another live broker's (kafka-zk-client.ts registerBroker waits for the first and
// refuses the second, as Kafka refuses both).
//
// Why this proves the leftover is this broker's own: the session id is written (atomically, fsynced)
// just before every create of /brokers/ids/<id>, into a log dir this process holds the OS lock of
// (storage/log-dir-lock.ts) — so the session named there belonged to the last process that ran on this log
// dir, and that process is gone (the kernel releases the lock only when it exits). A different broker
// with the same broker.id runs on other log dirs, under another session, which no file here names. The
// wait is bounded anyway: a registration still there after it is refused.
//
// Format (a Java properties file, as meta.properties):
//   #<comment lines>
//   version=0
//   broker.id=<id>
//   zookeeper.session.id=0x<hex session id>
// A missing, unreadable or malformed file, or one for another broker.id, names no session.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomically } from "../../common/atomic-file.js";

export const REGISTRATION_SESSION_FILENAME = "broker-registration-session";

/** A session id as ZooKeeper prints it (0x + unsigned hex). */
export function sessionIdHex(id: bigint): string {
  return `0x${BigInt.asUintN(64, id).toString(16)}`;
}

/** The session of `brokerId`'s last registration recorded in `logDir`, or undefined. */
export function readRegistrationSession(logDir: string, brokerId: number): bigint | undefined {
  let text: string;
  try {
    text = readFileSync(join(logDir, REGISTRATION_SESSION_FILENAME), "utf8");
  } catch {
    return undefined;
  }
  const props = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("#") || !line.includes("=")) continue;
    const i = line.indexOf("=");
    props.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  if (props.get("version") !== "0" || props.get("broker.id") !== String(brokerId)) return undefined;
  const m = /^0x([0-9a-f]{1,16})$/i.exec(props.get("zookeeper.session.id") ?? "");
  return m ? BigInt.asIntN(64, BigInt(`0x${m[1]}`)) : undefined;
}

/** Records `sessionId` as `brokerId`'s registration session in `logDir` (atomically, fsynced). */
export function writeRegistrationSession(logDir: string, brokerId: number, sessionId: bigint): void {
  writeFileAtomically(
    join(logDir, REGISTRATION_SESSION_FILENAME),
    [
      "#The ZooKeeper session of this broker's last /brokers/ids registration (written by Tributary: a broker",
      "#restarted before that session expired waits for it instead of refusing to start)",
      "version=0",
      `broker.id=${brokerId}`,
      `zookeeper.session.id=${sessionIdHex(sessionId)}`,
      "",
    ].join("\n"),
  );
}
