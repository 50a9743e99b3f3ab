// The SCRAM part of `tributary configs --entity-type users` (Kafka's ConfigCommand with
// --bootstrap-server): `--add-config 'SCRAM-SHA-512=[iterations=8192,password=alice-secret]'` upserts a
// credential (iterations default 4096, at least the mechanism's minimum), `--delete-config SCRAM-SHA-512`
// deletes one, both through AlterUserScramCredentials; `--describe` prints
// `SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=8192` per user
// (DescribeUserScramCredentials), or `Error retrieving SCRAM credential configs for user-principal …`.

import { ScramAdmin, type UserScramCredentialAlteration } from "../../client/admin/scram-admin.js";
import type { ClusterClient } from "../../client/network/cluster-client.js";
import {
  isScramMechanism,
  SCRAM_DEFAULT_ITERATIONS,
  scramMechanismByName,
} from "../../common/security/scram-mechanism.js";
import { UsageError } from "../args.js";

/** True for a SCRAM credential config key (`SCRAM-SHA-256`, `SCRAM-SHA-512`). */
export function isScramConfig(key: string): boolean {
  return isScramMechanism(key);
}

const CREDENTIAL = /^(?:iterations=(-?[0-9]*),)?password=(.*)$/s;

/** ConfigCommand.alterUserScramCredentialConfigs: one user's upsertions and deletions. */
export async function alterUserScramCredentialConfigs(
  cluster: ClusterClient,
  user: string,
  toAdd: ReadonlyMap<string, string>,
  toDelete: readonly string[],
): Promise<void> {
  if (user === "")
    throw new UsageError(
      "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.",
    );
  const alterations: UserScramCredentialAlteration[] = toDelete.map((mechanism) => ({
    kind: "deletion",
    user,
    mechanism,
  }));
  for (const [mechanism, value] of toAdd) {
    const m = scramMechanismByName(mechanism)!;
    const match = CREDENTIAL.exec(value);
    if (match === null) throw new UsageError(`Invalid credential property ${mechanism}=${value}`);
    const iterations =
      match[1] !== undefined && match[1] !== "-1" ? Number.parseInt(match[1], 10) : SCRAM_DEFAULT_ITERATIONS;
    if (!Number.isSafeInteger(iterations))
      throw new UsageError(`Invalid credential property ${mechanism}=${value}: iterations must be a number`);
    if (iterations < m.minIterations)
      throw new UsageError(
        `Iterations ${iterations} is less than the minimum ${m.minIterations} required for ${m.name}`,
      );
    alterations.push({ kind: "upsertion", user, mechanism, iterations, password: match[2] });
  }
  const results = await new ScramAdmin(cluster).alterUserScramCredentials(alterations);
  const failed = results.find((r) => r.error !== undefined);
  if (failed?.error !== undefined) throw failed.error;
}

/**
 * The SCRAM lines of --describe for `names` ([]: every user with a credential). A user without any
 * credential prints nothing: Kafka's DescribeUserScramCredentialsResult.users() leaves out the users
 * answered RESOURCE_NOT_FOUND, so ConfigCommand describes only the others.
 */
export async function describeUserScramCredentialConfigs(
  cluster: ClusterClient,
  names: readonly string[],
): Promise<string[]> {
  const descriptions = await new ScramAdmin(cluster).describeUserScramCredentials(names);
  return descriptions
    .filter((d) => d.error?.errorName !== "RESOURCE_NOT_FOUND")
    .map((d) =>
      d.error !== undefined
        ? `Error retrieving SCRAM credential configs for user-principal '${d.user}': ExecutionException: org.apache.kafka.common.errors.${exceptionName(d.error.errorName)}: ${d.error.message}`
        : `SCRAM credential configs for user-principal '${d.user}' are ${d.credentialInfos.map((c) => `${c.mechanism}=iterations=${c.iterations}`).join(", ")}`,
    );
}

/** Kafka's exception class of an error name (RESOURCE_NOT_FOUND → ResourceNotFoundException). */
function exceptionName(errorName: string): string {
  return `${errorName
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("")}Exception`;
}
