// AclAuthorizer: Kafka's kafka.security.authorizer.AclAuthorizer (ZooKeeper mode) on the metadata store.
// Owns the broker's ACL cache (every resource pattern with its entries, loaded at startup), the decision
// for one action, the ACL writes of CreateAcls / DeleteAcls, and following the change notifications so
// an ACL written through any broker of the cluster applies here within moments.
//
// The decision, as Kafka's authorizeAction: a super user (`super.users`) may do anything; otherwise the
// entries of the literal pattern of that name, the literal `*` of the type and every prefixed pattern the
// name starts with are the matching ACLs. None: `allow.everyone.if.no.acl.found` decides. Else a DENY
// entry for the principal (or User:*), the host (or *) and the operation (or ALL) refuses; an ALLOW entry
// permits — where DESCRIBE is implied by READ, WRITE, DELETE and ALTER, and DESCRIBE_CONFIGS by
// ALTER_CONFIGS. Decisions are logged on kafka.authorizer.logger (denials of requested resources at INFO).
//
// Following changes, as Kafka's AclAuthorizer with its two ZkNodeChangeNotificationListeners: each batch
// of new notices (only those after the last one processed, in sequence order) re-reads each resource it
// names once; notices older than 15 minutes are deleted after the batch. At start and on a new ZooKeeper
// session the newest stored notice is noted first, then every ACL is loaded: later notices are followed.

import {
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  bindingInvalidReason,
  camelName,
  entryFilterMatches,
  entryKey,
  Operation,
  operationName,
  PatternType,
  Permission,
  patternFilterIsExact,
  patternFilterMatches,
  patternKey,
  type ResourcePattern,
  type ResourcePatternFilter,
  resourceTypeName,
  WILDCARD_HOST,
  WILDCARD_PRINCIPAL,
  WILDCARD_RESOURCE,
} from "../../../common/acl-binding.js";
import { Logger, logLevelEnabled } from "../../../common/logger.js";
import { mapConcurrent } from "../../../common/map-concurrent.js";
import type { Scheduler } from "../../../common/scheduler.js";
import type { Time } from "../../../common/time.js";
import {
  ensurePath,
  type MetadataStore,
  MetadataStoreError,
  type StateChangeHandler,
} from "../../metadata/metadata-store.js";
import {
  type ChangeNotification,
  ZkNodeChangeNotificationListener,
} from "../../metadata/zk-node-change-notification-listener.js";
import { ANONYMOUS_PRINCIPAL } from "../kafka-principal.js";
import {
  ACL_CHANGE_PREFIX,
  ACL_PATHS,
  changePathPrefix,
  decodeChange,
  encodeAcls,
  encodeChange,
  readAcls,
  readAllAcls,
  resourcePath,
  type VersionedAcls,
} from "./zk-acl-store.js";

/** The two authorizer class names Kafka has had (ZooKeeper and KRaft mode); either selects this one. */
export const AUTHORIZER_CLASS_NAMES: readonly string[] = [
  "kafka.security.authorizer.AclAuthorizer",
  "kafka.security.auth.SimpleAclAuthorizer",
  "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
];

/** Who asks: the request's principal, the client's address and the API (for the log line). */
export interface AuthorizableRequestContext {
  /** Absent: User:ANONYMOUS. */
  readonly principal?: string;
  readonly clientAddress: string;
  readonly api: { readonly name: string };
}

export interface AclAuthorizerConfig {
  /** `super.users`: principals allowed everything. */
  readonly superUsers: ReadonlySet<string>;
  /** `allow.everyone.if.no.acl.found`. */
  readonly allowEveryoneIfNoAclFound: boolean;
}

/** A create's outcome: undefined on success, else the error code name and message. */
export type AclCreateResult =
  | { readonly error: "INVALID_REQUEST" | "UNKNOWN_SERVER_ERROR"; readonly message: string }
  | undefined;

export interface AclDeleteResult {
  readonly deleted: Array<{ binding: AclBinding; error?: string }>;
}

