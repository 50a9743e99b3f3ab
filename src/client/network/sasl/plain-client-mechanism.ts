// PlainClientMechanism: the client side of SASL/PLAIN (RFC 4616, Kafka's PlainSaslClient). One token,
// `authzid NUL authcid NUL password` with an empty authorization id; the broker's answer carries nothing
// to verify, so the exchange is complete once the token is sent.

import type { SaslClientCredentials, SaslClientMechanism } from "./sasl-client-mechanism.js";

export class PlainClientMechanism implements SaslClientMechanism {
  readonly name = "PLAIN";
  private sent = false;

  constructor(private readonly credentials: SaslClientCredentials) {}

  initialResponse(): Buffer {
    this.sent = true;
    const { username, password } = this.credentials;
    return Buffer.from(`\u0000${username}\u0000${password}`, "utf8");
  }

  evaluateChallenge(_challenge: Buffer): Buffer | null {
    if (!this.sent) throw new Error("PLAIN: a challenge before the initial response");
    return null;
  }

  get complete(): boolean {
    return this.sent;
  }
}
