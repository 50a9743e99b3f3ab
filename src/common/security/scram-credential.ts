// ScramCredential: what a broker keeps of a user's SCRAM password (RFC 5802 §3: the salt, StoredKey,
// ServerKey and iteration count, never the password), and its text form in the /config/users/<user>
// znode (Kafka's ScramCredentialUtils): `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`
// under the config key of its mechanism (`SCRAM-SHA-512`).

export interface ScramCredential {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

export class ScramCredentialFormatError extends Error {
  override readonly name = "ScramCredentialFormatError";
}

/** ScramCredentialUtils.credentialToString. */
export function credentialToString(c: ScramCredential): string {
  return `salt=${c.salt.toString("base64")},stored_key=${c.storedKey.toString("base64")},server_key=${c.serverKey.toString("base64")},iterations=${c.iterations}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)?$/;

/** ScramCredentialUtils.credentialFromString: all four fields, base64 keys, a positive iteration count. */
export function credentialFromString(text: string): ScramCredential {
  const fields = new Map<string, string>();
  for (const part of text.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new ScramCredentialFormatError(`Invalid credential: ${part} is not key=value`);
    fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const b64 = (key: string): Buffer => {
    const v = fields.get(key);
    if (v === undefined || !BASE64.test(v))
      throw new ScramCredentialFormatError(`Invalid credential: ${key} missing or not base64`);
    return Buffer.from(v, "base64");
  };
  const it = fields.get("iterations");
  if (it === undefined || !/^\d{1,9}$/.test(it) || Number(it) <= 0)
    throw new ScramCredentialFormatError(`Invalid credential: iterations ${it ?? "missing"}`);
  return {
    salt: b64("salt"),
    storedKey: b64("stored_key"),
    serverKey: b64("server_key"),
    iterations: Number(it),
  };
}
