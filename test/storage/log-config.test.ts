// LogConfig: Kafka's topic config names, defaults and one-line errors on bad values.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  brokerLogConfigFrom,
  DEFAULT_LOG_CONFIG,
  InvalidLogConfigError,
  LONG_MAX,
  logConfigFrom,
  NEVER_MS,
} from "../../src/storage/log-config.js";

test("defaults are Kafka's", () => {
  const c = DEFAULT_LOG_CONFIG;
  assert.equal(c.segmentBytes, 1073741824);
  assert.equal(c.segmentMs, 604800000);
  assert.equal(c.segmentJitterMs, 0);
  assert.equal(c.segmentIndexBytes, 10485760);
  assert.equal(c.indexIntervalBytes, 4096);
  assert.equal(c.retentionMs, 604800000);
  assert.equal(c.retentionBytes, -1);
  assert.deepEqual(c.cleanupPolicy, ["delete"]);
  assert.equal(c.deleteRetentionMs, 86400000);
  assert.equal(c.minCleanableDirtyRatio, 0.5);
  assert.equal(c.minCompactionLagMs, 0);
  assert.equal(c.maxCompactionLagMs, NEVER_MS);
  assert.equal(c.flushMessages, LONG_MAX);
  assert.equal(c.flushMs, NEVER_MS);
  assert.equal(c.fileDeleteDelayMs, 60000);
  assert.equal(c.maxMessageBytes, 1048588);
  assert.equal(c.messageTimestampType, "CreateTime");
  assert.equal(c.preallocate, false);
});

test("logConfigFrom maps Kafka's keys and ignores others", () => {
  const c = logConfigFrom({
    "segment.bytes": "1024",
    "retention.ms": "-1",
    "cleanup.policy": "compact,delete",
    "min.cleanable.dirty.ratio": "0.1",
    "message.timestamp.type": "LogAppendTime",
    "flush.messages": "9223372036854775807",
    "max.compaction.lag.ms": "9223372036854775807",
    preallocate: "true",
    "min.insync.replicas": "2",
  });
  assert.equal(c.segmentBytes, 1024);
  assert.equal(c.retentionMs, -1);
  assert.deepEqual(c.cleanupPolicy, ["compact", "delete"]);
  assert.equal(c.minCleanableDirtyRatio, 0.1);
  assert.equal(c.messageTimestampType, "LogAppendTime");
  assert.equal(c.flushMessages, LONG_MAX);
  assert.equal(c.maxCompactionLagMs, NEVER_MS);
  assert.equal(c.preallocate, true);
  assert.equal(c.indexIntervalBytes, 4096);
});

test("Long.MAX is accepted for the ms settings (never)", () => {
  assert.equal(logConfigFrom({ "retention.ms": "9223372036854775807" }).retentionMs, NEVER_MS);
  assert.equal(logConfigFrom({ "retention.ms": "-1" }).retentionMs, -1);
});

test("bad values give a one-line error naming the key, the value and what was expected", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["segment.bytes", "big", /expected an integer/],
    ["segment.bytes", "5", /integer in \[14,/],
    ["cleanup.policy", "forever", /delete and\/or compact/],
    ["min.cleanable.dirty.ratio", "2", /number in \[0, 1\]/],
    ["message.timestamp.type", "Now", /CreateTime or LogAppendTime/],
    ["preallocate", "yes", /true or false/],
    ["flush.messages", "0", /long/],
    // The message names the range that is checked: Kafka's Long range for the ms settings.
    ["retention.ms", "abc", /expected a long in \[-1, 9223372036854775807\]$/],
    ["retention.ms", "9223372036854775808", /expected a long in \[-1, 9223372036854775807\]$/],
    ["retention.ms", "-2", /expected a long in \[-1, 9223372036854775807\]$/],
  ];
  for (const [key, value, re] of cases) {
    assert.throws(
      () => logConfigFrom({ [key]: value }),
      (e: unknown) =>
        e instanceof InvalidLogConfigError &&
        re.test(e.message) &&
        e.message.includes(key) &&
        e.message.includes(JSON.stringify(value)) &&
        !e.message.includes("\n") &&
        e.key === key,
      `${key}=${value}`,
    );
  }
});

test("broker defaults come from server.properties synonyms with Kafka's priorities and units", () => {
  const c = brokerLogConfigFrom({
    "log.segment.bytes": "104857600",
    "log.retention.hours": "168",
    "log.retention.minutes": "30",
    "log.roll.hours": "2",
    "log.flush.interval.messages": "10000",
    "log.flush.scheduler.interval.ms": "3000",
    "log.cleanup.policy": "compact,delete",
    "message.max.bytes": "2000000",
  });
  assert.equal(c.segmentBytes, 104857600);
  assert.equal(c.retentionMs, 30 * 60_000, "log.retention.minutes wins over log.retention.hours");
  assert.equal(c.segmentMs, 2 * 3_600_000);
  assert.equal(c.flushMessages, 10000n);
  assert.equal(c.flushMs, 3000, "log.flush.interval.ms falls back to log.flush.scheduler.interval.ms");
  assert.deepEqual(c.cleanupPolicy, ["compact", "delete"]);
  assert.equal(c.maxMessageBytes, 2000000);
  assert.equal(brokerLogConfigFrom({ "log.retention.ms": "5", "log.retention.hours": "1" }).retentionMs, 5);
  assert.equal(brokerLogConfigFrom({ "log.retention.hours": "-1" }).retentionMs, -1);
  assert.deepEqual(brokerLogConfigFrom({}), DEFAULT_LOG_CONFIG);
  assert.throws(
    () => brokerLogConfigFrom({ "log.retention.hours": "a week" }),
    /Invalid value "a week" for configuration log.retention.hours: expected an integer/,
  );
  assert.throws(
    () => brokerLogConfigFrom({ "log.segment.bytes": "-5" }),
    (e: unknown) => e instanceof InvalidLogConfigError && e.key === "log.segment.bytes",
  );
});
