// SslEngineFactory: Kafka's ssl.* settings (DefaultSslEngineFactory) turned into Node's TLS options, for a
// broker's SSL listeners and for the clients and tools (security.protocol=SSL). Reads:
//   ssl.keystore.type         PKCS12 (ssl.keystore.location + ssl.keystore.password) or PEM (KIP-651:
//                             ssl.keystore.location holding the private key and the certificate chain, or
//                             ssl.keystore.key + ssl.keystore.certificate.chain inline; ssl.key.password
//                             for an encrypted key). Kafka's default JKS cannot be read by Node's TLS: a
//                             keystore given as JKS is refused in one line that says how to convert it.
//   ssl.truststore.type       PEM (ssl.truststore.location or ssl.truststore.certificates); without one the
//                             system's CAs are trusted.
//   ssl.enabled.protocols     the lowest and highest of them become the allowed range (TLSv1.2, TLSv1.3).
//   ssl.cipher.suites         Java/IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or OpenSSL names.
//   ssl.client.auth           (broker) none | requested | required: mutual TLS.
//   ssl.endpoint.identification.algorithm  (client) "https" (default) checks the broker's host name
//                             against its certificate; "" does not.
// Every error is one line naming the setting, its value and what was expected.

import { readFileSync } from "node:fs";
import type { SecureVersion } from "node:tls";

/** A bad ssl.* setting; the message is one line. */
export class SslConfigError extends Error {
  override readonly name = "SslConfigError";
}

/** What Node's tls.createServer / tls.connect take from the settings. */
export interface SslOptions {
  key?: Buffer;
  cert?: Buffer;
  pfx?: Buffer;
  passphrase?: string;
  ca?: Buffer;
  minVersion?: SecureVersion;
  maxVersion?: SecureVersion;
  ciphers?: string;
  /** Broker: ask for (and, with rejectUnauthorized, require) a client certificate. */
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
  /** Client: false when ssl.endpoint.identification.algorithm is empty. */
  checkHostName?: boolean;
}

/** Reads a setting by its ssl.* name (the caller applies listener prefixes and defaults). */
export type SslSettings = (key: string) => string | undefined;

const PROTOCOLS: readonly SecureVersion[] = ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];

/** IANA (Java) names of the TLS 1.2 suites OpenSSL knows under other names. */
const IANA_TO_OPENSSL: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: "ECDHE-ECDSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: "ECDHE-RSA-AES128-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384: "ECDHE-ECDSA-AES256-SHA384",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384: "ECDHE-RSA-AES256-SHA384",
  TLS_DHE_RSA_WITH_AES_128_GCM_SHA256: "DHE-RSA-AES128-GCM-SHA256",
  TLS_DHE_RSA_WITH_AES_256_GCM_SHA384: "DHE-RSA-AES256-GCM-SHA384",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
};

function bad(key: string, value: string, expected: string): SslConfigError {
  return new SslConfigError(`Invalid value ${value} for configuration ${key}: ${expected}`);
}

function readStoreFile(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(key, path, code === "ENOENT" ? "no such file" : `cannot be read (${(e as Error).message})`);
  }
}

function list(v: string | undefined): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** The keystore (the broker's certificate, or a client's for mutual TLS), if one is configured. */
function keyStore(get: SslSettings, out: SslOptions): void {
  const type = (get("ssl.keystore.type") ?? "JKS").toUpperCase();
  const location = get("ssl.keystore.location");
  const inlineKey = get("ssl.keystore.key");
  const inlineChain = get("ssl.keystore.certificate.chain");
  if (location === undefined && inlineKey === undefined && inlineChain === undefined) return;
  if (type === "JKS")
    throw bad(
      "ssl.keystore.type",
      "JKS",
      "Node's TLS cannot read JKS keystores: convert it (keytool -importkeystore -srckeystore ks.jks -destkeystore ks.p12 -deststoretype PKCS12) and set ssl.keystore.type=PKCS12, or use PEM",
    );
  if (type === "PKCS12") {
    if (location === undefined)
      throw bad("ssl.keystore.location", "(none)", "a PKCS12 file for ssl.keystore.type=PKCS12");
    out.pfx = readStoreFile("ssl.keystore.location", location);
    out.passphrase = get("ssl.keystore.password") ?? get("ssl.key.password");
    return;
  }
  if (type !== "PEM") throw bad("ssl.keystore.type", type, "PKCS12 or PEM");
  let keyPem: string;
  let chainPem: string;
  if (location !== undefined) {
    const text = readStoreFile("ssl.keystore.location", location).toString("utf8");
    keyPem = (text.match(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/) ?? [
      "",
    ])[0];
    chainPem = (text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).join("\n");
  } else {
    keyPem = inlineKey ?? "";
    chainPem = inlineChain ?? "";
  }
  if (!/PRIVATE KEY-----/.test(keyPem))
    throw bad(
      location !== undefined ? "ssl.keystore.location" : "ssl.keystore.key",
      location ?? "(inline)",
      "a PEM private key",
    );
  if (!/BEGIN CERTIFICATE/.test(chainPem))
    throw bad(
      location !== undefined ? "ssl.keystore.location" : "ssl.keystore.certificate.chain",
      location ?? "(inline)",
      "a PEM certificate chain",
    );
  out.key = Buffer.from(keyPem);
  out.cert = Buffer.from(chainPem);
  const keyPassword = get("ssl.key.password");
  if (keyPassword !== undefined) out.passphrase = keyPassword;
}

