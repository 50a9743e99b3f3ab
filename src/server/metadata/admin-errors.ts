// How the admin operations (topics, partitions, configs) turn what they catch into the error one resource
// of a response carries (Kafka's ApiError.fromThrowable), and how they recognise a store error by its
// ZooKeeper code.

import { KafkaError } from "../../protocol/errors.js";
import { ConfigValidationError } from "./config-definitions.js";
import { MetadataStoreError, type MetadataStoreErrorCode } from "./metadata-store.js";

/** The KafkaError for anything an admin operation threw: config errors keep their code, the rest is UNKNOWN_SERVER_ERROR. */
export function toApiError(e: unknown): KafkaError {
  if (e instanceof KafkaError) return e;
  if (e instanceof ConfigValidationError) return new KafkaError(e.errorName, e.message);
  return new KafkaError("UNKNOWN_SERVER_ERROR", (e as Error)?.message ?? String(e));
}

/** True when `e` is the store's error with this code (NodeExists, NoNode, BadVersion, …). */
export function isStoreError(e: unknown, code: MetadataStoreErrorCode): boolean {
  return e instanceof MetadataStoreError && e.code === code;
}
