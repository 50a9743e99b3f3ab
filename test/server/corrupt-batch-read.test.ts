// Issue 20: a damaged batch in a segment of a cleanly stopped log is not served as it is. A broker process
// takes three single-record batches (kcat), stops cleanly, one byte in the middle batch's records is
// flipped on disk, and the broker starts again (a clean start: nothing is recovered). Then, over the wire:
// a Fetch from offset 0 returns only the batch before the damaged one; a Fetch from the damaged batch's
// offset answers CORRUPT_MESSAGE (Kafka's error 2) with no records, and the broker logs one ERROR naming the
// segment file and the batch; the batch after it is still served from its own offset; kcat reports the
// error instead of waiting silently.

import assert from "node:assert/strict";
import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Apis } from "../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../src/protocol/generated/errors.js";
import {
  defaultFetchPartition,
  defaultFetchRequest,
  defaultFetchTopic,
} from "../../src/protocol/generated/messages/FetchRequest.js";
import { BrokerHarness, runCommand } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { WireClient } from "./wire-client.js";

const KCAT = "/usr/bin/kcat";
let broker: BrokerHarness;

function fetchRequest(offset: bigint) {
  return {
    ...defaultFetchRequest(),
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1024 * 1024,
    topics: [
      {
        ...defaultFetchTopic(),
        topic: "crc",
        partitions: [
          { ...defaultFetchPartition(), partition: 0, fetchOffset: offset, partitionMaxBytes: 1024 * 1024 },
        ],
      },
    ],
  };
}

/** The base offsets of the batches in a raw records buffer. */
function baseOffsets(records: Buffer | null): bigint[] {
  const out: bigint[] = [];
  let p = 0;
  while (records !== null && p + 12 <= records.length) {
    out.push(records.readBigInt64BE(p));
    p += 12 + records.readInt32BE(p + 8);
  }
  return out;
}

before(async () => {
  broker = await BrokerHarness.start({ name: "corrupt-read" });
});

after(async () => {
  await broker?.close();
});

test("a damaged batch in a cleanly stopped segment answers CORRUPT_MESSAGE; the others are served", {
  skip: skipUnlessInstalled("kcat"),
}, async () => {
  for (const value of ["first", "second", "third"]) {
    const r = await runCommand(KCAT, ["-b", broker.bootstrap, "-P", "-t", "crc", "-p", "0"], {
      input: `${value}\n`,
      timeoutMs: 20_000,
    });
    assert.equal(r.code, 0, r.stderr);
  }
  assert.equal(await broker.stop("SIGTERM"), 0);
  // Flip a byte inside the second batch's records (past its 61-byte header).
  const log = join(broker.logDir, "crc-0", "00000000000000000000.log");
  const bytes = readFileSync(log);
  const second = 12 + bytes.readInt32BE(8);
  assert.equal(bytes.readBigInt64BE(second), 1n, "the second batch starts at offset 1");
  const at = second + 61 + 3;
  const fd = openSync(log, "r+");
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, at);
  one[0] ^= 0xff;
  writeSync(fd, one, 0, 1, at);
  closeSync(fd);
  await broker.restart();

  const c = await WireClient.connect(broker.port);
  try {
    const fromZero = await c.request(Apis.Fetch, 12, fetchRequest(0n));
    const p0 = fromZero.responses[0].partitions[0];
    assert.equal(p0.errorCode, ErrorCode.NONE);
    assert.deepEqual(baseOffsets(p0.records), [0n], "only the batch before the damaged one");
    const fromOne = await c.request(Apis.Fetch, 12, fetchRequest(1n));
    const p1 = fromOne.responses[0].partitions[0];
    assert.equal(p1.errorCode, ErrorCode.CORRUPT_MESSAGE);
    assert.deepEqual(baseOffsets(p1.records), []);
    const fromTwo = await c.request(Apis.Fetch, 12, fetchRequest(2n));
    assert.deepEqual(baseOffsets(fromTwo.responses[0].partitions[0].records), [2n]);
    // Asked again: still refused, logged once.
    await c.request(Apis.Fetch, 12, fetchRequest(1n));
  } finally {
    c.close();
  }
  const errors = broker.errorLines.filter((l) =>
    /Record batch 1\.\.1 at position \d+ of .*crc-0.*is corrupt/.test(l),
  );
  assert.equal(errors.length, 1, broker.errorLines.join("\n"));

  // kcat reports the error rather than waiting silently at offset 1.
  const kc = await runCommand(
    KCAT,
    ["-b", broker.bootstrap, "-C", "-t", "crc", "-p", "0", "-o", "beginning", "-e"],
    {
      timeoutMs: 8000,
    },
  );
  assert.match(kc.stdout, /^first$/m);
  // (librdkafka names error 2 "Broker: Invalid message".)
  assert.match(kc.stderr + kc.stdout, /Fetch from broker 0 failed: Broker: Invalid message/);
});
