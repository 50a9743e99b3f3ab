// Segment file names: 20-digit zero-padded base offsets, suffixes, parsing back.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  filenamePrefixFromOffset,
  isIndexFile,
  isLogFile,
  logFile,
  offsetFromFileName,
  offsetIndexFile,
  stripLastSuffix,
  timeIndexFile,
  transactionIndexFile,
} from "../../src/storage/log-file-names.js";

test("names are the base offset as 20 zero-padded digits plus Kafka's suffixes", () => {
  assert.equal(filenamePrefixFromOffset(0n), "00000000000000000000");
  assert.equal(filenamePrefixFromOffset(123n), "00000000000000000123");
  assert.equal(filenamePrefixFromOffset(9223372036854775807n), "09223372036854775807");
  assert.equal(logFile("/d", 5n), "/d/00000000000000000005.log");
  assert.equal(offsetIndexFile("/d", 5n), "/d/00000000000000000005.index");
  assert.equal(timeIndexFile("/d", 5n), "/d/00000000000000000005.timeindex");
  assert.equal(transactionIndexFile("/d", 5n, ".swap"), "/d/00000000000000000005.txnindex.swap");
  assert.throws(() => filenamePrefixFromOffset(-1n), RangeError);
});

test("file names parse back to their offset", () => {
  assert.equal(offsetFromFileName("00000000000000000123.log"), 123n);
  assert.equal(offsetFromFileName("00000000000000000123.timeindex.deleted"), 123n);
  assert.equal(offsetFromFileName("00000000000000000042.log.swap"), 42n);
  assert.equal(offsetFromFileName("leader-epoch-checkpoint"), undefined);
  assert.equal(offsetFromFileName("123.log"), undefined);
  assert.equal(stripLastSuffix("00000000000000000042.log.swap"), "00000000000000000042.log");
  assert.ok(isLogFile("00000000000000000000.log"));
  assert.ok(!isLogFile("00000000000000000000.log.deleted"));
  assert.ok(isIndexFile("00000000000000000000.timeindex"));
  assert.ok(!isIndexFile("00000000000000000000.snapshot"));
});
