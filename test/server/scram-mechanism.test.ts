// SCRAM-SHA-256 / SCRAM-SHA-512 mechanisms in-process: the project's client mechanism
// (src/client/network/sasl/scram-client-mechanism.ts) against the broker's (security/scram-sasl-server.ts),
// both real, over a CredentialCache fed as the broker feeds it (a /config/users entity config).
//   - RFC 7677's SCRAM-SHA-256 example exchange, byte for byte, on both sides.
//   - Both mechanisms authenticate; the server's signature is checked by the client.
//   - A wrong password, an unknown user, a user without a credential of that mechanism, a bad
//     channel binding, a changed nonce and a malformed message all fail with the same message.
//   - saslname escaping (=2C, =3D), authzid different from the user, iterations below the minimum.
//   - The credential text form is Kafka's (salt=…,stored_key=…,server_key=…,iterations=…).

import assert from "node:assert/strict";
import { test } from "node:test";

import { ScramClientMechanism } from "../../src/client/network/sasl/scram-client-mechanism.js";
import { credentialFromString, credentialToString } from "../../src/common/security/scram-credential.js";
import {
  generateCredential,
  saltedPassword,
  saslName,
  usernameOf,
} from "../../src/common/security/scram-formatter.js";
import {
  SCRAM_SHA_256,
  SCRAM_SHA_512,
  type ScramMechanism,
} from "../../src/common/security/scram-mechanism.js";
import { sanitizeEntityName } from "../../src/server/metadata/zk-data.js";
import { CredentialCache } from "../../src/server/security/credential-cache.js";
import { SaslAuthenticationError } from "../../src/server/security/plain-sasl-server.js";
import { ScramSaslServer } from "../../src/server/security/scram-sasl-server.js";

function credentialText(
  m: ScramMechanism,
  password: string,
  iterations = 4096,
  salt = Buffer.from("salt-of-the-earth"),
): string {
  return credentialToString(
    generateCredential(m, salt, saltedPassword(m, password, salt, iterations), iterations),
  );
}

function cacheWith(user: string, config: Record<string, string>): CredentialCache {
  const cache = new CredentialCache();
  cache.updateEntity(`users/${sanitizeEntityName(user)}`, config);
  cache.setLoaded();
  return cache;
}

/** Runs a whole exchange; returns the server (complete) or the failure message. */
function exchange(server: ScramSaslServer, client: ScramClientMechanism): string | ScramSaslServer {
  try {
    const serverFirst = server.evaluateResponse(client.initialResponse());
    const clientFinal = client.evaluateChallenge(serverFirst)!;
    const serverFinal = server.evaluateResponse(clientFinal);
    assert.equal(client.evaluateChallenge(serverFinal), null);
    assert.ok(client.complete);
    return server;
  } catch (e) {
    assert.ok(e instanceof SaslAuthenticationError, String(e));
    return e.message;
  }
}

const GENERIC = (m: string) =>
  `Authentication failed during authentication due to invalid credentials with SASL mechanism ${m}`;

