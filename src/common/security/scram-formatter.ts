// ScramFormatter: SCRAM's computations (RFC 5802 §3, Kafka's ScramFormatter) for one mechanism's hash —
// Hi (PBKDF2), ClientKey, StoredKey, ServerKey, the proofs and signatures over the AuthMessage — and the
// saslname escaping of user names (`,` → `=2C`, `=` → `=3D`). Passwords are used as their UTF-8 bytes
// (no SASLprep, as Kafka).

import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import type { ScramCredential } from "./scram-credential.js";
import type { ScramMechanism } from "./scram-mechanism.js";

export function hmac(m: ScramMechanism, key: Buffer, data: Buffer | string): Buffer {
  return createHmac(m.hash, key).update(data).digest();
}

export function hash(m: ScramMechanism, data: Buffer): Buffer {
  return createHash(m.hash).update(data).digest();
}

export function xor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new Error("SCRAM: xor of buffers of different sizes");
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** Hi(password, salt, i): PBKDF2 with the mechanism's HMAC, one hash-sized block. */
export function saltedPassword(
  m: ScramMechanism,
  password: string,
  salt: Buffer,
  iterations: number,
): Buffer {
  return pbkdf2Sync(Buffer.from(password, "utf8"), salt, iterations, m.hashBytes, m.hash);
}

export function clientKey(m: ScramMechanism, salted: Buffer): Buffer {
  return hmac(m, salted, "Client Key");
}

export function serverKey(m: ScramMechanism, salted: Buffer): Buffer {
  return hmac(m, salted, "Server Key");
}

export function storedKey(m: ScramMechanism, clientKeyBytes: Buffer): Buffer {
  return hash(m, clientKeyBytes);
}

/** The credential a broker stores for a salted password (ScramFormatter.generateCredential). */
export function generateCredential(
  m: ScramMechanism,
  salt: Buffer,
  salted: Buffer,
  iterations: number,
): ScramCredential {
  return {
    salt,
    storedKey: storedKey(m, clientKey(m, salted)),
    serverKey: serverKey(m, salted),
    iterations,
  };
}

/** AuthMessage = client-first-message-bare + "," + server-first-message + "," + client-final-without-proof. */
export function authMessage(
  clientFirstBare: string,
  serverFirst: string,
  clientFinalWithoutProof: string,
): Buffer {
  return Buffer.from(`${clientFirstBare},${serverFirst},${clientFinalWithoutProof}`, "utf8");
}

/** ClientSignature = HMAC(StoredKey, AuthMessage). */
export function clientSignature(m: ScramMechanism, stored: Buffer, auth: Buffer): Buffer {
  return hmac(m, stored, auth);
}

/** ServerSignature = HMAC(ServerKey, AuthMessage). */
export function serverSignature(m: ScramMechanism, server: Buffer, auth: Buffer): Buffer {
  return hmac(m, server, auth);
}

/** ClientProof = ClientKey XOR ClientSignature. */
export function clientProof(m: ScramMechanism, salted: Buffer, auth: Buffer): Buffer {
  const ck = clientKey(m, salted);
  return xor(ck, clientSignature(m, storedKey(m, ck), auth));
}

/** A user name as a saslname (ScramFormatter.saslName). */
export function saslName(username: string): string {
  return username.replace(/=/g, "=3D").replace(/,/g, "=2C");
}

/** The user name of a saslname (ScramFormatter.username); undefined when an `=` is not =2C or =3D. */
export function usernameOf(name: string): string | undefined {
  const u = name.replace(/=2C/g, ",");
  if (u.replace(/=3D/g, "").includes("=")) return undefined;
  return u.replace(/=3D/g, "=");
}

/** A random nonce of printable characters without `,` (ScramFormatter.secureRandomString). */
export function secureRandomString(): string {
  return randomBytes(24).toString("base64url");
}

/** A random salt as Kafka's admin client makes one (130 random bits in base 36, as bytes). */
export function randomSalt(): Buffer {
  const n = BigInt(`0x${randomBytes(17).toString("hex")}`) >> 6n;
  return Buffer.from(n.toString(36), "ascii");
}
