// MetadataStore: the ZooKeeper-shaped interface the controller, the metadata cache and the topic admin
// talk to (DESIGN §4). Owns the contract only: znode paths ("/brokers/topics/t"), versioned data
// (compare-and-set with an expected version), ephemeral and sequential nodes, atomic multi-ops, and
// one-shot watches delivered as ZooKeeper delivers them, and session state-change handlers (Kafka's
// ZooKeeperClient.StateChangeHandler). Two implementations: the embedded file-backed store (single node,
// a session that never expires) and the ZooKeeper one (cluster); code above never knows which it talks to.

/** A znode's metadata, as ZooKeeper's Stat. */
export interface Stat {
  /** Data version: 0 after create, +1 on every set. */
  readonly version: number;
  /** Children version: +1 on every child create/delete (also the next sequential suffix). */
  readonly cversion: number;
  /** Wall-clock ms of creation / last modification. */
  readonly ctime: number;
  readonly mtime: number;
  /** Session id owning an ephemeral node, 0n otherwise. */
  readonly ephemeralOwner: bigint;
  /** Zxid of the transaction that created the node (Kafka uses /brokers/ids/<id>'s as the broker epoch). */
  readonly czxid: bigint;
  /** Zxid of the transaction that last changed the node's data (the create, or the last set). */
  readonly mzxid: bigint;
  readonly numChildren: number;
  readonly dataLength: number;
}

export interface NodeData {
  readonly data: Buffer;
  readonly stat: Stat;
}

export interface CreateOptions {
  /** Removed when the creating session ends (store closed, or reopened after a crash). */
  readonly ephemeral?: boolean;
  /** Appends a 10-digit, zero-padded counter taken from the parent's cversion. */
  readonly sequential?: boolean;
}

export type WatchEventType = "NodeCreated" | "NodeDeleted" | "NodeDataChanged" | "NodeChildrenChanged";

export interface WatchEvent {
  readonly type: WatchEventType;
  readonly path: string;
}

/** A one-shot watcher: called once for the first matching change, then forgotten (as ZooKeeper). */
export type Watcher = (event: WatchEvent) => void;

export type Op =
  | {
      readonly type: "create";
      readonly path: string;
      readonly data: Buffer;
      readonly options?: CreateOptions;
    }
  | { readonly type: "set"; readonly path: string; readonly data: Buffer; readonly version?: number }
  | { readonly type: "delete"; readonly path: string; readonly version?: number }
  | { readonly type: "check"; readonly path: string; readonly version: number };

export type OpResult =
  | { readonly type: "create"; readonly path: string }
  | { readonly type: "set"; readonly stat: Stat }
  | { readonly type: "delete" }
  | { readonly type: "check" };

export type MetadataStoreErrorCode =
  | "NoNode"
  | "NodeExists"
  | "BadVersion"
  | "NotEmpty"
  | "NoChildrenForEphemerals"
  | "BadArguments"
  | "SessionExpired"
  | "ConnectionLoss"
  /** ZooKeeper only: the node's ACL refuses the session (NoAuth, InvalidACL, AuthFailed). */
  | "NoAuth"
  /** ZooKeeper only: any other server-side failure (the message names ZooKeeper's code). */
  | "SystemError";

/** A failed store operation; `code` is ZooKeeper's KeeperException code name, `path` the znode. */
export class MetadataStoreError extends Error {
  constructor(
    readonly code: MetadataStoreErrorCode,
    readonly path: string,
    message?: string,
  ) {
    super(message ?? `KeeperErrorCode = ${code} for ${path}`);
    this.name = `${code}Error`;
  }
}

export class NoNodeError extends MetadataStoreError {
  constructor(path: string) {
    super("NoNode", path);
  }
}

export class NodeExistsError extends MetadataStoreError {
  constructor(path: string) {
    super("NodeExists", path);
  }
}

export class BadVersionError extends MetadataStoreError {
  constructor(path: string) {
    super("BadVersion", path);
  }
}

export class NotEmptyError extends MetadataStoreError {
  constructor(path: string) {
    super("NotEmpty", path);
  }
}