/** "127.0.0.1:53412" → "127.0.0.1"; "::ffff:127.0.0.1:5" → "127.0.0.1"; "[::1]:5" / "::1:5" → "::1". */
export function hostOf(clientAddress: string): string {
  const i = clientAddress.lastIndexOf(":");
  let host = i > 0 ? clientAddress.slice(0, i) : clientAddress;
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host.startsWith("::ffff:") && host.includes(".")) host = host.slice(7);
  return host;
}

/** `super.users`: semicolon-separated principals ("User:admin;User:broker"). */
export function parseSuperUsers(value: string): Set<string> {
  return new Set(
    value
      .split(";")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
  );
}

const MAX_UPDATE_RETRIES = 10;
/** Resource znodes read at once when a batch of notices names many. */
const MAX_IN_FLIGHT = 64;

interface CachedAcls {
  readonly pattern: ResourcePattern;
  readonly entries: readonly AccessControlEntry[];
  readonly version: number;
}

export class AclAuthorizer {
  private readonly log = new Logger("kafka.security.authorizer.AclAuthorizer");
  private readonly authorizerLog = new Logger("kafka.authorizer.logger");
  private cache = new Map<string, CachedAcls>();
  /** ACL writes, loads and notification batches, one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly changeListeners: ZkNodeChangeNotificationListener[];

  constructor(
    private readonly store: MetadataStore,
    private readonly config: AclAuthorizerConfig,
    time: Time,
    private readonly scheduler: Scheduler,
  ) {
    this.changeListeners = [ACL_PATHS.literalChanges, ACL_PATHS.extendedChanges].map(
      (root) =>
        new ZkNodeChangeNotificationListener({
          store,
          seqNodeRoot: root,
          seqNodePrefix: ACL_CHANGE_PREFIX,
          handler: (batch) => this.processAclChanges(root === ACL_PATHS.literalChanges, batch),
          run: (task) => this.serialized(task),
          time,
          scheduler,
          log: this.log,
        }),
    );
  }

  /** Creates the ACL paths, loads the cache and starts following the change notifications. */
  async start(): Promise<void> {
    for (const p of [
      ACL_PATHS.literal,
      `${ACL_PATHS.extended}/prefixed`,
      ACL_PATHS.literalChanges,
      ACL_PATHS.extendedChanges,
    ])
      await ensurePath(this.store, p);
    await this.serialized(() => this.startFromNewestNotice());
    const handler: StateChangeHandler = {
      name: "acl-authorizer",
      // The watches went with the old session, and notices may have expired meanwhile: load it all again.
      afterInitializingSession: () => this.serialized(() => this.startFromNewestNotice()),
    };
    this.store.registerStateChangeHandler(handler);
    this.log.info(`Loaded ${this.cache.size} resource patterns with ACLs`);
  }

  close(): void {
    for (const l of this.changeListeners) l.close();
    this.store.unregisterStateChangeHandler("acl-authorizer");
  }

  /**
   * The newest stored notice first (arming the watches), then every ACL: a change written before the
   * listing is in what is loaded, and one written after has a later notice, which is followed.
   */
  private async startFromNewestNotice(): Promise<void> {
    for (const l of this.changeListeners) await l.init();
    await this.loadCache();
  }

  private async loadCache(): Promise<void> {
    const next = new Map<string, CachedAcls>();
    for (const { pattern, acls } of await readAllAcls(this.store))
      if (acls.entries.length > 0) next.set(patternKey(pattern), { pattern, ...acls });
    this.cache = next;
  }

  isSuperUser(principal: string): boolean {
    return this.config.superUsers.has(principal);
  }

  /**
   * May `ctx` do `operation` on the literal resource `type`/`name`? `logIfDenied` false for checks that
   * only filter (authorized operations, topics listed without being asked for): logged at DEBUG then.
   */
  authorize(
    ctx: AuthorizableRequestContext,
    operation: number,
    resourceType: number,
    name: string,
    logIfDenied = true,
    logIfAllowed = true,
  ): boolean {
    const principal = ctx.principal ?? ANONYMOUS_PRINCIPAL;
    const host = hostOf(ctx.clientAddress);
    const allowed =
      this.isSuperUser(principal) || this.aclsAllow(principal, host, operation, resourceType, name);
    this.logDecision(ctx, principal, host, operation, resourceType, name, allowed, logIfDenied, logIfAllowed);
    return allowed;
  }

