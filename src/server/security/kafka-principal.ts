// KafkaPrincipal: who a connection is, as Kafka's DefaultKafkaPrincipalBuilder decides — `User:<name>`
// after SASL (the mechanism's authorization id), `User:<mapped DN>` for a TLS client certificate
// (ssl.principal.mapping.rules), and User:ANONYMOUS otherwise (PLAINTEXT, TLS without a client
// certificate). Requests carry it in RequestContext.principal; the authorizer decides on it.

import type { TLSSocket } from "node:tls";
import { rfc2253, type SslPrincipalMapper } from "./ssl-principal-mapper.js";

export const ANONYMOUS_PRINCIPAL = "User:ANONYMOUS";

export function userPrincipal(name: string): string {
  return `User:${name}`;
}

/** The principal of a TLS connection's client certificate, or ANONYMOUS when it sent none. */
export function sslPrincipal(socket: TLSSocket, mapper: SslPrincipalMapper): string {
  const cert = socket.getPeerX509Certificate?.();
  if (cert === undefined) return ANONYMOUS_PRINCIPAL;
  return userPrincipal(mapper.getName(rfc2253(cert.subject)));
}
