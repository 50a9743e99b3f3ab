// ZooKeeperMetadataStore against real ZooKeeper servers (test/support/zookeeper-harness.ts): CRUD and CAS,
// ephemeral and sequential nodes, multi, watches, the chroot, the connection timeout, session expiry with
// its state-change handlers, and a 3-server ensemble that keeps serving with a server killed.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fourLetterWord } from "../../../src/cli/zookeeper/zookeeper-command.js";
import { setLogLevel } from "../../../src/common/logger.js";
import {
  BadVersionError,
  createRecursive,
  MetadataStoreError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  type WatchEvent,
} from "../../../src/server/metadata/metadata-store.js";
import {
  ZooKeeperMetadataStore,
  type ZooKeeperMetadataStoreOptions,
} from "../../../src/server/metadata/zookeeper-metadata-store.js";
import { freePort, withDeadline } from "../../support/broker-harness.js";
import { ZooKeeperHarness } from "../../support/zookeeper-harness.js";

setLogLevel("WARN");

const b = (s: string): Buffer => Buffer.from(s);
const OPTIONS: ZooKeeperMetadataStoreOptions = { sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 };
const isCode =
  (code: string, path?: string) =>
  (e: unknown): boolean =>
    e instanceof MetadataStoreError && e.code === code && (path === undefined || e.path === path);

/** The next event a watcher gets, bounded. */
function nextEvent(): { watcher: (e: WatchEvent) => void; event: Promise<WatchEvent> } {
  let watcher: (e: WatchEvent) => void = () => {};
  const event = new Promise<WatchEvent>((resolve) => {
    watcher = resolve;
  });
  return { watcher, event: withDeadline("watch event", 5000, event) };
}

