// ClientQuotaAdmin: AlterClientQuotas and DescribeClientQuotas over the user/client config entities, as
// Kafka's ZkAdminManager does them (alterClientQuotas, describeClientQuotas).
//
// Alter, per entry (each answered on its own): the entity is user, client-id or both (names null for
// <default>); an empty entity, an unknown entity type, an empty name or IP entities → INVALID_REQUEST. Each
// op sets (a quota key: producer_byte_rate / consumer_byte_rate as whole numbers, request_percentage /
// controller_mutation_rate as doubles; anything else → INVALID_REQUEST "Invalid configuration key") or
// removes a key; the entity's other keys (SCRAM credentials) are kept. validate_only checks without
// writing. The write is the entity znode plus a /config/changes notification (TopicAdmin).
//
// Describe: filter components per entity type (user, client-id; ip alone matches nothing here), each
// EXACT (that name), DEFAULT (the <default> entity) or SPECIFIED (any name, the default included); with
// strict, entities with parts the filter does not name are left out. Only entities with quota keys are
// listed. A duplicate component type or an empty one → INVALID_REQUEST, another type → UNSUPPORTED_VERSION,
// ip with user/client-id → INVALID_REQUEST.

import { javaDoubleToString } from "../../common/java-double.js";
import { KafkaError } from "../../protocol/errors.js";
import type { MetadataCache } from "../metadata/metadata-cache.js";
import type { TopicAdmin } from "../metadata/topic-admin.js";
import { desanitizeEntityName, sanitizeEntityName } from "../metadata/zk-data.js";
import { DEFAULT_ENTITY } from "./client-quota-manager.js";
import { CLIENT_QUOTA_CONFIG_TYPES, isClientOrUserQuotaConfig } from "./client-quotas.js";

/** ClientQuotaEntity.USER / CLIENT_ID / IP */
export const ENTITY_USER = "user";
export const ENTITY_CLIENT_ID = "client-id";
export const ENTITY_IP = "ip";

/** DescribeClientQuotasRequest match types. */
export const MATCH_TYPE_EXACT = 0;
export const MATCH_TYPE_DEFAULT = 1;
export const MATCH_TYPE_SPECIFIED = 2;

const SCRAM_MECHANISMS = new Set(["SCRAM-SHA-256", "SCRAM-SHA-512"]);

export interface QuotaEntityPart {
  readonly entityType: string;
  /** null: the default entity */
  readonly entityName: string | null;
}

export interface QuotaOp {
  readonly key: string;
  /** null: remove the key */
  readonly value: number | null;
}

export interface FilterComponent {
  readonly entityType: string;
  readonly matchType: number;
  readonly match: string | null;
}

export interface DescribedQuotaEntity {
  readonly entity: QuotaEntityPart[];
  readonly values: Array<{ key: string; value: number }>;
}

const invalid = (message: string) => new KafkaError("INVALID_REQUEST", message);

/** A name as a znode path segment (null: <default>). */
function sanitized(name: string | null): string {
  return name === null ? DEFAULT_ENTITY : sanitizeEntityName(name);
}

/** A znode path segment as a name (<default>: null). */
function desanitized(segment: string): string | null {
  return segment === DEFAULT_ENTITY ? null : desanitizeEntityName(segment);
}

export class ClientQuotaAdmin {
  constructor(
    private readonly metadata: MetadataCache,
    private readonly topicAdmin: TopicAdmin,
  ) {}

