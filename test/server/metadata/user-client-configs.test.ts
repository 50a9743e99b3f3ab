// User and client config entities (/config/users, /config/clients, /config/users/<u>/clients/<c>): written
// with a change notification, read by every metadata cache following the store, reported in its deltas,
// and found again by a cache that starts later or after a restart.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MetadataCache, type MetadataDelta } from "../../../src/server/metadata/metadata-cache.js";
import {
  ConfigEntityZNode,
  desanitizeEntityName,
  sanitizeEntityName,
  ZkPaths,
} from "../../../src/server/metadata/zk-data.js";
import { MetadataStack, removeDir, tempDir } from "./metadata-test-utils.js";

describe("user and client config entities", () => {
  const dir = tempDir("entities");
  let s: MetadataStack;
  before(async () => {
    s = await MetadataStack.start(dir);
  });
  after(async () => {
    await s.stop();
    removeDir(dir);
  });

  it("sanitizes names as Kafka's Sanitizer (URL-encoded, %20, %2A) and back", () => {
    assert.equal(sanitizeEntityName("alice"), "alice");
    assert.equal(sanitizeEntityName("CN=bob smith,O=acme"), "CN%3Dbob%20smith%2CO%3Dacme");
    assert.equal(sanitizeEntityName("a*b~c!d"), "a%2Ab%7Ec%21d");
    assert.equal(sanitizeEntityName("client.id-1_x"), "client.id-1_x");
    for (const n of ["CN=bob smith,O=acme", "a*b~c!d", "ünï/côdé"])
      assert.equal(desanitizeEntityName(sanitizeEntityName(n)), n);
  });

  it("writes users/<u>/clients/<c> with its parents, and another cache sees it through the notification", async () => {
    const other = new MetadataCache(s.store, { brokerId: 1 });
    const seen: MetadataDelta[] = [];
    other.onChange((d) => seen.push(d));
    await other.start();
    try {
      await s.admin.writeUserClientConfig("users/alice/clients/app-1", { producer_byte_rate: "1024" });
      await s.admin.writeUserClientConfig("clients/<default>", { consumer_byte_rate: "2048" });
      assert.deepEqual(s.cache.entityConfig("users/alice/clients/app-1"), { producer_byte_rate: "1024" });
      // The parent entity exists (created empty) and has no config.
      assert.deepEqual(s.cache.entityConfig("users/alice"), {});
      const n = await s.store.get(ZkPaths.configEntity("users/alice/clients/app-1"));
      assert.ok(n);
      assert.deepEqual(JSON.parse(n.data.toString()), { version: 1, config: { producer_byte_rate: "1024" } });
      await other.idle();
      for (
        let i = 0;
        i < 50 && other.entityConfig("clients/<default>").consumer_byte_rate === undefined;
        i++
      ) {
        await new Promise((r) => setTimeout(r, 20));
        await other.idle();
      }
      assert.deepEqual(other.entityConfig("users/alice/clients/app-1"), { producer_byte_rate: "1024" });
      assert.deepEqual(other.entityConfig("clients/<default>"), { consumer_byte_rate: "2048" });
      const changed = new Set(seen.flatMap((d) => [...d.entityConfigs]));
      assert.ok(
        changed.has("users/alice/clients/app-1") && changed.has("clients/<default>"),
        [...changed].join(),
      );
      // Overwriting with fewer keys removes the others.
      await s.admin.writeUserClientConfig("users/alice/clients/app-1", {});
      assert.deepEqual(s.cache.entityConfig("users/alice/clients/app-1"), {});
      assert.deepEqual(ConfigEntityZNode.decode("x", Buffer.alloc(0)), {});
    } finally {
      other.close();
    }
  });

  it("a cache started later (or after a restart) loads every entity", async () => {
    await s.admin.writeUserClientConfig("users/bob", {
      "SCRAM-SHA-512": "salt=c2FsdA==,stored_key=a,server_key=b,iterations=4096",
    });
    s = await s.restart();
    assert.equal(s.cache.entityConfig("users/bob")["SCRAM-SHA-512"]?.startsWith("salt="), true);
    assert.deepEqual(s.cache.entityConfig("clients/<default>"), { consumer_byte_rate: "2048" });
    assert.deepEqual([...s.cache.allEntityConfigs().keys()].sort(), [
      "clients/<default>",
      "users/alice",
      "users/alice/clients/app-1",
      "users/bob",
    ]);
  });
});
