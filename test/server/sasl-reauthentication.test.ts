// Issue 21, KIP-368: `connections.max.reauth.ms` on a real broker process with SCRAM-SHA-512 users made by
// `tributary configs`. The wire-level parts speak SaslHandshake/SaslAuthenticate over a real socket with the
// project's own SCRAM client mechanism; @platformatic/kafka is the real client that re-authenticates.
//   - The final SaslAuthenticate v1+ response carries session_lifetime_ms (3000).
//   - A request after the session expired closes the connection (also for a client that authenticated
//     with SaslAuthenticate v0 and cannot re-authenticate); before it, requests are served.
//   - A SaslHandshake + SaslAuthenticate on the authenticated connection re-authenticates it: a new
//     session, the connection lives past the first one's end. Another principal is refused ("Cannot change
//     principals during re-authentication from User.alice: User.bob"), as is a wrong password ("… during
//     re-authentication …"), and the connection closes.
//   - @platformatic/kafka (which re-authenticates at 80 % of the lifetime) keeps one admin working over
//     three lifetimes, and the broker closes none of its connections for an expired session.
//   - The project's own client (BrokerConnection, which the tools and the brokers' inter-broker connections use)
//     re-authenticates at 85–95 % of the lifetime: one connection serves requests over three lifetimes.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ScramClientMechanism } from "../../src/client/network/sasl/scram-client-mechanism.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import type { SaslAuthenticateResponse } from "../../src/protocol/generated/messages/SaslAuthenticateResponse.js";
import { BrokerHarness, runCommand, sleep, tributaryArgv } from "../support/broker-harness.js";
import { WireClient } from "./wire-client.js";

const LIFETIME_MS = 3000;
const EXPIRED = /the SASL session expired \(connections\.max\.reauth\.ms\)/g;
let broker: BrokerHarness;
let saslPort = 0;

before(async () => {
  broker = await BrokerHarness.start({
    name: "reauth",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
      "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms": String(LIFETIME_MS),
    },
  });
  const [plainPort, port] = broker.listenerPorts();
  saslPort = port;
  for (const [user, password] of [
    ["alice", "alice-secret"],
    ["bob", "bob-secret"],
  ]) {
    const r = await runCommand(
      process.execPath,
      tributaryArgv([
        ...["configs", "--bootstrap-server", `127.0.0.1:${plainPort}`, "--alter", "--entity-type", "users"],
        ...["--entity-name", user, "--add-config", `SCRAM-SHA-512=[password=${password}]`],
      ]),
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
  }
});

after(async () => {
  await broker?.close();
});

/** SaslHandshake v1 + SaslAuthenticate (`version`) with SCRAM-SHA-512; the last response. */
async function authenticate(
  c: WireClient,
  user: string,
  password: string,
  version = 2,
): Promise<SaslAuthenticateResponse> {
  const hs = await c.request(Apis.SaslHandshake, 1, { mechanism: "SCRAM-SHA-512" });
  assert.equal(hs.errorCode, ErrorCode.NONE);
  const mechanism = new ScramClientMechanism("SCRAM-SHA-512", { username: user, password });
  const first = await c.request(Apis.SaslAuthenticate, version, { authBytes: mechanism.initialResponse() });
  if (first.errorCode !== ErrorCode.NONE) return first;
  const final = await c.request(Apis.SaslAuthenticate, version, {
    authBytes: mechanism.evaluateChallenge(first.authBytes)!,
  });
  if (final.errorCode === ErrorCode.NONE) {
    assert.equal(mechanism.evaluateChallenge(final.authBytes), null);
    assert.ok(mechanism.complete);
  }
  return final;
}

async function metadataWorks(c: WireClient): Promise<boolean> {
  try {
    const md = await c.request(Apis.Metadata, 9, { ...defaultMetadataRequest(), topics: [] });
    return md.brokers.length > 0;
  } catch {
    return false;
  }
}

test("session_lifetime_ms is sent; a request after the session ended closes the connection", async () => {
  const c = await WireClient.connect(saslPort);
  try {
    const r = await authenticate(c, "alice", "alice-secret");
    assert.equal(r.errorCode, ErrorCode.NONE);
    assert.equal(r.sessionLifetimeMs, BigInt(LIFETIME_MS));
    assert.ok(await metadataWorks(c));
    await sleep(LIFETIME_MS + 500);
    assert.equal(await metadataWorks(c), false);
    assert.ok(await c.waitClosed(2000));
  } finally {
    c.close();
  }
  // SaslAuthenticate v0 (no session_lifetime_ms, no re-authentication): closed too once the session ended.
  const old = await WireClient.connect(saslPort);
  try {
    assert.equal((await authenticate(old, "alice", "alice-secret", 0)).errorCode, ErrorCode.NONE);
    assert.ok(await metadataWorks(old));
    await sleep(LIFETIME_MS + 500);
    assert.equal(await metadataWorks(old), false);
  } finally {
    old.close();
  }
});