describe("ZooKeeperMetadataStore (standalone ZooKeeper)", () => {
  let zk: ZooKeeperHarness;
  const stores: ZooKeeperMetadataStore[] = [];
  const open = async (connect = zk.connectString): Promise<ZooKeeperMetadataStore> => {
    const s = await ZooKeeperMetadataStore.connect(connect, OPTIONS);
    stores.push(s);
    return s;
  };
  let n = 0;
  /** A fresh top-level path per test. */
  const root = (): string => `/t${++n}`;

  before(async () => {
    zk = await ZooKeeperHarness.start({ servers: 1 });
  });
  after(async () => {
    for (const s of stores) await s.close();
    await zk?.close();
  });

  it("creates, reads, compare-and-sets and deletes", async () => {
    const s = await open();
    const p = root();
    assert.equal(await s.create(p, b("x")), p);
    const node = await s.get(p);
    assert.equal(node?.data.toString(), "x");
    assert.equal(node?.stat.version, 0);
    assert.equal(node?.stat.ephemeralOwner, 0n);
    assert.equal(node?.stat.dataLength, 1);
    assert.ok(node && node.stat.czxid > 0n && node.stat.mzxid === node.stat.czxid);
    assert.ok(node && Math.abs(node.stat.ctime - Date.now()) < 60_000);
    const st = await s.set(p, b("yy"), 0);
    assert.equal(st.version, 1);
    assert.equal(st.dataLength, 2);
    assert.ok(node && st.mzxid > node.stat.mzxid && st.czxid === node.stat.czxid);
    await assert.rejects(s.set(p, b("z"), 0), (e) => e instanceof BadVersionError && e.path === p);
    assert.equal((await s.get(p))?.data.toString(), "yy");
    await s.set(p, b("w"));
    assert.equal((await s.exists(p))?.version, 2);
    await assert.rejects(s.create(p, b("")), NodeExistsError);
    await assert.rejects(s.create(`${p}/a/b`, b("")), NoNodeError);
    await assert.rejects(s.set(`${p}/nope`, b("")), NoNodeError);
    assert.equal(await s.get(`${p}/nope`), undefined);
    await createRecursive(s, `${p}/a/b/c`, b("c"));
    assert.deepEqual(await s.getChildren(p), ["a"]);
    assert.equal((await s.exists(p))?.numChildren, 1);
    await assert.rejects(s.delete(p), NotEmptyError);
    await assert.rejects(s.delete(`${p}/a/b/c`, 5), BadVersionError);
    await s.delete(p, undefined, { recursive: true });
    assert.equal(await s.exists(p), undefined);
    await assert.rejects(s.getChildren(p), NoNodeError);
    await assert.rejects(s.create("bad", b("")), isCode("BadArguments"));
  });

  it("removes ephemeral nodes when the session closes, as another session sees", async () => {
    const a = await open();
    const other = await open();
    const p = root();
    await a.create(p, b(""));
    await a.create(`${p}/e`, b("mine"), { ephemeral: true });
    const st = await other.exists(`${p}/e`);
    assert.equal(st?.ephemeralOwner, a.sessionId);
    assert.notEqual(a.sessionId, other.sessionId);
    await assert.rejects(a.create(`${p}/e/child`, b("")), isCode("NoChildrenForEphemerals"));
    const gone = nextEvent();
    await other.exists(`${p}/e`, gone.watcher);
    await a.close();
    assert.deepEqual(await gone.event, { type: "NodeDeleted", path: `${p}/e` });
    assert.equal(await other.exists(`${p}/e`), undefined);
    await assert.rejects(a.get(p), isCode("SessionExpired"));
  });

  it("numbers sequential nodes", async () => {
    const s = await open();
    const p = root();
    await s.create(p, b(""));
    const first = await s.create(`${p}/seq-`, b(""), { sequential: true });
    const second = await s.create(`${p}/seq-`, b(""), { sequential: true, ephemeral: true });
    assert.equal(first, `${p}/seq-0000000000`);
    assert.equal(second, `${p}/seq-0000000001`);
  });

  it("applies multi all or nothing, failing with the failing op's code and path", async () => {
    const s = await open();
    const p = root();
    await s.create(p, b(""));
    await s.create(`${p}/v`, b("0"));
    const results = await s.multi([
      { type: "check", path: `${p}/v`, version: 0 },
      { type: "create", path: `${p}/new`, data: b("n") },
      { type: "set", path: `${p}/v`, data: b("1"), version: 0 },
      { type: "create", path: `${p}/s-`, data: b(""), options: { sequential: true } },
    ]);
    assert.deepEqual(results[0], { type: "check" });
    assert.deepEqual(results[1], { type: "create", path: `${p}/new` });
    assert.equal(results[2].type === "set" && results[2].stat.version, 1);
    assert.deepEqual(results[3], { type: "create", path: `${p}/s-0000000002` });
    await assert.rejects(
      s.multi([
        { type: "delete", path: `${p}/new` },
        { type: "set", path: `${p}/v`, data: b("2"), version: 0 },
        { type: "create", path: `${p}/other`, data: b("") },
      ]),
      isCode("BadVersion", `${p}/v`),
    );
    assert.ok(await s.exists(`${p}/new`), "the delete before the failing op was not applied");
    assert.equal(await s.exists(`${p}/other`), undefined);
    await assert.rejects(
      s.multi([
        { type: "create", path: `${p}/x`, data: b("") },
        { type: "delete", path: `${p}/missing` },
      ]),
      isCode("NoNode", `${p}/missing`),
    );
    assert.equal(await s.exists(`${p}/x`), undefined);
    await s.multi([{ type: "delete", path: `${p}/v`, version: 1 }]);
    assert.equal(await s.exists(`${p}/v`), undefined);
  });

  it("fires one-shot data, children and exists watches", async () => {
    const s = await open();
    const writer = await open();
    const p = root();
    await s.create(p, b(""));
    const data = nextEvent();
    await s.get(p, data.watcher);
    const kids = nextEvent();
    await s.getChildren(p, kids.watcher);
    const created = nextEvent();
    assert.equal(await s.exists(`${p}/later`, created.watcher), undefined);
    await writer.set(p, b("changed"));
    assert.deepEqual(await data.event, { type: "NodeDataChanged", path: p });
    await writer.create(`${p}/later`, b(""));
    assert.deepEqual(await created.event, { type: "NodeCreated", path: `${p}/later` });
    assert.deepEqual(await kids.event, { type: "NodeChildrenChanged", path: p });
    // One-shot: a second change is not reported to the same registration.
    let again = 0;
    await s.get(`${p}/later`, () => again++);
    await writer.set(`${p}/later`, b("1"));
    await writer.set(`${p}/later`, b("2"));
    await s.exists(p); // a round trip after the changes
    assert.equal(again, 1);
    const deleted = nextEvent();
    await s.get(`${p}/later`, deleted.watcher);
    await writer.delete(`${p}/later`);
    assert.deepEqual(await deleted.event, { type: "NodeDeleted", path: `${p}/later` });
  });

  it("creates a missing chroot and works relative to it", async () => {
    const chroot = `${root()}/kafka`;
    const s = await open(`${zk.connectString}${chroot}`);
    const top = await open();
    assert.ok(await top.exists(chroot), "the chroot was created");
    await s.create("/brokers", b("b"));
    assert.equal((await top.get(`${chroot}/brokers`))?.data.toString(), "b");
    assert.deepEqual(await s.getChildren("/"), ["brokers"]);
    const seq = await s.create("/brokers/s-", b(""), { sequential: true });
    assert.equal(seq, "/brokers/s-0000000000");
    const kids = nextEvent();
    await s.getChildren("/brokers", kids.watcher);
    await top.create(`${chroot}/brokers/x`, b(""));
    assert.deepEqual(await kids.event, { type: "NodeChildrenChanged", path: "/brokers" });
    const [created] = await s.multi([
      { type: "create", path: "/m-", data: b(""), options: { sequential: true } },
    ]);
    assert.deepEqual(created, { type: "create", path: "/m-0000000001" });
  });

  it("times out connecting with Kafka's one-line message", async () => {
    const port = await freePort();
    const started = Date.now();
    await assert.rejects(
      ZooKeeperMetadataStore.connect(`127.0.0.1:${port}`, {
        sessionTimeoutMs: 6000,
        connectionTimeoutMs: 500,
      }),
      (e: Error) =>
        e.message ===
        `Timed out waiting for connection while in state: CONNECTING (zookeeper.connect=127.0.0.1:${port})`,
    );
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(
      ZooKeeperMetadataStore.connect(`127.0.0.1:${port}/kafka`, {
        sessionTimeoutMs: 6000,
        connectionTimeoutMs: 300,
      }),
      (e: Error) =>
        e.message.endsWith(`(zookeeper.connect=127.0.0.1:${port}/kafka)`) && !e.message.includes("\n"),
    );
  });

  it("on session expiry calls the handlers in order, fails in-flight work and gets a new session", async () => {
    const s = await open();
    const watcherSide = await open();
    const p = root();
    await s.create(p, b(""));
    await s.create(`${p}/eph`, b("1"), { ephemeral: true });
    const oldSession = s.sessionId;
    const calls: string[] = [];
    let reinitialized!: () => void;
    const done = new Promise<void>((r) => {
      reinitialized = r;
    });
    let duringBefore: unknown;
    s.registerStateChangeHandler({
      name: "first",
      beforeInitializingSession: async () => {
        calls.push("first.before");
        duringBefore = await s.get(p).catch((e) => e);
      },
      afterInitializingSession: () => {
        calls.push("first.after");
      },
    });
    s.registerStateChangeHandler({
      name: "second",
      beforeInitializingSession: () => {
        calls.push("second.before");
      },
      afterInitializingSession: async () => {
        calls.push("second.after");
        // Re-register the ephemeral node, as a broker re-registers /brokers/ids/<id>.
        await s.create(`${p}/eph`, b("2"), { ephemeral: true });
        reinitialized();
      },
    });
    s.registerStateChangeHandler({
      name: "removed",
      beforeInitializingSession: () => {
        calls.push("removed");
      },
    });
    s.unregisterStateChangeHandler("removed");
    const gone = nextEvent();
    await watcherSide.exists(`${p}/eph`, gone.watcher);
    const staleWatch: WatchEvent[] = [];
    await s.get(p, (e) => staleWatch.push(e));

    await zk.expireSession(s.sessionId, s.sessionPassword);
    assert.deepEqual(await gone.event, { type: "NodeDeleted", path: `${p}/eph` });
    await withDeadline("re-initialization", 15_000, done);
    assert.deepEqual(calls, ["first.before", "second.before", "first.after", "second.after"]);
    assert.ok(isCode("SessionExpired")(duringBefore), `during before: ${String(duringBefore)}`);
    assert.notEqual(s.sessionId, oldSession);
    const eph = await watcherSide.get(`${p}/eph`);
    assert.equal(eph?.data.toString(), "2");
    assert.equal(eph?.stat.ephemeralOwner, s.sessionId);
    // The old session's watch is gone with it.
    await watcherSide.set(p, b("changed"));
    await s.exists(p);
    assert.deepEqual(staleWatch, []);
    await s.close();
    assert.equal(await watcherSide.exists(`${p}/eph`), undefined);
  });

  it("an operation issued while the server is down waits for it and succeeds", async () => {
    const s = await open();
    const p = root();
    await s.create(p, b(""));
    await zk.stop(0, "SIGSTOP");
    const pending = s.create(`${p}/during`, b("d"), { ephemeral: true });
    await new Promise((r) => setTimeout(r, 300));
    await zk.start(0);
    assert.equal(await withDeadline("create across a stall", 10_000, pending), `${p}/during`);
    assert.equal((await s.exists(`${p}/during`))?.ephemeralOwner, s.sessionId);
  });

  it("across a server restart: waits for the reconnection, or fails with ConnectionLoss after the session timeout", async () => {
    // A long session for the store that must survive: the JVM's restart takes seconds on a loaded machine.
    const s = await ZooKeeperMetadataStore.connect(zk.connectString, {
      ...OPTIONS,
      sessionTimeoutMs: 20_000,
    });
    stores.push(s);
    const short = await ZooKeeperMetadataStore.connect(zk.connectString, {
      ...OPTIONS,
      sessionTimeoutMs: 2000,
    });
    stores.push(short);
    const p = root();
    await s.create(p, b(""));
    const session = s.sessionId;
    await zk.stop(0, "SIGKILL");
    const started = Date.now();
    const lost = short.get(p).then(
      () => "resolved",
      (e) => e,
    );
    const pending = s.create(`${p}/during`, b("d"), { ephemeral: true });
    const lostError = await withDeadline("ConnectionLoss", 10_000, lost);
    assert.ok(isCode("ConnectionLoss", p)(lostError), String(lostError));
    assert.ok(Date.now() - started >= 1900, `failed after ${Date.now() - started} ms`);
    await zk.start(0);
    assert.equal(await withDeadline("create across a restart", 20_000, pending), `${p}/during`);
    assert.equal(s.sessionId, session, "the session survives a server restart");
    assert.equal((await s.exists(`${p}/during`))?.ephemeralOwner, session);
  });
});

