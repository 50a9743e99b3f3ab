// ZooKeeperSession: one ZooKeeper client session over node-zookeeper-client (pure JS), as the Java client's
// ZooKeeper object. Owns the library client of that session: its state changes (SyncConnected,
// Disconnected, Expired), a read-timeout watchdog the library lacks (no reply from the server for 2/3 of the
// session timeout, as the Java client: drop the connection so the library moves to the next server — a
// stopped server otherwise hangs the session), its requests as promises with ZooKeeper's error codes
// mapped to MetadataStoreError (with the znode path), its stats as bigint/number Stat records (pZxid and
// aclVersion too, for the shell), and the end of the session: close() (ZooKeeper removes its ephemeral
// nodes) or abandon() (drop the connection only, e.g. after expiry). No retries and no reconnection policy
// here: ZooKeeperMetadataStore owns those. The library's version-0 bug in its transaction builder
// (`version || -1`) is avoided by filling the multi's op records directly.
// Relies on node-zookeeper-client 1.1 internals (its connection manager's socket, state and connect
// hooks), typed below; a library upgrade must re-check them.

import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import zookeeper, { type Client, type Stat as RawStat, type Event as ZkEvent } from "node-zookeeper-client";
import {
  BadVersionError,
  MetadataStoreError,
  type MetadataStoreErrorCode,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  type Op,
  type Stat,
  type WatchEventType,
  type Watcher,
} from "./metadata-store.js";

/** ZooKeeper's full Stat: the store's Stat plus pZxid and aclVersion. */
export interface ZkStat extends Stat {
  /** Zxid of the last change of the node's children. */
  readonly pzxid: bigint;
  readonly aversion: number;
}

export type ZkSessionState = "SyncConnected" | "Disconnected" | "Expired";

export interface ZooKeeperSessionOptions {
  readonly sessionTimeoutMs: number;
  /** Resume an existing session instead of creating one (tools and tests). */
  readonly sessionId?: bigint;
  readonly sessionPassword?: Buffer;
  readonly onStateChange: (state: ZkSessionState) => void;
  /** Told when the watchdog drops a silent connection. */
  readonly onReadTimeout?: (silentMs: number) => void;
}

/** A raw multi result, in op order. */
export type ZkOpResult =
  | { readonly type: "create"; readonly path: string }
  | { readonly type: "set"; readonly stat: ZkStat }
  | { readonly type: "delete" }
  | { readonly type: "check" };

/** The largest znode data the library sends (ZooKeeper's jute.maxbuffer is about the same). */
export const MAX_DATA_BYTES = 1024 * 1024;

const OP = { CREATE: 1, DELETE: 2, SET_DATA: 5, CHECK: 13 } as const;
const CM_STATE = { CONNECTING: 1, CONNECTED: 2 } as const;

/** node-zookeeper-client 1.1's ConnectionManager, the parts used here. */
interface ConnectionManagerInternals {
  state: number;
  socket?: Socket;
  connectTimeoutHandler: NodeJS.Timeout | null;
  zxid: Buffer;
  onSocketData(buffer: Buffer): void;
  onSocketConnected(): void;
  connect(): void;
}

interface RawTransaction {
  ops: unknown[];
  commit(
    cb: (
      error: unknown,
      results?: Array<{ type: number; err?: number; path?: string; stat?: RawStat }>,
    ) => void,
  ): void;
}

const ERROR_CODES: Record<number, MetadataStoreErrorCode> = {
  [-101]: "NoNode",
  [-110]: "NodeExists",
  [-103]: "BadVersion",
  [-111]: "NotEmpty",
  [-108]: "NoChildrenForEphemerals",
  [-112]: "SessionExpired",
  [-4]: "ConnectionLoss",
  [-7]: "ConnectionLoss", // OPERATION_TIMEOUT
  [-8]: "BadArguments",
  [-102]: "NoAuth",
  [-114]: "NoAuth", // INVALID_ACL
  [-115]: "NoAuth", // AUTH_FAILED
};