test("re-authentication on the same connection starts a new session; principal and password are checked", async () => {
  const c = await WireClient.connect(saslPort);
  try {
    assert.equal((await authenticate(c, "alice", "alice-secret")).errorCode, ErrorCode.NONE);
    await sleep(LIFETIME_MS - 1500);
    const again = await authenticate(c, "alice", "alice-secret");
    assert.equal(again.errorCode, ErrorCode.NONE);
    assert.equal(again.sessionLifetimeMs, BigInt(LIFETIME_MS));
    await sleep(2000); // past the first session's end, within the second's
    assert.ok(await metadataWorks(c), "the re-authenticated connection is still served");
    // Re-authenticating again (more than a second later) works; a handshake within a second of that is
    // not a re-authentication: it reaches the request pipeline, which answers ILLEGAL_SASL_STATE, and the
    // connection stays served (Kafka's MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS).
    assert.equal((await authenticate(c, "alice", "alice-secret")).errorCode, ErrorCode.NONE);
    const tooSoon = await c.request(Apis.SaslHandshake, 1, { mechanism: "SCRAM-SHA-512" });
    assert.equal(tooSoon.errorCode, ErrorCode.ILLEGAL_SASL_STATE);
    assert.ok(await metadataWorks(c));
  } finally {
    c.close();
  }

  const swap = await WireClient.connect(saslPort);
  try {
    assert.equal((await authenticate(swap, "alice", "alice-secret")).errorCode, ErrorCode.NONE);
    await sleep(1100);
    const r = await authenticate(swap, "bob", "bob-secret");
    assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(
      r.errorMessage,
      "Cannot change principals during re-authentication from User.alice: User.bob",
    );
    assert.equal(await metadataWorks(swap), false);
  } finally {
    swap.close();
  }

  const wrong = await WireClient.connect(saslPort);
  try {
    assert.equal((await authenticate(wrong, "alice", "alice-secret")).errorCode, ErrorCode.NONE);
    await sleep(1100);
    const r = await authenticate(wrong, "alice", "not-it");
    assert.equal(r.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
    assert.equal(
      r.errorMessage,
      "Authentication failed during re-authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    );
    assert.equal(await metadataWorks(wrong), false);
  } finally {
    wrong.close();
  }
});

test("@platformatic/kafka re-authenticates: one admin keeps working over three session lifetimes", async () => {
  const { Admin } = await import("@platformatic/kafka");
  const expiredBefore = [...broker.output.matchAll(EXPIRED)].length;
  const admin = new Admin({
    clientId: "reauth-admin",
    bootstrapBrokers: [`127.0.0.1:${saslPort}`],
    sasl: { mechanism: "SCRAM-SHA-512", username: "bob", password: "bob-secret" },
    timeout: 10_000,
    retries: 0,
  });
  try {
    await admin.createTopics({ topics: ["reauth-t"], partitions: 1, replicas: 1 });
    for (let i = 0; i < 9; i++) {
      assert.ok((await admin.listTopics()).includes("reauth-t"), `listTopics #${i}`);
      await sleep(1000);
    }
  } finally {
    await admin.close();
  }
  assert.equal([...broker.output.matchAll(EXPIRED)].length, expiredBefore, "no connection closed as expired");
});

test("the project's client re-authenticates: one connection serves requests over three session lifetimes", async () => {
  const { BrokerConnection } = await import("../../src/client/network/broker-connection.js");
  const expiredBefore = [...broker.output.matchAll(EXPIRED)].length;
  const conn = await BrokerConnection.connect("127.0.0.1", saslPort, {
    clientId: "reauth-project-client",
    sasl: { mechanism: "SCRAM-SHA-512", credentials: { username: "alice", password: "alice-secret" } },
  });
  try {
    // Requests every 250 ms, some in flight when a re-authentication is due (it waits for them, and new
    // requests wait for it), for 9 s = three lifetimes.
    const started = Date.now();
    let n = 0;
    while (Date.now() - started < 3 * LIFETIME_MS) {
      const md = await Promise.all(
        [0, 1].map(() =>
          conn.send(Apis.Metadata, conn.versionFor(Apis.Metadata), {
            ...defaultMetadataRequest(),
            topics: [],
          }),
        ),
      );
      assert.ok(md.every((m) => m.brokers.length === 1));
      n++;
      await sleep(250);
    }
    assert.ok(n >= 20, `${n} rounds`);
    assert.equal(conn.closed, false, "the same connection throughout");
  } finally {
    conn.close();
  }
  assert.equal([...broker.output.matchAll(EXPIRED)].length, expiredBefore, "no connection closed as expired");
});
