// ScramMessages: the four SCRAM messages (RFC 5802 §7, Kafka's ScramMessages) parsed with Kafka's
// grammar and formatted as Kafka writes them:
//   client-first  n,[a=<authzid>],[m=<v>,]n=<saslname>,r=<nonce>[,<ext>=<v>]*   (gs2 flag "n" only)
//   server-first  [m=<v>,]r=<nonce>,s=<b64 salt>,i=<iterations>[,<ext>=<v>]*
//   client-final  c=<b64 channel binding>,r=<nonce>[,<ext>=<v>]*,p=<b64 proof>
//   server-final  e=<error> | v=<b64 server signature>[,<ext>=<v>]*
// Each parse keeps the raw text the AuthMessage is computed over; a message that does not match is a
// ScramFormatError.

const SASLNAME = "(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+";
const PRINTABLE = "[\\x21-\\x2B\\x2D-\\x7E]+";
const VALUE = "[\\x01-\\x2B\\x2D-\\x7F]+";
const VALUE_SAFE = "[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]+";
const BASE64 = "(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?";
const RESERVED = `(?:m=${VALUE},)?`;
const EXTENSIONS = `(?:,[A-Za-z]+=${VALUE})*`;

const CLIENT_FIRST = new RegExp(
  `^n,(?:a=(?<authzid>${SASLNAME}))?,(?<bare>${RESERVED}n=(?<saslname>${SASLNAME}),r=(?<nonce>${PRINTABLE})(?<extensions>${EXTENSIONS}))$`,
);
const SERVER_FIRST = new RegExp(
  `^${RESERVED}r=(?<nonce>${PRINTABLE}),s=(?<salt>${BASE64}),i=(?<iterations>[0-9]+)${EXTENSIONS}$`,
);
const CLIENT_FINAL = new RegExp(
  `^(?<withoutProof>c=(?<channel>${BASE64}),r=(?<nonce>${PRINTABLE})${EXTENSIONS}),p=(?<proof>${BASE64})$`,
);
const SERVER_FINAL = new RegExp(`^(?:e=(?<error>${VALUE_SAFE})|v=(?<signature>${BASE64})${EXTENSIONS})$`);

export class ScramFormatError extends Error {
  override readonly name = "ScramFormatError";
}

export interface ClientFirstMessage {
  /** The gs2 header as sent ("n,," or "n,a=<authzid>,"), which the channel binding must repeat. */
  readonly gs2Header: string;
  /** The authzid (saslname as sent), "" when none. */
  readonly authorizationId: string;
  readonly saslName: string;
  readonly nonce: string;
  /** Extensions (`tokenauth=true`, …) by name. */
  readonly extensions: ReadonlyMap<string, string>;
  /** client-first-message-bare as sent. */
  readonly bare: string;
}

export interface ServerFirstMessage {
  readonly nonce: string;
  readonly salt: Buffer;
  readonly iterations: number;
  readonly text: string;
}

export interface ClientFinalMessage {
  readonly channelBinding: Buffer;
  readonly nonce: string;
  readonly proof: Buffer;
  /** client-final-message-without-proof as sent. */
  readonly withoutProof: string;
}

export type ServerFinalMessage =
  | { readonly error: string; readonly serverSignature?: undefined }
  | { readonly error?: undefined; readonly serverSignature: Buffer };

function text(bytes: Buffer): string {
  return bytes.toString("utf8");
}

export function parseClientFirst(bytes: Buffer): ClientFirstMessage {
  const m = CLIENT_FIRST.exec(text(bytes));
  if (m?.groups === undefined) throw new ScramFormatError("Invalid SCRAM client first message format");
  const g = m.groups;
  const extensions = new Map<string, string>();
  for (const kv of (g.extensions ?? "").split(",").slice(1)) {
    const eq = kv.indexOf("=");
    extensions.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  const authzid = g.authzid ?? "";
  return {
    gs2Header: authzid === "" ? "n,," : `n,a=${authzid},`,
    authorizationId: authzid,
    saslName: g.saslname,
    nonce: g.nonce,
    extensions,
    bare: g.bare,
  };
}

export function formatClientFirst(saslName: string, nonce: string): { message: string; bare: string } {
  const bare = `n=${saslName},r=${nonce}`;
  return { message: `n,,${bare}`, bare };
}

export function formatServerFirst(nonce: string, salt: Buffer, iterations: number): string {
  return `r=${nonce},s=${salt.toString("base64")},i=${iterations}`;
}

export function parseServerFirst(bytes: Buffer): ServerFirstMessage {
  const t = text(bytes);
  const m = SERVER_FIRST.exec(t);
  if (m?.groups === undefined) throw new ScramFormatError(`Invalid SCRAM server first message format: ${t}`);
  const iterations = Number(m.groups.iterations);
  if (!Number.isSafeInteger(iterations) || iterations <= 0)
    throw new ScramFormatError(
      `Invalid SCRAM server first message format: invalid iterations ${m.groups.iterations}`,
    );
  return { nonce: m.groups.nonce, salt: Buffer.from(m.groups.salt, "base64"), iterations, text: t };
}

export function parseClientFinal(bytes: Buffer): ClientFinalMessage {
  const m = CLIENT_FINAL.exec(text(bytes));
  if (m?.groups === undefined) throw new ScramFormatError("Invalid SCRAM client final message format");
  return {
    channelBinding: Buffer.from(m.groups.channel, "base64"),
    nonce: m.groups.nonce,
    proof: Buffer.from(m.groups.proof, "base64"),
    withoutProof: m.groups.withoutProof,
  };
}

/** client-final-message-without-proof for a gs2 header and nonce: `c=<b64 gs2 header>,r=<nonce>`. */
export function clientFinalWithoutProof(gs2Header: string, nonce: string): string {
  return `c=${Buffer.from(gs2Header, "utf8").toString("base64")},r=${nonce}`;
}

export function formatServerFinal(signature: Buffer): string {
  return `v=${signature.toString("base64")}`;
}

export function parseServerFinal(bytes: Buffer): ServerFinalMessage {
  const t = text(bytes);
  const m = SERVER_FINAL.exec(t);
  if (m?.groups === undefined) throw new ScramFormatError(`Invalid SCRAM server final message format: ${t}`);
  if (m.groups.error !== undefined) return { error: m.groups.error };
  return { serverSignature: Buffer.from(m.groups.signature, "base64") };
}
