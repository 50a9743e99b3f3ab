// The read-only ZooKeeper browser of a cluster in ZooKeeper mode (`<alias>.zookeeper.connect`,
// host:port[,host:port][/chroot]): a znode's children, data and stat, through node-zookeeper-client.
// One session per cluster, opened on first use and again after it is lost; nothing is ever written.

import zookeeper from "node-zookeeper-client";
import { HttpError } from "../http/router.js";

const CONNECT_TIMEOUT_MS = 5_000;

export interface ZNode {
  readonly path: string;
  readonly children: readonly string[];
  /** base64, null for a node without data. */
  readonly data: string | null;
  readonly stat: {
    readonly version: number;
    readonly cversion: number;
    readonly dataLength: number;
    readonly numChildren: number;
    readonly ctime: number;
    readonly mtime: number;
    /** Session id (hex) of an ephemeral node's owner, null for a persistent node. */
    readonly ephemeralOwner: string | null;
  };
}

const long = (b: Buffer): bigint => (b.length === 8 ? b.readBigInt64BE(0) : 0n);

export function checkZnodePath(path: string): string {
  const p = path === "" ? "/" : path;
  if (!p.startsWith("/") || (p.length > 1 && p.endsWith("/")) || p.includes("//") || p.includes("\u0000"))
    throw new HttpError(400, `path: '${path}' is not a ZooKeeper path such as /brokers/ids`);
  return p;
}

export class ZooKeeperBrowser {
  private client: zookeeper.Client | undefined;
  private connecting: Promise<zookeeper.Client> | undefined;

  constructor(readonly connectString: string) {}

  private connect(): Promise<zookeeper.Client> {
    if (this.client && this.client.getState() === zookeeper.State.SYNC_CONNECTED)
      return Promise.resolve(this.client);
    if (this.connecting) return this.connecting;
    this.client?.close();
    this.client = undefined;
    const client = zookeeper.createClient(this.connectString, { sessionTimeout: 10_000, retries: 0 });
    this.connecting = new Promise<zookeeper.Client>((resolve, reject) => {
      const timer = setTimeout(() => {
        client.close();
        reject(
          new HttpError(
            502,
            `ZooKeeper ${this.connectString}: no connection within ${CONNECT_TIMEOUT_MS / 1000} s`,
          ),
        );
      }, CONNECT_TIMEOUT_MS);
      client.once("connected", () => {
        clearTimeout(timer);
        this.client = client;
        resolve(client);
      });
      client.connect();
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  async node(path: string): Promise<ZNode> {
    const p = checkZnodePath(path);
    const client = await this.connect();
    const fail = (e: unknown): never => {
      const code = (e as { getCode?: () => number }).getCode?.();
      if (code === zookeeper.Exception.NO_NODE) throw new HttpError(404, `no znode ${p}`);
      throw new HttpError(502, `ZooKeeper ${p}: ${(e as Error).message ?? String(e)}`);
    };
    const [children, [data, stat]] = await Promise.all([
      new Promise<string[]>((res, rej) => client.getChildren(p, (e, c) => (e ? rej(e) : res(c)))).catch(fail),
      new Promise<[Buffer | undefined, zookeeper.Stat]>((res, rej) =>
        client.getData(p, (e, d, s) => (e ? rej(e) : res([d, s]))),
      ).catch(fail),
    ]);
    const owner = long(stat.ephemeralOwner);
    return {
      path: p,
      children: [...children].sort(),
      data: data ? data.toString("base64") : null,
      stat: {
        version: stat.version,
        cversion: stat.cversion,
        dataLength: stat.dataLength,
        numChildren: stat.numChildren,
        ctime: Number(long(stat.ctime)),
        mtime: Number(long(stat.mtime)),
        ephemeralOwner: owner === 0n ? null : owner.toString(16),
      },
    };
  }

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}
