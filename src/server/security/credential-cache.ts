// CredentialCache: the SCRAM credentials this broker authenticates with (Kafka's CredentialCache and
// CredentialProvider), per mechanism and user. Fed from the metadata cache's user config entities
// (`/config/users/<sanitized user>`, config keys `SCRAM-SHA-256` / `SCRAM-SHA-512`): loaded at startup
// and updated on every /config/changes notification, so a credential written through any broker is
// used by every broker within the notification delay. A malformed credential is dropped (logged by the
// caller), as if absent. `loaded` resolves once the first full load has been applied.

import { credentialFromString, type ScramCredential } from "../../common/security/scram-credential.js";
import { SCRAM_MECHANISMS } from "../../common/security/scram-mechanism.js";
import { desanitizeEntityName } from "../metadata/zk-data.js";

export class CredentialCache {
  /** mechanism name → user → credential */
  private readonly byMechanism = new Map<string, Map<string, ScramCredential>>(
    SCRAM_MECHANISMS.map((m) => [m.name, new Map()]),
  );
  private markLoaded!: () => void;
  readonly loaded: Promise<void> = new Promise((resolve) => {
    this.markLoaded = resolve;
  });
  private isLoaded = false;

  get(mechanism: string, user: string): ScramCredential | undefined {
    return this.byMechanism.get(mechanism)?.get(user);
  }

  /**
   * A user/client entity changed (`entityPath` as in the metadata cache, `config` its keys now, {} when
   * gone). Only `users/<u>` entities carry credentials. Returns the errors of malformed credentials.
   */
  updateEntity(entityPath: string, config: Readonly<Record<string, string>>): string[] {
    const segments = entityPath.split("/");
    if (segments.length !== 2 || segments[0] !== "users") return [];
    const user = desanitizeEntityName(segments[1]);
    const errors: string[] = [];
    for (const m of SCRAM_MECHANISMS) {
      const users = this.byMechanism.get(m.name)!;
      const text = config[m.name];
      if (text === undefined) {
        users.delete(user);
        continue;
      }
      try {
        users.set(user, credentialFromString(text));
      } catch (e) {
        users.delete(user);
        errors.push(`Invalid ${m.name} credential of user ${user} ignored: ${(e as Error).message}`);
      }
    }
    return errors;
  }

  /** The first full load has been applied: SCRAM exchanges waiting for it go on. */
  setLoaded(): void {
    if (this.isLoaded) return;
    this.isLoaded = true;
    this.markLoaded();
  }
}
