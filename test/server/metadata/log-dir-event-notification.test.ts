// Kafka's log dir event notifications on a real (embedded) metadata store: a broker's event is a
// persistent sequential /log_dir_event_notification/log_dir_event_<10 digits> holding exactly
// {"version":1,"broker":<id>,"event":1}; the controller reads them oldest first with the brokers they
// name, its watch fires on a new one, and deleting handled ones (twice is fine) leaves none.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SystemTime } from "../../../src/common/time.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { KafkaZkClient } from "../../../src/server/metadata/kafka-zk-client.js";

test("log dir event notifications: Kafka's znode, read oldest first, watched, deleted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tributary-log-dir-events-"));
  const store = await EmbeddedMetadataStore.open(dir, new SystemTime());
  try {
    const zk = new KafkaZkClient(store);
    await zk.createTopLevelPaths();
    let fired = 0;
    const first = await zk.getLogDirEventNotifications(() => fired++);
    assert.deepEqual(first, { names: [], brokerIds: [] });
    const a = await zk.propagateLogDirEvent(2);
    const b = await zk.propagateLogDirEvent(0);
    assert.match(a, /^\/log_dir_event_notification\/log_dir_event_\d{10}$/);
    await new Promise((r) => setImmediate(r));
    assert.equal(fired, 1, "the children watch fired");
    const node = await store.get(a);
    assert.deepEqual(JSON.parse(node?.data.toString("utf8") ?? ""), { version: 1, broker: 2, event: 1 });
    const pending = await zk.getLogDirEventNotifications();
    assert.deepEqual(
      pending.names,
      [a, b].map((p) => p.split("/").pop()),
    );
    assert.deepEqual(pending.brokerIds, [2, 0]);
    await zk.deleteLogDirEventNotifications(pending.names);
    await zk.deleteLogDirEventNotifications(pending.names);
    assert.deepEqual(await zk.getLogDirEventNotifications(), { names: [], brokerIds: [] });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
