// FrameReader over real sockets: frames split at every possible boundary arrive whole and in order;
// an oversized or negative size prefix is rejected as soon as its 4 bytes arrive, before the body; frames
// spanning chunks are assembled in memory from the owner's MemoryPool, copied chunk by chunk once a
// quarter has arrived, never allocated beyond 4× the bytes received. Chunks read into one reused buffer
// (the client's read buffer) are copied where kept: overwriting the buffer after each push changes nothing.

import assert from "node:assert/strict";
import { once } from "node:events";
import { createConnection, createServer, type Socket } from "node:net";
import { test } from "node:test";
import { MemoryPool } from "../../src/common/memory-pool.js";
import { FrameReader, FrameTooLargeError } from "../../src/protocol/frame-reader.js";
import { Random } from "../support/random.js";

function frame(body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeInt32BE(body.length);
  return Buffer.concat([head, body]);
}

test("frames split at every byte boundary are reassembled in order", () => {
  const bodies = [Buffer.from("a"), Buffer.alloc(0), Buffer.from("hello world"), Buffer.alloc(300, 7)];
  const stream = Buffer.concat(bodies.map(frame));
  for (let cut1 = 0; cut1 <= stream.length; cut1 += 3) {
    for (let cut2 = cut1; cut2 <= stream.length; cut2 += 17) {
      const fr = new FrameReader(1024);
      const got = [
        ...fr.push(stream.subarray(0, cut1)),
        ...fr.push(stream.subarray(cut1, cut2)),
        ...fr.push(stream.subarray(cut2)),
      ];
      assert.deepStrictEqual(got, bodies);
      assert.equal(fr.pendingBytes, 0);
    }
  }
});

test("size prefixes above the limit or negative are rejected before any body byte arrives", () => {
  const fr = new FrameReader(100);
  // The frame before the bad prefix is still delivered; nothing after it is.
  const got = fr.push(
    Buffer.concat([frame(Buffer.from("ok")), Buffer.from([0, 0, 0, 101]), frame(Buffer.from("x"))]),
  );
  assert.deepStrictEqual(got, [Buffer.from("ok")]);
  assert.ok(fr.failure instanceof FrameTooLargeError);
  assert.equal(fr.failure.message, "Invalid receive (size = 101 larger than 100)");
  assert.deepStrictEqual(fr.push(frame(Buffer.from("y"))), []);
  assert.equal(fr.pendingBytes, 0);
  const neg = new FrameReader(100);
  neg.push(Buffer.from([0xff, 0xff, 0xff, 0xfe]));
  assert.match(neg.failure?.message ?? "", /negative frame size/);
  // A huge size split across chunks: rejected when the 4th byte arrives, nothing allocated for it.
  const huge = new FrameReader(100 * 1024 * 1024);
  assert.deepStrictEqual(huge.push(Buffer.from([0x7f, 0xff])), []);
  assert.equal(huge.pendingBytes, 2, "no failure yet: only half the prefix has arrived");
  huge.push(Buffer.from([0xff, 0xff]));
  assert.match(huge.failure?.message ?? "", /larger than 104857600/);
});

