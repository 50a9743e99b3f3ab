// AclBinding: Kafka's ACL model (org.apache.kafka.common.acl / .resource) — resource types, operations,
// permission types and pattern types with their wire codes and names; a binding is a resource pattern
// (type, name, LITERAL or PREFIXED) with an access control entry (principal, host, operation, permission).
// Filters (DescribeAcls, DeleteAcls) and how they match, as ResourcePatternFilter / AccessControlEntryFilter
// do; the toString forms kafka-acls prints.

/** ResourceType codes (the wire) and names. */
export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;

/** AclOperation codes. */
export const Operation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
} as const;

export const Permission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;

export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;

/** The CLUSTER resource's only name. */
export const CLUSTER_NAME = "kafka-cluster";
export const WILDCARD_RESOURCE = "*";
export const WILDCARD_PRINCIPAL = "User:*";
export const WILDCARD_HOST = "*";

function invert(o: Record<string, number>): Map<number, string> {
  return new Map(Object.entries(o).map(([k, v]) => [v, k]));
}
const RESOURCE_TYPE_NAMES = invert(ResourceType);
const OPERATION_NAMES = invert(Operation);
const PERMISSION_NAMES = invert(Permission);
const PATTERN_TYPE_NAMES = invert(PatternType);

/** Enum names as Java's toString: "TOPIC", "READ", "ALLOW", "LITERAL" ("UNKNOWN" for a code not known). */
export const resourceTypeName = (c: number): string => RESOURCE_TYPE_NAMES.get(c) ?? "UNKNOWN";
export const operationName = (c: number): string => OPERATION_NAMES.get(c) ?? "UNKNOWN";
export const permissionName = (c: number): string => PERMISSION_NAMES.get(c) ?? "UNKNOWN";
export const patternTypeName = (c: number): string => PATTERN_TYPE_NAMES.get(c) ?? "UNKNOWN";

/** Camel case as Kafka's SecurityUtils: TRANSACTIONAL_ID → TransactionalId, CLUSTER_ACTION → ClusterAction. */
export function camelName(enumName: string): string {
  return enumName
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

/** Parses a name in either form (READ, Read, read, ClusterAction, cluster_action); undefined if unknown. */
function parseName(table: Record<string, number>, s: string): number | undefined {
  const key = s
    .trim()
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toUpperCase();
  return key in table ? table[key as keyof typeof table] : undefined;
}
export const parseResourceType = (s: string): number | undefined => parseName(ResourceType, s);
export const parseOperation = (s: string): number | undefined => parseName(Operation, s);
export const parsePermission = (s: string): number | undefined => parseName(Permission, s);
export const parsePatternType = (s: string): number | undefined => parseName(PatternType, s);

export interface ResourcePattern {
  readonly resourceType: number;
  readonly name: string;
  readonly patternType: number;
}

export interface AccessControlEntry {
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

export interface AclBinding {
  readonly pattern: ResourcePattern;
  readonly entry: AccessControlEntry;
}

/** A pattern filter: name null matches any name; ANY / MATCH pattern types as Kafka's. */
export interface ResourcePatternFilter {
  readonly resourceType: number;
  readonly name: string | null;
  readonly patternType: number;
}

export interface AccessControlEntryFilter {
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: number;
  readonly permissionType: number;
}

export interface AclBindingFilter {
  readonly pattern: ResourcePatternFilter;
  readonly entry: AccessControlEntryFilter;
}

/** Kafka's ResourcePatternFilter.matches. */
export function patternFilterMatches(f: ResourcePatternFilter, p: ResourcePattern): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== p.resourceType) return false;
  if (
    f.patternType !== PatternType.ANY &&
    f.patternType !== PatternType.MATCH &&
    f.patternType !== p.patternType
  )
    return false;
  if (f.name === null) return true;
  if (f.patternType === PatternType.ANY || f.patternType === p.patternType) return f.name === p.name;
  if (p.patternType === PatternType.LITERAL) return f.name === p.name || p.name === WILDCARD_RESOURCE;
  if (p.patternType === PatternType.PREFIXED) return f.name.startsWith(p.name);
  return false;
}

/** Kafka's AccessControlEntryFilter.matches. */
export function entryFilterMatches(f: AccessControlEntryFilter, e: AccessControlEntry): boolean {
  if (f.principal !== null && f.principal !== e.principal) return false;
  if (f.host !== null && f.host !== e.host) return false;
  if (f.operation !== Operation.ANY && f.operation !== e.operation) return false;
  return f.permissionType === Permission.ANY || f.permissionType === e.permissionType;
}

