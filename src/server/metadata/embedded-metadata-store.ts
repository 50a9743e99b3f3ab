// EmbeddedMetadataStore: the MetadataStore on local files, for the single-node broker without ZooKeeper.
// Owns `<dir>/__tributary_metadata.json` (a snapshot of every persistent znode: path, data as base64,
// version, cversion, ctime, mtime, written atomically: tmp + fsync + rename + dir fsync) and
// `<dir>/__tributary_metadata.log` (a journal: one JSON line per committed change holding the resulting
// node records, appended and fsynced; group-committed, so changes made while a write runs share the next
// one). The journal is folded into a new snapshot when it outgrows the snapshot, and at every open; a
// generation number in both files tells a stale journal (crash between the two renames) from a current
// one. A torn last journal line (a write that never completed, so never acknowledged) is dropped; any
// other damage makes open() throw MetadataStoreCorruptError naming the file — never a silent reset.
// An operation resolves, and its watches fire, only after its change is durable.
// Ephemeral nodes live in memory only, owned by this store's session: they vanish on close and are
// absent after a reopen (as a ZooKeeper session that ended). Watches are one-shot, as ZooKeeper's.
// Zxids as ZooKeeper's: (epoch << 32) | counter, one per committed multi; the epoch is one more than the
// snapshot's at every open (the snapshot written at open records it), so a zxid — a node's czxid/mzxid,
// the broker epoch — is larger than every earlier one, across reopens too. Files written before zxids
// existed load with czxid = mzxid = 0 and epoch 0. The session never expires: state-change handlers are
// kept and never called.
// Out of space (ENOSPC/EDQUOT): a journal write that fails is cut off again (no torn line stays in front of
// later ones) and its lines stay pending for the next write, so memory and disk converge once space is
// back; the compaction at open is skipped when the disk is full and the current journal is appended to.

import { randomBytes } from "node:crypto";
import { type FileHandle, mkdir, open, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomicallyAsync } from "../../common/atomic-file.js";
import { Logger } from "../../common/logger.js";
import type { Time } from "../../common/time.js";
import {
  BadVersionError,
  type CreateOptions,
  type MetadataStore,
  MetadataStoreError,
  type NodeData,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  type Op,
  type OpResult,
  parentOf,
  type Stat,
  type StateChangeHandler,
  validatePath,
  type WatchEvent,
  type Watcher,
} from "./metadata-store.js";

export const METADATA_FILE_NAME = "__tributary_metadata.json";
export const METADATA_JOURNAL_NAME = "__tributary_metadata.log";
const FORMAT = "tributary-metadata";
const JOURNAL_FORMAT = "tributary-metadata-journal";
const FORMAT_VERSION = 1;
/** The journal is folded into the snapshot once it exceeds max(this, the snapshot's size). */
const JOURNAL_COMPACT_MIN_BYTES = 4 * 1024 * 1024;