describe("ZooKeeperMetadataStore (3-server ensemble)", () => {
  let zk: ZooKeeperHarness;
  before(async () => {
    zk = await ZooKeeperHarness.start({ servers: 3 });
  });
  after(async () => {
    await zk?.close();
  });

  it("keeps serving with one server killed", async () => {
    const s = await ZooKeeperMetadataStore.connect(zk.connectString, OPTIONS);
    const other = await ZooKeeperMetadataStore.connect(zk.connectString, OPTIONS);
    try {
      await s.create("/ensemble", b("1"));
      await s.create("/ensemble/eph", b(""), { ephemeral: true });
      const leader = await zk.waitForLeader();
      await zk.stop(leader, "SIGKILL");
      const st = await withDeadline("set after the leader was killed", 20_000, s.set("/ensemble", b("2"), 0));
      assert.equal(st.version, 1);
      assert.equal((await other.get("/ensemble"))?.data.toString(), "2");
      assert.ok(await other.exists("/ensemble/eph"), "the ephemeral node survives a server failure");
      await zk.start(leader);
      assert.equal((await zk.status(leader))?.mode, "follower");
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${zk.logs()}`);
    } finally {
      await s.close();
      await other.close();
    }
  });

  it("leaves a server that stopped answering (read timeout) for another one, keeping the session", async () => {
    // Only the followers: stopping the one holding the session then leaves a serving quorum at once.
    const leader = await zk.waitForLeader();
    const followers = [0, 1, 2].filter((i) => i !== leader).map((i) => zk.address(i));
    const s = await ZooKeeperMetadataStore.connect(followers.join(","), {
      ...OPTIONS,
      sessionTimeoutMs: 3000,
    });
    let owner = -1;
    try {
      await s.create("/silent", b(""));
      const sid = `sid=0x${s.sessionId.toString(16)},`;
      for (let i = 0; i < zk.size; i++) {
        const [host, port] = zk.address(i).split(":");
        if (zk.isRunning(i) && (await fourLetterWord(host, Number(port), "cons")).includes(sid)) owner = i;
      }
      assert.ok(owner >= 0, "the server holding the session lists it in `cons`");
      const session = s.sessionId;
      await zk.stop(owner, "SIGSTOP");
      const started = Date.now();
      const st = await withDeadline("set with a silent server", 15_000, s.set("/silent", b("1")));
      // An unconditional set whose reply was lost is sent again: it may have been applied twice.
      assert.ok(st.version === 1 || st.version === 2, `version ${st.version}`);
      assert.equal((await s.get("/silent"))?.data.toString(), "1");
      assert.equal(s.sessionId, session);
      assert.ok(Date.now() - started >= 1500, "the read timeout is 2/3 of the session timeout");
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${zk.logs()}`);
    } finally {
      if (owner >= 0) await zk.start(owner);
      await s.close();
    }
  });
});
