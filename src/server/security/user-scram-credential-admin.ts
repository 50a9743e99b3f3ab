// UserScramCredentialAdmin: DescribeUserScramCredentials and AlterUserScramCredentials over the user
// config entities (Kafka's ZkAdminManager.describeUserScramCredentials / alterUserScramCredentials),
// with Kafka's validation, error codes and messages:
//   describe  all users with a credential (sorted), or the named ones: "" → RESOURCE_NOT_FOUND
//             "Username must not be empty", named twice → DUPLICATE_RESOURCE, no credential →
//             RESOURCE_NOT_FOUND "Attempt to describe a user credential that does not exist: <u>";
//   alter     empty user → UNACCEPTABLE_CREDENTIAL, unknown mechanism → UNSUPPORTED_SASL_MECHANISM,
//             iterations outside [4096, 16384] → UNACCEPTABLE_CREDENTIAL "Too few/many iterations", the
//             same (user, mechanism) twice (an upsertion and a deletion, or two of either) →
//             DUPLICATE_RESOURCE, deleting a credential the user does not have → RESOURCE_NOT_FOUND;
//             otherwise the broker derives StoredKey and ServerKey from the client's salted password
//             and writes `SCRAM-SHA-…=salt=…,stored_key=…,server_key=…,iterations=…` into
//             /config/users/<sanitized user>, keeping the entity's other keys (quotas).
// One result per user that had an error or was altered.

import { credentialFromString, credentialToString } from "../../common/security/scram-credential.js";
import { generateCredential } from "../../common/security/scram-formatter.js";
import {
  SCRAM_MAX_ITERATIONS,
  SCRAM_MECHANISMS,
  type ScramMechanism,
  scramMechanismByType,
} from "../../common/security/scram-mechanism.js";
import { ErrorCode } from "../../protocol/errors.js";
import type {
  AlterUserScramCredentialsRequest,
  ScramCredentialUpsertion,
} from "../../protocol/generated/messages/AlterUserScramCredentialsRequest.js";
import type { AlterUserScramCredentialsResult } from "../../protocol/generated/messages/AlterUserScramCredentialsResponse.js";
import type { DescribeUserScramCredentialsResult } from "../../protocol/generated/messages/DescribeUserScramCredentialsResponse.js";
import { desanitizeEntityName, sanitizeEntityName } from "../metadata/zk-data.js";

/** Where user entities are read and written (MetadataCache + TopicAdmin.writeUserClientConfig). */
export interface UserEntityStore {
  entityConfig(entityPath: string): Record<string, string>;
  allEntityConfigs(): Map<string, Record<string, string>>;
  writeUserClientConfig(entityPath: string, config: Record<string, string>): Promise<void>;
}

const USERNAME_MUST_NOT_BE_EMPTY = "Username must not be empty";

function userPath(user: string): string {
  return `users/${sanitizeEntityName(user)}`;
}

/** The describe result of a user's config: undefined when it has no SCRAM credential. */
function describeOne(
  user: string,
  config: Record<string, string>,
): DescribeUserScramCredentialsResult | undefined {
  const present = SCRAM_MECHANISMS.filter((m) => config[m.name] !== undefined);
  if (present.length === 0) return undefined;
  try {
    return {
      user,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      credentialInfos: present.map((m) => ({
        mechanism: m.type,
        iterations: credentialFromString(config[m.name]).iterations,
      })),
    };
  } catch (e) {
    return {
      user,
      errorCode: ErrorCode.UNKNOWN_SERVER_ERROR,
      errorMessage: (e as Error).message,
      credentialInfos: [],
    };
  }
}

export function describeUserScramCredentials(
  store: UserEntityStore,
  users: readonly string[] | null,
): DescribeUserScramCredentialsResult[] {
  const out: DescribeUserScramCredentialsResult[] = [];
  if (users === null || users.length === 0) {
    const found: DescribeUserScramCredentialsResult[] = [];
    for (const [path, config] of store.allEntityConfigs()) {
      const segments = path.split("/");
      if (segments.length !== 2 || segments[0] !== "users") continue;
      const r = describeOne(desanitizeEntityName(segments[1]), config);
      if (r !== undefined) found.push(r);
    }
    return found.sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
  }
  const counts = new Map<string, number>();
  for (const u of users) counts.set(u, (counts.get(u) ?? 0) + 1);
  for (const user of counts.keys()) {
    const fail = (errorCode: number, errorMessage: string): void => {
      out.push({ user, errorCode, errorMessage, credentialInfos: [] });
    };
    if (user === "") fail(ErrorCode.RESOURCE_NOT_FOUND, USERNAME_MUST_NOT_BE_EMPTY);
    else if (counts.get(user)! > 1)
      fail(
        ErrorCode.DUPLICATE_RESOURCE,
        `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`,
      );
    else {
      const r = describeOne(user, store.entityConfig(userPath(user)));
      if (r !== undefined) out.push(r);
      else
        fail(
          ErrorCode.RESOURCE_NOT_FOUND,
          `Attempt to describe a user credential that does not exist: ${user}`,
        );
    }
  }
  return out;
}