  private aclsAllow(
    principal: string,
    host: string,
    op: number,
    resourceType: number,
    name: string,
  ): boolean {
    const acls = this.matchingAcls(resourceType, name);
    if (acls.length === 0) return this.config.allowEveryoneIfNoAclFound;
    const matches = (e: AccessControlEntry, permission: number, wanted: number): boolean =>
      e.permissionType === permission &&
      (e.principal === principal || e.principal === WILDCARD_PRINCIPAL) &&
      (e.operation === wanted || e.operation === Operation.ALL) &&
      (e.host === WILDCARD_HOST || e.host === host);
    if (acls.some((e) => matches(e, Permission.DENY, op))) return false;
    const allowOps =
      op === Operation.DESCRIBE
        ? [Operation.DESCRIBE, Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER]
        : op === Operation.DESCRIBE_CONFIGS
          ? [Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS]
          : [op];
    return allowOps.some((o) => acls.some((e) => matches(e, Permission.ALLOW, o)));
  }

  /** The entries of `*`, of the literal name and of every prefixed pattern the name starts with. */
  private matchingAcls(resourceType: number, name: string): AccessControlEntry[] {
    const out: AccessControlEntry[] = [];
    const add = (name: string, patternType: number): void => {
      const c = this.cache.get(patternKey({ resourceType, name, patternType }));
      if (c !== undefined) out.push(...c.entries);
    };
    add(WILDCARD_RESOURCE, PatternType.LITERAL);
    if (name !== WILDCARD_RESOURCE) add(name, PatternType.LITERAL);
    for (let len = 1; len <= name.length; len++) add(name.slice(0, len), PatternType.PREFIXED);
    return out;
  }

  /**
   * Kafka's authorizeByResourceType: may `ctx` do `operation` on some resource of the type (an ALLOW on
   * any pattern not outweighed by a DENY)? Used for idempotent producers without IDEMPOTENT_WRITE (KIP-679).
   */
  authorizeByResourceType(ctx: AuthorizableRequestContext, operation: number, resourceType: number): boolean {
    const principal = ctx.principal ?? ANONYMOUS_PRINCIPAL;
    if (this.isSuperUser(principal)) return true;
    const host = hostOf(ctx.clientAddress);
    const applies = (e: AccessControlEntry, permission: number): boolean =>
      e.permissionType === permission &&
      (e.principal === principal || e.principal === WILDCARD_PRINCIPAL) &&
      (e.operation === operation || e.operation === Operation.ALL) &&
      (e.host === WILDCARD_HOST || e.host === host);
    const denyLiterals = new Set<string>();
    const denyPrefixes = new Set<string>();
    const allows: ResourcePattern[] = [];
    for (const c of this.cache.values()) {
      if (c.pattern.resourceType !== resourceType) continue;
      if (c.entries.some((e) => applies(e, Permission.DENY)))
        (c.pattern.patternType === PatternType.LITERAL ? denyLiterals : denyPrefixes).add(c.pattern.name);
      if (c.entries.some((e) => applies(e, Permission.ALLOW))) allows.push(c.pattern);
    }
    let allowed: boolean;
    if (denyLiterals.has(WILDCARD_RESOURCE)) allowed = false;
    else if (this.config.allowEveryoneIfNoAclFound) allowed = true;
    else {
      const prefixDenied = (name: string): boolean => {
        for (let len = 0; len <= name.length; len++) if (denyPrefixes.has(name.slice(0, len))) return true;
        return false;
      };
      allowed = allows.some((p) =>
        p.patternType === PatternType.PREFIXED
          ? !prefixDenied(p.name)
          : p.name === WILDCARD_RESOURCE || (!denyLiterals.has(p.name) && !prefixDenied(p.name)),
      );
    }
    this.logDecision(ctx, principal, host, operation, resourceType, "NONE", allowed, true, true, "UNKNOWN");
    return allowed;
  }