/** Why a filter cannot be used (an UNKNOWN element), as findIndefiniteField; undefined when it can. */
export function filterUnknownField(f: AclBindingFilter): string | undefined {
  if (f.pattern.resourceType === ResourceType.UNKNOWN || !RESOURCE_TYPE_NAMES.has(f.pattern.resourceType))
    return "Resource type is UNKNOWN.";
  if (f.pattern.patternType === PatternType.UNKNOWN || !PATTERN_TYPE_NAMES.has(f.pattern.patternType))
    return "Resource pattern type is UNKNOWN.";
  if (f.entry.operation === Operation.UNKNOWN || !OPERATION_NAMES.has(f.entry.operation))
    return "Operation is UNKNOWN.";
  if (f.entry.permissionType === Permission.UNKNOWN || !PERMISSION_NAMES.has(f.entry.permissionType))
    return "Permission type is UNKNOWN.";
  return undefined;
}

/** A filter naming exactly one resource pattern (Kafka's matchesAtMostOne on the pattern part). */
export function patternFilterIsExact(f: ResourcePatternFilter): boolean {
  return (
    f.name !== null &&
    f.resourceType !== ResourceType.ANY &&
    (f.patternType === PatternType.LITERAL || f.patternType === PatternType.PREFIXED)
  );
}

/** Why a binding cannot be created; undefined when it can. */
export function bindingInvalidReason(b: AclBinding): string | undefined {
  const p = b.pattern;
  const e = b.entry;
  const specific = (c: number, table: Map<number, string>): boolean => table.has(c) && c > 1;
  if (!specific(p.resourceType, RESOURCE_TYPE_NAMES)) return "ACL binding contains unknown elements";
  if (p.patternType !== PatternType.LITERAL && p.patternType !== PatternType.PREFIXED)
    return "ACL binding contains unknown elements";
  if (!specific(e.operation, OPERATION_NAMES) || !specific(e.permissionType, PERMISSION_NAMES))
    return "ACL binding contains unknown elements";
  if (p.resourceType === ResourceType.CLUSTER && p.name !== CLUSTER_NAME)
    return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`;
  if (p.name === "") return "Invalid empty resource name";
  if (p.name.includes("/")) return `ACL binding contains invalid resource name: ${p.name}`;
  if (parsePrincipal(e.principal) === undefined)
    return `Invalid principal ${e.principal}: expected principalType:name`;
  return undefined;
}

/** "User:alice" → its type and name; undefined without a ':' or with an empty type. */
export function parsePrincipal(s: string): { type: string; name: string } | undefined {
  const i = s.indexOf(":");
  if (i <= 0) return undefined;
  return { type: s.slice(0, i), name: s.slice(i + 1) };
}

/** ResourcePattern.toString. */
export function patternToString(p: ResourcePattern | ResourcePatternFilter): string {
  return `ResourcePattern(resourceType=${resourceTypeName(p.resourceType)}, name=${p.name ?? "<any>"}, patternType=${patternTypeName(p.patternType)})`;
}

/** AccessControlEntry.toString. */
export function entryToString(e: AccessControlEntry): string {
  return `(principal=${e.principal}, host=${e.host}, operation=${operationName(e.operation)}, permissionType=${permissionName(e.permissionType)})`;
}

export function patternKey(p: ResourcePattern): string {
  return `${p.resourceType}\u0000${p.patternType}\u0000${p.name}`;
}

export function entryKey(e: AccessControlEntry): string {
  return `${e.principal}\u0000${e.host}\u0000${e.operation}\u0000${e.permissionType}`;
}

/** Kafka's AclEntry.supportedOperations: what can be granted on each resource type. */
export const SUPPORTED_OPERATIONS: ReadonlyMap<number, readonly number[]> = new Map([
  [
    ResourceType.TOPIC,
    [
      Operation.READ,
      Operation.WRITE,
      Operation.CREATE,
      Operation.DESCRIBE,
      Operation.DELETE,
      Operation.ALTER,
      Operation.DESCRIBE_CONFIGS,
      Operation.ALTER_CONFIGS,
    ],
  ],
  [ResourceType.GROUP, [Operation.READ, Operation.DESCRIBE, Operation.DELETE]],
  [
    ResourceType.CLUSTER,
    [
      Operation.CREATE,
      Operation.CLUSTER_ACTION,
      Operation.DESCRIBE_CONFIGS,
      Operation.ALTER_CONFIGS,
      Operation.IDEMPOTENT_WRITE,
      Operation.ALTER,
      Operation.DESCRIBE,
    ],
  ],
  [ResourceType.TRANSACTIONAL_ID, [Operation.DESCRIBE, Operation.WRITE]],
  [ResourceType.DELEGATION_TOKEN, [Operation.DESCRIBE]],
  [ResourceType.USER, [Operation.CREATE_TOKENS, Operation.DESCRIBE_TOKENS]],
]);