/** The library's error (an Exception with a numeric code) as a MetadataStoreError for `path`. */
export function toStoreError(error: unknown, path: string): MetadataStoreError {
  if (error instanceof MetadataStoreError) return error;
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "number") {
    const mapped = ERROR_CODES[code];
    if (mapped) return storeError(mapped, path);
    const name = (error as { name?: string }).name ?? String(code);
    return new MetadataStoreError("SystemError", path, `KeeperErrorCode = ${name} for ${path}`);
  }
  // A synchronous argument check of the library (an AssertionError).
  return new MetadataStoreError("BadArguments", path, `${(error as Error)?.message ?? error} (${path})`);
}

/** The error, as the class callers test with instanceof when there is one (NoNodeError, ...). */
export function storeError(code: MetadataStoreErrorCode, path: string): MetadataStoreError {
  switch (code) {
    case "NoNode":
      return new NoNodeError(path);
    case "NodeExists":
      return new NodeExistsError(path);
    case "BadVersion":
      return new BadVersionError(path);
    case "NotEmpty":
      return new NotEmptyError(path);
    default:
      return new MetadataStoreError(code, path);
  }
}

function long(b: Buffer): bigint {
  return b.readBigInt64BE(0);
}

export function toZkStat(raw: RawStat): ZkStat {
  return {
    version: raw.version,
    cversion: raw.cversion,
    aversion: raw.aversion,
    ctime: Number(long(raw.ctime)),
    mtime: Number(long(raw.mtime)),
    ephemeralOwner: long(raw.ephemeralOwner),
    czxid: long(raw.czxid),
    mzxid: long(raw.mzxid),
    pzxid: long(raw.pzxid),
    numChildren: raw.numChildren,
    dataLength: raw.dataLength,
  };
}

const EVENT_TYPES: Record<number, WatchEventType> = {
  1: "NodeCreated",
  2: "NodeDeleted",
  3: "NodeDataChanged",
  4: "NodeChildrenChanged",
};

function createMode(options: { ephemeral?: boolean; sequential?: boolean } | undefined): number {
  return (options?.ephemeral ? 1 : 0) | (options?.sequential ? 2 : 0);
}

function checkData(path: string, data: Buffer | undefined): void {
  if (data === undefined) return;
  if (!Buffer.isBuffer(data))
    throw new MetadataStoreError("BadArguments", path, `data for ${path} must be a Buffer`);
  if (data.length > MAX_DATA_BYTES) {
    throw new MetadataStoreError(
      "BadArguments",
      path,
      `data for ${path} is ${data.length} bytes, more than ZooKeeper's ${MAX_DATA_BYTES}`,
    );
  }
}

export class ZooKeeperSession {
  private readonly client: Client;
  private readonly cm: ConnectionManagerInternals;
  private readonly watchdog: NodeJS.Timeout;
  /** performance.now() of the last bytes from the server, or of the current connection attempt. */
  private lastHeardMs = performance.now();
  private ended = false;
  private closing = false;
  private connectedOnce = false;
  private readonly wrappers = new WeakMap<Watcher, (event: ZkEvent) => void>();

  constructor(
    /** `host:port,...[/chroot]` as the library takes it (already validated). */
    readonly connectString: string,
    private readonly options: ZooKeeperSessionOptions,
  ) {
    const clientOptions: Record<string, unknown> = {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    };
    if (options.sessionId !== undefined) {
      const id = Buffer.alloc(8);
      id.writeBigInt64BE(BigInt.asIntN(64, options.sessionId));
      clientOptions.sessionId = id;
      clientOptions.sessionPassword = options.sessionPassword;
    }
    this.client = zookeeper.createClient(connectString, clientOptions);
    this.cm = (this.client as unknown as { connectionManager: ConnectionManagerInternals }).connectionManager;
    const cm = this.cm;
    const onData = cm.onSocketData;
    const onConnected = cm.onSocketConnected;
    const heard = (): void => {
      this.lastHeardMs = performance.now();
    };
    cm.onSocketData = function (this: ConnectionManagerInternals, buffer: Buffer): void {
      heard();
      onData.call(this, buffer);
    };
    const isEnded = (): boolean => this.ended;
    cm.onSocketConnected = function (this: ConnectionManagerInternals): void {
      // A late socket of an abandoned session must not open a session on the server.
      if (isEnded()) {
        this.socket?.destroy();
        return;
      }
      heard();
      onConnected.call(this);
    };
    this.client.on("state", (state) => {
      if (this.ended || this.closing) return;
      if (state === zookeeper.State.SYNC_CONNECTED) {
        this.connectedOnce = true;
        heard();
        options.onStateChange("SyncConnected");
      } else if (state === zookeeper.State.DISCONNECTED) {
        heard();
        if (this.connectedOnce) options.onStateChange("Disconnected");
      } else if (state === zookeeper.State.EXPIRED) {
        options.onStateChange("Expired");
      }
    });
    const readTimeoutMs = Math.max(1, Math.floor((options.sessionTimeoutMs * 2) / 3));
    this.watchdog = setInterval(() => this.checkReadTimeout(), Math.max(50, Math.floor(readTimeoutMs / 4)));
    this.watchdog.unref();
  }

