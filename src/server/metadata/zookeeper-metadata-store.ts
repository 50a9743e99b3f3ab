// ZooKeeperMetadataStore: the MetadataStore on a real ZooKeeper ensemble, for cluster mode (DESIGN §4), as
// Kafka's ZooKeeperClient + KafkaZkClient. Owns the store's ZooKeeper session and its life:
// - connect(): `h1:p1,h2:p2[/chroot]`; the chroot is created first (recursively, persistent, empty data)
//   by a short-lived client without it, as Kafka does; no connection within connectionTimeoutMs rejects
//   with Kafka's one line "Timed out waiting for connection while in state: CONNECTING …".
// - Connection loss: an operation issued while disconnected waits for the reconnection (at most the
//   session timeout from its start, then ConnectionLoss) and one whose reply was lost is retried. Retries
//   that could see their own earlier effect are told apart: an ephemeral create that finds NodeExists
//   owned by this session succeeded (Kafka's checkedEphemeralCreate), a CAS set that finds BadVersion with
//   version+1 and our data succeeded, a delete that finds NoNode succeeded. A sequential create whose
//   reply was lost is not retried (a retry could make a second node): it fails with ConnectionLoss. A
//   retried multi may fail on its own earlier effect (as Kafka's); its callers check, as Kafka's do.
// - Session expiry: operations in flight fail with SessionExpired; every StateChangeHandler's
//   beforeInitializingSession runs (awaited, in registration order; operations issued meanwhile fail with
//   SessionExpired); a new session is created (retried with back-off until connected or closed); then each
//   afterInitializingSession runs. The old session's ephemeral nodes and watches are gone: handlers must
//   re-create the first and re-install the second. A watcher never fires for the old session again.
// - close(): ends the session on the server (its ephemeral nodes are removed) and stops reconnecting.
// Network I/O with a real server whose session clock is real: this file uses real timers, not Scheduler.

import { performance } from "node:perf_hooks";
import { Logger } from "../../common/logger.js";
import {
  type CreateOptions,
  ensurePath,
  type MetadataStore,
  MetadataStoreError,
  type NodeData,
  type Op,
  type OpResult,
  type Stat,
  type StateChangeHandler,
  validatePath,
  type Watcher,
} from "./metadata-store.js";
import { parseConnectString } from "./zookeeper-connect-string.js";
import { type ZkSessionState, type ZkStat, ZooKeeperSession } from "./zookeeper-session.js";

export interface ZooKeeperMetadataStoreOptions {
  /** Requested session timeout (the server bounds it to 2..20 ticks). Kafka: zookeeper.session.timeout.ms. */
  readonly sessionTimeoutMs: number;
  /** How long connect() waits for the first connection. Kafka: zookeeper.connection.timeout.ms. */
  readonly connectionTimeoutMs: number;
  readonly logger?: Logger;
  /** Shown in log lines, "[ZooKeeperClient <name>]"; Kafka's broker uses "Kafka server". */
  readonly clientName?: string;
}

type ConnectionState = "CONNECTING" | "CONNECTED" | "DISCONNECTED" | "EXPIRED" | "CLOSED";

/** Pause between two attempts at a new session after expiry (Kafka's RetryBackoffMs), doubled up to the max. */
const RETRY_BACKOFF_MS = 1000;
const MAX_RETRY_BACKOFF_MS = 10_000;
/** Pause before retrying after a ConnectionLoss while the connection still looks up. */
const LOSS_RETRY_PAUSE_MS = 20;
/** Ops per multi when deleting a subtree; a subtree that fits in one is deleted atomically. */
const DELETE_BATCH_OPS = 1000;

function toStat(s: ZkStat): Stat {
  return {
    version: s.version,
    cversion: s.cversion,
    ctime: s.ctime,
    mtime: s.mtime,
    ephemeralOwner: s.ephemeralOwner,
    czxid: s.czxid,
    mzxid: s.mzxid,
    numChildren: s.numChildren,
    dataLength: s.dataLength,
  };
}

function isCode(e: unknown, code: MetadataStoreError["code"]): e is MetadataStoreError {
  return e instanceof MetadataStoreError && e.code === code;
}

export class ZooKeeperMetadataStore implements MetadataStore {
  private session!: ZooKeeperSession;
  /** Counts sessions; an event or a failure of an older session is ignored. */
  private generation = 0;
  private state: ConnectionState = "CONNECTING";
  private readonly handlers = new Map<string, StateChangeHandler>();
  /** Rejecters of the operations waiting for a reply, failed at expiry and close. */
  private readonly inflight = new Set<(e: MetadataStoreError) => void>();
  private stateWaiters: Array<() => void> = [];
  private reinitialization: Promise<void> | undefined;
  private expiryPending = false;
  private readonly logger: Logger;

