// How the ACL authorizer follows /kafka-acl-changes (Kafka's ZkNodeChangeNotificationListener), on a real
// metadata store (the embedded one, in a temp dir) whose reads are recorded: a change costs the new
// notices and the resources they name — each resource read once per batch, however many notices are
// stored; a (re)started authorizer loads every ACL and reads no stored notice; notices older than 15
// minutes are deleted only after the batch that found them has been applied. Notices and resource znodes
// are written straight into the store, as another broker writes them.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Operation as Op, ResourceType as RT } from "../../../src/common/acl-binding.js";
import { SystemScheduler } from "../../../src/common/scheduler.js";
import { MockTime, SystemTime, type Time } from "../../../src/common/time.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { ensurePath, type MetadataStore } from "../../../src/server/metadata/metadata-store.js";
import { AclAuthorizer } from "../../../src/server/security/authorizer/acl-authorizer.js";

const dirs: string[] = [];
const stores: EmbeddedMetadataStore[] = [];
const authorizers: AclAuthorizer[] = [];
const scheduler = new SystemScheduler();
after(async () => {
  for (const a of authorizers) a.close();
  for (const s of stores) await s.close();
  scheduler.shutdown();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function store(time: Time = new SystemTime()): Promise<EmbeddedMetadataStore> {
  const d = mkdtempSync(join(tmpdir(), "acl-changes-"));
  dirs.push(d);
  const s = await EmbeddedMetadataStore.open(d, time);
  stores.push(s);
  await ensurePath(s, "/kafka-acl/Topic");
  await ensurePath(s, "/kafka-acl-changes");
  return s;
}

/** The store, with every call that names a path recorded as "<method> <path>". */
function recorded(s: MetadataStore, ops: string[]): MetadataStore {
  return new Proxy(s, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (typeof args[0] === "string") ops.push(`${String(prop)} ${args[0]}`);
        return v.apply(target, args);
      };
    },
  });
}

async function authorizer(s: MetadataStore, time: Time = new SystemTime()): Promise<AclAuthorizer> {
  const a = new AclAuthorizer(
    s,
    { superUsers: new Set(), allowEveryoneIfNoAclFound: false },
    time,
    scheduler,
  );
  await a.start();
  authorizers.push(a);
  return a;
}

/** What another broker writes for an ACL on topic `name`: the resource znode and a change notice. */
async function writeAcl(s: MetadataStore, name: string, principal = "User:alice"): Promise<void> {
  const doc = { version: 1, acls: [{ principal, permissionType: "Allow", operation: "Read", host: "*" }] };
  const path = `/kafka-acl/Topic/${name}`;
  const data = Buffer.from(JSON.stringify(doc));
  if (await s.exists(path)) await s.set(path, data);
  else await s.create(path, data);
  await s.create("/kafka-acl-changes/acl_changes_", Buffer.from(`TOPIC:${name}`), { sequential: true });
}

const ctx = (principal: string) => ({ principal, clientAddress: "127.0.0.1:40000", api: { name: "Test" } });
const reads = (a: AclAuthorizer, principal: string, topic: string) =>
  a.authorize(ctx(principal), Op.READ, RT.TOPIC, topic, false, false);

