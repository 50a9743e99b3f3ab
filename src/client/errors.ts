// Client-side errors. KafkaClientError carries a Kafka error code with its name and `retriable` flag
// from the generated error table, so callers branch on `code`/`retriable` as Kafka's clients do
// (RetriableException). Network failures (connection refused or lost, request timeout) map to
// NETWORK_EXCEPTION and REQUEST_TIMED_OUT, both retriable.

import {
  ERROR_DEFINITIONS,
  ErrorCode,
  type ErrorDefinition,
  type ErrorName,
} from "../protocol/generated/errors.js";

const BY_CODE = new Map<number, ErrorDefinition>(ERROR_DEFINITIONS.map((e) => [e.code, e]));

export class KafkaClientError extends Error {
  override readonly name = "KafkaClientError";
  /** Kafka's error code (ErrorCode). */
  readonly code: number;
  /** Kafka's error name, e.g. UNKNOWN_TOPIC_OR_PARTITION. */
  readonly errorName: string;
  /** True when Kafka's clients would retry (RetriableException). */
  readonly retriable: boolean;

  constructor(code: number, message?: string | null) {
    const def = BY_CODE.get(code) ?? BY_CODE.get(ErrorCode.UNKNOWN_SERVER_ERROR)!;
    super(message || def.message || def.name);
    this.code = def.code === code ? code : def.code;
    this.errorName = def.name;
    this.retriable = def.retriable;
  }

  static of(name: ErrorName, message?: string | null): KafkaClientError {
    return new KafkaClientError(ErrorCode[name], message);
  }
}

/**
 * Errors after which Kafka's clients refresh metadata: the codes of InvalidMetadataException and its
 * subclasses (the leader may have moved, the topic may be new or gone).
 */
export const INVALID_METADATA_ERRORS: ReadonlySet<number> = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.NETWORK_EXCEPTION,
]);

/** Throws a KafkaClientError when `code` is not NONE. */
export function throwIfError(code: number, message?: string | null, context?: string): void {
  if (code === ErrorCode.NONE) return;
  const def = BY_CODE.get(code);
  const text = message || def?.message || def?.name || `error code ${code}`;
  throw new KafkaClientError(code, context ? `${context}: ${text}` : text);
}

/** The errors whose exception class is not named after the error (Kafka's Errors enum). */
const EXCEPTION_CLASS: Readonly<Record<string, string>> = {
  UNKNOWN_SERVER_ERROR: "UnknownServerException",
  CORRUPT_MESSAGE: "CorruptRecordException",
  REQUEST_TIMED_OUT: "TimeoutException",
  MESSAGE_TOO_LARGE: "RecordTooLargeException",
  STALE_CONTROLLER_EPOCH: "ControllerMovedException",
  OFFSET_METADATA_TOO_LARGE: "OffsetMetadataTooLarge",
  RECORD_LIST_TOO_LARGE: "RecordBatchTooLargeException",
  TOPIC_AUTHORIZATION_FAILED: "TopicAuthorizationException",
  GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
  CLUSTER_AUTHORIZATION_FAILED: "ClusterAuthorizationException",
  TOPIC_ALREADY_EXISTS: "TopicExistsException",
  INVALID_CONFIG: "InvalidConfigurationException",
  OUT_OF_ORDER_SEQUENCE_NUMBER: "OutOfOrderSequenceException",
  DUPLICATE_SEQUENCE_NUMBER: "DuplicateSequenceException",
  INVALID_PRODUCER_ID_MAPPING: "InvalidPidMappingException",
  INVALID_TRANSACTION_TIMEOUT: "InvalidTxnTimeoutException",
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "TransactionalIdAuthorizationException",
  KAFKA_STORAGE_ERROR: "KafkaStorageException",
  SASL_AUTHENTICATION_FAILED: "SaslAuthenticationException",
  DELEGATION_TOKEN_AUTH_DISABLED: "DelegationTokenDisabledException",
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: "UnsupportedByAuthenticationException",
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: "DelegationTokenAuthorizationException",
  NON_EMPTY_GROUP: "GroupNotEmptyException",
  PRINCIPAL_DESERIALIZATION_FAILURE: "PrincipalDeserializationException",
  FETCH_SESSION_TOPIC_ID_ERROR: "FetchSessionTopicIdException",
  INVALID_REGULAR_EXPRESSION: "InvalidRegularExpression",
};

/**
 * The class Kafka's Java client throws for this error (OFFSET_OUT_OF_RANGE →
 * org.apache.kafka.common.errors.OffsetOutOfRangeException; KAFKA_STORAGE_ERROR → KafkaStorageException),
 * as Kafka's tools print it.
 */
export function kafkaExceptionClass(e: KafkaClientError): string {
  const special = EXCEPTION_CLASS[e.errorName];
  if (special !== undefined) return `org.apache.kafka.common.errors.${special}`;
  const camel = e.errorName
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
  return `org.apache.kafka.common.errors.${camel.endsWith("Exception") ? camel : `${camel}Exception`}`;
}

/** The error name for a code (e.g. "TOPIC_ALREADY_EXISTS"), or `UNKNOWN(<code>)`. */
export function errorName(code: number): string {
  return BY_CODE.get(code)?.name ?? `UNKNOWN(${code})`;
}

export { ErrorCode };