  private constructor(
    /** The connect string given (hosts and chroot). */
    readonly connectString: string,
    private readonly options: ZooKeeperMetadataStoreOptions,
  ) {
    this.logger = (options.logger ?? new Logger("kafka.zookeeper.ZooKeeperClient")).withContext(
      `ZooKeeperClient ${options.clientName ?? "Kafka server"}`,
    );
  }

  /** Connects (creating the chroot first when missing); rejects after connectionTimeoutMs without a connection. */
  static async connect(
    connectString: string,
    options: ZooKeeperMetadataStoreOptions,
  ): Promise<ZooKeeperMetadataStore> {
    const parsed = parseConnectString(connectString);
    for (const key of ["sessionTimeoutMs", "connectionTimeoutMs"] as const) {
      const v = options[key];
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${key} must be a positive number of ms, not ${v}`);
    }
    if (parsed.chroot !== undefined) {
      const root = await ZooKeeperMetadataStore.open(parsed.hosts, options, connectString);
      try {
        if (!(await root.exists(parsed.chroot))) {
          await ensurePath(root, parsed.chroot);
          root.logger.info(`Created zookeeper path ${parsed.chroot}`);
        }
      } finally {
        await root.close();
      }
    }
    return ZooKeeperMetadataStore.open(`${parsed.hosts}${parsed.chroot ?? ""}`, options, connectString);
  }

  /** A connected store on `connect` (validated); a timeout names `shownAs`, the connect string given. */
  private static async open(
    connect: string,
    options: ZooKeeperMetadataStoreOptions,
    shownAs: string,
  ): Promise<ZooKeeperMetadataStore> {
    const store = new ZooKeeperMetadataStore(connect, options);
    store.logger.info(`Initializing a new session to ${store.connectString}.`);
    store.startSession();
    store.logger.info("Waiting until connected.");
    if (!(await store.waitUntilConnected(options.connectionTimeoutMs))) {
      await store.close();
      throw new Error(
        `Timed out waiting for connection while in state: CONNECTING (zookeeper.connect=${shownAs})`,
      );
    }
    store.logger.info("Connected.");
    return store;
  }

  /** The current session's id. */
  get sessionId(): bigint {
    return this.session.sessionId;
  }

  /** The session timeout the server granted this session (the requested one before it connected). */
  get negotiatedSessionTimeoutMs(): number {
    return this.session.negotiatedSessionTimeoutMs;
  }

  /** The current session's password (tools and tests that resume the session elsewhere). */
  get sessionPassword(): Buffer {
    return this.session.sessionPassword;
  }

  get isConnected(): boolean {
    return this.state === "CONNECTED";
  }

  registerStateChangeHandler(handler: StateChangeHandler): void {
    this.handlers.set(handler.name, handler);
  }

  unregisterStateChangeHandler(name: string): void {
    this.handlers.delete(name);
  }

  // ---- session life ----

  /** A method, not a field test, so the compiler does not narrow the state across awaits. */
  private isClosed(): boolean {
    return this.state === "CLOSED";
  }

  private startSession(): void {
    const gen = ++this.generation;
    this.state = "CONNECTING";
    this.session = new ZooKeeperSession(this.connectString, {
      sessionTimeoutMs: this.options.sessionTimeoutMs,
      onStateChange: (s) => this.onSessionState(gen, s),
      onReadTimeout: (ms) =>
        this.logger.info(`Client session timed out, have not heard from server in ${ms}ms; reconnecting.`),
    });
    this.session.start();
    this.notifyStateChange();
  }

  private onSessionState(gen: number, s: ZkSessionState): void {
    if (gen !== this.generation || this.state === "CLOSED" || this.state === "EXPIRED") return;
    switch (s) {
      case "SyncConnected":
        if (this.state === "DISCONNECTED") this.logger.info("Reconnected.");
        this.state = "CONNECTED";
        this.logger.debug(
          `Session 0x${BigInt.asUintN(64, this.session.sessionId).toString(16)}, negotiated timeout ${this.session.negotiatedSessionTimeoutMs} ms.`,
        );
        break;
      case "Disconnected":
        this.state = "DISCONNECTED";
        this.logger.info("Disconnected from ZooKeeper; waiting to reconnect.");
        break;
      case "Expired":
        this.onExpired();
        return;
    }
    this.notifyStateChange();
  }

  private onExpired(): void {
    if (this.state === "CLOSED") return;
    this.state = "EXPIRED";
    this.session.abandon();
    this.failInflight(() => new MetadataStoreError("SessionExpired", "/"));
    this.notifyStateChange();
    this.expiryPending = true;
    if (!this.reinitialization) {
      this.reinitialization = this.reinitialize().finally(() => {
        this.reinitialization = undefined;
      });
    }
  }

  /** Kafka's ZooKeeperClient.reinitialize, repeated while a new session expires before it is done. */
  private async reinitialize(): Promise<void> {
    while (this.expiryPending && !this.isClosed()) {
      this.expiryPending = false;
      this.logger.info("Session expired.");
      for (const h of [...this.handlers.values()]) {
        await this.callHandler(h, "beforeInitializingSession");
      }
      if (this.isClosed()) return;
      this.logger.info(`Initializing a new session to ${this.connectString}.`);
      let backoff = RETRY_BACKOFF_MS;
      for (;;) {
        this.startSession();
        if (await this.waitUntilConnected(this.options.connectionTimeoutMs)) break;
        if (this.isClosed()) return;
        this.logger.warn(
          `Timed out waiting for connection while in state: ${this.state}; retrying in ${backoff} ms.`,
        );
        this.session.abandon();
        await this.waitForStateChange(backoff); // close() ends the pause
        if (this.isClosed()) return;
        backoff = Math.min(backoff * 2, MAX_RETRY_BACKOFF_MS);
      }
      this.logger.info("Connected.");
      for (const h of [...this.handlers.values()]) {
        if (this.expiryPending || this.isClosed()) break;
        await this.callHandler(h, "afterInitializingSession");
      }
    }
  }

  private async callHandler(
    h: StateChangeHandler,
    which: "beforeInitializingSession" | "afterInitializingSession",
  ): Promise<void> {
    try {
      await h[which]?.();
    } catch (e) {
      this.logger.error(`Uncaught error in ${which} of handler ${h.name}: ${(e as Error)?.message ?? e}`);
    }
  }

  private notifyStateChange(): void {
    const waiters = this.stateWaiters;
    this.stateWaiters = [];
    for (const w of waiters) w();
  }

  /** Resolves on the next state change, or after `ms`. */
  private waitForStateChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.stateWaiters.push(done);
    });
  }

  /** True once connected; false after `timeoutMs`, on expiry or close. */
  private async waitUntilConnected(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (this.state === "CONNECTED") return true;
      if (this.state === "CLOSED" || this.state === "EXPIRED") return false;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await this.waitForStateChange(left);
    }
  }

  private failInflight(error: () => MetadataStoreError): void {
    const pending = [...this.inflight];
    this.inflight.clear();
    for (const fail of pending) fail(error());
  }

  // ---- running an operation ----

  /** The connected session, waiting for a reconnection until `deadline` (performance.now() ms). */
  private async connectedSession(path: string, deadline: number): Promise<ZooKeeperSession> {
    for (;;) {
      if (this.state === "CLOSED") {
        throw new MetadataStoreError("SessionExpired", path, "the ZooKeeper metadata store is closed");
      }
      if (this.state === "EXPIRED") throw new MetadataStoreError("SessionExpired", path);
      if (this.state === "CONNECTED" && this.session.isConnected) return this.session;
      const left = deadline - performance.now();
      if (left <= 0) throw new MetadataStoreError("ConnectionLoss", path);
      await this.waitForStateChange(this.state === "CONNECTED" ? Math.min(left, LOSS_RETRY_PAUSE_MS) : left);
    }
  }

  /** `p`, failed early with SessionExpired if the session expires (or the store closes) first. */
  private track<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (e: MetadataStoreError): void => reject(e);
      this.inflight.add(fail);
      p.then(
        (v) => {
          this.inflight.delete(fail);
          resolve(v);
        },
        (e) => {
          this.inflight.delete(fail);
          reject(e);
        },
      );
    });
  }

  /**
   * Runs `attempt` on the connected session; after a ConnectionLoss (the reply was lost) waits for the
   * reconnection and runs it again with `retried` set, unless `retryable` is false. Bounded by the session
   * timeout from the start.
   */
  private async run<T>(
    path: string,
    attempt: (session: ZooKeeperSession, retried: boolean) => Promise<T>,
    retryable = true,
  ): Promise<T> {
    // The negotiated timeout once connected (the server bounds the requested one to 2..20 ticks).
    const deadline = performance.now() + this.session.negotiatedSessionTimeoutMs;
    let retried = false;
    for (;;) {
      const session = await this.connectedSession(path, deadline);
      const gen = this.generation;
      try {
        return await this.track(attempt(session, retried));
      } catch (e) {
        const current = gen === this.generation;
        if (isCode(e, "SessionExpired") && current && this.state !== "CLOSED") this.onExpired();
        if (!isCode(e, "ConnectionLoss") || !current || !retryable) throw e;
        if (performance.now() >= deadline) throw e;
        retried = true;
        if (this.state === "CONNECTED") await this.waitForStateChange(LOSS_RETRY_PAUSE_MS);
      }
    }
  }

  // ---- MetadataStore ----

  async create(path: string, data: Buffer, options: CreateOptions = {}): Promise<string> {
    validatePath(path);
    return this.run(
      path,
      async (s, retried) => {
        try {
          return await s.create(path, data, options);
        } catch (e) {
          // Kafka's checkedEphemeralCreate: our own node, created by the attempt whose reply was lost.
          if (retried && options.ephemeral && isCode(e, "NodeExists")) {
            const st = await s.exists(path);
            if (st && st.ephemeralOwner === s.sessionId) return path;
          }
          throw e;
        }
      },
      !options.sequential,
    );
  }

  async get(path: string, watcher?: Watcher): Promise<NodeData | undefined> {
    validatePath(path);
    return this.run(path, async (s) => {
      try {
        const n = await s.getData(path, watcher);
        return { data: n.data ?? Buffer.alloc(0), stat: toStat(n.stat) };
      } catch (e) {
        if (isCode(e, "NoNode")) return undefined;
        throw e;
      }
    });
  }

  async exists(path: string, watcher?: Watcher): Promise<Stat | undefined> {
    validatePath(path);
    return this.run(path, async (s) => {
      const st = await s.exists(path, watcher);
      return st ? toStat(st) : undefined;
    });
  }

  async getChildren(path: string, watcher?: Watcher): Promise<string[]> {
    validatePath(path);
    return this.run(path, async (s) => (await s.getChildren(path, watcher)).children.sort());
  }

  async set(path: string, data: Buffer, expectedVersion?: number): Promise<Stat> {
    validatePath(path);
    const version = expectedVersion ?? -1;
    return this.run(path, async (s, retried) => {
      try {
        return toStat(await s.setData(path, data, version));
      } catch (e) {
        if (retried && version !== -1 && isCode(e, "BadVersion")) {
          const n = await s.getData(path).catch(() => undefined);
          const same = (n?.data ?? Buffer.alloc(0)).equals(data);
          if (n && n.stat.version === version + 1 && same) return toStat(n.stat);
        }
        throw e;
      }
    });
  }

  async delete(
    path: string,
    expectedVersion?: number,
    options: { readonly recursive?: boolean } = {},
  ): Promise<void> {
    validatePath(path);
    if (path === "/") throw new MetadataStoreError("BadArguments", "/", "cannot delete /");
    if (options.recursive) {
      await this.deleteRecursive(path, expectedVersion);
      return;
    }
    await this.run(path, async (s, retried) => {
      try {
        await s.remove(path, expectedVersion ?? -1);
      } catch (e) {
        if (!(retried && isCode(e, "NoNode"))) throw e;
      }
    });
  }

  /**
   * Deletes `path` and its subtree, deepest first, in multis of up to DELETE_BATCH_OPS ops (one multi, so
   * atomic, when the subtree fits). Children created or removed meanwhile make it list the tree again.
   */
  private async deleteRecursive(path: string, expectedVersion: number | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const tree: string[] = [];
      const queue = [path];
      while (queue.length > 0) {
        const p = queue.shift() as string;
        let kids: string[];
        try {
          kids = await this.getChildren(p);
        } catch (e) {
          if (isCode(e, "NoNode") && p !== path) continue;
          throw e;
        }
        tree.push(p);
        for (const k of kids) queue.push(`${p}/${k}`);
      }
      const order = tree.reverse();
      const check: Op[] =
        expectedVersion !== undefined && expectedVersion !== -1
          ? [{ type: "check", path, version: expectedVersion }]
          : [];
      try {
        for (let i = 0; i < order.length; i += DELETE_BATCH_OPS) {
          const batch = order.slice(i, i + DELETE_BATCH_OPS);
          const ops: Op[] = batch.map((p) => ({
            type: "delete",
            path: p,
            version: p === path ? expectedVersion : undefined,
          }));
          await this.multi(batch.includes(path) ? ops : [...check, ...ops]);
        }
        return;
      } catch (e) {
        const raced = (isCode(e, "NoNode") || isCode(e, "NotEmpty")) && e.path !== path;
        if (!raced || attempt >= 5) throw e;
      }
    }
  }

  async multi(ops: readonly Op[]): Promise<OpResult[]> {
    for (const op of ops) validatePath(op.path);
    if (ops.length === 0) return [];
    const results = await this.run(ops[0].path, (s) => s.multi(ops));
    return results.map((r): OpResult => (r.type === "set" ? { type: "set", stat: toStat(r.stat) } : r));
  }

  async close(): Promise<void> {
    if (this.state === "CLOSED") return;
    this.state = "CLOSED";
    this.handlers.clear();
    this.notifyStateChange();
    await this.session.close(Math.min(3000, this.options.sessionTimeoutMs));
    this.failInflight(
      () => new MetadataStoreError("SessionExpired", "/", "the ZooKeeper metadata store is closed"),
    );
    this.logger.info("Closed.");
  }
}
