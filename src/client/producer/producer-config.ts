// ProducerConfig: the producer settings by Kafka's names with Kafka 4's defaults, parsed from string
// properties (as tools pass them: --producer-property k=v, --producer.config file) or given typed.
// Unknown keys are ignored, as Kafka logs and ignores them; a bad value is a ConfigException-style
// error naming the key. enable.idempotence and transactional.id belong to issue 7: this producer
// always sends with producer id -1 (no idempotence), and refuses enable.idempotence=true / a
// transactional.id rather than pretend.

import type { SslOptions } from "../../common/ssl-engine-factory.js";
import { type CompressionType, compressionTypeForName } from "../../protocol/records/compression.js";
import {
  applyCommonClientProperty,
  boolValue,
  ConfigException,
  intValue,
  requireBootstrapServers,
  securityFromProperties,
} from "../config-parsing.js";
import type { SaslClientConfig } from "../network/sasl/sasl-client-mechanisms.js";

export { ConfigException };

export type Acks = 0 | 1 | -1;

export interface ProducerConfig {
  bootstrapServers: string[];
  clientId: string;
  /** security.protocol=SSL/SASL_SSL: TLS options from the ssl.* settings (undefined: no TLS). */
  ssl?: SslOptions;
  /** security.protocol=SASL_*: sasl.mechanism and sasl.jaas.config's credentials. */
  sasl?: SaslClientConfig;
  acks: Acks;
  batchSize: number;
  lingerMs: number;
  bufferMemory: number;
  compressionType: CompressionType;
  compressionLevel: number | undefined;
  maxInFlightRequestsPerConnection: number;
  retries: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  deliveryTimeoutMs: number;
  requestTimeoutMs: number;
  maxRequestSize: number;
  maxBlockMs: number;
  metadataMaxAgeMs: number;
  partitionerIgnoreKeys: boolean;
}

export const PRODUCER_DEFAULTS: Omit<ProducerConfig, "bootstrapServers"> = {
  clientId: "",
  acks: -1,
  batchSize: 16384,
  lingerMs: 5,
  bufferMemory: 33554432,
  compressionType: 0,
  compressionLevel: undefined,
  maxInFlightRequestsPerConnection: 5,
  retries: 2147483647,
  retryBackoffMs: 100,
  retryBackoffMaxMs: 1000,
  deliveryTimeoutMs: 120000,
  requestTimeoutMs: 30000,
  maxRequestSize: 1048576,
  maxBlockMs: 60000,
  metadataMaxAgeMs: 300000,
  partitionerIgnoreKeys: false,
};

/** acks as Kafka accepts it: all, -1, 0, 1. */
export function parseAcks(v: string): Acks {
  const t = v.trim();
  if (t === "all" || t === "-1") return -1;
  if (t === "0") return 0;
  if (t === "1") return 1;
  throw new ConfigException(
    `Invalid value ${v} for configuration acks: String must be one of: all, -1, 0, 1`,
  );
}

/** compression.type as Kafka accepts it: none, gzip, snappy, lz4, zstd. */
export function parseCompressionType(v: string): CompressionType {
  const t = compressionTypeForName(v.trim().toLowerCase());
  if (t === undefined) {
    throw new ConfigException(
      `Invalid value ${v} for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd`,
    );
  }
  return t;
}

/** Builds a ProducerConfig from Kafka-named string properties. bootstrap.servers is required. */
export function producerConfigFromProperties(props: Readonly<Record<string, string>>): ProducerConfig {
  const c: ProducerConfig = { ...PRODUCER_DEFAULTS, bootstrapServers: [], ...securityFromProperties(props) };
  for (const [key, value] of Object.entries(props)) {
    if (applyCommonClientProperty(c, key, value)) continue;
    switch (key) {
      case "acks":
        c.acks = parseAcks(value);
        break;
      case "batch.size":
        c.batchSize = intValue(key, value, 0);
        break;
      case "linger.ms":
        c.lingerMs = intValue(key, value, 0);
        break;
      case "buffer.memory":
        c.bufferMemory = intValue(key, value, 0);
        break;
      case "compression.type":
        c.compressionType = parseCompressionType(value);
        break;
      case "compression.gzip.level":
      case "compression.lz4.level":
      case "compression.zstd.level":
        c.compressionLevel = intValue(key, value, -1);
        break;
      case "max.in.flight.requests.per.connection":
        c.maxInFlightRequestsPerConnection = intValue(key, value, 1);
        break;
      case "retries":
        c.retries = intValue(key, value, 0);
        break;
      case "retry.backoff.max.ms":
        c.retryBackoffMaxMs = intValue(key, value, 0);
        break;
      case "delivery.timeout.ms":
        c.deliveryTimeoutMs = intValue(key, value, 0);
        break;
      case "max.request.size":
        c.maxRequestSize = intValue(key, value, 0);
        break;
      case "max.block.ms":
        c.maxBlockMs = intValue(key, value, 0);
        break;
      case "partitioner.ignore.keys":
        c.partitionerIgnoreKeys = boolValue(key, value);
        break;
      case "enable.idempotence":
        if (boolValue(key, value))
          throw new ConfigException("enable.idempotence=true needs idempotent producers (not yet supported)");
        break;
      case "transactional.id":
        throw new ConfigException("transactional.id needs transactions (not yet supported)");
      default:
        break; // Kafka logs unknown configs and ignores them
    }
  }
  requireBootstrapServers(c.bootstrapServers);
  // Kafka: delivery.timeout.ms should be >= linger.ms + request.timeout.ms.
  if (c.deliveryTimeoutMs < c.lingerMs + c.requestTimeoutMs) {
    c.deliveryTimeoutMs = c.lingerMs + c.requestTimeoutMs;
  }
  return c;
}
