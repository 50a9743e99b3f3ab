// ConfigAdmin: DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for topics and brokers (Kafka's
// ZkAdminManager + ConfigHelper, and AdminZkClient.changeConfigs for the writes). Owns the validation of
// each resource with Kafka's codes and messages, the layering a described value comes from (topic
// override < dynamic per-broker < dynamic cluster default < static < Kafka default, config-definitions),
// and the znode writes: /config/topics/<t> or /config/brokers/<id|<default>> together with a
// /config/changes/config_change_N notification in one multi, and the purge of notifications older than
// 15 minutes. The metadata cache applies a change from its watch; the broker server applies dynamic
// broker log defaults (log.*, compression.type, message.max.bytes) when the cache reports them.

import { Logger } from "../../common/logger.js";
import type { Time } from "../../common/time.js";
import { KafkaError } from "../../protocol/errors.js";
import { isStoreError, toApiError } from "./admin-errors.js";
import {
  type BrokerConfigLayers,
  brokerConfigNames,
  ConfigResourceType,
  ConfigType,
  type DescribedConfig,
  describeBrokerConfig,
  describeTopicConfig,
  TOPIC_CONFIG_DEFS,
  TOPIC_CONFIG_NAMES,
  validateBrokerConfigs,
  validateTopicConfigs,
} from "./config-definitions.js";
import type { MetadataCache } from "./metadata-cache.js";
import type { MetadataStore, Op } from "./metadata-store.js";
import { validateTopicName } from "./topic-validation.js";
import {
  ConfigEntityChangeNotificationSequenceZNode,
  ConfigEntityZNode,
  DEFAULT_BROKER_ENTITY,
  ZkPaths,
} from "./zk-data.js";

export interface ConfigResourceRequest {
  readonly resourceType: number;
  readonly resourceName: string;
  /** null: every config */
  readonly configurationKeys: readonly string[] | null;
}

export interface DescribeConfigsResourceResult {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly error: KafkaError | null;
  readonly configs: DescribedConfig[];
}

export interface AlterConfigsResource {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: ReadonlyArray<{ readonly name: string; readonly value: string | null }>;
}

/** IncrementalAlterConfigs operations. */
export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

export interface IncrementalAlterConfigsResource {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: ReadonlyArray<{
    readonly name: string;
    readonly configOperation: number;
    readonly value: string | null;
  }>;
}

export interface AlterConfigsResult {
  readonly resourceType: number;
  readonly resourceName: string;
  readonly error: KafkaError | null;
}

/** Config change notifications older than this are deleted (Kafka's changeExpirationMs, 15 minutes). */
export const CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000;

export interface ConfigAdminOptions {
  readonly brokerId: number;
  readonly time: Time;
  /** The broker's static configuration as given (server.properties + overrides). */
  readonly staticConfig: Readonly<Record<string, string>>;
  readonly logger?: Logger;
}

export class ConfigAdmin {
  private readonly log: Logger;

  constructor(
    private readonly store: MetadataStore,
    private readonly cache: MetadataCache,
    private readonly options: ConfigAdminOptions,
  ) {
    this.log = options.logger ?? new Logger("kafka.server.ZkAdminManager");
  }

  /** Where this broker's config values come from: dynamic per-broker, dynamic cluster default, static. */
  brokerLayers(): BrokerConfigLayers {
    return {
      dynamicBroker: this.cache.brokerConfig(String(this.options.brokerId)),
      dynamicDefault: this.cache.brokerConfig(DEFAULT_BROKER_ENTITY),
      staticConfig: this.options.staticConfig,
    };
  }

  // ---- DescribeConfigs ----

