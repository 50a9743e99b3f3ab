// ZkAclStore: where and how the ACL authorizer keeps ACLs in the metadata store, as Kafka's ZooKeeper mode
// (ZkData.scala, AclEntry.scala) — so a store written here reads as Kafka's and the other way round:
//   /kafka-acl/<ResourceType>/<name>                     LITERAL patterns  (ResourceType: Topic, Group,
//   /kafka-acl-extended/prefixed/<ResourceType>/<name>   PREFIXED patterns  Cluster, TransactionalId, …)
// each holding {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read",
// "host":"*"}]}; and the change notifications every broker follows:
//   /kafka-acl-changes/acl_changes_<seq>           "<RESOURCE_TYPE>:<name>" (a LITERAL pattern)
//   /kafka-acl-extended-changes/acl_changes_<seq>  {"version":1,"resourceType":"TOPIC","name":…,"patternType":"PREFIXED"}

import {
  type AccessControlEntry,
  camelName,
  operationName,
  PatternType,
  parseOperation,
  parsePatternType,
  parsePermission,
  parseResourceType,
  patternTypeName,
  permissionName,
  type ResourcePattern,
  resourceTypeName,
} from "../../../common/acl-binding.js";
import { type MetadataStore, MetadataStoreError, parseJson } from "../../metadata/metadata-store.js";

export const ACL_PATHS = {
  literal: "/kafka-acl",
  extended: "/kafka-acl-extended",
  literalChanges: "/kafka-acl-changes",
  extendedChanges: "/kafka-acl-extended-changes",
} as const;

export const ACL_CHANGE_PREFIX = "acl_changes_";

/** The root holding a pattern type's resources: /kafka-acl, /kafka-acl-extended/prefixed. */
export function aclRoot(patternType: number): string {
  return patternType === PatternType.LITERAL
    ? ACL_PATHS.literal
    : `${ACL_PATHS.extended}/${patternTypeName(patternType).toLowerCase()}`;
}

/** The znode of one resource pattern's ACLs. */
export function resourcePath(p: ResourcePattern): string {
  return `${aclRoot(p.patternType)}/${camelName(resourceTypeName(p.resourceType))}/${p.name}`;
}

/** The change-notification sequence prefix for a pattern. */
export function changePathPrefix(p: ResourcePattern): string {
  return `${p.patternType === PatternType.LITERAL ? ACL_PATHS.literalChanges : ACL_PATHS.extendedChanges}/${ACL_CHANGE_PREFIX}`;
}

/** A change notification's data for a pattern. */
export function encodeChange(p: ResourcePattern): Buffer {
  if (p.patternType === PatternType.LITERAL)
    return Buffer.from(`${resourceTypeName(p.resourceType)}:${p.name}`, "utf8");
  return Buffer.from(
    JSON.stringify({
      version: 1,
      resourceType: resourceTypeName(p.resourceType),
      name: p.name,
      patternType: patternTypeName(p.patternType),
    }),
    "utf8",
  );
}

/** The pattern a change notification names, or undefined when it cannot be read. */
export function decodeChange(literal: boolean, data: Buffer): ResourcePattern | undefined {
  const text = data.toString("utf8");
  if (literal) {
    const i = text.indexOf(":");
    if (i <= 0) return undefined;
    const resourceType = parseResourceType(text.slice(0, i));
    if (resourceType === undefined) return undefined;
    return { resourceType, name: text.slice(i + 1), patternType: PatternType.LITERAL };
  }
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    if (typeof o.resourceType !== "string" || typeof o.name !== "string" || typeof o.patternType !== "string")
      return undefined;
    const resourceType = parseResourceType(o.resourceType);
    const patternType = parsePatternType(o.patternType);
    if (resourceType === undefined || patternType === undefined) return undefined;
    return { resourceType, name: o.name, patternType };
  } catch {
    return undefined;
  }
}

/** AclEntry.toJsonCompatibleMap: the znode document for a set of entries. */
export function encodeAcls(entries: Iterable<AccessControlEntry>): Buffer {
  const acls = [...entries].map((e) => ({
    principal: e.principal,
    permissionType: camelName(permissionName(e.permissionType)),
    operation: camelName(operationName(e.operation)),
    host: e.host,
  }));
  return Buffer.from(JSON.stringify({ version: 1, acls }), "utf8");
}

/** AclEntry.fromBytes: the entries of a znode document (entries that cannot be read are skipped). */
export function decodeAcls(path: string, data: Buffer): AccessControlEntry[] {
  if (data.length === 0) return [];
  const doc = parseJson(path, data) as { acls?: unknown };
  if (!Array.isArray(doc?.acls)) return [];
  const out: AccessControlEntry[] = [];
  for (const a of doc.acls as Array<Record<string, unknown>>) {
    if (typeof a?.principal !== "string" || typeof a.host !== "string") continue;
    const operation = typeof a.operation === "string" ? parseOperation(a.operation) : undefined;
    const permissionType =
      typeof a.permissionType === "string" ? parsePermission(a.permissionType) : undefined;
    if (operation === undefined || permissionType === undefined) continue;
    out.push({ principal: a.principal, host: a.host, operation, permissionType });
  }
  return out;
}

export interface VersionedAcls {
  readonly entries: AccessControlEntry[];
  /** The znode's data version; -1 when it does not exist. */
  readonly version: number;
}

/** A pattern's ACLs as stored now. */
export async function readAcls(store: MetadataStore, p: ResourcePattern): Promise<VersionedAcls> {
  const path = resourcePath(p);
  const node = await store.get(path);
  if (node === undefined) return { entries: [], version: -1 };
  return { entries: decodeAcls(path, node.data), version: node.stat.version };
}

/** Every stored pattern with its ACLs (Kafka's loadAllAcls). Unknown resource types are skipped. */
export async function readAllAcls(
  store: MetadataStore,
): Promise<Array<{ pattern: ResourcePattern; acls: VersionedAcls }>> {
  const out: Array<{ pattern: ResourcePattern; acls: VersionedAcls }> = [];
  for (const patternType of [PatternType.LITERAL, PatternType.PREFIXED]) {
    const root = aclRoot(patternType);
    for (const typeName of await childrenOrEmpty(store, root)) {
      const resourceType = parseResourceType(typeName);
      if (resourceType === undefined) continue;
      for (const name of await childrenOrEmpty(store, `${root}/${typeName}`)) {
        const pattern = { resourceType, name, patternType };
        out.push({ pattern, acls: await readAcls(store, pattern) });
      }
    }
  }
  return out;
}

export async function childrenOrEmpty(store: MetadataStore, path: string): Promise<string[]> {
  try {
    return await store.getChildren(path);
  } catch (e) {
    if (e instanceof MetadataStoreError && e.code === "NoNode") return [];
    throw e;
  }
}
