// Issue 20: bounded memory under slow and hostile clients, on a real broker process over real sockets.
// queued.max.request.bytes is the request memory pool (32 MiB here), socket.request.receive.timeout.ms
// closes a connection whose request stops arriving (2 s here). Measured: the broker's RSS
// (/proc/<pid>/status VmRSS) against its baseline; the metrics it exports; and that a well-behaved
// client's small requests are answered throughout.
//   - 10 connections announce 100 MB requests and send 27 MB of each, then stall: RSS stays within the
//     pool + one request of margin, every one of them is closed by the receive deadline, and a Metadata
//     request from another client is answered at once meanwhile (small requests have their own budget).
//   - 500 connections each holding half a frame (slow loris): all closed by the deadline.
//   - A client that never reads its responses: reading from it stops (per-connection bound), memory
//     stays bounded.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { after, before, test } from "node:test";

import { Apis } from "../../src/protocol/generated/api-table.js";
import { defaultMetadataRequest } from "../../src/protocol/generated/messages/MetadataRequest.js";
import { BrokerHarness } from "../support/broker-harness.js";
import { metadataV1Frame } from "../support/raw-requests.js";
import { WireClient } from "./wire-client.js";

const POOL = 32 * 1024 * 1024;
const MB = 1024 * 1024;
let broker: BrokerHarness;

before(async () => {
  broker = await BrokerHarness.start({
    name: "hostile-clients",
    overrides: {
      "queued.max.request.bytes": String(POOL),
      "socket.request.receive.timeout.ms": "2000",
    },
  });
});

after(async () => {
  await broker?.close();
});

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) * 1024;
}

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port: broker.port }, () => resolve(s));
    s.on("error", reject);
  });
}

function closed(s: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (s.destroyed) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    s.once("close", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Writes `bytes` of a frame announcing `announced` bytes; resolves when the kernel took them or 5 s passed. */
function sendPartial(s: Socket, announced: number, bytes: number): Promise<void> {
  const head = Buffer.alloc(4);
  head.writeInt32BE(announced, 0);
  s.write(head);
  const chunk = Buffer.alloc(MB, 7);
  let left = bytes;
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 5000);
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!s.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          s.once("drain", pump);
          return;
        }
      }
      clearTimeout(t);
      resolve();
    };
    s.on("error", () => {});
    pump();
  });
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(broker.metricsUrl)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

async function metadataAnsweredWithin(ms: number): Promise<number> {
  const start = Date.now();
  const c = await WireClient.connect(broker.port);
  try {
    const r = await Promise.race([
      c.request(Apis.Metadata, 9, { ...defaultMetadataRequest(), topics: [] }),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms)),
    ]);
    assert.ok(r !== undefined, `Metadata answered within ${ms} ms`);
    return Date.now() - start;
  } finally {
    c.close();
  }
}

test("10 × 100 MB announced, 27 MB sent, then silence: RSS bounded by the pool, all closed by the deadline", {
  timeout: 120_000,
}, async () => {
  const pid = broker.pid!;
  const baseline = rssBytes(pid);
  const sockets = await Promise.all(Array.from({ length: 10 }, () => open()));
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 50);
  try {
    await Promise.all(sockets.map((s) => sendPartial(s, 100 * MB, 27 * MB)));
    // Meanwhile a well-behaved client is served at once.
    const took = await metadataAnsweredWithin(3000);
    assert.ok(took < 3000, `Metadata took ${took} ms`);
    const gone = await Promise.all(sockets.map((s) => closed(s, 40_000)));
    assert.deepEqual(
      gone,
      sockets.map(() => true),
      "every stalled connection closed",
    );
  } finally {
    clearInterval(sampler);
    for (const s of sockets) s.destroy();
  }
  const grew = peak - baseline;
  process.stderr.write(
    `[hostile-clients] RSS baseline ${(baseline / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB (+${(grew / MB).toFixed(0)} MB) for 10 × 27 MB half-sent requests\n`,
  );
  // Without the pool this was ~ +430 MB (10 × 27 MB held plus copies); with it one request (≤ 27 MB
  // received) at a time, plus the chunks each connection read before it waited, plus the copy made when
  // a frame is assembled.
  assert.ok(grew < 160 * MB, `RSS grew by ${(grew / MB).toFixed(0)} MB`);
  assert.ok((await metric("tributary_socketserver_receive_timeouts_total")) >= 10);
  assert.ok((await metric("tributary_socketserver_memory_pool_waits_total")) >= 1);
  // Once they are gone the pool is empty again.
  assert.equal(await metric("kafka_network_socketserver_memorypoolused"), 0);
  assert.equal(await metric("kafka_network_socketserver_memorypoolavailable"), POOL);
  assert.match(broker.output, /did not arrive within socket\.request\.receive\.timeout\.ms \(2000 ms\)/);
  // Memory goes back towards the baseline once they are gone (the broker trims the allocator's free
  // memory after abandoned requests, as their buffers are collected).
  const back = Date.now();
  let after = rssBytes(pid);
  while (after - baseline > 48 * MB && Date.now() - back < 25_000) {
    await new Promise((r) => setTimeout(r, 500));
    after = rssBytes(pid);
  }
  process.stderr.write(
    `[hostile-clients] RSS ${(after / MB).toFixed(0)} MB ${((Date.now() - back) / 1000).toFixed(1)} s after they closed\n`,
  );
  assert.ok(
    after - baseline <= 48 * MB,
    `RSS ${(after / MB).toFixed(0)} MB, baseline ${(baseline / MB).toFixed(0)} MB`,
  );
});

test("500 connections each holding half a frame (slow loris) are all closed by the deadline", {
  timeout: 60_000,
}, async () => {
  const sockets: Socket[] = [];
  for (let i = 0; i < 500; i++) sockets.push(await open());
  try {
    for (const s of sockets) {
      const frame = Buffer.alloc(4 + 50);
      frame.writeInt32BE(100, 0);
      s.on("error", () => {});
      s.write(frame); // 50 of 100 bytes
    }
    const gone = await Promise.all(sockets.map((s) => closed(s, 20_000)));
    assert.equal(gone.filter((g) => g).length, 500);
    await metadataAnsweredWithin(2000);
  } finally {
    for (const s of sockets) s.destroy();
  }
});

test("a client that sends requests and never reads: the broker stops reading from it, memory stays bounded", {
  timeout: 60_000,
}, async () => {
  const pid = broker.pid!;
  const baseline = rssBytes(pid);
  const s = await open();
  s.on("error", () => {});
  s.pause(); // never reads
  // Metadata v1 requests, pipelined: the responses pile up unread.
  const frame = metadataV1Frame();
  const many = Buffer.concat(Array.from({ length: 20_000 }, () => frame));
  s.write(many);
  await new Promise((r) => setTimeout(r, 3000));
  const grew = rssBytes(pid) - baseline;
  assert.ok(grew < 64 * MB, `RSS grew by ${(grew / MB).toFixed(0)} MB`);
  await metadataAnsweredWithin(2000);
  s.destroy();
});
