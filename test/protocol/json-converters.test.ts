// The generated JSON converters (Kafka's *JsonConverter.write) and the JSON printer they feed: fields by
// version, tagged fields only when not at their default, int64 exact, bytes as base64, compact output.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  defaultOffsetCommitValue,
  OffsetCommitValueToJson,
} from "../../src/protocol/generated/coordinator-records/OffsetCommitValue.js";
import {
  defaultTransactionLogValue,
  TransactionLogValueToJson,
} from "../../src/protocol/generated/coordinator-records/TransactionLogValue.js";
import { ConsumerProtocolAssignmentToJson } from "../../src/protocol/generated/messages/ConsumerProtocolAssignment.js";
import { stringifyJson } from "../../src/protocol/primitives/json-node.js";

describe("generated JSON converters", () => {
  test("a field is written only in the versions that have it", () => {
    const v = { ...defaultOffsetCommitValue(), offset: 5n, metadata: "m", expireTimestamp: 9n };
    assert.equal(
      stringifyJson(OffsetCommitValueToJson(v, 1)),
      '{"offset":5,"metadata":"m","commitTimestamp":0,"expireTimestamp":9}',
    );
    assert.equal(
      stringifyJson(OffsetCommitValueToJson(v, 3)),
      '{"offset":5,"leaderEpoch":-1,"metadata":"m","commitTimestamp":0}',
    );
  });

  test("tagged fields appear only when they differ from their default", () => {
    const base = { ...defaultTransactionLogValue(), producerId: 7n, transactionPartitions: null };
    const plain = stringifyJson(TransactionLogValueToJson(base, 1));
    assert.ok(!plain.includes("previousProducerId"), plain);
    assert.ok(!plain.includes("clientTransactionVersion"), plain);
    const tagged = stringifyJson(
      TransactionLogValueToJson({ ...base, previousProducerId: 6n, clientTransactionVersion: 2 }, 1),
    );
    assert.match(tagged, /^\{"producerId":7,"previousProducerId":6,"producerEpoch":0,/);
    assert.match(tagged, /"transactionPartitions":null,.*"clientTransactionVersion":2\}$/);
    // Version 0 has no tagged fields at all.
    assert.ok(
      !stringifyJson(TransactionLogValueToJson({ ...base, previousProducerId: 6n }, 0)).includes("previous"),
    );
  });

  test("int64 is exact, bytes are base64, strings are escaped", () => {
    const json = TransactionLogValueToJson(
      { ...defaultTransactionLogValue(), producerId: 2n ** 62n + 1n, transactionPartitions: [] },
      0,
    );
    assert.match(stringifyJson(json), /^\{"producerId":4611686018427387905,/);
    assert.equal(
      stringifyJson(
        ConsumerProtocolAssignmentToJson(
          {
            assignedPartitions: [{ topic: 'a"b\n', partitions: [0, 2] }],
            userData: Buffer.from([0, 10, 255]),
          },
          0,
        ),
      ),
      '{"assignedPartitions":[{"topic":"a\\"b\\n","partitions":[0,2]}],"userData":"AAr/"}',
    );
    assert.equal(
      stringifyJson(ConsumerProtocolAssignmentToJson({ assignedPartitions: [], userData: null }, 0)),
      '{"assignedPartitions":[],"userData":null}',
    );
  });
});
