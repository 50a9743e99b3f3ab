// The message browser's reads: records of one partition from an offset, from a timestamp (ListOffsets
// by time), or the newest ones (end offset − limit), through one sessionless Fetch at a time
// (client/admin/fetch-once.ts) until `limit` records or the end of the partition. Keys, values and
// header values go to the page as base64; the page shows them as text, pretty JSON or hex.

import type { AdminClient } from "../../client/admin/admin-client.js";
import { fetchOnce, refKey } from "../../client/admin/fetch-once.js";
import { KafkaClientError } from "../../client/errors.js";
import { HttpError } from "../http/router.js";

export const MAX_LIMIT = 500;
const PARTITION_MAX_BYTES = 1024 * 1024;

export interface BrowseRequest {
  readonly topic: string;
  readonly partition: number;
  /** Start here; else at `timestamp`; else the newest `limit` records. */
  readonly offset?: bigint;
  readonly timestamp?: number;
  readonly limit: number;
}

const b64 = (b: Buffer | null): string | null => (b === null ? null : b.toString("base64"));

function wholeNumber(raw: string | null, what: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === null || raw === "") return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) > max)
    throw new HttpError(400, `${what}: expected a whole number, got '${raw}'`);
  return Number(raw);
}

export function browseRequest(topic: string, q: URLSearchParams): BrowseRequest {
  const partition = wholeNumber(q.get("partition"), "partition", 2 ** 31 - 1) ?? 0;
  const offset = wholeNumber(q.get("offset"), "offset");
  const timestamp = wholeNumber(q.get("timestamp"), "timestamp");
  const limit = wholeNumber(q.get("limit"), "limit", MAX_LIMIT) ?? 50;
  if (limit < 1) throw new HttpError(400, `limit: expected 1 to ${MAX_LIMIT}`);
  return { topic, partition, offset: offset === undefined ? undefined : BigInt(offset), timestamp, limit };
}

export async function browseMessages(admin: AdminClient, req: BrowseRequest) {
  const [t] = await admin.describeTopics([req.topic]);
  if (t.error) throw new HttpError(404, `topic '${req.topic}': ${t.error.message}`);
  if (!t.partitions.some((p) => p.partition === req.partition))
    throw new HttpError(404, `topic '${req.topic}' has no partition ${req.partition}`);
  const ref = { topic: req.topic, partition: req.partition };
  const [earliest, latest] = await Promise.all([
    admin.listOffsets([{ ...ref, spec: "earliest" }]),
    admin.listOffsets([{ ...ref, spec: "latest" }]),
  ]);
  const failed = earliest[0].error ?? latest[0].error;
  if (failed) throw new HttpError(502, `partition ${req.partition}: ${failed.message}`);
  const start = earliest[0].offset;
  const end = latest[0].offset;
  let from: bigint;
  if (req.offset !== undefined) from = req.offset;
  else if (req.timestamp !== undefined) {
    const [at] = await admin.listOffsets([{ ...ref, spec: { timestamp: req.timestamp } }]);
    if (at.error) throw new HttpError(502, `partition ${req.partition}: ${at.error.message}`);
    from = at.offset < 0n ? end : at.offset;
  } else from = end - BigInt(req.limit);
  if (from < start) from = start;
  if (from > end) from = end;

  const records: Array<{
    offset: string;
    timestamp: number;
    key: string | null;
    value: string | null;
    headers: Array<{ key: string; value: string | null }>;
  }> = [];
  let next = from;
  while (records.length < req.limit && next < end) {
    const got = (
      await fetchOnce(admin.cluster, [{ ...ref, offset: next }], { partitionMaxBytes: PARTITION_MAX_BYTES })
    ).get(refKey(req.topic, req.partition));
    if (got?.errorCode !== 0)
      throw new HttpError(
        502,
        `partition ${req.partition}: ${new KafkaClientError(got?.errorCode ?? -1).message}`,
      );
    if (got.records.length === 0) break;
    for (const r of got.records) {
      if (records.length >= req.limit || r.offset >= end) break;
      records.push({
        offset: r.offset.toString(),
        timestamp: Number(r.timestamp),
        key: b64(r.key),
        value: b64(r.value),
        headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
      });
    }
    next = got.records[got.records.length - 1].offset + 1n;
  }
  return {
    topic: req.topic,
    partition: req.partition,
    partitions: t.partitions.map((p) => p.partition).sort((a, b) => a - b),
    startOffset: start.toString(),
    endOffset: end.toString(),
    from: from.toString(),
    records,
  };
}
