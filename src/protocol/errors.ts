// Kafka error codes as typed errors. The table itself is generated from Kafka's errors.json
// (generated/errors.ts); this module gives it a class that carries the code through the layers.

import { ERROR_DEFINITIONS, ErrorCode, type ErrorDefinition, type ErrorName } from "./generated/errors.js";

const BY_CODE = new Map<number, ErrorDefinition>(ERROR_DEFINITIONS.map((e) => [e.code, e]));

export function errorDefinition(code: number): ErrorDefinition | undefined {
  return BY_CODE.get(code);
}

/** The name of an error code (UNKNOWN_SERVER_ERROR for a code Kafka does not define). */
export function errorNameOf(code: number): ErrorName {
  return (BY_CODE.get(code)?.name ?? "UNKNOWN_SERVER_ERROR") as ErrorName;
}

/** An error that maps to one Kafka error code on the wire. */
export class KafkaError extends Error {
  readonly code: number;
  readonly errorName: string;
  readonly retriable: boolean;

  constructor(name: ErrorName, message?: string) {
    const def = BY_CODE.get(ErrorCode[name])!;
    super(message ?? def.message ?? name);
    this.code = def.code;
    this.errorName = def.name;
    this.retriable = def.retriable;
  }

  static fromCode(code: number, message?: string): KafkaError {
    const def = BY_CODE.get(code);
    return new KafkaError((def?.name ?? "UNKNOWN_SERVER_ERROR") as ErrorName, message);
  }
}

export { ErrorCode, type ErrorName };
