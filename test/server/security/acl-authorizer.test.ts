// The ACL authorizer's decisions and storage on a real metadata store (the embedded one, in a temp dir):
// Kafka's znodes and JSON, deny over allow, literal / wildcard / prefixed patterns, User:* and host
// matching, implied operations, super users, allow.everyone.if.no.acl.found, CreateAcls / DeleteAcls
// filters, and a second authorizer on the same store following the change notifications.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import {
  type AclBinding,
  Operation as Op,
  PatternType,
  Permission,
  ResourceType as RT,
} from "../../../src/common/acl-binding.js";
import { SystemScheduler } from "../../../src/common/scheduler.js";
import { SystemTime } from "../../../src/common/time.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { AclAuthorizer, hostOf } from "../../../src/server/security/authorizer/acl-authorizer.js";

const dirs: string[] = [];
const stores: EmbeddedMetadataStore[] = [];
const scheduler = new SystemScheduler();
after(async () => {
  for (const s of stores) await s.close();
  scheduler.shutdown();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function store(): Promise<EmbeddedMetadataStore> {
  const d = mkdtempSync(join(tmpdir(), "acl-authorizer-"));
  dirs.push(d);
  const s = await EmbeddedMetadataStore.open(d, new SystemTime());
  stores.push(s);
  return s;
}

async function authorizer(
  s: EmbeddedMetadataStore,
  opts: { superUsers?: string[]; allowEveryone?: boolean } = {},
): Promise<AclAuthorizer> {
  const a = new AclAuthorizer(
    s,
    { superUsers: new Set(opts.superUsers ?? []), allowEveryoneIfNoAclFound: opts.allowEveryone ?? false },
    new SystemTime(),
    scheduler,
  );
  await a.start();
  return a;
}

/** Waits (5 s at most) for `check` to hold. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    assert.ok(Date.now() < deadline, `not within 5 s: ${check}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ctx = (principal: string, host = "127.0.0.1") => ({
  principal,
  clientAddress: `${host}:40000`,
  api: { name: "Test" },
});

function acl(
  type: number,
  name: string,
  principal: string,
  operation: number,
  permissionType: number = Permission.ALLOW,
  patternType: number = PatternType.LITERAL,
  host = "*",
): AclBinding {
  return {
    pattern: { resourceType: type, name, patternType },
    entry: { principal, host, operation, permissionType },
  };
}

test("ACLs are stored as Kafka stores them, with a change notification per write", async () => {
  const s = await store();
  const a = await authorizer(s);
  const results = await a.createAcls([
    acl(RT.TOPIC, "orders", "User:alice", Op.READ),
    acl(RT.GROUP, "billing", "User:alice", Op.READ),
    acl(RT.TOPIC, "logs-", "User:bob", Op.WRITE, Permission.ALLOW, PatternType.PREFIXED),
    acl(RT.TRANSACTIONAL_ID, "tx", "User:bob", Op.WRITE, Permission.DENY),
  ]);
  assert.deepEqual(results, [undefined, undefined, undefined, undefined]);
  const doc = JSON.parse((await s.get("/kafka-acl/Topic/orders"))!.data.toString());
  assert.deepEqual(doc, {
    version: 1,
    acls: [{ principal: "User:alice", permissionType: "Allow", operation: "Read", host: "*" }],
  });
  assert.ok(await s.get("/kafka-acl/Group/billing"));
  assert.ok(await s.get("/kafka-acl-extended/prefixed/Topic/logs-"));
  const tx = JSON.parse((await s.get("/kafka-acl/TransactionalId/tx"))!.data.toString());
  assert.equal(tx.acls[0].permissionType, "Deny");
  const literal = await s.getChildren("/kafka-acl-changes");
  assert.equal(literal.length, 3);
  assert.ok(
    literal.every((n) => /^acl_changes_\d{10}$/.test(n)),
    literal.join(),
  );
  const datas = await Promise.all(
    literal.map(async (n) => (await s.get(`/kafka-acl-changes/${n}`))!.data.toString()),
  );
  assert.deepEqual(datas.sort(), ["GROUP:billing", "TOPIC:orders", "TRANSACTIONAL_ID:tx"]);
  const [ext] = await s.getChildren("/kafka-acl-extended-changes");
  assert.deepEqual(JSON.parse((await s.get(`/kafka-acl-extended-changes/${ext}`))!.data.toString()), {
    version: 1,
    resourceType: "TOPIC",
    name: "logs-",
    patternType: "PREFIXED",
  });
  a.close();
});

test("decisions: deny over allow, wildcards, prefixes, hosts, implied operations, super users", async () => {
  const s = await store();
  const a = await authorizer(s, { superUsers: ["User:admin"] });
  await a.createAcls([
    acl(RT.TOPIC, "*", "User:*", Op.READ),
    acl(RT.TOPIC, "secret", "User:bob", Op.READ, Permission.DENY),
    acl(RT.TOPIC, "logs-", "User:carol", Op.WRITE, Permission.ALLOW, PatternType.PREFIXED),
    acl(RT.TOPIC, "logs-private-", "User:carol", Op.ALL, Permission.DENY, PatternType.PREFIXED),
    acl(RT.TOPIC, "cfg", "User:dave", Op.ALTER_CONFIGS),
    acl(RT.TOPIC, "pinned", "User:erin", Op.WRITE, Permission.ALLOW, PatternType.LITERAL, "10.0.0.7"),
    acl(RT.CLUSTER, "kafka-cluster", "User:erin", Op.ALL),
  ]);
  const ok = (p: string, op: number, type: number, name: string, host?: string) =>
    a.authorize(ctx(p, host), op, type, name);
  assert.equal(ok("User:alice", Op.READ, RT.TOPIC, "anything"), true, "User:* on *");
  assert.equal(ok("User:alice", Op.WRITE, RT.TOPIC, "anything"), false, "READ does not give WRITE");
  assert.equal(ok("User:alice", Op.DESCRIBE, RT.TOPIC, "anything"), true, "READ implies DESCRIBE");
  assert.equal(ok("User:bob", Op.READ, RT.TOPIC, "secret"), false, "deny over allow");
  assert.equal(ok("User:bob", Op.READ, RT.TOPIC, "other"), true);
  assert.equal(ok("User:carol", Op.WRITE, RT.TOPIC, "logs-app"), true, "prefixed allow");
  assert.equal(ok("User:carol", Op.WRITE, RT.TOPIC, "logs"), false, "shorter than the prefix");
  assert.equal(ok("User:carol", Op.WRITE, RT.TOPIC, "logs-private-x"), false, "prefixed deny ALL");
  assert.equal(
    ok("User:dave", Op.DESCRIBE_CONFIGS, RT.TOPIC, "cfg"),
    true,
    "ALTER_CONFIGS implies DESCRIBE_CONFIGS",
  );
  assert.equal(ok("User:dave", Op.ALTER, RT.TOPIC, "cfg"), false);
  assert.equal(ok("User:erin", Op.WRITE, RT.TOPIC, "pinned", "10.0.0.7"), true, "host matches");
  assert.equal(ok("User:erin", Op.WRITE, RT.TOPIC, "pinned", "10.0.0.8"), false, "other host");
  assert.equal(ok("User:erin", Op.CLUSTER_ACTION, RT.CLUSTER, "kafka-cluster"), true, "ALL");
  assert.equal(ok("User:alice", Op.READ, RT.GROUP, "g"), false, "no ACL: denied");
  assert.equal(ok("User:admin", Op.DELETE, RT.GROUP, "g"), true, "super user");
  // KIP-679: WRITE on some topic for idempotent producers.
  assert.equal(a.authorizeByResourceType(ctx("User:carol"), Op.WRITE, RT.TOPIC), true);
  assert.equal(a.authorizeByResourceType(ctx("User:alice"), Op.WRITE, RT.TOPIC), false);
  a.close();
});

test("allow.everyone.if.no.acl.found allows a resource only while it has no ACL", async () => {
  const s = await store();
  const a = await authorizer(s, { allowEveryone: true });
  assert.equal(a.authorize(ctx("User:bob"), Op.WRITE, RT.TOPIC, "t"), true);
  await a.createAcls([acl(RT.TOPIC, "t", "User:alice", Op.WRITE)]);
  assert.equal(a.authorize(ctx("User:bob"), Op.WRITE, RT.TOPIC, "t"), false);
  assert.equal(a.authorize(ctx("User:alice"), Op.WRITE, RT.TOPIC, "t"), true);
  a.close();
});

test("invalid bindings are INVALID_REQUEST; delete filters match as Kafka's; a second authorizer follows", async () => {
  const s = await store();
  const a = await authorizer(s);
  const b = await authorizer(s);
  const bad = await a.createAcls([
    acl(RT.CLUSTER, "other", "User:x", Op.ALTER),
    acl(RT.TOPIC, "", "User:x", Op.READ),
    acl(RT.TOPIC, "a/b", "User:x", Op.READ),
    acl(RT.TOPIC, "t", "User:x", Op.READ, Permission.ALLOW, PatternType.MATCH),
    acl(RT.TOPIC, "t", "nocolon", Op.READ),
  ]);
  assert.ok(
    bad.every((r) => r?.error === "INVALID_REQUEST"),
    JSON.stringify(bad),
  );
  await a.createAcls([
    acl(RT.TOPIC, "t1", "User:x", Op.READ),
    acl(RT.TOPIC, "t1", "User:y", Op.READ),
    acl(RT.TOPIC, "t", "User:x", Op.WRITE, Permission.ALLOW, PatternType.PREFIXED),
  ]);
  // The second authorizer sees them through the change notifications.
  await until(() => b.authorize(ctx("User:y"), Op.READ, RT.TOPIC, "t1"));
  await until(() => b.authorize(ctx("User:x"), Op.WRITE, RT.TOPIC, "t99"));
  // MATCH finds the literal and the prefixed pattern that apply to t1; the entry filter keeps User:x's.
  const any = { principal: "User:x", host: null, operation: Op.ANY, permissionType: Permission.ANY };
  const matched = a.acls({
    pattern: { resourceType: RT.TOPIC, name: "t1", patternType: PatternType.MATCH },
    entry: any,
  });
  assert.equal(matched.length, 2);
  const [deleted] = await a.deleteAcls([
    { pattern: { resourceType: RT.ANY, name: null, patternType: PatternType.ANY }, entry: any },
  ]);
  assert.equal(deleted.deleted.length, 2);
  assert.deepEqual((await s.getChildren("/kafka-acl-extended/prefixed/Topic")).length, 0);
  const left = JSON.parse((await s.get("/kafka-acl/Topic/t1"))!.data.toString());
  assert.deepEqual(
    left.acls.map((e: { principal: string }) => e.principal),
    ["User:y"],
  );
  await until(() => !b.authorize(ctx("User:x"), Op.READ, RT.TOPIC, "t1"));
  await until(() => !b.authorize(ctx("User:x"), Op.WRITE, RT.TOPIC, "t99"));
  a.close();
  b.close();
});

test("the host of a client address", () => {
  assert.equal(hostOf("127.0.0.1:5000"), "127.0.0.1");
  assert.equal(hostOf("::ffff:10.1.2.3:5000"), "10.1.2.3");
  assert.equal(hostOf("::1:5000"), "::1");
});