  describeConfigs(
    resources: readonly ConfigResourceRequest[],
    includeSynonyms: boolean,
    includeDocumentation: boolean,
  ): DescribeConfigsResourceResult[] {
    return resources.map((r) => {
      const result = (
        error: KafkaError | null,
        configs: DescribedConfig[] = [],
      ): DescribeConfigsResourceResult => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        error,
        configs,
      });
      const wanted = (names: readonly string[]): readonly string[] =>
        r.configurationKeys === null || r.configurationKeys.length === 0
          ? names
          : names.filter((n) => r.configurationKeys!.includes(n));
      try {
        switch (r.resourceType) {
          case ConfigResourceType.TOPIC: {
            validateTopicName(r.resourceName);
            if (!this.cache.hasTopic(r.resourceName)) {
              return result(
                new KafkaError("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${r.resourceName}' does not exist`),
              );
            }
            const overrides = this.cache.topicConfig(r.resourceName);
            const layers = this.brokerLayers();
            return result(
              null,
              wanted(TOPIC_CONFIG_NAMES).map((n) =>
                describeTopicConfig(n, overrides, layers, includeSynonyms, includeDocumentation),
              ),
            );
          }
          case ConfigResourceType.BROKER: {
            const perBroker = this.checkBrokerResource(r.resourceName);
            const layers = this.brokerLayers();
            const names = perBroker ? brokerConfigNames() : Object.keys(layers.dynamicDefault).sort();
            const extra = perBroker
              ? Object.keys(layers.dynamicBroker).filter((k) => !names.includes(k))
              : [];
            return result(
              null,
              wanted([...names, ...extra]).map((n) =>
                describeBrokerConfig(n, layers, perBroker, includeSynonyms, includeDocumentation),
              ),
            );
          }
          case ConfigResourceType.BROKER_LOGGER:
            this.checkBrokerResource(r.resourceName);
            return result(null, []);
          default:
            return result(new KafkaError("INVALID_REQUEST", `Unsupported resource type ${r.resourceType}`));
        }
      } catch (e) {
        return result(toApiError(e));
      }
    });
  }

  /** True for this broker's id, false for "" (the cluster default); INVALID_REQUEST otherwise. */
  private checkBrokerResource(name: string): boolean {
    if (name === "") return false;
    if (name === String(this.options.brokerId)) return true;
    throw new KafkaError(
      "INVALID_REQUEST",
      `Unexpected broker id, expected ${this.options.brokerId} or empty string, but received ${name}`,
    );
  }

  // ---- AlterConfigs / IncrementalAlterConfigs ----

  /** AlterConfigs: replaces the entity's whole set of overrides. */
  async alterConfigs(
    resources: readonly AlterConfigsResource[],
    validateOnly: boolean,
  ): Promise<AlterConfigsResult[]> {
    return this.eachConfigResource(resources, async (r) => {
      const next: Record<string, string> = {};
      for (const c of r.configs) {
        if (c.value === null)
          throw new KafkaError("INVALID_REQUEST", `Null value not supported for : ${c.name}`);
        next[c.name] = c.value;
      }
      await this.writeEntityConfig(r.resourceType, r.resourceName, next, validateOnly);
    });
  }

  /** IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT on the entity's current overrides. */
  async incrementalAlterConfigs(
    resources: readonly IncrementalAlterConfigsResource[],
    validateOnly: boolean,
  ): Promise<AlterConfigsResult[]> {
    return this.eachConfigResource(resources, async (r) => {
      const names = r.configs.map((c) => c.name);
      if (new Set(names).size !== names.length)
        throw new KafkaError("INVALID_REQUEST", "Error due to duplicate config keys");
      const current = this.currentOverrides(r.resourceType, r.resourceName);
      const next = { ...current };
      for (const c of r.configs) {
        const isList = this.configTypeOf(r.resourceType, c.name) === ConfigType.LIST;
        switch (c.configOperation) {
          case AlterConfigOp.SET:
            if (c.value === null)
              throw new KafkaError("INVALID_REQUEST", `Null value not supported for : ${c.name}`);
            next[c.name] = c.value;
            break;
          case AlterConfigOp.DELETE:
            delete next[c.name];
            break;
          case AlterConfigOp.APPEND:
          case AlterConfigOp.SUBTRACT: {
            const append = c.configOperation === AlterConfigOp.APPEND;
            if (!isList) {
              throw new KafkaError(
                "INVALID_CONFIG",
                `Config value ${append ? "append" : "subtract"} is not allowed for config key: ${c.name}`,
              );
            }
            const base = next[c.name] ?? this.defaultOf(r.resourceType, c.name) ?? "";
            const items = splitList(base);
            const given = splitList(c.value ?? "");
            const result = append
              ? [...items, ...given.filter((g) => !items.includes(g))]
              : items.filter((i) => !given.includes(i));
            next[c.name] = result.join(",");
            break;
          }
          default:
            throw new KafkaError(
              "INVALID_REQUEST",
              `Unknown alter config operation ${c.configOperation} for ${c.name}`,
            );
        }
      }
      await this.writeEntityConfig(r.resourceType, r.resourceName, next, validateOnly);
    });
  }

  /**
   * Applies `apply` to each resource of an Alter/IncrementalAlterConfigs request, in order: a resource
   * named twice gets INVALID_REQUEST, a failure becomes that resource's error, the others go on.
   */
  private async eachConfigResource<R extends { resourceType: number; resourceName: string }>(
    resources: readonly R[],
    apply: (r: R) => Promise<void>,
  ): Promise<AlterConfigsResult[]> {
    const dup = duplicates(resources);
    const out: AlterConfigsResult[] = [];
    for (const r of resources) {
      let error: KafkaError | null = null;
      if (dup.has(`${r.resourceType}/${r.resourceName}`)) {
        error = new KafkaError("INVALID_REQUEST", "Error due to duplicate config resources");
      } else {
        try {
          await apply(r);
        } catch (e) {
          error = toApiError(e);
        }
      }
      out.push({ resourceType: r.resourceType, resourceName: r.resourceName, error });
    }
    return out;
  }

  private configTypeOf(resourceType: number, name: string): number | undefined {
    if (resourceType === ConfigResourceType.TOPIC) return TOPIC_CONFIG_DEFS[name]?.type;
    return describeBrokerConfig(
      name,
      { dynamicBroker: {}, dynamicDefault: {}, staticConfig: {} },
      true,
      false,
      false,
    ).configType;
  }

  private defaultOf(resourceType: number, name: string): string | undefined {
    if (resourceType === ConfigResourceType.TOPIC) return TOPIC_CONFIG_DEFS[name]?.default;
    return describeBrokerConfig(name, this.brokerLayers(), true, false, false).value ?? undefined;
  }

  private currentOverrides(resourceType: number, resourceName: string): Record<string, string> {
    if (resourceType === ConfigResourceType.TOPIC) {
      validateTopicName(resourceName);
      if (!this.cache.hasTopic(resourceName))
        throw new KafkaError("UNKNOWN_TOPIC_OR_PARTITION", `Topic '${resourceName}' does not exist`);
      return this.cache.topicConfig(resourceName);
    }
    if (resourceType === ConfigResourceType.BROKER) {
      const perBroker = this.checkBrokerResource(resourceName);
      return this.cache.brokerConfig(perBroker ? resourceName : DEFAULT_BROKER_ENTITY);
    }
    throw new KafkaError("INVALID_REQUEST", `Unsupported resource type ${resourceType}`);
  }

  /**
   * Replaces the config of a user/client entity (`users/<u>`, `clients/<c>`, `users/<u>/clients/<c>`,
   * names sanitized — ZkPaths.configEntity) and notifies every broker, as Kafka's
   * AdminZkClient.changeUserOrUserClientIdConfig does: missing parent znodes are created empty, the
   * entity znode and a /config/changes notification are written in one multi. Callers validate the keys
   * (SCRAM credentials, quotas); an entity left with no config keeps its znode ({"config":{}}).
   */
  async writeUserClientConfig(entityPath: string, config: Record<string, string>): Promise<void> {
    const path = ZkPaths.configEntity(entityPath);
    const ops: Op[] = [];
    const segments = entityPath.split("/");
    for (let i = 2; i < segments.length; i++) {
      const parent = ZkPaths.configEntity(segments.slice(0, i).join("/"));
      if (!(await this.store.exists(parent)))
        ops.push({ type: "create", path: parent, data: Buffer.alloc(0) });
    }
    const data = ConfigEntityZNode.encode(config);
    ops.push((await this.store.exists(path)) ? { type: "set", path, data } : { type: "create", path, data });
    ops.push({
      type: "create",
      path: ZkPaths.configChangePrefix,
      data: ConfigEntityChangeNotificationSequenceZNode.encode(entityPath),
      options: { sequential: true },
    });
    await this.store.multi(ops);
    this.log.info(`Updated configs of ${entityPath}: ${JSON.stringify(Object.keys(config))}`);
    await this.purgeObsoleteNotifications();
    await this.cache.idle();
  }

  /** Deletes /config/changes notifications older than CONFIG_CHANGE_EXPIRATION_MS (every broker has seen them). */
  private async purgeObsoleteNotifications(): Promise<void> {
    const now = this.options.time.milliseconds();
    for (const name of await this.store.getChildren(ZkPaths.configChanges)) {
      const path = `${ZkPaths.configChanges}/${name}`;
      const stat = await this.store.exists(path);
      if (stat && now - stat.ctime > CONFIG_CHANGE_EXPIRATION_MS) {
        try {
          await this.store.delete(path, stat.version);
        } catch (e) {
          if (!isStoreError(e, "NoNode") && !isStoreError(e, "BadVersion")) throw e;
        }
      }
    }
  }

  /** Validates and (unless validateOnly) writes an entity's overrides plus the change notification. */
  private async writeEntityConfig(
    resourceType: number,
    resourceName: string,
    config: Record<string, string>,
    validateOnly: boolean,
  ): Promise<void> {
    let path: string;
    let entityPath: string;
    if (resourceType === ConfigResourceType.TOPIC) {
      this.currentOverrides(resourceType, resourceName);
      validateTopicConfigs(config);
      path = ZkPaths.configTopic(resourceName);
      entityPath = `topics/${resourceName}`;
    } else if (resourceType === ConfigResourceType.BROKER) {
      const perBroker = this.checkBrokerResource(resourceName);
      validateBrokerConfigs(config, perBroker);
      const entity = perBroker ? resourceName : DEFAULT_BROKER_ENTITY;
      path = ZkPaths.configBroker(entity);
      entityPath = `brokers/${entity}`;
    } else {
      throw new KafkaError("INVALID_REQUEST", `Unsupported resource type ${resourceType}`);
    }
    if (validateOnly) return;
    const data = ConfigEntityZNode.encode(config);
    const ops: Op[] = [
      (await this.store.exists(path)) ? { type: "set", path, data } : { type: "create", path, data },
      {
        type: "create",
        path: ZkPaths.configChangePrefix,
        data: ConfigEntityChangeNotificationSequenceZNode.encode(entityPath),
        options: { sequential: true },
      },
    ];
    await this.store.multi(ops);
    this.log.info(`Updated configs of ${entityPath}: ${JSON.stringify(config)}`);
    await this.purgeObsoleteNotifications();
    // The cache applies the change from its watch; wait for it so a following Describe sees it.
    await this.cache.idle();
  }
}

/** The `type/name` keys of resources named more than once. */
function duplicates(resources: ReadonlyArray<{ resourceType: number; resourceName: string }>): Set<string> {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const r of resources) {
    const k = `${r.resourceType}/${r.resourceName}`;
    if (seen.has(k)) dup.add(k);
    seen.add(k);
  }
  return dup;
}

function splitList(v: string): string[] {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
