// SerialEventQueue: events run one at a time in order; clearAndPut drops the events waiting (they settle
// without running) and runs its event right after the one running (Kafka's clearAndPut for session expiry).

import assert from "node:assert/strict";
import { test } from "node:test";
import { SerialEventQueue } from "../../src/common/serial-event-queue.js";

test("events run one at a time in the order queued; a failing event is reported and the queue goes on", async () => {
  const ran: string[] = [];
  const errors: string[] = [];
  const q = new SerialEventQueue((name) => errors.push(name));
  void q.put("a", async () => {
    await new Promise((r) => setTimeout(r, 5));
    ran.push("a");
  });
  void q.put("b", () => {
    throw new Error("boom");
  });
  await q.put("c", () => {
    ran.push("c");
  });
  assert.deepEqual(ran, ["a", "c"]);
  assert.deepEqual(errors, ["b"]);
});

test("clearAndPut: the events waiting settle without running, the running one finishes, the new one runs next", async () => {
  const ran: string[] = [];
  const q = new SerialEventQueue(() => undefined);
  let release!: () => void;
  const running = q.put("running", async () => {
    await new Promise<void>((r) => {
      release = r;
    });
    ran.push("running");
  });
  const waiting = [q.put("w1", () => void ran.push("w1")), q.put("w2", () => void ran.push("w2"))];
  await new Promise((r) => setImmediate(r));
  const expire = q.clearAndPut("Expire", () => void ran.push("Expire"));
  const after = q.put("after", () => void ran.push("after"));
  release();
  await Promise.all([running, ...waiting, expire, after]);
  assert.deepEqual(ran, ["running", "Expire", "after"]);
  assert.equal(q.size, 0);
});
