// responseErrorCounts counts every errorCode of a response body as Kafka's errorCounts do: the top-level
// one and those of nested topics/partitions, NONE included, without walking record bytes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import {
  defaultFetchResponse,
  defaultPartitionData,
} from "../../../src/protocol/generated/messages/FetchResponse.js";
import { responseErrorCounts } from "../../../src/server/metrics/response-error-counts.js";

test("a Fetch response: the top-level error and one per partition", () => {
  const res = defaultFetchResponse();
  const part = (errorCode: number) => ({
    ...defaultPartitionData(),
    errorCode,
    records: Buffer.alloc(64, 1),
  });
  res.responses.push(
    { topic: "a", topicId: "AAAAAAAAAAAAAAAAAAAAAA", partitions: [part(0), part(0)] },
    { topic: "b", topicId: "AAAAAAAAAAAAAAAAAAAAAA", partitions: [part(ErrorCode.OFFSET_OUT_OF_RANGE)] },
  );
  assert.deepEqual([...responseErrorCounts(res)].sort(), [
    [0, 3],
    [ErrorCode.OFFSET_OUT_OF_RANGE, 1],
  ]);
});

test("bodies without error codes count nothing", () => {
  assert.deepEqual([...responseErrorCounts({ topics: [{ name: "t", partitions: [] }] })], []);
  assert.deepEqual([...responseErrorCounts(null)], []);
});
