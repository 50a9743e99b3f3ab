// Issue 32: a broker restarted within its previous ZooKeeper session's timeout. On a real ZooKeeper with
// zookeeper.session.timeout.ms=6000 (2 brokers):
//   - broker 1 SIGKILLed and started again at once finds /brokers/ids/1 still held by its previous
//     session: it logs that it waits for it (naming that session, read back from its log dir's
//     broker-registration-session), and registers under its new session once ZooKeeper has expired the old
//     one — within 1.5 × the timeout of the kill, plus a margin — instead of exiting as Kafka does;
//   - a second broker with id 0 (its own log dir) while broker 0 runs is refused at once, as Kafka refuses
//     it ("already registered … by another session"), and broker 0 keeps its registration;
//   - a second broker with id 0 whose log dir names broker 0's live session (the file copied from broker
//     0's: the worst case of a wrong identification) waits the bounded time, then is refused too, because
//     that session keeps being renewed: the wait never lets two live brokers share an id.

import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  REGISTRATION_SESSION_FILENAME,
  sessionIdHex,
} from "../../src/server/metadata/registration-session-file.js";
import { describeResult, runCommand, tributaryArgv } from "../support/broker-harness.js";
import {
  CLUSTER_DEFAULTS,
  ClusterHarness,
  SESSION_TIMEOUT_MS,
  withLogTails,
} from "../support/cluster-harness.js";

let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 2, name: "reregistration" });
});

after(async () => {
  await cluster?.close();
});

/** How long a restarted broker waits at most: 1.5 × the negotiated session timeout. */
const WAIT_MS = SESSION_TIMEOUT_MS * 1.5;

/**
 * Runs `tributary server-start` with broker.id 0 on the cluster (its own port and log dir) until it exits;
 * what it printed (it must exit 1) and how long it ran.
 */
async function startDuplicateOfBroker0(logDir: string): Promise<{ output: string; ms: number }> {
  const c = cluster!;
  const settings: Record<string, string> = {
    ...CLUSTER_DEFAULTS,
    "zookeeper.connect": c.zookeeperConnect,
    "broker.id": "0",
    listeners: "PLAINTEXT://127.0.0.1:0",
    "log.dirs": logDir,
  };
  const args = ["server-start", ...Object.entries(settings).flatMap(([k, v]) => ["--override", `${k}=${v}`])];
  const t0 = Date.now();
  const r = await runCommand(process.execPath, tributaryArgv(args), { timeoutMs: 45_000 });
  const ms = Date.now() - t0;
  assert.equal(r.code, 1, describeResult("a second broker with broker.id 0", r));
  return { output: r.stdout + r.stderr, ms };
}

test("a broker SIGKILLed and started again at once waits for its previous session's registration to expire, then registers", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const before = await c.stat("/brokers/ids/1");
      assert.ok(before, "/brokers/ids/1 missing");
      await c.stopBroker(1, "SIGKILL");
      const killedAt = Date.now();
      // Started at once: /brokers/ids/1 is still there (ZooKeeper has not expired the session yet).
      await c.startBroker(1);
      const upMs = Date.now() - killedAt;
      const after = await c.waitFor(
        "/brokers/ids/1 registered by a new session",
        WAIT_MS + 10_000,
        async () => {
          const st = await c.stat("/brokers/ids/1");
          return st !== undefined && st.ephemeralOwner !== before.ephemeralOwner ? st : undefined;
        },
      );
      const registeredMs = Date.now() - killedAt;
      assert.ok(c.broker(1).isRunning, `broker 1 exited:\n${c.broker(1).output}`);
      assert.ok(after.czxid > before.czxid, `czxid ${before.czxid} → ${after.czxid}`);
      const run = c.broker(1).stdout.slice(c.broker(1).stdout.lastIndexOf("=== start #"));
      assert.match(
        run,
        new RegExp(
          `INFO waiting up to ${WAIT_MS} ms for the registration of broker\\.id 1 by the previous session ${sessionIdHex(before.ephemeralOwner)} to expire`,
        ),
        c.broker(1).output,
      );
      assert.doesNotMatch(run, /already registered/);
      assert.ok(registeredMs <= WAIT_MS + 5000, `registered ${registeredMs} ms after the kill`);
      await c.waitForMetadataBrokers([0, 1], 20_000);
      assert.match(
        readFileSync(join(c.broker(1).logDir, REGISTRATION_SESSION_FILENAME), "utf8"),
        new RegExp(`^zookeeper\\.session\\.id=${sessionIdHex(after.ephemeralOwner)}$`, "m"),
      );
      console.log(
        `broker 1 registered again ${registeredMs} ms after its SIGKILL, serving after ${upMs} ms (session timeout ${SESSION_TIMEOUT_MS} ms)`,
      );
    },
  );
});

test("a second broker with the same id is refused while the first runs: at once, and after the bounded wait when its log dir names the live session", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const before = await c.stat("/brokers/ids/0");
      assert.ok(before, "/brokers/ids/0 missing");

      const plain = await startDuplicateOfBroker0(join(c.broker(0).root, "duplicate-logs"));
      assert.match(
        plain.output,
        /ERROR \[KafkaServer id=0\] Fatal error during KafkaServer startup\. Prepare to shutdown: broker\.id 0 is already registered at \/brokers\/ids\/0 by another session \(another broker uses this id\)/,
      );
      assert.match(
        plain.output,
        /^tributary server-start: broker\.id 0 is already registered at \/brokers\/ids\/0 by another session \(another broker uses this id\)$/m,
      );
      assert.doesNotMatch(plain.output, /waiting up to/);
      assert.ok(plain.ms < WAIT_MS, `refused after ${plain.ms} ms`);

      // The worst case: a log dir naming broker 0's live session. The wait is bounded, then refused.
      const dir = join(c.broker(0).root, "impostor-logs");
      mkdirSync(dir, { recursive: true });
      copyFileSync(
        join(c.broker(0).logDir, REGISTRATION_SESSION_FILENAME),
        join(dir, REGISTRATION_SESSION_FILENAME),
      );
      const named = await startDuplicateOfBroker0(dir);
      assert.match(
        named.output,
        new RegExp(
          `INFO waiting up to ${WAIT_MS} ms for the registration of broker\\.id 0 by the previous session ${sessionIdHex(before.ephemeralOwner)} to expire`,
        ),
      );
      assert.match(
        named.output,
        new RegExp(
          `Prepare to shutdown: broker\\.id 0 is still registered at /brokers/ids/0 by the previous session ${sessionIdHex(before.ephemeralOwner)} after \\d+ ms: a process keeps that session alive \\(another broker uses this id\\)`,
        ),
      );
      assert.ok(named.ms >= WAIT_MS, `refused after ${named.ms} ms`);

      const still = await c.stat("/brokers/ids/0");
      assert.equal(still?.czxid, before.czxid, "broker 0 keeps its registration");
      assert.ok(c.broker(0).isRunning);
      console.log(`same id refused in ${plain.ms} ms; with the live session named, after ${named.ms} ms`);
    },
  );
});