/** The metadata file cannot be read; the message is one line naming the file and what is wrong. */
export class MetadataStoreCorruptError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: corrupt metadata store (${reason}); move it away to start with an empty store`);
    this.name = "MetadataStoreCorruptError";
  }
}

interface ZNode {
  readonly data: Buffer;
  readonly version: number;
  readonly cversion: number;
  readonly ctime: number;
  readonly mtime: number;
  readonly ephemeralOwner: bigint;
  readonly czxid: bigint;
  readonly mzxid: bigint;
}

interface FileNode {
  path: string;
  data: string;
  version: number;
  cversion: number;
  ctime: number;
  mtime: number;
  /** Absent in files written before zxids were kept (read as 0). */
  czxid?: number;
  mzxid?: number;
}

/** A journal record: the node's new state, or its deletion. */
type JournalRecord = FileNode | { path: string; deleted: true };

export class EmbeddedMetadataStore implements MetadataStore {
  readonly sessionId: bigint;
  private readonly nodes = new Map<string, ZNode>();
  private readonly children = new Map<string, Set<string>>();
  private readonly dataWatches = new Map<string, Set<Watcher>>();
  private readonly childWatches = new Map<string, Set<Watcher>>();
  private closed = false;
  private dirtyGen = 0;
  private writtenGen = 0;
  private writing: Promise<void> | null = null;
  private readonly fileText = new WeakMap<ZNode, string>();
  readonly journalFile: string;
  private journal: FileHandle | undefined;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private generation = 0;
  private pendingLines: string[] = [];
  private journalCompactBytes = JOURNAL_COMPACT_MIN_BYTES;
  /** This run's zxid epoch (high 32 bits) and the last zxid handed out. */
  private epoch = 0n;
  private lastZxid = 0n;
  private readonly stateChangeHandlers = new Map<string, StateChangeHandler>();

  private constructor(
    readonly file: string,
    private readonly time: Time,
  ) {
    this.sessionId = (BigInt(time.milliseconds()) << 16n) | BigInt(randomBytes(2).readUInt16BE(0));
    this.journalFile = join(dirname(file), METADATA_JOURNAL_NAME);
    this.putNode("/", {
      data: Buffer.alloc(0),
      version: 0,
      cversion: 0,
      ctime: 0,
      mtime: 0,
      ephemeralOwner: 0n,
      czxid: 0n,
      mzxid: 0n,
    });
  }

  /**
   * Opens (or creates) the store in `dir` (`<dir>/__tributary_metadata.json` and `.log`).
   * `journalCompactBytes`: fold the journal into the snapshot once it exceeds max(this, snapshot size).
   */
  static async open(
    dir: string,
    time: Time,
    options: { readonly journalCompactBytes?: number } = {},
  ): Promise<EmbeddedMetadataStore> {
    await mkdir(dir, { recursive: true });
    const store = new EmbeddedMetadataStore(join(dir, METADATA_FILE_NAME), time);
    store.journalCompactBytes = options.journalCompactBytes ?? JOURNAL_COMPACT_MIN_BYTES;
    await store.load();
    try {
      await store.compact(); // records the new epoch before any write of this run
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== "ENOSPC" && code !== "EDQUOT") || !(await store.reopenJournal())) throw e;
      new Logger("tributary.metadata.EmbeddedMetadataStore").warn(
        `The disk of ${dir} is full (${(e as Error).message}): the metadata journal is appended to without compacting it first`,
      );
    }
    return store;
  }

  /**
   * A full disk at open: appends to the journal of the loaded generation instead of compacting (its torn
   * last line cut off first). False when there is no such journal to append to.
   */
  private async reopenJournal(): Promise<boolean> {
    const text = await readIfExists(this.journalFile);
    if (text === undefined) return false;
    const firstNewline = text.indexOf("\n");
    if (firstNewline < 0) return false;
    try {
      const header = JSON.parse(text.slice(0, firstNewline)) as { generation?: unknown };
      if (header.generation !== this.generation) return false;
    } catch {
      return false;
    }
    const whole = Buffer.byteLength(text.slice(0, text.lastIndexOf("\n") + 1), "utf8");
    const fh = await open(this.journalFile, "r+");
    await fh.truncate(whole);
    await fh.close();
    this.journal = await open(this.journalFile, "a");
    this.journalBytes = whole - Buffer.byteLength(text.slice(0, firstNewline + 1), "utf8");
    return true;
  }

  private async load(): Promise<void> {
    await rm(`${this.file}.tmp`, { force: true });
    await rm(`${this.journalFile}.tmp`, { force: true });
    const text = await readIfExists(this.file);
    const loaded = new Map<string, ZNode>();
    if (text !== undefined) {
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch {
        throw new MetadataStoreCorruptError(this.file, "not valid JSON");
      }
      const d = doc as {
        format?: unknown;
        version?: unknown;
        generation?: unknown;
        epoch?: unknown;
        nodes?: unknown;
      };
      if (typeof d !== "object" || d === null || d.format !== FORMAT) {
        throw new MetadataStoreCorruptError(this.file, `expected "format":"${FORMAT}"`);
      }
      if (d.version !== FORMAT_VERSION) {
        throw new MetadataStoreCorruptError(this.file, `unsupported version ${JSON.stringify(d.version)}`);
      }
      if (!Array.isArray(d.nodes)) throw new MetadataStoreCorruptError(this.file, `"nodes" is not an array`);
      this.generation = Number.isSafeInteger(d.generation) ? (d.generation as number) : 0;
      if (d.epoch !== undefined && !(Number.isSafeInteger(d.epoch) && (d.epoch as number) >= 0)) {
        throw new MetadataStoreCorruptError(this.file, `bad "epoch" ${JSON.stringify(d.epoch)}`);
      }
      this.epoch = BigInt((d.epoch as number | undefined) ?? 0);
      for (const raw of d.nodes as FileNode[]) {
        const [path, node] = this.parseNode(this.file, raw);
        loaded.set(path, node);
      }
    }
    const journal = await readIfExists(this.journalFile);
    if (journal !== undefined) this.replayJournal(journal, loaded);
    // A new epoch above every zxid seen: this run's zxids are larger than all earlier ones.
    let maxZxid = this.epoch << 32n;
    for (const n of loaded.values()) for (const z of [n.czxid, n.mzxid]) if (z > maxZxid) maxZxid = z;
    this.epoch = (maxZxid >> 32n) + 1n;
    this.lastZxid = this.epoch << 32n;
    // Parents before children.
    const entries = [...loaded.entries()].sort((a, b) => a[0].split("/").length - b[0].split("/").length);
    for (const [path, node] of entries) {
      if (path !== "/" && !this.nodes.has(parentOf(path))) {
        throw new MetadataStoreCorruptError(this.file, `node ${path} has no parent`);
      }
      this.putNode(path, node);
    }
  }

  private parseNode(file: string, raw: FileNode): [string, ZNode] {
    const ok =
      typeof raw === "object" &&
      raw !== null &&
      typeof raw.path === "string" &&
      typeof raw.data === "string" &&
      [raw.version, raw.cversion, raw.ctime, raw.mtime].every((n) => Number.isSafeInteger(n)) &&
      [raw.czxid, raw.mzxid].every((n) => n === undefined || (Number.isSafeInteger(n) && n >= 0));
    if (!ok) throw new MetadataStoreCorruptError(file, `bad node entry ${JSON.stringify(raw).slice(0, 200)}`);
    try {
      validatePath(raw.path);
    } catch {
      throw new MetadataStoreCorruptError(file, `bad node path ${JSON.stringify(raw.path)}`);
    }
    return [
      raw.path,
      {
        data: Buffer.from(raw.data, "base64"),
        version: raw.version,
        cversion: raw.cversion,
        ctime: raw.ctime,
        mtime: raw.mtime,
        ephemeralOwner: 0n,
        czxid: BigInt(raw.czxid ?? 0),
        mzxid: BigInt(raw.mzxid ?? 0),
      },
    ];
  }

  /** Applies the journal's records over the snapshot (a journal of an older generation is ignored). */
  private replayJournal(text: string, nodes: Map<string, ZNode>): void {
    const lines = text.split("\n");
    // A last line without its newline is a write that never completed: it was never acknowledged.
    if (lines.length > 0) lines.pop();
    if (lines.length === 0) return;
    let header: { format?: unknown; generation?: unknown };
    try {
      header = JSON.parse(lines[0]);
    } catch {
      throw new MetadataStoreCorruptError(this.journalFile, "bad header line");
    }
    if (header?.format !== JOURNAL_FORMAT || !Number.isSafeInteger(header.generation)) {
      throw new MetadataStoreCorruptError(this.journalFile, `expected a "${JOURNAL_FORMAT}" header`);
    }
    const gen = header.generation as number;
    if (gen < this.generation) return; // folded into the snapshot already
    if (gen > this.generation) {
      throw new MetadataStoreCorruptError(
        this.journalFile,
        `generation ${gen} is newer than the snapshot's ${this.generation}`,
      );
    }
    for (let i = 1; i < lines.length; i++) {
      let records: JournalRecord[];
      try {
        records = JSON.parse(lines[i]);
        if (!Array.isArray(records)) throw new Error("not an array");
      } catch {
        throw new MetadataStoreCorruptError(this.journalFile, `bad record on line ${i + 1}`);
      }
      for (const r of records) {
        if ("deleted" in r) nodes.delete(r.path);
        else {
          const [path, node] = this.parseNode(this.journalFile, r);
          nodes.set(path, node);
        }
      }
    }
  }

  // ---- reads ----

  async get(path: string, watcher?: Watcher): Promise<NodeData | undefined> {
    this.checkOpen();
    validatePath(path);
    const node = this.nodes.get(path);
    if (!node) return undefined;
    if (watcher) addWatch(this.dataWatches, path, watcher);
    return { data: Buffer.from(node.data), stat: this.statOf(path, node) };
  }

  async exists(path: string, watcher?: Watcher): Promise<Stat | undefined> {
    this.checkOpen();
    validatePath(path);
    const node = this.nodes.get(path);
    if (watcher) addWatch(this.dataWatches, path, watcher);
    return node ? this.statOf(path, node) : undefined;
  }

  async getChildren(path: string, watcher?: Watcher): Promise<string[]> {
    this.checkOpen();
    validatePath(path);
    if (!this.nodes.has(path)) throw new NoNodeError(path);
    if (watcher) addWatch(this.childWatches, path, watcher);
    return [...(this.children.get(path) ?? [])].sort();
  }

  // ---- writes ----

  async create(path: string, data: Buffer, options: CreateOptions = {}): Promise<string> {
    const [r] = await this.multi([{ type: "create", path, data, options }]);
    return (r as { path: string }).path;
  }

  async set(path: string, data: Buffer, expectedVersion?: number): Promise<Stat> {
    const [r] = await this.multi([{ type: "set", path, data, version: expectedVersion }]);
    return (r as { stat: Stat }).stat;
  }

  async delete(path: string, expectedVersion?: number, options: { recursive?: boolean } = {}): Promise<void> {
    this.checkOpen();
    validatePath(path);
    if (!options.recursive) {
      await this.multi([{ type: "delete", path, version: expectedVersion }]);
      return;
    }
    if (!this.nodes.has(path)) throw new NoNodeError(path);
    const ops: Op[] = [];
    const visit = (p: string): void => {
      for (const c of this.children.get(p) ?? []) visit(p === "/" ? `/${c}` : `${p}/${c}`);
      ops.push({ type: "delete", path: p, version: p === path ? expectedVersion : undefined });
    };
    visit(path);
    await this.multi(ops);
  }

  async multi(ops: readonly Op[]): Promise<OpResult[]> {
    this.checkOpen();
    for (const op of ops) {
      validatePath(op.path);
      if ((op.type === "create" || op.type === "set") && !Buffer.isBuffer(op.data)) {
        throw new MetadataStoreError("BadArguments", op.path, `data for ${op.path} must be a Buffer`);
      }
    }
    const now = this.time.milliseconds();
    // One zxid per transaction (taken only if the multi commits: a failed one leaves no trace).
    const zxid = this.lastZxid + 1n;
    // Stage every op in an overlay over the current tree; commit only if all succeed.
    const overlay = new Map<string, ZNode | null>();
    const addedKids = new Map<string, Set<string>>();
    const removedKids = new Map<string, Set<string>>();
    const view = (p: string): ZNode | undefined => {
      if (overlay.has(p)) return overlay.get(p) ?? undefined;
      return this.nodes.get(p);
    };
    const childCount = (p: string): number => {
      let n = 0;
      for (const c of this.children.get(p) ?? []) if (!removedKids.get(p)?.has(c)) n++;
      return n + (addedKids.get(p)?.size ?? 0);
    };
    const events: WatchEvent[] = [];
    const results: OpResult[] = [];
    let persistentChange = false;
    for (const op of ops) {
      switch (op.type) {
        case "create": {
          if (op.path === "/") throw new NodeExistsError("/");
          const parentPath = parentOf(op.path);
          const parent = view(parentPath);
          if (!parent) throw new NoNodeError(op.path);
          if (parent.ephemeralOwner !== 0n) {
            throw new MetadataStoreError("NoChildrenForEphemerals", op.path);
          }
          const path = op.options?.sequential
            ? `${op.path}${String(parent.cversion).padStart(10, "0")}`
            : op.path;
          if (view(path)) throw new NodeExistsError(path);
          const ephemeral = op.options?.ephemeral === true;
          overlay.set(path, {
            data: Buffer.from(op.data),
            version: 0,
            cversion: 0,
            ctime: now,
            mtime: now,
            ephemeralOwner: ephemeral ? this.sessionId : 0n,
            czxid: zxid,
            mzxid: zxid,
          });
          overlay.set(parentPath, { ...parent, cversion: parent.cversion + 1 });
          const name = path.slice(path.lastIndexOf("/") + 1);
          if (removedKids.get(parentPath)?.has(name)) removedKids.get(parentPath)!.delete(name);
          else getOrAdd(addedKids, parentPath).add(name);
          if (!ephemeral) persistentChange = true;
          persistentChange ||= parent.ephemeralOwner === 0n;
          events.push({ type: "NodeCreated", path }, { type: "NodeChildrenChanged", path: parentPath });
          results.push({ type: "create", path });
          break;
        }
        case "set": {
          const node = view(op.path);
          if (!node) throw new NoNodeError(op.path);
          if (op.version !== undefined && op.version !== -1 && op.version !== node.version) {
            throw new BadVersionError(op.path);
          }
          const next = {
            ...node,
            data: Buffer.from(op.data),
            version: node.version + 1,
            mtime: now,
            mzxid: zxid,
          };
          overlay.set(op.path, next);
          if (node.ephemeralOwner === 0n) persistentChange = true;
          events.push({ type: "NodeDataChanged", path: op.path });
          results.push({ type: "set", stat: this.statOf(op.path, next, childCount(op.path)) });
          break;
        }
        case "delete": {
          if (op.path === "/") throw new MetadataStoreError("BadArguments", "/", "cannot delete /");
          const node = view(op.path);
          if (!node) throw new NoNodeError(op.path);
          if (op.version !== undefined && op.version !== -1 && op.version !== node.version) {
            throw new BadVersionError(op.path);
          }
          if (childCount(op.path) > 0) throw new NotEmptyError(op.path);
          const parentPath = parentOf(op.path);
          const parent = view(parentPath)!;
          overlay.set(op.path, null);
          overlay.set(parentPath, { ...parent, cversion: parent.cversion + 1 });
          const name = op.path.slice(op.path.lastIndexOf("/") + 1);
          if (addedKids.get(parentPath)?.has(name)) addedKids.get(parentPath)!.delete(name);
          else getOrAdd(removedKids, parentPath).add(name);
          persistentChange = true;
          events.push(
            { type: "NodeDeleted", path: op.path },
            { type: "NodeChildrenChanged", path: parentPath },
          );
          results.push({ type: "delete" });
          break;
        }
        case "check": {
          const node = view(op.path);
          if (!node) throw new NoNodeError(op.path);
          if (op.version !== -1 && op.version !== node.version) throw new BadVersionError(op.path);
          results.push({ type: "check" });
          break;
        }
      }
    }
    if (ops.some((op) => op.type !== "check")) this.lastZxid = zxid;
    // Commit: deletions deepest first, then creations parents first.
    const entries = [...overlay.entries()].sort((a, b) => a[0].split("/").length - b[0].split("/").length);
    const records: string[] = [];
    for (const [p, n] of [...entries].reverse()) {
      if (n !== null) continue;
      if (this.nodes.get(p)?.ephemeralOwner === 0n) records.push(JSON.stringify({ path: p, deleted: true }));
      this.removeNode(p);
    }
    for (const [p, n] of entries) {
      if (n === null) continue;
      this.putNode(p, n);
      if (n.ephemeralOwner === 0n) records.push(this.nodeText(p, n));
    }
    if (records.length > 0) this.pendingLines.push(`[${records.join(",")}]\n`);
    if (persistentChange) await this.persist();
    this.fire(events);
    return results;
  }

  registerStateChangeHandler(handler: StateChangeHandler): void {
    // The embedded session never expires: kept for symmetry with the ZooKeeper store, never called.
    this.stateChangeHandlers.set(handler.name, handler);
  }

  unregisterStateChangeHandler(name: string): void {
    this.stateChangeHandlers.delete(name);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.stateChangeHandlers.clear();
    // Ephemeral nodes end with the session.
    const ephemerals = [...this.nodes.entries()].filter(([, n]) => n.ephemeralOwner === this.sessionId);
    for (const [p] of ephemerals) this.removeNode(p);
    this.closed = true;
    this.dataWatches.clear();
    this.childWatches.clear();
    while (this.writing) await this.writing.catch(() => {});
    await this.journal?.close();
    this.journal = undefined;
  }

  // ---- internals ----

  private checkOpen(): void {
    if (this.closed) throw new MetadataStoreError("SessionExpired", "/", "the metadata store is closed");
  }

  private statOf(path: string, node: ZNode, numChildren?: number): Stat {
    return {
      version: node.version,
      cversion: node.cversion,
      ctime: node.ctime,
      mtime: node.mtime,
      ephemeralOwner: node.ephemeralOwner,
      czxid: node.czxid,
      mzxid: node.mzxid,
      numChildren: numChildren ?? this.children.get(path)?.size ?? 0,
      dataLength: node.data.length,
    };
  }

  private putNode(path: string, node: ZNode): void {
    const isNew = !this.nodes.has(path);
    this.nodes.set(path, node);
    if (isNew && path !== "/")
      getOrAdd(this.children, parentOf(path)).add(path.slice(path.lastIndexOf("/") + 1));
  }

  private removeNode(path: string): void {
    this.nodes.delete(path);
    this.children.delete(path);
    this.children.get(parentOf(path))?.delete(path.slice(path.lastIndexOf("/") + 1));
  }

  private fire(events: readonly WatchEvent[]): void {
    const due: Array<[Watcher, WatchEvent]> = [];
    for (const ev of events) {
      const table = ev.type === "NodeChildrenChanged" ? this.childWatches : this.dataWatches;
      const set = table.get(ev.path);
      if (set) {
        table.delete(ev.path);
        for (const w of set) due.push([w, ev]);
      }
      if (ev.type === "NodeDeleted") {
        // A deleted node's child watchers hear NodeDeleted too (as ZooKeeper).
        const kids = this.childWatches.get(ev.path);
        if (kids) {
          this.childWatches.delete(ev.path);
          for (const w of kids) due.push([w, ev]);
        }
      }
    }
    for (const [w, ev] of due) {
      queueMicrotask(() => {
        if (!this.closed) w(ev);
      });
    }
  }

  /** Resolves when the current in-memory state (or a later one) is on disk. */
  private async persist(): Promise<void> {
    const myGen = ++this.dirtyGen;
    while (this.writtenGen < myGen) {
      if (this.writing) {
        await this.writing;
        continue;
      }
      const gen = this.dirtyGen;
      this.writing = this.flushJournal().finally(() => {
        this.writing = null;
      });
      await this.writing;
      this.writtenGen = gen;
    }
  }

  private nodeText(path: string, n: ZNode): string {
    let text = this.fileText.get(n);
    if (text === undefined) {
      const entry: FileNode = {
        path,
        data: n.data.toString("base64"),
        version: n.version,
        cversion: n.cversion,
        ctime: n.ctime,
        mtime: n.mtime,
        czxid: Number(n.czxid),
        mzxid: Number(n.mzxid),
      };
      text = JSON.stringify(entry);
      this.fileText.set(n, text);
    }
    return text;
  }

  /** Appends the pending journal lines and fsyncs them; folds the journal into the snapshot when large. */
  private async flushJournal(): Promise<void> {
    const lines = this.pendingLines;
    this.pendingLines = [];
    if (lines.length > 0 && this.journal) {
      const buf = Buffer.from(lines.join(""), "utf8");
      const journal = this.journal;
      const size = (await journal.stat()).size;
      try {
        await journal.write(buf, 0, buf.length);
        await journal.datasync();
      } catch (e) {
        // No torn line may stay in front of later lines; these go with the next write.
        this.pendingLines = [...lines, ...this.pendingLines];
        await journal.truncate(size).catch(() => {});
        throw e;
      }
      this.journalBytes += buf.length;
    }
    if (this.journalBytes > Math.max(this.journalCompactBytes, this.snapshotBytes)) await this.compact();
  }

  /** Writes a snapshot of the next generation, then starts an empty journal of that generation. */
  private async compact(): Promise<void> {
    const gen = this.generation + 1;
    // Each node's JSON is computed once per version (nodes are immutable records).
    const parts: string[] = [];
    for (const [path, n] of this.nodes) if (n.ephemeralOwner === 0n) parts.push(this.nodeText(path, n));
    const text = `{"format":"${FORMAT}","version":${FORMAT_VERSION},"generation":${gen},"epoch":${this.epoch},"nodes":[\n${parts.join(",\n")}\n]}\n`;
    await writeFileAtomicallyAsync(this.file, text);
    this.snapshotBytes = text.length;
    this.generation = gen;
    await this.journal?.close();
    this.journal = undefined;
    const header = `${JSON.stringify({ format: JOURNAL_FORMAT, generation: gen })}\n`;
    await writeFileAtomicallyAsync(this.journalFile, header);
    this.journal = await open(this.journalFile, "a");
    this.journalBytes = 0;
    // Lines committed while the snapshot was written stay pending: they go to the new journal (replaying
    // full node records in order over a snapshot that may already hold them converges to the same state).
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

function addWatch(table: Map<string, Set<Watcher>>, path: string, w: Watcher): void {
  getOrAdd(table, path).add(w);
}

function getOrAdd<K, V>(map: Map<K, Set<V>>, key: K): Set<V> {
  let s = map.get(key);
  if (!s) {
    s = new Set();
    map.set(key, s);
  }
  return s;
}