/** The truststore: the CAs a peer's certificate must chain to (the system's when none is given). */
function trustStore(get: SslSettings, out: SslOptions): void {
  const location = get("ssl.truststore.location");
  const inline = get("ssl.truststore.certificates");
  if (location === undefined && inline === undefined) return;
  const type = (get("ssl.truststore.type") ?? (inline !== undefined ? "PEM" : "JKS")).toUpperCase();
  if (type !== "PEM")
    throw bad(
      "ssl.truststore.type",
      type,
      "PEM (KIP-651): Node's TLS takes CA certificates as PEM (export them: keytool -exportcert -rfc, or openssl pkcs12 -nokeys)",
    );
  const pem =
    location !== undefined ? readStoreFile("ssl.truststore.location", location).toString("utf8") : inline!;
  if (!/BEGIN CERTIFICATE/.test(pem))
    throw bad(
      location !== undefined ? "ssl.truststore.location" : "ssl.truststore.certificates",
      location ?? "(inline)",
      "PEM certificates",
    );
  out.ca = Buffer.from(pem);
}

function protocols(get: SslSettings, out: SslOptions): void {
  const raw = get("ssl.enabled.protocols");
  if (raw === undefined) {
    out.minVersion = "TLSv1.2";
    return;
  }
  const enabled = list(raw);
  const unknown = enabled.find((p) => !PROTOCOLS.includes(p as SecureVersion));
  if (enabled.length === 0 || unknown !== undefined)
    throw bad("ssl.enabled.protocols", raw, `a list of ${PROTOCOLS.join(", ")}`);
  const idx = enabled.map((p) => PROTOCOLS.indexOf(p as SecureVersion));
  out.minVersion = PROTOCOLS[Math.min(...idx)];
  out.maxVersion = PROTOCOLS[Math.max(...idx)];
}

function cipherSuites(get: SslSettings, out: SslOptions): void {
  const raw = get("ssl.cipher.suites");
  const names = list(raw);
  if (names.length === 0) return;
  out.ciphers = names
    .map((n) => {
      if (n.startsWith("TLS_AES_") || n.startsWith("TLS_CHACHA20_")) return n; // TLS 1.3: same names
      const mapped = IANA_TO_OPENSSL[n];
      if (mapped !== undefined) return mapped;
      if (/^[A-Z0-9]+(-[A-Z0-9]+)+$/.test(n)) return n; // already an OpenSSL name
      throw bad("ssl.cipher.suites", raw!, `known cipher suite names (${n} is not one)`);
    })
    .join(":");
}

/** TLS options of a broker's SSL listener (`get` reads the listener's settings, prefixes applied). */
export function serverSslOptions(get: SslSettings): SslOptions {
  const out: SslOptions = {};
  keyStore(get, out);
  if (out.pfx === undefined && out.key === undefined)
    throw bad(
      "ssl.keystore.location",
      "(none)",
      "an SSL listener needs a keystore (ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain)",
    );
  trustStore(get, out);
  protocols(get, out);
  cipherSuites(get, out);
  const auth = (get("ssl.client.auth") ?? "none").toLowerCase();
  if (auth !== "none" && auth !== "requested" && auth !== "required")
    throw bad("ssl.client.auth", auth, "none, requested or required");
  out.requestCert = auth !== "none";
  out.rejectUnauthorized = auth === "required";
  return out;
}

/** TLS options of a client connecting with security.protocol=SSL. */
export function clientSslOptions(get: SslSettings): SslOptions {
  const out: SslOptions = {};
  keyStore(get, out);
  trustStore(get, out);
  protocols(get, out);
  cipherSuites(get, out);
  const alg = get("ssl.endpoint.identification.algorithm") ?? "https";
  if (alg !== "" && alg.toLowerCase() !== "https")
    throw bad("ssl.endpoint.identification.algorithm", alg, "https, or empty to skip the host name check");
  out.checkHostName = alg !== "";
  out.rejectUnauthorized = true;
  return out;
}

/**
 * Kafka's default principal of a TLS client (ssl.principal.mapping.rules=DEFAULT): its certificate's
 * subject as a distinguished name, most specific part first (`CN=client,OU=dev,O=Example`); ANONYMOUS
 * without a certificate.
 */
export function principalOfSubject(subject: Record<string, string | string[]> | undefined): string {
  if (subject === undefined || Object.keys(subject).length === 0) return "ANONYMOUS";
  const order = ["CN", "OU", "O", "L", "ST", "C"];
  const keys = [
    ...order.filter((k) => k in subject),
    ...Object.keys(subject).filter((k) => !order.includes(k)),
  ];
  return keys
    .flatMap((k) => {
      const v = subject[k];
      return (Array.isArray(v) ? v : [v]).map((x) => `${k}=${x}`);
    })
    .join(",");
}
