// ScramAdmin: the Admin API's user SCRAM credential calls (Kafka's Admin.describeUserScramCredentials and
// alterUserScramCredentials). An upsertion's password never leaves the client: it is salted here
// (a random salt as Kafka's UserScramCredentialUpsertion makes, Hi with the given iterations) and the
// broker derives the StoredKey and ServerKey from the salted password. Alterations go to the controller,
// descriptions to any broker; per-user errors come back as `error`.

import { randomSalt, saltedPassword } from "../../common/security/scram-formatter.js";
import {
  SCRAM_DEFAULT_ITERATIONS,
  SCRAM_MAX_ITERATIONS,
  scramMechanismByName,
  scramMechanismByType,
} from "../../common/security/scram-mechanism.js";
import { Apis } from "../../protocol/generated/api-table.js";
import { ErrorCode } from "../../protocol/generated/errors.js";
import { KafkaClientError } from "../errors.js";
import type { ClusterClient } from "../network/cluster-client.js";

export type UserScramCredentialAlteration =
  | {
      readonly kind: "upsertion";
      readonly user: string;
      /** "SCRAM-SHA-256" or "SCRAM-SHA-512". */
      readonly mechanism: string;
      /** Default 4096. */
      readonly iterations?: number;
      readonly password: string;
      /** Default: a random salt. */
      readonly salt?: Buffer;
    }
  | { readonly kind: "deletion"; readonly user: string; readonly mechanism: string };

export interface AlterUserScramCredentialResult {
  readonly user: string;
  readonly error?: KafkaClientError;
}

export interface ScramCredentialInfo {
  /** The mechanism name, "UNKNOWN" for a type this client does not know. */
  readonly mechanism: string;
  readonly iterations: number;
}

export interface UserScramCredentialsDescription {
  readonly user: string;
  readonly credentialInfos: readonly ScramCredentialInfo[];
  readonly error?: KafkaClientError;
}

function mechanismType(name: string): number {
  return scramMechanismByName(name)?.type ?? 0;
}

export class ScramAdmin {
  constructor(readonly cluster: ClusterClient) {}

  async alterUserScramCredentials(
    alterations: readonly UserScramCredentialAlteration[],
  ): Promise<AlterUserScramCredentialResult[]> {
    const upsertions = alterations.flatMap((a) => {
      if (a.kind !== "upsertion") return [];
      const m = scramMechanismByName(a.mechanism);
      const iterations = a.iterations ?? SCRAM_DEFAULT_ITERATIONS;
      const salt = a.salt ?? randomSalt();
      // An unknown mechanism goes as type 0, iterations out of bounds unsalted: the broker refuses them
      // (UNSUPPORTED_SASL_MECHANISM, UNACCEPTABLE_CREDENTIAL) and no time is spent hashing.
      const salted =
        m === undefined || iterations < m.minIterations || iterations > SCRAM_MAX_ITERATIONS
          ? Buffer.alloc(0)
          : saltedPassword(m, a.password, salt, iterations);
      return [{ name: a.user, mechanism: m?.type ?? 0, iterations, salt, saltedPassword: salted }];
    });
    const deletions = alterations.flatMap((a) =>
      a.kind === "deletion" ? [{ name: a.user, mechanism: mechanismType(a.mechanism) }] : [],
    );
    const res = await this.cluster.sendToController(
      Apis.AlterUserScramCredentials,
      () => ({ upsertions, deletions }),
      (r) => r.results.map((x) => x.errorCode),
    );
    const users = [...new Set(alterations.map((a) => a.user))];
    return users.map((user): AlterUserScramCredentialResult => {
      const r = res.results.find((x) => x.user === user);
      if (r === undefined)
        return { user, error: KafkaClientError.of("UNKNOWN_SERVER_ERROR", `No result for user ${user}`) };
      if (r.errorCode !== ErrorCode.NONE)
        return { user, error: new KafkaClientError(r.errorCode, r.errorMessage) };
      return { user };
    });
  }

  /** `users` undefined or empty: every user with a credential. A top-level error throws. */
  async describeUserScramCredentials(users?: readonly string[]): Promise<UserScramCredentialsDescription[]> {
    return this.cluster.withRetries("DescribeUserScramCredentials", async () => {
      const conn = await this.cluster.anyConnection();
      const res = await conn.send(
        Apis.DescribeUserScramCredentials,
        conn.versionFor(Apis.DescribeUserScramCredentials),
        {
          users: users === undefined || users.length === 0 ? null : users.map((name) => ({ name })),
        },
      );
      if (res.errorCode !== ErrorCode.NONE) throw new KafkaClientError(res.errorCode, res.errorMessage);
      return res.results.map(
        (r): UserScramCredentialsDescription => ({
          user: r.user,
          credentialInfos: r.credentialInfos.map((c) => ({
            mechanism: scramMechanismByType(c.mechanism)?.name ?? "UNKNOWN",
            iterations: c.iterations,
          })),
          ...(r.errorCode !== ErrorCode.NONE
            ? { error: new KafkaClientError(r.errorCode, r.errorMessage) }
            : {}),
        }),
      );
    });
  }
}