  /** Starts connecting (the library tries the servers in random order, forever). */
  start(): void {
    this.lastHeardMs = performance.now();
    this.client.connect();
  }

  get isConnected(): boolean {
    return !this.ended && this.cm.state === CM_STATE.CONNECTED;
  }

  /** The session id (0n before the first connection). */
  get sessionId(): bigint {
    return long(this.client.getSessionId());
  }

  get sessionPassword(): Buffer {
    return this.client.getSessionPassword();
  }

  /** The session timeout the server granted (the requested one before connecting). */
  get negotiatedSessionTimeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  /** The last zxid this session has seen. */
  get lastZxid(): bigint {
    return long(this.cm.zxid);
  }

  private checkReadTimeout(): void {
    if (this.ended) return;
    const state = this.cm.state;
    if (state !== CM_STATE.CONNECTED && state !== CM_STATE.CONNECTING) return;
    if (!this.cm.socket || this.cm.socket.destroyed) return;
    const silentMs = performance.now() - this.lastHeardMs;
    const limit = Math.floor((this.negotiatedSessionTimeoutMs * 2) / 3);
    if (silentMs > limit) {
      this.options.onReadTimeout?.(Math.round(silentMs));
      this.lastHeardMs = performance.now();
      this.cm.socket.destroy(); // the library reconnects (to the next server)
    }
  }

  // ---- requests ----

