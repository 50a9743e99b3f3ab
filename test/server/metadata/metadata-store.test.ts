import assert from "node:assert/strict";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MockTime } from "../../../src/common/time.js";
import {
  EmbeddedMetadataStore,
  METADATA_FILE_NAME,
  METADATA_JOURNAL_NAME,
  MetadataStoreCorruptError,
} from "../../../src/server/metadata/embedded-metadata-store.js";
import {
  BadVersionError,
  createRecursive,
  MetadataStoreError,
  NodeExistsError,
  NoNodeError,
  NotEmptyError,
  type WatchEvent,
} from "../../../src/server/metadata/metadata-store.js";
import { removeDir, tempDir } from "./metadata-test-utils.js";

const b = (s: string): Buffer => Buffer.from(s);
const dirs: string[] = [];
function dir(): string {
  const d = tempDir("store");
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) removeDir(d);
});

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("EmbeddedMetadataStore", () => {
  it("creates, reads, versions and compare-and-sets", async () => {
    const time = new MockTime(1000);
    const s = await EmbeddedMetadataStore.open(dir(), time);
    assert.equal(await s.create("/a", b("x")), "/a");
    const n = await s.get("/a");
    assert.equal(n?.data.toString(), "x");
    assert.equal(n?.stat.version, 0);
    assert.equal(n?.stat.ctime, 1000);
    assert.equal(n?.stat.ephemeralOwner, 0n);
    time.sleep(5);
    const st = await s.set("/a", b("y"), 0);
    assert.equal(st.version, 1);
    assert.equal(st.mtime, 1005);
    await assert.rejects(s.set("/a", b("z"), 0), BadVersionError);
    assert.equal((await s.get("/a"))?.data.toString(), "y");
    await s.set("/a", b("w")); // no expected version: unconditional
    assert.equal((await s.get("/a"))?.stat.version, 2);
    await assert.rejects(s.create("/a", b("")), NodeExistsError);
    await assert.rejects(s.create("/x/y", b("")), NoNodeError);
    await assert.rejects(s.set("/nope", b("")), NoNodeError);
    await assert.rejects(s.delete("/a", 1), BadVersionError);
    await s.delete("/a", 2);
    assert.equal(await s.get("/a"), undefined);
    assert.equal(await s.exists("/a"), undefined);
    await s.close();
  });

  it("rejects bad paths and non-empty deletes, deletes recursively", async () => {
    const s = await EmbeddedMetadataStore.open(dir(), new MockTime());
    for (const p of ["a", "/a/", "/a//b", "/a/./b"]) {
      await assert.rejects(
        s.create(p, b("")),
        (e: unknown) => e instanceof MetadataStoreError && e.code === "BadArguments",
      );
    }
    await createRecursive(s, "/a/b/c", b("c"));
    assert.deepEqual(await s.getChildren("/a"), ["b"]);
    await assert.rejects(s.delete("/a"), NotEmptyError);
    await s.delete("/a", undefined, { recursive: true });
    assert.equal(await s.exists("/a/b/c"), undefined);
    assert.equal(await s.exists("/a"), undefined);
    await assert.rejects(s.getChildren("/a"), NoNodeError);
    await s.close();
  });

  it("numbers sequential nodes from the parent's cversion", async () => {
    const s = await EmbeddedMetadataStore.open(dir(), new MockTime());
    await s.create("/q", b(""));
    assert.equal(await s.create("/q/n_", b("1"), { sequential: true }), "/q/n_0000000000");
    assert.equal(await s.create("/q/n_", b("2"), { sequential: true }), "/q/n_0000000001");
    await s.delete("/q/n_0000000000");
    assert.equal(await s.create("/q/n_", b("3"), { sequential: true }), "/q/n_0000000003");
    assert.deepEqual(await s.getChildren("/q"), ["n_0000000001", "n_0000000003"]);
    await s.close();
  });

  it("applies multi atomically", async () => {
    const s = await EmbeddedMetadataStore.open(dir(), new MockTime());
    await s.create("/m", b("0"));
    await assert.rejects(
      s.multi([
        { type: "create", path: "/m/a", data: b("a") },
        { type: "set", path: "/m", data: b("1"), version: 7 },
      ]),
      BadVersionError,
    );
    assert.equal(await s.exists("/m/a"), undefined);
    assert.equal((await s.get("/m"))?.data.toString(), "0");
    const r = await s.multi([
      { type: "create", path: "/m/a", data: b("a") },
      { type: "create", path: "/m/a/b", data: b("b") },
      { type: "check", path: "/m", version: 0 },
      { type: "set", path: "/m", data: b("1"), version: 0 },
      { type: "delete", path: "/m/a/b" },
    ]);
    assert.deepEqual(
      r.map((x) => x.type),
      ["create", "create", "check", "set", "delete"],
    );
    assert.deepEqual(await s.getChildren("/m/a"), []);
    assert.equal((await s.get("/m"))?.stat.version, 1);
    await s.close();
  });

  it("fires one-shot data, exists and child watches", async () => {
    const s = await EmbeddedMetadataStore.open(dir(), new MockTime());
    const events: WatchEvent[] = [];
    const w = (e: WatchEvent): void => {
      events.push(e);
    };
    await s.exists("/w", w);
    await s.create("/w", b(""));
    await tick();
    assert.deepEqual(events, [{ type: "NodeCreated", path: "/w" }]);
    await s.getChildren("/w", w);
    await s.get("/w", w);
    await s.create("/w/c", b(""));
    await s.create("/w/d", b(""));
    await s.set("/w", b("x"));
    await s.set("/w", b("y"));
    await tick();
    assert.deepEqual(events.slice(1), [
      { type: "NodeChildrenChanged", path: "/w" },
      { type: "NodeDataChanged", path: "/w" },
    ]);
    await s.get("/w/c", w);
    await s.delete("/w/c");
    await tick();
    assert.deepEqual(events.at(-1), { type: "NodeDeleted", path: "/w/c" });
    assert.equal(events.length, 4);
    await s.close();
  });

  it("persists across restarts; ephemeral nodes vanish", async () => {
    const d = dir();
    const s = await EmbeddedMetadataStore.open(d, new MockTime());
    await s.create("/p", b("persist"));
    await s.set("/p", b("persist2"));
    await s.create("/e", b("eph"), { ephemeral: true });
    assert.equal((await s.exists("/e"))?.ephemeralOwner, s.sessionId);
    await assert.rejects(
      s.create("/e/child", b("")),
      (e: unknown) => e instanceof MetadataStoreError && e.code === "NoChildrenForEphemerals",
    );
    await s.close();
    await assert.rejects(
      s.get("/p"),
      (e: unknown) => e instanceof MetadataStoreError && e.code === "SessionExpired",
    );
    const s2 = await EmbeddedMetadataStore.open(d, new MockTime());
    const n = await s2.get("/p");
    assert.equal(n?.data.toString(), "persist2");
    assert.equal(n?.stat.version, 1);
    assert.equal(await s2.exists("/e"), undefined);
    const doc = JSON.parse(readFileSync(join(d, METADATA_FILE_NAME), "utf8"));
    assert.equal(doc.format, "tributary-metadata");
    assert.ok(!doc.nodes.some((x: { path: string }) => x.path === "/e"));
    await s2.close();
  });

  it("group-commits concurrent writes and keeps them all", async () => {
    const d = dir();
    const s = await EmbeddedMetadataStore.open(d, new MockTime());
    await s.create("/g", b(""));
    await Promise.all(Array.from({ length: 200 }, (_, i) => s.create(`/g/n${i}`, b(String(i)))));
    await s.close();
    const s2 = await EmbeddedMetadataStore.open(d, new MockTime());
    assert.equal((await s2.getChildren("/g")).length, 200);
    await s2.close();
  });

  it("refuses a corrupt file with a one-line error naming it", async () => {
    for (const content of [
      "{not json",
      '{"format":"other"}',
      '{"format":"tributary-metadata","version":1,"nodes":[{"path":"/a/b","data":"","version":0,"cversion":0,"ctime":0,"mtime":0}]}',
    ]) {
      const d = dir();
      writeFileSync(join(d, METADATA_FILE_NAME), content);
      await assert.rejects(EmbeddedMetadataStore.open(d, new MockTime()), (e: unknown) => {
        assert.ok(e instanceof MetadataStoreCorruptError);
        assert.ok(e.message.includes(METADATA_FILE_NAME));
        assert.ok(!e.message.includes("\n"));
        return true;
      });
    }
  });

  it("journals changes, drops a torn last line, folds the journal into the snapshot", async () => {
    const d = dir();
    const s = await EmbeddedMetadataStore.open(d, new MockTime(), { journalCompactBytes: 1 });
    await s.create("/j", b("0"));
    for (let i = 1; i <= 5; i++) await s.set("/j", b(String(i)));
    await s.close();
    // journalCompactBytes=1: every write folded the journal into the snapshot.
    const snap = JSON.parse(readFileSync(join(d, METADATA_FILE_NAME), "utf8"));
    assert.ok(snap.generation > 1);
    const s2 = await EmbeddedMetadataStore.open(d, new MockTime());
    await s2.set("/j", b("6"));
    await s2.create("/k", b("k"));
    await s2.close();
    const journal = readFileSync(join(d, METADATA_JOURNAL_NAME), "utf8").split("\n");
    assert.equal(journal.length, 4); // header, two records, trailing ""
    // A crash in the middle of an append leaves a torn line: it was never acknowledged, so it is dropped.
    appendFileSync(join(d, METADATA_JOURNAL_NAME), '[{"path":"/torn","data":"","vers');
    const s3 = await EmbeddedMetadataStore.open(d, new MockTime());
    assert.equal((await s3.get("/j"))?.data.toString(), "6");
    assert.equal((await s3.get("/j"))?.stat.version, 6);
    assert.equal((await s3.get("/k"))?.data.toString(), "k");
    assert.equal(await s3.exists("/torn"), undefined);
    await s3.close();
    // open() folded everything into a new snapshot with an empty journal.
    assert.equal(readFileSync(join(d, METADATA_JOURNAL_NAME), "utf8").split("\n").length, 2);
    assert.ok(statSync(join(d, METADATA_FILE_NAME)).size > 0);
  });

  it("ignores a journal older than the snapshot and refuses a damaged journal", async () => {
    const d = dir();
    const s = await EmbeddedMetadataStore.open(d, new MockTime());
    await s.create("/x", b("1"));
    await s.close();
    await (await EmbeddedMetadataStore.open(d, new MockTime())).close(); // folds /x into the snapshot
    const journalPath = join(d, METADATA_JOURNAL_NAME);
    const gen = JSON.parse(readFileSync(join(d, METADATA_FILE_NAME), "utf8")).generation as number;
    // A journal of the previous generation (crash between the snapshot and the journal renames).
    writeFileSync(
      journalPath,
      `{"format":"tributary-metadata-journal","generation":${gen - 1}}\n[{"path":"/x","deleted":true}]\n`,
    );
    const s2 = await EmbeddedMetadataStore.open(d, new MockTime());
    assert.equal((await s2.get("/x"))?.data.toString(), "1");
    await s2.close();
    const gen2 = JSON.parse(readFileSync(join(d, METADATA_FILE_NAME), "utf8")).generation as number;
    writeFileSync(
      journalPath,
      `{"format":"tributary-metadata-journal","generation":${gen2}}\nnot json\n[]\n`,
    );
    await assert.rejects(EmbeddedMetadataStore.open(d, new MockTime()), (e: unknown) => {
      assert.ok(e instanceof MetadataStoreCorruptError);
      assert.match(e.message, /__tributary_metadata\.log.*line 2/);
      return true;
    });
  });

  it("gives every committed change a larger zxid, across reopens; a multi shares one", async () => {
    const d = dir();
    const s = await EmbeddedMetadataStore.open(d, new MockTime());
    await s.create("/z", b(""));
    const z = (await s.exists("/z"))!;
    assert.ok(z.czxid > 0n);
    assert.equal(z.mzxid, z.czxid);
    const set = await s.set("/z", b("1"));
    assert.equal(set.czxid, z.czxid);
    assert.ok(set.mzxid > z.mzxid);
    await assert.rejects(s.set("/z", b("x"), 7), BadVersionError); // a failed write takes no zxid
    await s.multi([
      { type: "create", path: "/z/a", data: b("") },
      { type: "create", path: "/z/b", data: b("") },
    ]);
    const a = (await s.exists("/z/a"))!;
    assert.equal((await s.exists("/z/b"))?.czxid, a.czxid);
    assert.equal(a.czxid, set.mzxid + 1n);
    // An ephemeral node (a broker registration: its czxid is the broker epoch) is never written to disk,
    // yet the next run's zxids are larger still.
    await s.create("/z/eph", b(""), { ephemeral: true });
    const epoch1 = (await s.exists("/z/eph"))!.czxid;
    await s.close();
    const s2 = await EmbeddedMetadataStore.open(d, new MockTime());
    assert.equal((await s2.exists("/z/a"))?.czxid, a.czxid, "kept across the reopen");
    assert.equal((await s2.exists("/z"))?.mzxid, set.mzxid);
    await s2.create("/z/eph", b(""), { ephemeral: true });
    const epoch2 = (await s2.exists("/z/eph"))!.czxid;
    assert.ok(epoch2 > epoch1, `${epoch2} > ${epoch1}`);
    let handlerCalls = 0;
    s2.registerStateChangeHandler({ name: "h", beforeInitializingSession: () => void handlerCalls++ });
    s2.unregisterStateChangeHandler("h");
    await s2.close();
    const s3 = await EmbeddedMetadataStore.open(d, new MockTime());
    await s3.create("/z/eph", b(""), { ephemeral: true });
    assert.ok((await s3.exists("/z/eph"))!.czxid > epoch2);
    await s3.close();
    assert.equal(handlerCalls, 0);
  });

  it("loads files written before zxids were kept (czxid and mzxid 0)", async () => {
    const d = dir();
    const old = {
      format: "tributary-metadata",
      version: 1,
      generation: 3,
      nodes: [
        { path: "/", data: "", version: 0, cversion: 1, ctime: 0, mtime: 0 },
        {
          path: "/old",
          data: Buffer.from("v").toString("base64"),
          version: 2,
          cversion: 0,
          ctime: 5,
          mtime: 6,
        },
      ],
    };
    writeFileSync(join(d, METADATA_FILE_NAME), JSON.stringify(old));
    writeFileSync(
      join(d, METADATA_JOURNAL_NAME),
      `${JSON.stringify({ format: "tributary-metadata-journal", generation: 3 })}\n${JSON.stringify([
        { path: "/j", data: "", version: 0, cversion: 0, ctime: 7, mtime: 7 },
      ])}\n`,
    );
    const s = await EmbeddedMetadataStore.open(d, new MockTime());
    const n = await s.get("/old");
    assert.equal(n?.data.toString(), "v");
    assert.equal(n?.stat.version, 2);
    assert.equal(n?.stat.czxid, 0n);
    assert.equal(n?.stat.mzxid, 0n);
    assert.equal((await s.exists("/j"))?.czxid, 0n);
    await s.create("/new", b(""));
    assert.ok((await s.exists("/new"))!.czxid > 0n);
    await s.close();
  });
});
