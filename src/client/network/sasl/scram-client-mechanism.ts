// ScramClientMechanism: SCRAM-SHA-256 / SCRAM-SHA-512 on the client (RFC 5802, RFC 7677, Kafka's
// ScramSaslClient): client-first `n,,n=<saslname>,r=<nonce>`; for the broker's server-first (its nonce
// must extend ours, iterations between the mechanism's minimum and 16384) the client-final `c=biws,r=…,p=<proof>`;
// then the broker's server-final must carry the expected ServerSignature (`e=<error>` or a wrong
// signature is an Error), after which the exchange is complete.

import { timingSafeEqual } from "node:crypto";
import {
  authMessage,
  clientProof,
  saltedPassword,
  saslName,
  secureRandomString,
  serverKey,
  serverSignature,
} from "../../../common/security/scram-formatter.js";
import {
  SCRAM_MAX_ITERATIONS,
  type ScramMechanism,
  scramMechanismByName,
} from "../../../common/security/scram-mechanism.js";
import {
  clientFinalWithoutProof,
  formatClientFirst,
  parseServerFinal,
  parseServerFirst,
} from "../../../common/security/scram-messages.js";
import type { SaslClientCredentials, SaslClientMechanism } from "./sasl-client-mechanism.js";

type State = "initial" | "server-first" | "server-final" | "complete" | "failed";

export class ScramClientMechanism implements SaslClientMechanism {
  readonly name: string;
  private readonly scram: ScramMechanism;
  private state: State = "initial";
  private readonly nonce: string;
  private clientFirstBare = "";
  private expectedServerSignature: Buffer | undefined;

  /** `mechanism`: "SCRAM-SHA-256" or "SCRAM-SHA-512"; `nonce` only for tests (default: random). */
  constructor(
    mechanism: string,
    private readonly credentials: SaslClientCredentials,
    nonce: string = secureRandomString(),
  ) {
    const scram = scramMechanismByName(mechanism);
    if (scram === undefined) throw new Error(`Unsupported SCRAM mechanism ${mechanism}`);
    this.scram = scram;
    this.name = scram.name;
    this.nonce = nonce;
  }

  get complete(): boolean {
    return this.state === "complete";
  }

  initialResponse(): Buffer {
    if (this.state !== "initial") throw new Error(`SCRAM: initial response in state ${this.state}`);
    const first = formatClientFirst(saslName(this.credentials.username), this.nonce);
    this.clientFirstBare = first.bare;
    this.state = "server-first";
    return Buffer.from(first.message, "utf8");
  }

  evaluateChallenge(challenge: Buffer): Buffer | null {
    try {
      if (this.state === "server-first") return this.onServerFirst(challenge);
      if (this.state === "server-final") return this.onServerFinal(challenge);
      throw new Error(`SCRAM: unexpected challenge in state ${this.state}`);
    } catch (e) {
      this.state = "failed";
      throw e;
    }
  }

  private onServerFirst(challenge: Buffer): Buffer {
    const first = parseServerFirst(challenge);
    if (!first.nonce.startsWith(this.nonce) || first.nonce.length === this.nonce.length)
      throw new Error("Invalid server nonce: does not start with client nonce");
    if (first.iterations < this.scram.minIterations)
      throw new Error(
        `Requested iterations ${first.iterations} is less than the minimum ${this.scram.minIterations} for ${this.scram.name}`,
      );
    // No broker stores more (Kafka's bound): a larger count would only keep this client hashing.
    if (first.iterations > SCRAM_MAX_ITERATIONS)
      throw new Error(
        `Requested iterations ${first.iterations} is more than the maximum ${SCRAM_MAX_ITERATIONS} for ${this.scram.name}`,
      );
    const salted = saltedPassword(this.scram, this.credentials.password, first.salt, first.iterations);
    const withoutProof = clientFinalWithoutProof("n,,", first.nonce);
    const auth = authMessage(this.clientFirstBare, first.text, withoutProof);
    const proof = clientProof(this.scram, salted, auth);
    this.expectedServerSignature = serverSignature(this.scram, serverKey(this.scram, salted), auth);
    this.state = "server-final";
    return Buffer.from(`${withoutProof},p=${proof.toString("base64")}`, "utf8");
  }

  private onServerFinal(challenge: Buffer): null {
    const final = parseServerFinal(challenge);
    if (final.error !== undefined)
      throw new Error(`Sasl authentication using ${this.name} failed with error: ${final.error}`);
    const expected = this.expectedServerSignature!;
    if (final.serverSignature.length !== expected.length || !timingSafeEqual(final.serverSignature, expected))
      throw new Error("Invalid server signature in server final message");
    this.state = "complete";
    return null;
  }
}
