// The client side of one SASL mechanism (Kafka's SaslClient as used by SaslClientAuthenticator): the
// bytes a client sends in each SaslAuthenticate request, given the broker's previous answer. The
// connection drives it after SaslHandshake (KIP-152) has agreed on `name`; a mechanism knows nothing of
// sockets or Kafka framing.

export interface SaslClientMechanism {
  /** The mechanism's name as SaslHandshake sends it, e.g. "PLAIN", "SCRAM-SHA-512". */
  readonly name: string;
  /** The first token the client sends (PLAIN's whole message, SCRAM's client-first-message). */
  initialResponse(): Buffer;
  /**
   * The next token for the broker's `challenge` (the auth_bytes of the previous SaslAuthenticate
   * response), or null when the exchange is complete on the client's side. Throws an Error whose
   * message says what was wrong when the broker's answer is invalid (e.g. a bad SCRAM server signature).
   */
  evaluateChallenge(challenge: Buffer): Buffer | null;
  /** True once the client has verified everything it needs from the broker. */
  readonly complete: boolean;
}

/** The credentials a client authenticates with (from sasl.jaas.config's username and password options). */
export interface SaslClientCredentials {
  readonly username: string;
  readonly password: string;
}
