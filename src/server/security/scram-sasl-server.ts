// ScramSaslServer: SCRAM-SHA-256 / SCRAM-SHA-512 on the broker (RFC 5802, RFC 7677, Kafka's
// ScramSaslServer), over the CredentialCache:
//   client-first  gs2 header "n" (no channel binding), optional authzid (must be the user), saslname
//                 (=2C / =3D unescaped), client nonce → server-first with nonce+server nonce, the
//                 user's salt and iterations;
//   client-final  channel binding must be the gs2 header (c=biws for "n,,"), the combined nonce (or, as
//                 Kafka 3.8.1+ accepts for librdkafka < 2.6.1, anything ending with it), and a
//                 proof whose H(ClientSignature XOR proof) equals the StoredKey (constant time) →
//                 server-final v=<ServerSignature>.
// An unknown user (or one without a credential of this mechanism, or fewer iterations than the
// mechanism's minimum) gets a server-first with a made-up salt derived from the user name and a
// per-broker secret, then fails at the proof like a wrong password: both get the same message,
// Kafka's "Authentication failed during authentication due to invalid credentials with SASL mechanism
// <m>", and nothing in the exchange tells them apart. The KIP-48 tokenauth extension is not supported
// (such a client fails the same way).

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ScramCredential } from "../../common/security/scram-credential.js";
import {
  authMessage,
  clientSignature,
  hash,
  secureRandomString,
  serverSignature,
  usernameOf,
  xor,
} from "../../common/security/scram-formatter.js";
import type { ScramMechanism } from "../../common/security/scram-mechanism.js";
import {
  type ClientFirstMessage,
  formatServerFinal,
  formatServerFirst,
  parseClientFinal,
  parseClientFirst,
} from "../../common/security/scram-messages.js";
import type { CredentialCache } from "./credential-cache.js";
import { SaslAuthenticationError, type SaslServer } from "./plain-sasl-server.js";

/** Per-process secret for the made-up salts of unknown users (stable while the broker runs). */
const FAKE_SALT_SECRET = randomBytes(32);

type State = "client-first" | "client-final" | "complete" | "failed";

export class ScramSaslServer implements SaslServer {
  private state: State = "client-first";
  private user = "";
  private clientFirst: ClientFirstMessage | undefined;
  private serverFirstText = "";
  private combinedNonce = "";
  /** The user's credential, or a made-up one that no proof matches. */
  private credential: ScramCredential | undefined;
  private credentialIsReal = false;

  /** `reauthentication`: a KIP-368 re-authentication, which the failure message names. */
  constructor(
    private readonly scram: ScramMechanism,
    private readonly credentials: CredentialCache,
    private readonly reauthentication = false,
  ) {}

  get mechanism(): string {
    return this.scram.name;
  }

  get isComplete(): boolean {
    return this.state === "complete";
  }

  get authorizationId(): string {
    if (this.state !== "complete") throw new Error("Authentication exchange has not completed");
    return this.user;
  }

  private fail(): never {
    this.state = "failed";
    this.credential = undefined;
    throw new SaslAuthenticationError(
      `Authentication failed during ${this.reauthentication ? "re-authentication" : "authentication"} due to invalid credentials with SASL mechanism ${this.scram.name}`,
    );
  }

  evaluateResponse(token: Buffer): Buffer {
    try {
      if (this.state === "client-first") return this.onClientFirst(token);
      if (this.state === "client-final") return this.onClientFinal(token);
    } catch (e) {
      if (e instanceof SaslAuthenticationError) throw e;
      this.fail();
    }
    const state = this.state;
    this.state = "failed";
    throw new SaslAuthenticationError(`Unexpected challenge in Sasl server state ${state}`);
  }

  private onClientFirst(token: Buffer): Buffer {
    const first = parseClientFirst(token);
    const user = usernameOf(first.saslName);
    if (user === undefined) this.fail();
    if (first.authorizationId !== "" && first.authorizationId !== first.saslName) {
      this.state = "failed";
      throw new SaslAuthenticationError(
        "Authentication failed: Client requested an authorization id that is different from username",
      );
    }
    const real = this.credentials.get(this.scram.name, user);
    const usable =
      real !== undefined &&
      real.iterations >= this.scram.minIterations &&
      first.extensions.get("tokenauth") !== "true";
    this.credential = usable ? real : this.madeUpCredential(user);
    this.credentialIsReal = usable;
    this.user = user;
    this.clientFirst = first;
    this.combinedNonce = first.nonce + secureRandomString();
    this.serverFirstText = formatServerFirst(
      this.combinedNonce,
      this.credential.salt,
      this.credential.iterations,
    );
    this.state = "client-final";
    return Buffer.from(this.serverFirstText, "utf8");
  }

  private onClientFinal(token: Buffer): Buffer {
    const final = parseClientFinal(token);
    const first = this.clientFirst!;
    const credential = this.credential!;
    const auth = authMessage(first.bare, this.serverFirstText, final.withoutProof);
    const signature = clientSignature(this.scram, credential.storedKey, auth);
    // Every check runs whatever the earlier ones said, so the time taken tells nothing either.
    const proofOk =
      final.proof.length === signature.length &&
      timingSafeEqual(hash(this.scram, xor(signature, final.proof)), credential.storedKey);
    // Kafka 3.8.1+ (the CVE-2024-56128 fix) accepts a nonce that ends with the combined nonce: librdkafka
    // before 2.6.1 sends its client nonce twice. The server part still has to be there, so no replay.
    const nonceOk =
      final.nonce.length >= this.combinedNonce.length &&
      sameText(final.nonce.slice(final.nonce.length - this.combinedNonce.length), this.combinedNonce);
    const bindingOk = sameText(final.channelBinding.toString("utf8"), first.gs2Header);
    if (!(proofOk && nonceOk && bindingOk && this.credentialIsReal)) this.fail();
    const server = serverSignature(this.scram, credential.serverKey, auth);
    this.credential = undefined;
    this.clientFirst = undefined;
    this.state = "complete";
    return Buffer.from(formatServerFinal(server), "utf8");
  }

  /** A credential for a user without one: a salt that is the same on every try, keys nothing matches. */
  private madeUpCredential(user: string): ScramCredential {
    // Shaped as the admin client's salts (130 bits in base 36, as text).
    const bits = createHmac("sha256", FAKE_SALT_SECRET)
      .update(`${this.scram.name}\u0000${user}`)
      .digest("hex");
    const salt = Buffer.from((BigInt(`0x${bits.slice(0, 33)}`) >> 2n).toString(36), "ascii");
    return {
      salt,
      storedKey: randomBytes(this.scram.hashBytes),
      serverKey: randomBytes(this.scram.hashBytes),
      iterations: this.scram.minIterations,
    };
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
