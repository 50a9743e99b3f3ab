// ConfigHandler: applies the dynamic configs of /config/* to this broker's parts as the metadata cache
// delivers their changes (Kafka's ConfigHandler.scala): TopicConfigHandler — a topic's config becomes its
// log's LogConfig (a log created later gets it too); BrokerConfigHandler — the log.* defaults and
// compression.type / message.max.bytes of /config/brokers/<default> and /config/brokers/<id> become the
// default of every topic without an override (DynamicLogConfig), and the replication throttles follow the
// rates and the topics' throttled-replicas lists; UserConfigHandler — SCRAM credentials to the
// CredentialCache. Leadership arrives with LeaderAndIsr (ControllerRequests), not here. An invalid value is
// logged and ignored; the previous one stays.

import type { Logger } from "../common/logger.js";
import { logConfigFrom } from "../storage/log-config.js";
import type { LogManager } from "../storage/log-manager.js";
import type { KafkaConfig } from "./kafka-config.js";
import { dynamicBrokerLogConfig } from "./metadata/config-definitions.js";
import type { MetadataCache, MetadataDelta } from "./metadata/metadata-cache.js";
import { DEFAULT_BROKER_ENTITY } from "./metadata/zk-data.js";
import type { ReplicationQuotas } from "./quota/replication-quotas.js";
import type { CredentialCache } from "./security/credential-cache.js";

export interface ConfigHandlerTargets {
  readonly config: KafkaConfig;
  readonly cache: MetadataCache;
  /** Absent until the LogManager has started. */
  readonly logManager: () => LogManager | undefined;
  readonly replicationQuotas: ReplicationQuotas;
  readonly credentialCache: CredentialCache;
  /** The broker's logger: the lines say what this broker ignored. */
  readonly logger: Logger;
}

export class ConfigHandler {
  constructor(private readonly targets: ConfigHandlerTargets) {}

  /** Registers the handlers on the cache; before its start() they also receive the initial state. */
  attach(): void {
    const cache = this.targets.cache;
    cache.onChange((delta) => this.applyLogAndReplicationConfigs(delta));
    cache.onChange((delta) => this.applyCredentialChanges(delta));
  }

  /** Topic and broker configs: to the LogManager's LogConfigs and to the replication throttles. */
  private applyLogAndReplicationConfigs(delta: MetadataDelta): void {
    this.applyReplicationThrottles(delta);
    const lm = this.targets.logManager();
    if (lm === undefined) return;
    try {
      if (delta.brokerConfigs.size > 0) this.applyDynamicBrokerConfigs(lm);
      for (const [topic, props] of delta.topicConfigs) {
        try {
          lm.setTopicConfig(topic, logConfigFrom(props, lm.defaultLogConfig));
        } catch (e) {
          this.targets.logger.error(`Invalid config of topic ${topic} ignored: ${(e as Error).message}`);
        }
      }
    } catch (e) {
      this.targets.logger.error(`Error applying a metadata change: ${(e as Error)?.stack ?? e}`);
    }
  }

  /** User entities changed: their SCRAM credentials go to the CredentialCache (Kafka's UserConfigHandler). */
  private applyCredentialChanges(delta: MetadataDelta): void {
    const { cache, credentialCache, logger } = this.targets;
    for (const path of delta.entityConfigs)
      for (const error of credentialCache.updateEntity(path, cache.entityConfig(path))) logger.error(error);
  }

  /**
   * The replication throttles follow this broker's dynamic config entity (the rates) and the topics'
   * throttled-replicas configs (Kafka's BrokerConfigHandler / TopicConfigHandler); a deleted topic's
   * throttle goes with it.
   */
  private applyReplicationThrottles(delta: MetadataDelta): void {
    const { cache, config, replicationQuotas: quotas } = this.targets;
    if (delta.brokerConfigs.has(String(config.brokerId)))
      quotas.applyBrokerConfig(cache.brokerConfig(String(config.brokerId)));
    for (const [topic, props] of delta.topicConfigs) quotas.applyTopicConfig(topic, props);
    for (const { topic } of delta.removed) if (!cache.hasTopic(topic)) quotas.applyTopicConfig(topic, {});
  }

  /**
   * Dynamic broker configs changed (or were loaded at startup): the log.* defaults and compression.type /
   * message.max.bytes of /config/brokers/<default> and /config/brokers/<id> become the default of every
   * topic without an override (Kafka's DynamicLogConfig).
   */
  private applyDynamicBrokerConfigs(lm: LogManager): void {
    const { cache, config } = this.targets;
    try {
      const staticConfig: Record<string, string> = {};
      for (const [k, v] of config.originals) staticConfig[k] = v;
      const next = dynamicBrokerLogConfig({
        staticConfig,
        dynamicDefault: cache.brokerConfig(DEFAULT_BROKER_ENTITY),
        dynamicBroker: cache.brokerConfig(String(config.brokerId)),
      });
      lm.reconfigureDefaultLogConfig(next, (topic, base) => logConfigFrom(cache.topicConfig(topic), base));
    } catch (e) {
      this.targets.logger.error(`Invalid dynamic broker config ignored: ${(e as Error).message}`);
    }
  }
}
