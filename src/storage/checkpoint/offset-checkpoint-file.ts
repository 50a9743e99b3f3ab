// OffsetCheckpointFile: one offset per partition, Kafka's OffsetCheckpointFile. Used at the root of each log
// dir for recovery-point-offset-checkpoint, replication-offset-checkpoint (high watermarks),
// log-start-offset-checkpoint and cleaner-offset-checkpoint. Format version 0, entry lines
// `<topic> <partition> <offset>` separated by single spaces (topics cannot contain whitespace).

import { type TopicPartition, topicPartitionKey } from "../../common/topic-partition.js";
import { CheckpointFile, type EntryFormatter, parseJavaInt, parseJavaLong } from "./checkpoint-file.js";

export const OFFSET_CHECKPOINT_VERSION = 0;

export interface OffsetCheckpointEntry {
  tp: TopicPartition;
  offset: bigint;
}

const formatter: EntryFormatter<OffsetCheckpointEntry> = {
  lineFormat: '"<topic> <partition> <offset>"',
  toLine: (e) => `${e.tp.topic} ${e.tp.partition} ${e.offset}`,
  fromLine(line) {
    const parts = line.split(/\s+/);
    if (parts.length !== 3 || parts[0] === "") return undefined;
    const partition = parseJavaInt(parts[1]);
    const offset = parseJavaLong(parts[2]);
    if (partition === undefined || partition < 0 || offset === undefined) return undefined;
    return { tp: { topic: parts[0], partition }, offset };
  },
};

export class OffsetCheckpointFile {
  private readonly file: CheckpointFile<OffsetCheckpointEntry>;

  constructor(readonly path: string) {
    this.file = new CheckpointFile(path, OFFSET_CHECKPOINT_VERSION, formatter);
  }

  /**
   * The offsets by `topicPartitionKey` ("topic-partition"); empty when the file does not exist. Throws
   * CheckpointFileError on a malformed file (the caller decides whether to ignore it and recover).
   */
  read(): Map<string, OffsetCheckpointEntry> {
    const out = new Map<string, OffsetCheckpointEntry>();
    for (const e of this.file.read()) out.set(topicPartitionKey(e.tp), e);
    return out;
  }

  /** Replaces the checkpoint atomically with these entries (a Map as returned by read, or any iterable). */
  write(entries: ReadonlyMap<string, OffsetCheckpointEntry> | Iterable<OffsetCheckpointEntry>): void {
    this.file.write(entryList(entries));
  }

  /** The file's text for these entries (for a writer of its own, see OrderedAtomicFile). */
  format(entries: ReadonlyMap<string, OffsetCheckpointEntry> | Iterable<OffsetCheckpointEntry>): string {
    return this.file.format(entryList(entries));
  }
}

/** The entries as a list; a topic name that a checkpoint line cannot hold is a RangeError. */
function entryList(
  entries: ReadonlyMap<string, OffsetCheckpointEntry> | Iterable<OffsetCheckpointEntry>,
): OffsetCheckpointEntry[] {
  const list = isMap(entries) ? [...entries.values()] : [...entries];
  for (const e of list) {
    if (e.tp.topic === "" || /\s/.test(e.tp.topic)) {
      throw new RangeError(`topic name ${JSON.stringify(e.tp.topic)} cannot be written in a checkpoint`);
    }
  }
  return list;
}

function isMap(
  v: ReadonlyMap<string, OffsetCheckpointEntry> | Iterable<OffsetCheckpointEntry>,
): v is ReadonlyMap<string, OffsetCheckpointEntry> {
  return v instanceof Map;
}