/** Waits (5 s at most) for `check` to hold. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `not within 5 s: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const noticeReads = (ops: readonly string[]) => ops.filter((o) => /^get \/kafka-acl-changes\//.test(o));
const resourceReads = (ops: readonly string[]) => ops.filter((o) => o.startsWith("get /kafka-acl/"));

test("a change costs the new notices only, each resource read once per batch, however many are stored", async () => {
  const s = await store();
  const ops: string[] = [];
  const b = await authorizer(recorded(s, ops));
  for (let i = 0; i < 200; i++) await writeAcl(s, `t${i}`);
  await until("the 200 ACLs followed", () => reads(b, "User:alice", "t199"));
  for (let i = 0; i < 200; i++) assert.ok(reads(b, "User:alice", `t${i}`), `t${i}`);
  // Each of the 200 notices was read once, however the watch events grouped them.
  assert.equal(noticeReads(ops).length, 200);
  assert.equal(new Set(noticeReads(ops)).size, 200);

  // With 200 stored, one more change reads one notice and one resource.
  ops.length = 0;
  await writeAcl(s, "t0", "User:bob");
  await until("bob's ACL followed", () => reads(b, "User:bob", "t0"));
  assert.deepEqual(noticeReads(ops).length, 1, ops.join("\n"));
  assert.deepEqual(resourceReads(ops), ["get /kafka-acl/Topic/t0"]);

  // Three notices for one resource in one batch (one multi: one watch event): the resource is read once.
  ops.length = 0;
  const notice = {
    type: "create",
    path: "/kafka-acl-changes/acl_changes_",
    options: { sequential: true },
  } as const;
  await s.set(
    "/kafka-acl/Topic/t1",
    Buffer.from(
      JSON.stringify({
        version: 1,
        acls: [{ principal: "User:carol", permissionType: "Allow", operation: "Read", host: "*" }],
      }),
    ),
  );
  await s.multi([
    { ...notice, data: Buffer.from("TOPIC:t1") },
    { ...notice, data: Buffer.from("TOPIC:t1") },
    { ...notice, data: Buffer.from("TOPIC:t1") },
  ]);
  await until("carol's ACL followed", () => reads(b, "User:carol", "t1"));
  assert.equal(noticeReads(ops).length, 3, ops.join("\n"));
  assert.deepEqual(resourceReads(ops), ["get /kafka-acl/Topic/t1"]);
  assert.equal(reads(b, "User:alice", "t1"), false, "t1's ACLs replaced by carol's");
});

test("a (re)started authorizer loads every ACL, reads no stored notice, then follows the newer ones", async () => {
  const s = await store();
  for (let i = 0; i < 50; i++) await writeAcl(s, `r${i}`);
  const ops: string[] = [];
  const c = await authorizer(recorded(s, ops));
  for (let i = 0; i < 50; i++) assert.ok(reads(c, "User:alice", `r${i}`), `r${i} loaded at start`);
  assert.deepEqual(noticeReads(ops), [], "no stored notice is read at start");
  ops.length = 0;
  await writeAcl(s, "r-new");
  await until("the new ACL followed", () => reads(c, "User:alice", "r-new"));
  assert.equal(noticeReads(ops).length, 1, ops.join("\n"));
  assert.deepEqual(resourceReads(ops), ["get /kafka-acl/Topic/r-new"]);
});

test("notices older than 15 minutes are deleted after the batch that found them is applied", async () => {
  const time = new MockTime(Date.now());
  const s = await store(time);
  const ops: string[] = [];
  const b = await authorizer(recorded(s, ops), time);
  for (let i = 0; i < 5; i++) await writeAcl(s, `old${i}`);
  await until("the old ACLs followed", () => reads(b, "User:alice", "old4"));
  time.sleep(14 * 60 * 1000);
  await writeAcl(s, "mid");
  await until("mid followed", () => reads(b, "User:alice", "mid"));
  assert.equal((await s.getChildren("/kafka-acl-changes")).length, 6, "none is 15 minutes old yet");
  assert.ok(!ops.some((o) => o.startsWith("delete ")), "nothing deleted");

  time.sleep(2 * 60 * 1000); // the first five are 16 minutes old, mid 2 minutes
  ops.length = 0;
  await writeAcl(s, "new");
  await until("the five expired notices deleted", async () => {
    return (await s.getChildren("/kafka-acl-changes")).length === 2;
  });
  assert.ok(reads(b, "User:alice", "new"));
  const applied = ops.indexOf("get /kafka-acl/Topic/new");
  const firstDelete = ops.findIndex((o) => o.startsWith("delete "));
  assert.ok(applied >= 0 && firstDelete > applied, `the purge after the batch:\n${ops.join("\n")}`);
  assert.equal(ops.filter((o) => o.startsWith("delete ")).length, 5);
  // The ACLs stay: only notices expire.
  for (let i = 0; i < 5; i++) assert.ok(reads(b, "User:alice", `old${i}`));

  // Until mid expires, a change reads no notice's stat at all.
  ops.length = 0;
  await writeAcl(s, "newer");
  await until("newer followed", () => reads(b, "User:alice", "newer"));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(
    ops.filter((o) => o.startsWith("exists /kafka-acl-changes/") || o.startsWith("delete ")),
    [],
  );
});