  private logDecision(
    ctx: AuthorizableRequestContext,
    principal: string,
    host: string,
    operation: number,
    resourceType: number,
    name: string,
    allowed: boolean,
    logIfDenied: boolean,
    logIfAllowed: boolean,
    patternType = "LITERAL",
  ): void {
    const line = (): string =>
      `Principal = ${principal} is ${allowed ? "Allowed" : "Denied"} Operation = ${camelName(operationName(operation))} from host = ${host} on resource = ${camelName(resourceTypeName(resourceType))}:${patternType}:${name} for request = ${ctx.api.name} with resourceRefCount = 1`;
    // Denials of what a request named at INFO; allowed decisions (and filtering denials) at DEBUG.
    if (!allowed && logIfDenied) this.authorizerLog.info(line());
    else if ((!allowed || logIfAllowed) && logLevelEnabled("DEBUG")) this.authorizerLog.debug(line());
  }

  // ---- ACL administration (CreateAcls, DescribeAcls, DeleteAcls) ----

  /** Every cached binding matching the filter. */
  acls(filter: AclBindingFilter): AclBinding[] {
    const out: AclBinding[] = [];
    for (const c of this.cache.values()) {
      if (!patternFilterMatches(filter.pattern, c.pattern)) continue;
      for (const e of c.entries)
        if (entryFilterMatches(filter.entry, e)) out.push({ pattern: c.pattern, entry: e });
    }
    return out;
  }

  /** Adds the bindings (results in request order). */
  createAcls(bindings: readonly AclBinding[]): Promise<AclCreateResult[]> {
    return this.serialized(async () => {
      const results: AclCreateResult[] = new Array(bindings.length).fill(undefined);
      const byPattern = new Map<
        string,
        { pattern: ResourcePattern; items: Array<{ entry: AccessControlEntry; index: number }> }
      >();
      bindings.forEach((b, index) => {
        const invalid = bindingInvalidReason(b);
        if (invalid !== undefined) {
          results[index] = { error: "INVALID_REQUEST", message: `Failed to create ACL: ${invalid}` };
          return;
        }
        const k = patternKey(b.pattern);
        let g = byPattern.get(k);
        if (g === undefined) {
          g = { pattern: b.pattern, items: [] };
          byPattern.set(k, g);
        }
        g.items.push({ entry: b.entry, index });
      });
      for (const { pattern, items } of byPattern.values()) {
        try {
          await this.updateResourceAcls(pattern, (current) => {
            const next = new Map(current.map((e) => [entryKey(e), e]));
            for (const { entry } of items) next.set(entryKey(entry), entry);
            return [...next.values()];
          });
        } catch (e) {
          for (const { index } of items)
            results[index] = { error: "UNKNOWN_SERVER_ERROR", message: (e as Error).message };
        }
      }
      return results;
    });
  }

