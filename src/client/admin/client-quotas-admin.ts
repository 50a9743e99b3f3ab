// ClientQuotasAdmin: the client-quota half of Kafka's Admin API over a ClusterClient —
// alterClientQuotas (AlterClientQuotas to any broker; each entity's result on its own) and
// describeClientQuotas (DescribeClientQuotas with a ClientQuotaFilter: components EXACT / DEFAULT /
// SPECIFIED per entity type, strict = containsOnly). Entities are maps of entity type ("user",
// "client-id") to a name, null for the default entity.
//
// Usage:
//   const quotas = new ClientQuotasAdmin(admin.cluster);
//   const [r] = await quotas.alterClientQuotas([{ entity: { user: "alice" }, ops: [{ key: "producer_byte_rate", value: 1048576 }] }]);
//   const found = await quotas.describeClientQuotas([{ entityType: "user", match: "alice" }], true);

import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";

/** ClientQuotaEntity: entity type → name (null: the default entity). */
export type ClientQuotaEntity = Readonly<Record<string, string | null>>;

export interface ClientQuotaAlteration {
  readonly entity: ClientQuotaEntity;
  /** value null (or undefined): remove the key. */
  readonly ops: ReadonlyArray<{ key: string; value?: number | null }>;
}

export interface AlterClientQuotaResult {
  readonly entity: ClientQuotaEntity;
  readonly error?: KafkaClientError;
}

/**
 * ClientQuotaFilterComponent: ofEntity (match a name), ofDefaultEntity (match null) or ofEntityType
 * (match undefined: any name, the default included).
 */
export interface ClientQuotaFilterComponent {
  readonly entityType: string;
  readonly match?: string | null;
}

export interface DescribedClientQuota {
  readonly entity: ClientQuotaEntity;
  readonly values: ReadonlyMap<string, number>;
}

const MATCH_TYPE_EXACT = 0;
const MATCH_TYPE_DEFAULT = 1;
const MATCH_TYPE_SPECIFIED = 2;

export class ClientQuotasAdmin {
  constructor(
    private readonly cluster: ClusterClient,
    private readonly options: { validateOnly?: boolean } = {},
  ) {}

  /** AlterClientQuotas; results in the order of `alterations`, errors per entity. */
  async alterClientQuotas(
    alterations: readonly ClientQuotaAlteration[],
    options: { validateOnly?: boolean } = {},
  ): Promise<AlterClientQuotaResult[]> {
    const res = await this.cluster.withRetries("AlterClientQuotas", async () => {
      const conn = await this.cluster.anyConnection();
      return conn.send(Apis.AlterClientQuotas, conn.versionFor(Apis.AlterClientQuotas), {
        entries: alterations.map((a) => ({
          entity: Object.entries(a.entity).map(([entityType, entityName]) => ({ entityType, entityName })),
          ops: a.ops.map((o) => ({
            key: o.key,
            value: o.value ?? 0,
            remove: o.value === null || o.value === undefined,
          })),
        })),
        validateOnly: options.validateOnly ?? this.options.validateOnly ?? false,
      });
    });
    return alterations.map((a, i) => {
      const e = res.entries[i];
      if (e === undefined)
        return { entity: a.entity, error: KafkaClientError.of("UNKNOWN_SERVER_ERROR", "no result") };
      return e.errorCode === ErrorCode.NONE
        ? { entity: a.entity }
        : { entity: a.entity, error: new KafkaClientError(e.errorCode, e.errorMessage) };
    });
  }

  /** DescribeClientQuotas; strict: only entities with exactly the filtered entity types. Throws the error. */
  async describeClientQuotas(
    components: readonly ClientQuotaFilterComponent[],
    strict = false,
  ): Promise<DescribedClientQuota[]> {
    const res = await this.cluster.withRetries("DescribeClientQuotas", async () => {
      const conn = await this.cluster.anyConnection();
      return conn.send(Apis.DescribeClientQuotas, conn.versionFor(Apis.DescribeClientQuotas), {
        components: components.map((c) => ({
          entityType: c.entityType,
          matchType:
            c.match === undefined
              ? MATCH_TYPE_SPECIFIED
              : c.match === null
                ? MATCH_TYPE_DEFAULT
                : MATCH_TYPE_EXACT,
          match: c.match ?? null,
        })),
        strict,
      });
    });
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode, res.errorMessage);
    return (res.entries ?? []).map((e) => ({
      entity: Object.fromEntries(e.entity.map((x) => [x.entityType, x.entityName])),
      values: new Map(e.values.map((v) => [v.key, v.value])),
    }));
  }
}
