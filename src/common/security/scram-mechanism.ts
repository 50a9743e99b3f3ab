// ScramMechanism: the SCRAM mechanisms Kafka supports (Kafka's internal ScramMechanism and the Admin
// API's public one): the SASL name, the hash, the type id AlterUserScramCredentials /
// DescribeUserScramCredentials carry on the wire (1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512, 0 = UNKNOWN) and
// the iteration bounds (at least 4096 for both; at most 16384, ZkAdminManager's maxIterations).

export interface ScramMechanism {
  /** The SASL mechanism name and the /config/users/<u> config key: "SCRAM-SHA-256", "SCRAM-SHA-512". */
  readonly name: string;
  /** node:crypto's digest name. */
  readonly hash: "sha256" | "sha512";
  /** The hash's output size in bytes (also the salted password's size). */
  readonly hashBytes: number;
  /** The wire type id of the Admin API (ScramMechanism.type()). */
  readonly type: number;
  readonly minIterations: number;
}

export const SCRAM_SHA_256: ScramMechanism = {
  name: "SCRAM-SHA-256",
  hash: "sha256",
  hashBytes: 32,
  type: 1,
  minIterations: 4096,
};

export const SCRAM_SHA_512: ScramMechanism = {
  name: "SCRAM-SHA-512",
  hash: "sha512",
  hashBytes: 64,
  type: 2,
  minIterations: 4096,
};

export const SCRAM_MECHANISMS: readonly ScramMechanism[] = [SCRAM_SHA_256, SCRAM_SHA_512];

/** The most iterations a credential may have (Kafka's ZkAdminManager / ScramMechanism maxIterations). */
export const SCRAM_MAX_ITERATIONS = 16384;

/** ConfigCommand's DefaultScramIterations. */
export const SCRAM_DEFAULT_ITERATIONS = 4096;

/** The mechanism of a SASL name (case as Kafka: exact), or undefined. */
export function scramMechanismByName(name: string): ScramMechanism | undefined {
  return SCRAM_MECHANISMS.find((m) => m.name === name);
}

/** The mechanism of an Admin API type id, or undefined (UNKNOWN). */
export function scramMechanismByType(type: number): ScramMechanism | undefined {
  return SCRAM_MECHANISMS.find((m) => m.type === type);
}

export function isScramMechanism(name: string): boolean {
  return scramMechanismByName(name) !== undefined;
}