  /** One AlterClientQuotas entry: throws KafkaError with the entry's error. */
  async alter(
    entity: readonly QuotaEntityPart[],
    ops: readonly QuotaOp[],
    validateOnly: boolean,
  ): Promise<void> {
    if (entity.length === 0) throw invalid("Invalid empty client quota entity");
    const parts = new Map<string, string | null>();
    for (const e of entity) {
      if (e.entityType !== ENTITY_USER && e.entityType !== ENTITY_CLIENT_ID && e.entityType !== ENTITY_IP)
        throw invalid(`Unhandled client quota entity type: ${e.entityType}`);
      if (e.entityName !== null && e.entityName.length === 0)
        throw invalid(`Empty ${e.entityType} not supported`);
      parts.set(e.entityType, e.entityName);
    }
    const user = parts.get(ENTITY_USER);
    const client = parts.get(ENTITY_CLIENT_ID);
    if (parts.has(ENTITY_IP)) {
      if (parts.size > 1)
        throw invalid(
          "Invalid quota entity combination, IP entity should not be used with user/client ID entity.",
        );
      throw invalid("IP connection quotas (connection_creation_rate) are not supported by this broker");
    }
    let path: string;
    const isUser = user !== undefined;
    if (user !== undefined && client !== undefined)
      path = `users/${sanitized(user)}/clients/${sanitized(client)}`;
    else if (user !== undefined) path = `users/${sanitized(user)}`;
    else if (client !== undefined) path = `clients/${sanitized(client)}`;
    else throw invalid("Invalid client quota entity");

    const props = this.metadata.entityConfig(path);
    for (const op of ops) {
      if (op.value === null) {
        delete props[op.key];
        continue;
      }
      const type = CLIENT_QUOTA_CONFIG_TYPES.get(op.key);
      if (type === undefined) {
        if (isUser && SCRAM_MECHANISMS.has(op.key))
          throw new KafkaError("UNKNOWN_SERVER_ERROR", "Unexpected config type STRING");
        throw invalid(`Invalid configuration key ${op.key}`);
      }
      if (type === "DOUBLE") props[op.key] = javaDoubleToString(op.value);
      else {
        const epsilon = 1e-6;
        const whole = Math.trunc(op.value + epsilon);
        if (!Number.isFinite(op.value) || Math.abs(whole - op.value) > epsilon)
          throw invalid(`Configuration ${op.key} must be a ${type} value`);
        props[op.key] = String(whole);
      }
    }
    if (!validateOnly) await this.topicAdmin.writeUserClientConfig(path, props);
  }

  /** DescribeClientQuotas: throws KafkaError for a bad filter. */
  describe(components: readonly FilterComponent[], strict: boolean): DescribedQuotaEntity[] {
    let userComponent: FilterComponent | undefined;
    let clientComponent: FilterComponent | undefined;
    let ipComponent: FilterComponent | undefined;
    for (const c of components) {
      if (
        c.matchType !== MATCH_TYPE_EXACT &&
        c.matchType !== MATCH_TYPE_DEFAULT &&
        c.matchType !== MATCH_TYPE_SPECIFIED
      )
        throw new KafkaError("UNKNOWN_SERVER_ERROR", `Unexpected match type: ${c.matchType}`);
      if (c.matchType === MATCH_TYPE_EXACT && c.match === null)
        throw invalid(`An exact match of ${c.entityType} needs a name`);
      switch (c.entityType) {
        case ENTITY_USER:
          if (userComponent) throw invalid("Duplicate user filter component entity type");
          userComponent = c;
          break;
        case ENTITY_CLIENT_ID:
          if (clientComponent) throw invalid("Duplicate client filter component entity type");
          clientComponent = c;
          break;
        case ENTITY_IP:
          if (ipComponent) throw invalid("Duplicate ip filter component entity type");
          ipComponent = c;
          break;
        case "":
          throw invalid("Unexpected empty filter component entity type");
        default:
          throw new KafkaError("UNSUPPORTED_VERSION", `Custom entity type '${c.entityType}' not supported`);
      }
    }
    if ((userComponent || clientComponent) && ipComponent)
      throw invalid(
        "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.",
      );
    if (ipComponent) return []; // no IP entities are kept

    // undefined: the entity has no such part; null: the <default> entity.
    const matches = (component: FilterComponent | undefined, name: string | null | undefined): boolean => {
      if (component === undefined) return name === undefined || !strict;
      if (name === undefined) return false;
      switch (component.matchType) {
        case MATCH_TYPE_EXACT:
          return name === component.match;
        case MATCH_TYPE_DEFAULT:
          return name === null;
        default:
          return true;
      }
    };
    const out: DescribedQuotaEntity[] = [];
    for (const [path, config] of this.metadata.allEntityConfigs()) {
      const s = path.split("/");
      let user: string | null | undefined;
      let client: string | null | undefined;
      if (s.length === 2 && s[0] === "users") user = desanitized(s[1]);
      else if (s.length === 2 && s[0] === "clients") client = desanitized(s[1]);
      else if (s.length === 4 && s[0] === "users" && s[2] === "clients") {
        user = desanitized(s[1]);
        client = desanitized(s[3]);
      } else continue;
      const values = Object.entries(config)
        .filter(([k]) => isClientOrUserQuotaConfig(k))
        .map(([key, v]) => ({ key, value: Number(v) }));
      if (values.length === 0 || !matches(userComponent, user) || !matches(clientComponent, client)) continue;
      const entity: QuotaEntityPart[] = [];
      if (user !== undefined) entity.push({ entityType: ENTITY_USER, entityName: user });
      if (client !== undefined) entity.push({ entityType: ENTITY_CLIENT_ID, entityName: client });
      out.push({ entity, values });
    }
    return out;
  }
}