interface Alteration {
  readonly user: string;
  readonly mechanismType: number;
  readonly upsertion?: ScramCredentialUpsertion;
}

/** Why an alteration is refused before anything is read, or undefined when it may go on. */
function illegal(a: Alteration): { code: number; message: string } | undefined {
  if (a.user === "") return { code: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: USERNAME_MUST_NOT_BE_EMPTY };
  const m = scramMechanismByType(a.mechanismType);
  if (m === undefined)
    return { code: ErrorCode.UNSUPPORTED_SASL_MECHANISM, message: "Unknown SCRAM mechanism" };
  if (a.upsertion !== undefined) {
    if (a.upsertion.iterations > SCRAM_MAX_ITERATIONS)
      return { code: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: "Too many iterations" };
    if (a.upsertion.iterations < m.minIterations)
      return { code: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: "Too few iterations" };
  }
  return undefined;
}

export async function alterUserScramCredentials(
  store: UserEntityStore,
  request: AlterUserScramCredentialsRequest,
): Promise<AlterUserScramCredentialsResult[]> {
  const results: AlterUserScramCredentialsResult[] = [];
  const result = (user: string, errorCode: number, errorMessage: string | null): void => {
    results.push({ user, errorCode, errorMessage });
  };
  const deletions: Alteration[] = request.deletions.map((d) => ({
    user: d.name,
    mechanismType: d.mechanism,
  }));
  const upsertions: Alteration[] = request.upsertions.map((u) => ({
    user: u.name,
    mechanismType: u.mechanism,
    upsertion: u,
  }));

  // Illegal requests, one error per user (an upsertion's error wins over a deletion's, as Kafka's map).
  const illegalByUser = new Map<string, { code: number; message: string }>();
  for (const a of [...deletions, ...upsertions]) {
    const why = illegal(a);
    if (why !== undefined) illegalByUser.set(a.user, why);
  }
  for (const [user, why] of illegalByUser) result(user, why.code, why.message);

  // The same (user, mechanism) twice.
  const valid = [...upsertions, ...deletions].filter((a) => !illegalByUser.has(a.user));
  const seen = new Set<string>();
  const duplicated = new Set<string>();
  for (const a of valid) {
    const key = `${a.mechanismType}\u0000${a.user}`;
    if (seen.has(key)) duplicated.add(a.user);
    seen.add(key);
  }
  for (const user of duplicated)
    result(
      user,
      ErrorCode.DUPLICATE_RESOURCE,
      "A user credential cannot be altered twice in the same request",
    );

  const candidates = [...new Set(valid.map((a) => a.user))].filter((u) => !duplicated.has(u));
  const configs = new Map(candidates.map((u) => [u, store.entityConfig(userPath(u))]));

  // Deleting a credential that does not exist.
  const missing = new Set(
    deletions
      .filter((d) => configs.has(d.user))
      .filter((d) => configs.get(d.user)![scramMechanismByType(d.mechanismType)!.name] === undefined)
      .map((d) => d.user),
  );
  for (const user of missing)
    result(user, ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist");

  for (const user of candidates.filter((u) => !missing.has(u))) {
    const config = configs.get(user)!;
    try {
      for (const d of deletions.filter((x) => x.user === user))
        delete config[scramMechanismByType(d.mechanismType)!.name];
      for (const u of upsertions.filter((x) => x.user === user)) {
        const m: ScramMechanism = scramMechanismByType(u.mechanismType)!;
        const up = u.upsertion!;
        config[m.name] = credentialToString(generateCredential(m, up.salt, up.saltedPassword, up.iterations));
      }
      await store.writeUserClientConfig(userPath(user), config);
      result(user, ErrorCode.NONE, null);
    } catch (e) {
      result(user, ErrorCode.UNKNOWN_SERVER_ERROR, (e as Error).message);
    }
  }
  return results;
}
