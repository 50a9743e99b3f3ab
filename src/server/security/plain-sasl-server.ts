// PlainSaslServer: the SASL/PLAIN mechanism on the broker (RFC 4616, Kafka's PlainSaslServer). One client
// token, `authzid NUL authcid NUL password`; the password is checked against the `user_<name>="password"`
// options of the listener's PlainLoginModule JAAS configuration, in constant time. The authorization id,
// when given, must be the user itself. Every failure says the same thing ("Invalid username or password"),
// never which part was wrong.

import { timingSafeEqual } from "node:crypto";

export class SaslAuthenticationError extends Error {
  override readonly name = "SaslAuthenticationError";
}

/** One SASL exchange on the broker: evaluate each client token until complete. */
export interface SaslServer {
  readonly mechanism: string;
  /** The response token to send; throws SaslAuthenticationError when authentication fails. */
  evaluateResponse(token: Buffer): Buffer;
  readonly isComplete: boolean;
  /** The authenticated user (once complete). */
  readonly authorizationId: string;
}

export const PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  // Compare fixed-size digests' worth of bytes so the length does not show in the time either.
  const len = Math.max(x.length, y.length, 1);
  const xp = Buffer.alloc(len);
  const yp = Buffer.alloc(len);
  x.copy(xp);
  y.copy(yp);
  return timingSafeEqual(xp, yp) && x.length === y.length;
}

export class PlainSaslServer implements SaslServer {
  readonly mechanism = "PLAIN";
  private complete = false;
  private user = "";

  /** `users`: user name → password (the JAAS `user_<name>` options). */
  constructor(private readonly users: ReadonlyMap<string, string>) {}

  get isComplete(): boolean {
    return this.complete;
  }

  get authorizationId(): string {
    if (!this.complete) throw new Error("PLAIN authentication not complete");
    return this.user;
  }

  evaluateResponse(token: Buffer): Buffer {
    if (this.complete) throw new SaslAuthenticationError("PLAIN authentication already complete");
    const parts = token.toString("utf8").split("\u0000");
    if (parts.length !== 3)
      throw new SaslAuthenticationError("Invalid SASL/PLAIN response: expected 3 tokens");
    const [authzid, user, password] = parts;
    if (user === "") throw new SaslAuthenticationError("Authentication failed: username not specified");
    if (password === "") throw new SaslAuthenticationError("Authentication failed: password not specified");
    const expected = this.users.get(user);
    // Compare against something even for an unknown user, so that one is not told apart by the time taken.
    const ok = sameSecret(password, expected ?? "\u0000no such user\u0000") && expected !== undefined;
    if (!ok) throw new SaslAuthenticationError("Authentication failed: Invalid username or password");
    if (authzid !== "" && authzid !== user)
      throw new SaslAuthenticationError(
        "Authentication failed: Client requested an authorization id that is different from username",
      );
    this.user = user;
    this.complete = true;
    return Buffer.alloc(0);
  }
}

/** The PLAIN users of a PlainLoginModule's options (`user_<name>="password"`). */
export function plainUsers(options: ReadonlyMap<string, string>): Map<string, string> {
  const users = new Map<string, string>();
  for (const [k, v] of options) if (k.startsWith("user_") && k.length > 5) users.set(k.slice(5), v);
  return users;
}