  private call<T>(path: string, invoke: (done: (error: unknown, value?: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        invoke((error, value) => {
          if (error) reject(toStoreError(error, path));
          else resolve(value as T);
        });
      } catch (e) {
        reject(toStoreError(e, path));
      }
    });
  }

  /** One wrapper per watcher, so the library keeps a watcher once per path and kind, as ZooKeeper. */
  private wrapWatcher(watcher: Watcher): (event: ZkEvent) => void {
    let wrapped = this.wrappers.get(watcher);
    if (!wrapped) {
      wrapped = (event) => {
        if (this.ended) return;
        const type = EVENT_TYPES[event.getType()];
        if (type) watcher({ type, path: event.getPath() });
      };
      this.wrappers.set(watcher, wrapped);
    }
    return wrapped;
  }

  /** Creates a node; `data` undefined stores no data at all (zkCli's `create /x`, read back as null). */
  create(
    path: string,
    data: Buffer | undefined,
    options?: { ephemeral?: boolean; sequential?: boolean },
  ): Promise<string> {
    checkData(path, data);
    return this.call(path, (done) =>
      data === undefined
        ? this.client.create(path, createMode(options), (e, created) => done(e, created))
        : this.client.create(path, data, createMode(options), (e, created) => done(e, created)),
    );
  }

  /** Data (undefined for a node created without any) and stat; NoNode when absent (no watch is left then). */
  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer | undefined; stat: ZkStat }> {
    return this.call(path, (done) => {
      const cb = (e: unknown, data: Buffer | undefined, stat: RawStat): void =>
        done(e, e ? undefined : { data: data ?? undefined, stat: toZkStat(stat) });
      if (watcher) this.client.getData(path, this.wrapWatcher(watcher), cb);
      else this.client.getData(path, cb);
    });
  }

  exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined> {
    return this.call(path, (done) => {
      const cb = (e: unknown, stat: RawStat | null): void => done(e, stat ? toZkStat(stat) : undefined);
      if (watcher) this.client.exists(path, this.wrapWatcher(watcher), cb);
      else this.client.exists(path, cb);
    });
  }

  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat }> {
    return this.call(path, (done) => {
      const cb = (e: unknown, children: string[], stat: RawStat): void =>
        done(e, e ? undefined : { children, stat: toZkStat(stat) });
      if (watcher) this.client.getChildren(path, this.wrapWatcher(watcher), cb);
      else this.client.getChildren(path, cb);
    });
  }

  setData(path: string, data: Buffer, version = -1): Promise<ZkStat> {
    checkData(path, data);
    return this.call(path, (done) =>
      this.client.setData(path, data, version, (e, stat) => done(e, e ? undefined : toZkStat(stat))),
    );
  }

  remove(path: string, version = -1): Promise<void> {
    return this.call(path, (done) => this.client.remove(path, version, (e) => done(e)));
  }

  /** Every op or none; a failure is the first failing op's error, with its path. */
  multi(ops: readonly Op[]): Promise<ZkOpResult[]> {
    const tx = this.client.transaction() as unknown as RawTransaction;
    const acls = (zookeeper.ACL as unknown as { OPEN_ACL_UNSAFE: unknown[] }).OPEN_ACL_UNSAFE;
    for (const op of ops) {
      switch (op.type) {
        case "create":
          checkData(op.path, op.data);
          tx.ops.push({ type: OP.CREATE, path: op.path, data: op.data, acls, mode: createMode(op.options) });
          break;
        case "set":
          checkData(op.path, op.data);
          tx.ops.push({ type: OP.SET_DATA, path: op.path, data: op.data, version: op.version ?? -1 });
          break;
        case "delete":
          tx.ops.push({ type: OP.DELETE, path: op.path, version: op.version ?? -1 });
          break;
        case "check":
          tx.ops.push({ type: OP.CHECK, path: op.path, version: op.version });
          break;
      }
    }
    const firstPath = ops[0]?.path ?? "/";
    return new Promise<ZkOpResult[]>((resolve, reject) => {
      try {
        tx.commit((error, results) => {
          if (Array.isArray(results) && results.length === ops.length) {
            const failed = results.findIndex((r) => r.err !== undefined && r.err !== 0);
            if (failed >= 0) {
              reject(toStoreError({ code: results[failed].err }, ops[failed].path));
              return;
            }
            if (!error) {
              resolve(
                results.map((r): ZkOpResult => {
                  if (r.type === OP.CREATE) return { type: "create", path: r.path ?? "" };
                  if (r.type === OP.SET_DATA) return { type: "set", stat: toZkStat(r.stat as RawStat) };
                  if (r.type === OP.DELETE) return { type: "delete" };
                  return { type: "check" };
                }),
              );
              return;
            }
          }
          reject(toStoreError(error ?? { code: -1, name: "SYSTEM_ERROR" }, firstPath));
        });
      } catch (e) {
        reject(toStoreError(e, firstPath));
      }
    });
  }

  // ---- the end ----

  /**
   * Ends the session on the server (its ephemeral nodes go at once), waiting at most `timeoutMs` for the
   * server's answer; then drops the connection. A session that is not connected is only abandoned.
   */
  async close(timeoutMs = 3000): Promise<void> {
    if (this.ended) return;
    this.closing = true;
    if (this.isConnected) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.client.once("disconnected", () => {
          clearTimeout(timer);
          resolve();
        });
        this.client.close();
      });
    }
    this.abandon();
  }

  /** Drops the connection without ending the session on the server, and stops reconnecting. */
  abandon(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.watchdog);
    const cm = this.cm;
    cm.connect = () => {};
    if (cm.connectTimeoutHandler) clearTimeout(cm.connectTimeoutHandler);
    cm.connectTimeoutHandler = null;
    cm.socket?.destroy();
  }
}