/**
 * Told about the store's session, as Kafka's ZooKeeperClient.StateChangeHandler. When a session expires
 * its ephemeral nodes and every watch it set are gone: a handler re-creates the first and re-installs the
 * second in afterInitializingSession. Handlers run one at a time, in registration order, each awaited.
 */
export interface StateChangeHandler {
  /** Unique among the store's handlers; registering a name again replaces the earlier handler. */
  readonly name: string;
  /** The session expired: called before a new session is created (resign, drop state). */
  beforeInitializingSession?(): void | Promise<void>;
  /** A new session exists (re-register ephemeral nodes, re-install watches). */
  afterInitializingSession?(): void | Promise<void>;
}

export interface MetadataStore {
  /** The current session's id (owner of its ephemeral nodes); changes when a new session replaces it. */
  readonly sessionId: bigint;
  /** Creates a node; the parent must exist. Returns the created path (with the sequential suffix). */
  create(path: string, data: Buffer, options?: CreateOptions): Promise<string>;
  /** The node's data and stat, or undefined when absent; `watcher` fires on its change or deletion. */
  get(path: string, watcher?: Watcher): Promise<NodeData | undefined>;
  /** Sets the data; with `expectedVersion`, only if the version matches (BadVersion otherwise). */
  set(path: string, data: Buffer, expectedVersion?: number): Promise<Stat>;
  /** Deletes a node (NotEmpty if it has children unless `recursive`); CAS with `expectedVersion`. */
  delete(path: string, expectedVersion?: number, options?: { readonly recursive?: boolean }): Promise<void>;
  /** Child names, sorted; NoNode when the node is absent. `watcher` fires on child create/delete. */
  getChildren(path: string, watcher?: Watcher): Promise<string[]>;
  /** The stat or undefined; `watcher` fires on creation, change or deletion. */
  exists(path: string, watcher?: Watcher): Promise<Stat | undefined>;
  /** Applies every op or none (the first failing op's error is thrown). */
  multi(ops: readonly Op[]): Promise<OpResult[]>;
  /** Adds (or replaces, by name) a session state-change handler. */
  registerStateChangeHandler(handler: StateChangeHandler): void;
  unregisterStateChangeHandler(name: string): void;
  /** Ends the session: its ephemeral nodes are deleted; pending watches are dropped. */
  close(): Promise<void>;
}

/** Validates a znode path as ZooKeeper does (absolute, no trailing '/', no empty or '.' segments). */
export function validatePath(path: string): void {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new MetadataStoreError("BadArguments", String(path), `Path must start with / character: ${path}`);
  }
  if (path === "/") return;
  if (path.endsWith("/")) {
    throw new MetadataStoreError("BadArguments", path, `Path must not end with / character: ${path}`);
  }
  for (const seg of path.slice(1).split("/")) {
    if (seg === "" || seg === "." || seg === ".." || seg.includes("\u0000")) {
      throw new MetadataStoreError("BadArguments", path, `Invalid path element '${seg}' in ${path}`);
    }
  }
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Creates `path` and any missing ancestors as persistent nodes (empty data for the ancestors). */
export async function createRecursive(store: MetadataStore, path: string, data: Buffer): Promise<void> {
  try {
    await store.create(path, data);
  } catch (e) {
    if (e instanceof MetadataStoreError && e.code === "NoNode") {
      await ensurePath(store, parentOf(path));
      await store.create(path, data);
    } else throw e;
  }
}

/** Makes sure a persistent node exists at `path` (ancestors included); existing data is left alone. */
export async function ensurePath(store: MetadataStore, path: string): Promise<void> {
  if (path === "/") return;
  if (await store.exists(path)) return;
  await ensurePath(store, parentOf(path));
  try {
    await store.create(path, Buffer.alloc(0));
  } catch (e) {
    if (!(e instanceof MetadataStoreError && e.code === "NodeExists")) throw e;
  }
}

/** JSON helpers for znode data (Kafka stores UTF-8 JSON). */
export function jsonBytes(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}

export function parseJson(path: string, data: Buffer): unknown {
  try {
    return JSON.parse(data.toString("utf8"));
  } catch {
    throw new MetadataStoreError("BadArguments", path, `znode ${path} does not hold valid JSON`);
  }
}
