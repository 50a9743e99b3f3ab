// ClientQuotas: the broker's client quota managers (Kafka's QuotaFactory.QuotaManagers: produce, fetch,
// request) and how their quotas follow the user / client config entities (Kafka's UserConfigHandler and
// ClientIdConfigHandler of the DynamicConfigManager): every entity of /config/users, /config/clients and
// /config/users/<u>/clients/<c> as the MetadataCache holds it — loaded at start, changed by
// /config/changes notifications — sets or removes producer_byte_rate, consumer_byte_rate and
// request_percentage and controller_mutation_rate of that entity. The entity's other keys (SCRAM
// credentials) are not read here.

import type { MetricFamily } from "../../common/metrics/exposition.js";
import type { Time } from "../../common/time.js";
import type { MetadataCache } from "../metadata/metadata-cache.js";
import { desanitizeEntityName } from "../metadata/zk-data.js";
import { ClientQuotaManager, DEFAULT_ENTITY } from "./client-quota-manager.js";
import { ClientRequestQuotaManager } from "./client-request-quota-manager.js";
import { ControllerMutationQuotaManager } from "./controller-mutation-quota-manager.js";
import type { SampleConfig } from "./sampled-rate.js";

export const PRODUCER_BYTE_RATE = "producer_byte_rate";
export const CONSUMER_BYTE_RATE = "consumer_byte_rate";
export const REQUEST_PERCENTAGE = "request_percentage";
export const CONTROLLER_MUTATION_RATE = "controller_mutation_rate";

/** DynamicConfig.User / Client quota keys and their ConfigDef types (QuotaConfig). */
export const CLIENT_QUOTA_CONFIG_TYPES: ReadonlyMap<string, "LONG" | "DOUBLE"> = new Map([
  [PRODUCER_BYTE_RATE, "LONG"],
  [CONSUMER_BYTE_RATE, "LONG"],
  [REQUEST_PERCENTAGE, "DOUBLE"],
  [CONTROLLER_MUTATION_RATE, "DOUBLE"],
]);

/** QuotaConfig.isClientOrUserQuotaConfig */
export function isClientOrUserQuotaConfig(key: string): boolean {
  return CLIENT_QUOTA_CONFIG_TYPES.has(key);
}

/** A user/client entity path (`users/<u>`, `clients/<c>`, `users/<u>/clients/<c>`) as quota entity parts. */
export interface ParsedQuotaEntity {
  /** Sanitized user name or <default>; undefined when the entity has no user part. */
  readonly sanitizedUser?: string;
  /** Client id (desanitized) or <default>; undefined when the entity has no client part. */
  readonly clientId?: string;
}

export function parseEntityPath(entityPath: string): ParsedQuotaEntity | undefined {
  const s = entityPath.split("/");
  const client = (n: string) => (n === DEFAULT_ENTITY ? n : desanitizeEntityName(n));
  if (s.length === 2 && s[0] === "users") return { sanitizedUser: s[1] };
  if (s.length === 2 && s[0] === "clients") return { clientId: client(s[1]) };
  if (s.length === 4 && s[0] === "users" && s[2] === "clients")
    return { sanitizedUser: s[1], clientId: client(s[3]) };
  return undefined;
}

export interface ClientQuotaConfig {
  /** quota.window.num */
  readonly numQuotaSamples: number;
  /** quota.window.size.seconds */
  readonly quotaWindowSizeSeconds: number;
}

export class ClientQuotas {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientRequestQuotaManager;
  readonly controllerMutation: ControllerMutationQuotaManager;
  private unsubscribe: (() => void) | undefined;

  constructor(config: ClientQuotaConfig, time: Time) {
    const samples: SampleConfig = {
      samples: config.numQuotaSamples,
      windowMs: config.quotaWindowSizeSeconds * 1000,
    };
    this.produce = new ClientQuotaManager("Produce", samples, time);
    this.fetch = new ClientQuotaManager("Fetch", samples, time);
    this.request = new ClientRequestQuotaManager(samples, time);
    this.controllerMutation = new ControllerMutationQuotaManager(samples, time);
  }

  /** Whether any client quota was ever set (until then requests are not measured at all). */
  get anyEnabled(): boolean {
    return (
      this.produce.quotasEnabled ||
      this.fetch.quotasEnabled ||
      this.request.quotasEnabled ||
      this.controllerMutation.quotasEnabled
    );
  }

  /** Applies one entity's config (its whole config; {} removes its quotas). */
  applyEntityConfig(entityPath: string, config: Readonly<Record<string, string>>): void {
    const e = parseEntityPath(entityPath);
    if (e === undefined) return;
    const value = (key: string): number | undefined => {
      const v = config[key];
      if (v === undefined) return undefined;
      const n = Number(v);
      return Number.isFinite(n) ? n : undefined;
    };
    this.produce.updateQuota(e.sanitizedUser, e.clientId, value(PRODUCER_BYTE_RATE));
    this.fetch.updateQuota(e.sanitizedUser, e.clientId, value(CONSUMER_BYTE_RATE));
    this.request.updateQuota(e.sanitizedUser, e.clientId, value(REQUEST_PERCENTAGE));
    this.controllerMutation.updateQuota(e.sanitizedUser, e.clientId, value(CONTROLLER_MUTATION_RATE));
  }

  /** Follows the metadata cache's user/client entities: all of them now, then each change. */
  attach(metadata: MetadataCache): void {
    for (const [path, config] of metadata.allEntityConfigs()) this.applyEntityConfig(path, config);
    this.unsubscribe = metadata.onChange((delta) => {
      for (const path of delta.entityConfigs) this.applyEntityConfig(path, metadata.entityConfig(path));
    });
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** The quota metrics of the three managers, one family per name. */
  collect(): MetricFamily[] {
    const byName = new Map<string, MetricFamily>();
    for (const m of [this.produce, this.fetch, this.request, this.controllerMutation]) {
      for (const f of m.collect()) {
        const prev = byName.get(f.name);
        byName.set(f.name, prev ? { ...prev, samples: [...prev.samples, ...f.samples] } : f);
      }
    }
    return [...byName.values()].filter((f) => f.samples.length > 0);
  }
}
