// Issue 16: a broker's ZooKeeper session expiring. The broker is frozen with SIGSTOP until ZooKeeper has
// expired its session (its ephemeral /brokers/ids/<id> is gone), then resumed with SIGCONT: it must
// notice the expiry, open a new session and register again (a new znode: higher czxid, the broker
// epoch), and the cluster's metadata must list it again. Frozen while it is the controller, it must
// lose the controllership to another broker and, resumed, resign instead of acting as a second one.

import assert from "node:assert/strict";
import { after, afterEach, before, test } from "node:test";

import {
  ClusterHarness,
  electionViolations,
  formatDescribe,
  SESSION_TIMEOUT_MS,
  withLogTails,
} from "../support/cluster-harness.js";

const TOPIC = "expiry";
let cluster: ClusterHarness | undefined;

before(async () => {
  cluster = await ClusterHarness.start({ brokers: 3, name: "session-expiry" });
  await cluster.createTopic(TOPIC, 3, 3);
  await cluster.waitForDescribe(TOPIC, "every partition led", 20_000, (ps) => ps.every((p) => p.leader >= 0));
});

afterEach(() => {
  // A test that failed while a broker was frozen must not leave it frozen for the next one.
  cluster?.resumeSuspended();
});

after(async () => {
  await cluster?.close();
});

/** Bound on ZooKeeper expiring a frozen client's session (the timeout, plus ticks and scheduling). */
const EXPIRY_BOUND_MS = SESSION_TIMEOUT_MS + 5000;

test("a broker whose session expired (SIGSTOP past the timeout, SIGCONT) registers again with a new broker epoch", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const controller = await c.waitForController();
      const id = c.liveIds().find((i) => i !== controller)!;
      const other = c.liveIds().find((i) => i !== controller && i !== id)!;
      const before = await c.stat(`/brokers/ids/${id}`);
      assert.ok(before, `/brokers/ids/${id} missing before the test`);
      assert.notEqual(before.ephemeralOwner, 0n, "the registration is not ephemeral");

      c.suspendBroker(id);
      const frozenAt = Date.now();
      // ZooKeeper expires the frozen broker's session: its registration goes, the controller notices.
      await c.waitFor(`/brokers/ids/${id} removed by the session expiry`, EXPIRY_BOUND_MS, async () =>
        (await c.stat(`/brokers/ids/${id}`)) === undefined ? true : undefined,
      );
      // Not much before the timeout: ZooKeeper counts it from the broker's last ping (every third of it).
      const gone = Date.now() - frozenAt;
      assert.ok(gone >= SESSION_TIMEOUT_MS / 2, `the registration went ${gone} ms after the freeze`);
      await c.waitForMetadataBrokers(
        c.brokers.map((_, i) => i).filter((i) => i !== id),
        10_000,
        [controller, other],
      );
      const whileGone = await c.waitForDescribe(
        TOPIC,
        `broker ${id} leading nothing while frozen, every partition with a live ISR member led`,
        10_000,
        (ps) => electionViolations(ps, [controller, other]).length === 0,
        c.broker(other).bootstrap,
      );

      c.resumeBroker(id);
      const after = await c.waitFor(`/brokers/ids/${id} registered again`, 15_000, () =>
        c.stat(`/brokers/ids/${id}`),
      );
      assert.ok(after.czxid > before.czxid, `czxid ${before.czxid} → ${after.czxid}: not a new registration`);
      assert.notEqual(after.ephemeralOwner, before.ephemeralOwner, "registered under the expired session");
      const registration = await c.znodeJson<{ port: number; endpoints: string[] }>(`/brokers/ids/${id}`);
      assert.equal(registration?.port, c.broker(id).port, JSON.stringify(registration));
      assert.match(c.broker(id).stdout, new RegExp(`czxid \\(broker epoch\\): ${after.czxid}\\b`));

      // The cluster converges: every broker's Metadata lists all three again; the topic names it a replica
      // and every partition with a live ISR member is led. (Whether it rejoins the ISRs is replication's
      // business, issue 17: not asserted.)
      await c.waitForMetadataBrokers([0, 1, 2], 15_000);
      const parts = await c.waitForDescribe(
        TOPIC,
        "every partition with a live ISR member led",
        10_000,
        (ps) => electionViolations(ps, [0, 1, 2]).length === 0,
        c.broker(other).bootstrap,
      );
      for (const p of parts) {
        assert.ok(p.replicas.includes(id), `${formatDescribe(whileGone)}\n→\n${formatDescribe(parts)}`);
      }
      assert.equal(await c.controllerId(), controller, "the controller changed although it was not frozen");
      // The resumed broker answers requests again.
      const own = await c.describe(TOPIC, c.broker(id).bootstrap);
      assert.equal(own.length, 3, formatDescribe(own));
    },
  );
});

test("a frozen controller loses the controllership and, resumed, resigns; there is one controller", async () => {
  await withLogTails(
    () => cluster,
    async () => {
      const c = cluster!;
      const old = await c.waitForController();
      const epochBefore = (await c.controllerEpoch())!;
      const beforeStat = await c.stat(`/brokers/ids/${old}`);
      assert.ok(beforeStat);

      c.suspendBroker(old);
      const next = await c.waitForController(EXPIRY_BOUND_MS, [old]);
      const epochAfter = (await c.controllerEpoch())!;
      assert.ok(epochAfter > epochBefore, `/controller_epoch ${epochBefore} → ${epochAfter}`);
      // The new controller moved leadership off the frozen broker.
      const survivor = c.broker(next).bootstrap;
      await c.waitForDescribe(
        TOPIC,
        `broker ${old} leading nothing, every partition with a live ISR member led`,
        10_000,
        (ps) => electionViolations(ps, c.liveIds()).length === 0,
        survivor,
      );

      c.resumeBroker(old);
      await c.waitFor(`broker ${old} says it resigned`, 15_000, async () =>
        /Resigned as the controller/.test(c.broker(old).stdout) ? true : undefined,
      );
      const afterStat = await c.waitFor(`/brokers/ids/${old} registered again`, 15_000, () =>
        c.stat(`/brokers/ids/${old}`),
      );
      assert.ok(afterStat.czxid > beforeStat.czxid, `czxid ${beforeStat.czxid} → ${afterStat.czxid}`);
      await c.waitForMetadataBrokers([0, 1, 2], 15_000);

      // One controller: /controller names the new one, the epoch did not move again, and every broker's
      // Metadata (the resumed one's too) names it.
      assert.equal(await c.controllerId(), next);
      assert.equal(await c.controllerEpoch(), epochAfter);
      await c.waitFor(`every broker naming controller ${next}`, 10_000, async () => {
        for (const i of c.liveIds()) if ((await c.metadata(i)).controllerId !== next) return undefined;
        return true;
      });
      const resumedOut = c.broker(old).stdout;
      const resignedAt = resumedOut.lastIndexOf("Resigned as the controller");
      assert.doesNotMatch(
        resumedOut.slice(resignedAt),
        new RegExp(`${old} successfully elected as the controller`),
        "the resumed broker became controller again",
      );
      await c.waitForDescribe(
        TOPIC,
        "every partition with a live ISR member led",
        10_000,
        (ps) => electionViolations(ps, [0, 1, 2]).length === 0,
      );
    },
  );
});