test("over a real socket, random chunking delivers every frame and an oversized one closes the stream", async () => {
  const rnd = new Random(42);
  const bodies = Array.from({ length: 200 }, () => rnd.bytes(rnd.int(0, 5000)));
  const received: Buffer[] = [];
  let rejected: Error | undefined;
  const server = createServer((sock: Socket) => {
    const fr = new FrameReader(8192);
    sock.on("data", (chunk) => {
      received.push(...fr.push(chunk));
      if (fr.failure) {
        rejected = fr.failure;
        sock.destroy();
      }
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const client = createConnection(port, "127.0.0.1");
  // The server resets the connection after the oversized frame: wait for 'close', ignore the reset
  // (events.once would reject on the 'error' event).
  const closed = new Promise<void>((resolve) => client.on("close", () => resolve()));
  client.on("error", () => {});
  await once(client, "connect");
  const stream = Buffer.concat(bodies.map(frame));
  for (let pos = 0; pos < stream.length; ) {
    const n = rnd.int(1, 3000);
    client.write(stream.subarray(pos, pos + n));
    pos += n;
  }
  client.write(frame(Buffer.alloc(9000)));
  await closed;
  server.close();
  assert.equal(received.length, bodies.length);
  for (let i = 0; i < bodies.length; i++) assert.ok(received[i].equals(bodies[i]), `frame ${i}`);
  assert.ok(rejected instanceof FrameTooLargeError, "the oversized frame was rejected");
});

test("frames spanning chunks are assembled in the owner's MemoryPool; single-chunk frames are views", () => {
  const pool = new MemoryPool();
  const big = Buffer.alloc(200 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  const stream = Buffer.concat([frame(big), frame(Buffer.from("tail"))]);
  const fr = new FrameReader(1 << 20, pool);
  const got: Buffer[] = [];
  for (let at = 0; at < stream.length; at += 65536) got.push(...fr.push(stream.subarray(at, at + 65536)));
  assert.deepStrictEqual(got, [big, Buffer.from("tail")]);
  assert.equal(pool.fresh, 1, "the spanning frame came from the pool");
  assert.equal(got[0].buffer.byteLength, 256 * 1024);
  pool.release(got[0]);
  pool.release(got[1]); // a view of the last chunk: not the pool's, ignored
  assert.equal(pool.pooledBytes, 256 * 1024);
  // The next spanning frame reuses the released memory.
  const again: Buffer[] = [];
  const s2 = frame(big);
  for (let at = 0; at < s2.length; at += 65536) again.push(...fr.push(s2.subarray(at, at + 65536)));
  assert.deepStrictEqual(again, [big]);
  assert.equal(again[0].buffer, got[0].buffer);
  assert.equal(pool.reused, 1);
});

test("a spanning frame's buffer is taken once a quarter has arrived, and filled chunk by chunk", () => {
  const pool = new MemoryPool({ maxPooledBytes: 64 << 20 });
  const fr = new FrameReader(64 << 20, pool);
  const rnd = new Random(7);
  const body = rnd.bytes(1 << 20);
  const stream = Buffer.concat([frame(body), frame(Buffer.from("next"))]);
  // A hostile size prefix gets nothing allocated until its bytes arrive: 60 MiB announced, 1 KiB sent.
  const liar = new FrameReader(64 << 20, pool);
  liar.push(Buffer.concat([Buffer.from([0x03, 0xc0, 0, 0]), Buffer.alloc(1024)]));
  assert.equal(pool.fresh, 0, "nothing allocated for a frame 1/61440 received");
  assert.equal(liar.pendingBytes, 1024);
  // The real frame in 64 KiB chunks: four chunks hold 4 bytes short of a quarter of the body (the size
  // prefix), so its buffer is taken with the 5th.
  const got: Buffer[] = [];
  let taken = -1;
  for (let off = 0, i = 0; off < stream.length; off += 65536, i++) {
    got.push(...fr.push(stream.subarray(off, Math.min(off + 65536, stream.length))));
    if (taken < 0 && pool.fresh > 0) taken = i;
  }
  assert.equal(taken, 4, "taken when the 5th chunk arrived");
  assert.equal(got.length, 2);
  assert.ok(got[0].equals(body), "the assembled frame holds every byte");
  assert.deepStrictEqual(got[1], Buffer.from("next"), "the frame after it, from the tail of the last chunk");
  assert.equal(fr.pendingBytes, 0);
  // Split at every 97th byte as well (chunks ending inside the size prefix of the next frame).
  const again = new FrameReader(64 << 20);
  const parts: Buffer[] = [];
  for (let off = 0; off < stream.length; off += 97 * 1024 + 1)
    parts.push(...again.push(stream.subarray(off, off + 97 * 1024 + 1)));
  assert.ok(parts[0].equals(body));
  assert.deepStrictEqual(parts[1], Buffer.from("next"));
});

test("volatile chunks (one reused read buffer): every frame and every kept byte survives the reuse", () => {
  const rnd = new Random(11);
  const bodies = Array.from({ length: 300 }, (_, i) =>
    rnd.bytes(i % 7 === 0 ? rnd.int(100_000, 400_000) : rnd.int(0, 3000)),
  );
  const stream = Buffer.concat(bodies.map(frame));
  const readBuffer = Buffer.alloc(64 * 1024);
  const fr = new FrameReader(1 << 20);
  const got: Buffer[] = [];
  for (let off = 0; off < stream.length; ) {
    const n = Math.min(rnd.int(1, readBuffer.length), stream.length - off);
    stream.copy(readBuffer, 0, off, off + n);
    off += n;
    got.push(...fr.push(readBuffer.subarray(0, n), true));
    readBuffer.fill(0xee); // the next read overwrites it
  }
  assert.equal(got.length, bodies.length);
  for (let i = 0; i < bodies.length; i++) assert.ok(got[i].equals(bodies[i]), `frame ${i}`);
  assert.ok(
    got.every((f) => f.buffer !== readBuffer.buffer),
    "no frame is a view of the read buffer",
  );
  assert.equal(fr.pendingBytes, 0);
});
