// The --offset-json-file of `tributary delete-records` (Kafka's DeleteRecordsCommand format):
// `{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}`, validated with one
// line naming the file and the JSON path of the first bad value
// (`offsets.json: partitions[2].offset: expected an offset …, got a string ("4")`).

import { UsageError } from "../args.js";
import type { JsonNode } from "../json-input.js";

export interface RecordsToDelete {
  readonly topic: string;
  readonly partition: number;
  /** Delete records before this offset; -1 means the high watermark. */
  readonly offset: bigint;
}

/** Validates the parsed file; throws a one-line UsageError naming the file and the JSON path. */
export function offsetsFromJson(root: JsonNode): RecordsToDelete[] {
  root.object();
  root.checkVersion();
  const partitions = root.field("partitions");
  if (partitions.isMissing) throw root.error("Missing partitions field");
  const out: RecordsToDelete[] = [];
  for (const p of partitions.elements("an array of {topic, partition, offset}")) {
    p.object();
    out.push({
      topic: p.field("topic").topicName(),
      partition: p.field("partition").partitionId(),
      offset: BigInt(
        p
          .field("offset")
          .integer(
            "an offset",
            -1,
            Number.MAX_SAFE_INTEGER,
            "an offset (an integer, -1 for the high watermark)",
          ),
      ),
    });
  }
  const seen = new Map<string, number>();
  for (const r of out)
    seen.set(`${r.topic}-${r.partition}`, (seen.get(`${r.topic}-${r.partition}`) ?? 0) + 1);
  const dups = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  if (dups.length > 0)
    throw new UsageError(
      `${root.source}: Offset json file contains duplicate topic partitions: ${dups.join(",")}`,
    );
  return out;
}