  /** Removes what each filter matches; per filter, the bindings it removed. */
  deleteAcls(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]> {
    return this.serialized(async () => {
      const results: AclDeleteResult[] = filters.map(() => ({ deleted: [] }));
      const patterns = new Map<string, ResourcePattern>();
      for (const c of this.cache.values()) patterns.set(patternKey(c.pattern), c.pattern);
      for (const f of filters) for (const p of exactPatterns(f.pattern)) patterns.set(patternKey(p), p);
      for (const pattern of patterns.values()) {
        const matching = filters
          .map((f, index) => ({ f, index }))
          .filter(({ f }) => patternFilterMatches(f.pattern, pattern));
        if (matching.length === 0) continue;
        const removed: Array<{ binding: AclBinding; index: number }> = [];
        try {
          await this.updateResourceAcls(pattern, (current) => {
            removed.length = 0;
            return current.filter((e) => {
              const hit = matching.find(({ f }) => entryFilterMatches(f.entry, e));
              if (hit !== undefined) removed.push({ binding: { pattern, entry: e }, index: hit.index });
              return hit === undefined;
            });
          });
          for (const r of removed) results[r.index].deleted.push({ binding: r.binding });
        } catch (e) {
          for (const r of removed)
            results[r.index].deleted.push({ binding: r.binding, error: (e as Error).message });
        }
      }
      return results;
    });
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Kafka's updateResourceAcls: read, change, write with the znode version (retrying on a concurrent
   * change), delete the znode when no entry is left; then a change notification for every broker.
   */
  private async updateResourceAcls(
    pattern: ResourcePattern,
    change: (current: AccessControlEntry[]) => AccessControlEntry[],
  ): Promise<void> {
    const path = resourcePath(pattern);
    let current: VersionedAcls = await readAcls(this.store, pattern);
    for (let attempt = 0; ; attempt++) {
      const next = change([...current.entries]);
      const same =
        next.length === current.entries.length &&
        next.every((e) => current.entries.some((c) => entryKey(c) === entryKey(e)));
      if (same && current.version >= 0) {
        this.setCached(pattern, current);
        return;
      }
      if (same && next.length === 0) return;
      try {
        let version: number;
        if (next.length === 0) {
          await this.store.delete(path, current.version);
          version = -1;
        } else if (current.version >= 0) {
          version = (await this.store.set(path, encodeAcls(next), current.version)).version;
        } else {
          await ensurePath(this.store, path.slice(0, path.lastIndexOf("/")));
          await this.store.create(path, encodeAcls(next));
          version = 0;
        }
        this.setCached(pattern, { entries: next, version });
        break;
      } catch (e) {
        const retry =
          e instanceof MetadataStoreError && ["BadVersion", "NodeExists", "NoNode"].includes(e.code);
        if (!retry || attempt >= MAX_UPDATE_RETRIES) throw e;
        await new Promise<void>((r) => {
          this.scheduler.schedule("acl-update-retry", r, 100 + Math.floor(Math.random() * 50));
        });
        current = await readAcls(this.store, pattern);
      }
    }
    await this.store.create(changePathPrefix(pattern), encodeChange(pattern), { sequential: true });
  }

  private setCached(pattern: ResourcePattern, acls: VersionedAcls): void {
    const next = new Map(this.cache);
    if (acls.entries.length === 0) next.delete(patternKey(pattern));
    else next.set(patternKey(pattern), { pattern, entries: acls.entries, version: acls.version });
    this.cache = next;
  }

  // ---- change notifications (AclChangedNotificationHandler) ----

  /** A batch of new notices, in sequence order: each resource they name re-read once, the cache swapped once. */
  private async processAclChanges(literal: boolean, batch: readonly ChangeNotification[]): Promise<void> {
    const root = literal ? ACL_PATHS.literalChanges : ACL_PATHS.extendedChanges;
    const patterns = new Map<string, ResourcePattern>();
    for (const n of batch) {
      const pattern = decodeChange(literal, n.data);
      if (pattern === undefined)
        this.log.warn(
          `Ignoring ACL change notification ${root}/${n.name}: cannot read ${JSON.stringify(n.data.toString("utf8"))}`,
        );
      else if (!patterns.has(patternKey(pattern))) patterns.set(patternKey(pattern), pattern);
    }
    const read = await mapConcurrent([...patterns.values()], MAX_IN_FLIGHT, (p) => readAcls(this.store, p));
    const next = new Map(this.cache);
    [...patterns.values()].forEach((pattern, i) => {
      const acls = read[i];
      if (acls.entries.length === 0) next.delete(patternKey(pattern));
      else next.set(patternKey(pattern), { pattern, entries: acls.entries, version: acls.version });
    });
    this.cache = next;
    if (logLevelEnabled("DEBUG"))
      this.log.debug(
        `Processed ${batch.length} ACL change notification(s) from ${root} up to ${batch[batch.length - 1].name}: ${[...patterns.values()].map(resourcePath).join(", ")}`,
      );
  }
}

/** The exact patterns a filter names (so a delete reaches ACLs not cached yet), as filterToResources. */
function exactPatterns(f: ResourcePatternFilter): ResourcePattern[] {
  if (
    !patternFilterIsExact(f) &&
    !(f.name !== null && f.resourceType !== 1 && f.patternType === PatternType.ANY)
  )
    return [];
  const name = f.name as string;
  if (f.patternType === PatternType.ANY)
    return [
      { resourceType: f.resourceType, name, patternType: PatternType.LITERAL },
      { resourceType: f.resourceType, name, patternType: PatternType.PREFIXED },
    ];
  return [{ resourceType: f.resourceType, name, patternType: f.patternType }];
}