test("RFC 7677's SCRAM-SHA-256 example: the client's messages and the server's signature", () => {
  const salt = Buffer.from("W22ZaJ0SNY7soEsUEjb6gQ==", "base64");
  const client = new ScramClientMechanism(
    "SCRAM-SHA-256",
    { username: "user", password: "pencil" },
    "rOprNGfwEbeRWgbNEkqO",
  );
  assert.equal(client.initialResponse().toString(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  const final = client.evaluateChallenge(
    Buffer.from(`r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=${salt.toString("base64")},i=4096`),
  );
  assert.equal(
    final?.toString(),
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
  );
  assert.equal(client.evaluateChallenge(Buffer.from("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")), null);
  assert.ok(client.complete);
  // A wrong server signature is refused by the client.
  const c2 = new ScramClientMechanism(
    "SCRAM-SHA-256",
    { username: "user", password: "pencil" },
    "rOprNGfwEbeRWgbNEkqO",
  );
  c2.initialResponse();
  c2.evaluateChallenge(
    Buffer.from(`r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=${salt.toString("base64")},i=4096`),
  );
  assert.throws(
    () => c2.evaluateChallenge(Buffer.from("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")),
    /Invalid server signature/,
  );
  assert.equal(c2.complete, false);
  // A broker asking for too few or too many iterations is refused before any hashing.
  for (const [i, expected] of [
    [4095, /less than the minimum 4096/],
    [1_000_000, /more than the maximum 16384/],
  ] as const) {
    const c3 = new ScramClientMechanism("SCRAM-SHA-256", { username: "user", password: "pencil" }, "abc");
    c3.initialResponse();
    assert.throws(
      () => c3.evaluateChallenge(Buffer.from(`r=abcdef,s=${salt.toString("base64")},i=${i}`)),
      expected,
    );
  }
  // A server nonce that does not extend the client's is refused.
  const c4 = new ScramClientMechanism("SCRAM-SHA-256", { username: "user", password: "pencil" }, "abc");
  c4.initialResponse();
  assert.throws(
    () => c4.evaluateChallenge(Buffer.from(`r=xyzdef,s=${salt.toString("base64")},i=4096`)),
    /nonce/,
  );
  // The broker's side of the same exchange (its own nonce), over the stored credential.
  const cache = cacheWith("user", {
    "SCRAM-SHA-256": credentialText(SCRAM_SHA_256, "pencil", 4096, salt),
  });
  const server = new ScramSaslServer(SCRAM_SHA_256, cache);
  const first = server.evaluateResponse(Buffer.from("n,,n=user,r=rOprNGfwEbeRWgbNEkqO")).toString();
  assert.match(first, /^r=rOprNGfwEbeRWgbNEkqO[^,]+,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096$/);
});

for (const m of [SCRAM_SHA_256, SCRAM_SHA_512]) {
  test(`${m.name}: the client and server mechanisms authenticate; every failure says the same`, () => {
    const cache = cacheWith("alice", {
      [m.name]: credentialText(m, "alice-secret", 8192),
      producer_byte_rate: "1024",
    });
    const ok = exchange(
      new ScramSaslServer(m, cache),
      new ScramClientMechanism(m.name, { username: "alice", password: "alice-secret" }),
    );
    assert.ok(ok instanceof ScramSaslServer, String(ok));
    assert.equal(ok.authorizationId, "alice");
    assert.equal(ok.isComplete, true);
    const failures = [
      exchange(
        new ScramSaslServer(m, cache),
        new ScramClientMechanism(m.name, { username: "alice", password: "wrong" }),
      ),
      exchange(
        new ScramSaslServer(m, cache),
        new ScramClientMechanism(m.name, { username: "mallory", password: "alice-secret" }),
      ),
      exchange(
        new ScramSaslServer(m, cacheWith("alice", {})),
        new ScramClientMechanism(m.name, { username: "alice", password: "alice-secret" }),
      ),
    ];
    assert.deepEqual(failures, [GENERIC(m.name), GENERIC(m.name), GENERIC(m.name)]);
  });
}

test("an unknown user gets a server-first like a known one's, with the same salt on every try", () => {
  const cache = cacheWith("alice", { "SCRAM-SHA-512": credentialText(SCRAM_SHA_512, "x") });
  const first = (user: string) =>
    new ScramSaslServer(SCRAM_SHA_512, cache).evaluateResponse(Buffer.from(`n,,n=${user},r=abc`)).toString();
  const a = /^r=abc[^,]+,s=([^,]+),i=4096$/.exec(first("mallory"));
  assert.ok(a);
  assert.equal(/s=([^,]+)/.exec(first("mallory"))?.[1], a[1]);
  assert.notEqual(/s=([^,]+)/.exec(first("trudy"))?.[1], a[1]);
});

test("protocol violations fail with the generic message: channel binding, nonce, format, gs2 flag", () => {
  const m = SCRAM_SHA_512;
  const cache = cacheWith("alice", { [m.name]: credentialText(m, "pw") });
  const tamper = (edit: (clientFinal: string) => string): string => {
    const server = new ScramSaslServer(m, cache);
    const client = new ScramClientMechanism(m.name, { username: "alice", password: "pw" });
    const clientFinal = client
      .evaluateChallenge(server.evaluateResponse(client.initialResponse()))!
      .toString();
    try {
      server.evaluateResponse(Buffer.from(edit(clientFinal)));
      return "accepted";
    } catch (e) {
      return (e as Error).message;
    }
  };
  assert.equal(
    tamper((s) => s),
    "accepted",
  );
  assert.equal(
    tamper((s) => s.replace("c=biws", "c=eSws")),
    GENERIC(m.name),
  ); // "y,,"
  assert.equal(
    tamper((s) => s.replace(/r=([^,]+)/, "r=$1x")),
    GENERIC(m.name),
  );
  assert.equal(
    tamper((s) => s.replace(",p=", ",q=")),
    GENERIC(m.name),
  );
  for (const first of [
    "y,,n=alice,r=abc",
    "p=tls-unique,,n=alice,r=abc",
    "n,,n=al=ice,r=abc",
    "n,,r=abc",
    "",
  ]) {
    assert.throws(() => new ScramSaslServer(m, cache).evaluateResponse(Buffer.from(first)), {
      message: GENERIC(m.name),
    });
  }
  // A server exchange answers nothing more after it failed or completed.
  const s = new ScramSaslServer(m, cache);
  assert.throws(() => s.evaluateResponse(Buffer.from("")));
  assert.throws(() => s.evaluateResponse(Buffer.from("n,,n=alice,r=abc")), /Unexpected challenge/);
});

test("saslname escaping: a user name with , and = authenticates; an authzid must be the user", () => {
  assert.equal(saslName("a,b=c"), "a=2Cb=3Dc");
  assert.equal(usernameOf("a=2Cb=3Dc"), "a,b=c");
  assert.equal(usernameOf("a=b"), undefined);
  const m = SCRAM_SHA_256;
  const cache = cacheWith("a,b=c", { [m.name]: credentialText(m, "pw") });
  const ok = exchange(
    new ScramSaslServer(m, cache),
    new ScramClientMechanism(m.name, { username: "a,b=c", password: "pw" }),
  );
  assert.ok(ok instanceof ScramSaslServer);
  assert.equal(ok.authorizationId, "a,b=c");
  assert.throws(
    () => new ScramSaslServer(m, cache).evaluateResponse(Buffer.from("n,a=bob,n=a=2Cb=3Dc,r=abc")),
    {
      message: "Authentication failed: Client requested an authorization id that is different from username",
    },
  );
  const same = new ScramSaslServer(m, cache).evaluateResponse(Buffer.from("n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=abc"));
  assert.match(same.toString(), /^r=abc/);
});

test("a stored credential with fewer iterations than the minimum does not authenticate", () => {
  const m = SCRAM_SHA_256;
  const cache = cacheWith("alice", { [m.name]: credentialText(m, "pw", 1000) });
  const r = exchange(
    new ScramSaslServer(m, cache),
    new ScramClientMechanism(m.name, { username: "alice", password: "pw" }),
  );
  assert.equal(r, GENERIC(m.name));
});

test("Kafka's credential text form round-trips; a malformed one is reported and dropped", () => {
  const text = credentialText(SCRAM_SHA_512, "pw", 8192);
  assert.match(
    text,
    /^salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]+,server_key=[A-Za-z0-9+/=]+,iterations=8192$/,
  );
  assert.equal(credentialToString(credentialFromString(text)), text);
  const cache = new CredentialCache();
  assert.deepEqual(cache.updateEntity("users/alice", { "SCRAM-SHA-512": text }), []);
  assert.ok(cache.get("SCRAM-SHA-512", "alice"));
  const errors = cache.updateEntity("users/alice", { "SCRAM-SHA-512": "salt=abc,iterations=x" });
  assert.equal(errors.length, 1);
  assert.equal(cache.get("SCRAM-SHA-512", "alice"), undefined);
  // Client entities and user/client entities carry no credentials.
  assert.deepEqual(cache.updateEntity("clients/alice", { "SCRAM-SHA-512": text }), []);
  assert.equal(cache.get("SCRAM-SHA-512", "alice"), undefined);
  // A sanitized name is the user's name in the cache.
  cache.updateEntity(`users/${sanitizeEntityName("CN=alice,O=x")}`, { "SCRAM-SHA-512": text });
  assert.ok(cache.get("SCRAM-SHA-512", "CN=alice,O=x"));
});
