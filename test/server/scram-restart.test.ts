// Issue 21: SCRAM credentials live in the metadata store (/config/users/<u>), not in the broker's memory
// only. A broker restarted on the same log dir (embedded metadata store) authenticates a user created
// before the restart; a client connecting while it starts (the SASL listener is bound before the
// metadata is loaded) waits for the credentials instead of being refused.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { ScramClientMechanism } from "../../src/client/network/sasl/scram-client-mechanism.js";
import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import { BrokerHarness, freePort, runCommand, sleep, tributaryArgv } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { WireClient } from "./wire-client.js";

const KCAT = "/usr/bin/kcat";
let broker: BrokerHarness;
let plainPort = 0;
let saslPort = 0;

before(async () => {
  plainPort = await freePort();
  do saslPort = await freePort();
  while (saslPort === plainPort);
  broker = await BrokerHarness.start({
    name: "scram-restart",
    port: plainPort,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${plainPort},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
      "sasl.enabled.mechanisms": "SCRAM-SHA-256",
    },
  });
  const r = await runCommand(
    process.execPath,
    tributaryArgv([
      ...["configs", "--bootstrap-server", `127.0.0.1:${plainPort}`, "--alter", "--entity-type", "users"],
      ...["--entity-name", "dora", "--add-config", "SCRAM-SHA-256=[password=dora-secret]"],
    ]),
    { timeoutMs: 30_000 },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
});

after(async () => {
  await broker?.close();
});

function kcat(): Promise<{ code: number | null; out: string }> {
  return runCommand(
    KCAT,
    [
      ...[
        "-b",
        `127.0.0.1:${saslPort}`,
        "-X",
        "security.protocol=sasl_plaintext",
        "-X",
        "sasl.mechanisms=SCRAM-SHA-256",
      ],
      ...["-X", "sasl.username=dora", "-X", "sasl.password=dora-secret", "-L", "-m", "2"],
    ],
    { timeoutMs: 15_000 },
  ).then((r) => ({ code: r.code, out: r.stdout + r.stderr }));
}

test("a credential made before a restart authenticates after it, also for a client that connects while it starts", {
  skip: skipUnlessInstalled("kcat", "openssl"),
}, async () => {
  assert.equal((await kcat()).code, 0);
  await broker.stop("SIGTERM");
  // Clients (the project's SCRAM mechanism over a raw socket) try from before the broker is up until it
  // is, each as soon as the SASL listener accepts.
  const outcomes: number[] = [];
  let up = false;
  const attempt = async (): Promise<number | undefined> => {
    let c: WireClient;
    try {
      c = await WireClient.connect(saslPort);
    } catch {
      return undefined; // not listening yet
    }
    try {
      const hs = await c.request(Apis.SaslHandshake, 1, { mechanism: "SCRAM-SHA-256" });
      if (hs.errorCode !== ErrorCode.NONE) return hs.errorCode;
      const m = new ScramClientMechanism("SCRAM-SHA-256", { username: "dora", password: "dora-secret" });
      const first = await c.request(Apis.SaslAuthenticate, 2, { authBytes: m.initialResponse() });
      if (first.errorCode !== ErrorCode.NONE) return first.errorCode;
      const final = await c.request(Apis.SaslAuthenticate, 2, {
        authBytes: m.evaluateChallenge(first.authBytes)!,
      });
      return final.errorCode;
    } catch {
      return undefined; // closed while the broker started or stopped
    } finally {
      c.close();
    }
  };
  const loops = [0, 1, 2].map(async () => {
    while (!up) {
      const r = await attempt();
      if (r !== undefined) outcomes.push(r);
      await sleep(5);
    }
  });
  await broker.restart();
  up = true;
  await Promise.all(loops);
  assert.ok(outcomes.length > 0, "some exchange ran while the broker started");
  assert.deepEqual(
    outcomes.filter((code) => code !== ErrorCode.NONE),
    [],
    "no client was refused while the credentials loaded",
  );
  assert.equal((await kcat()).code, 0, "dora authenticates after the restart (kcat)");
});
