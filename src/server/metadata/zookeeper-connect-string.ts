// A ZooKeeper connect string, as Kafka's `zookeeper.connect`: `host:port[,host:port...][/chroot]`. Owns its
// parsing and validation only (a port defaults to 2181; the chroot, when present, is a valid znode path
// other than "/"); a bad string is one line naming what is wrong.

import { MetadataStoreError, validatePath } from "./metadata-store.js";

export const DEFAULT_ZOOKEEPER_PORT = 2181;

export interface ZooKeeperServerAddress {
  readonly host: string;
  readonly port: number;
}

export interface ZooKeeperConnectString {
  readonly servers: readonly ZooKeeperServerAddress[];
  /** `h1:p1,h2:p2`, without the chroot. */
  readonly hosts: string;
  /** The chroot path (`/kafka`), or undefined. */
  readonly chroot: string | undefined;
}

export class InvalidConnectStringError extends Error {
  constructor(connectString: string, reason: string) {
    super(`Invalid ZooKeeper connect string '${connectString}': ${reason}`);
    this.name = "InvalidConnectStringError";
  }
}

export function parseConnectString(connectString: string): ZooKeeperConnectString {
  const text = connectString.trim();
  if (text === "")
    throw new InvalidConnectStringError(connectString, "expected host:port[,host:port...][/chroot]");
  const slash = text.indexOf("/");
  const hostPart = slash === -1 ? text : text.slice(0, slash);
  let chroot = slash === -1 ? undefined : text.slice(slash);
  if (chroot === "/") chroot = undefined;
  if (chroot !== undefined) {
    try {
      validatePath(chroot);
    } catch (e) {
      const reason = e instanceof MetadataStoreError ? e.message : String(e);
      throw new InvalidConnectStringError(connectString, `bad chroot (${reason})`);
    }
  }
  const servers: ZooKeeperServerAddress[] = [];
  for (const item of hostPart.split(",")) {
    const entry = item.trim();
    if (entry === "") continue;
    const colon = entry.lastIndexOf(":");
    const host = colon === -1 ? entry : entry.slice(0, colon);
    const portText = colon === -1 ? String(DEFAULT_ZOOKEEPER_PORT) : entry.slice(colon + 1);
    const port = Number(portText);
    if (host === "" || !/^\d+$/.test(portText) || port < 1 || port > 65535) {
      throw new InvalidConnectStringError(connectString, `bad server '${entry}' (expected host:port)`);
    }
    servers.push({ host, port });
  }
  if (servers.length === 0) throw new InvalidConnectStringError(connectString, "no server given");
  return { servers, hosts: servers.map((s) => `${s.host}:${s.port}`).join(","), chroot };
}
