// LeaderEpochCheckpointFile: `<partition dir>/leader-epoch-checkpoint`, Kafka's LeaderEpochCheckpointFile.
// Format version 0, entry lines `<epoch> <startOffset>`: the first offset written in each leader epoch,
// in increasing order of both.

import { join } from "node:path";
import {
  CheckpointFile,
  type EntryFormatter,
  parseJavaInt,
  parseJavaLong,
} from "../checkpoint/checkpoint-file.js";

export const LEADER_EPOCH_CHECKPOINT_FILENAME = "leader-epoch-checkpoint";
export const LEADER_EPOCH_CHECKPOINT_VERSION = 0;

/** Kafka's EpochEntry. */
export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: bigint;
}

const formatter: EntryFormatter<EpochEntry> = {
  lineFormat: '"<epoch> <startOffset>"',
  toLine: (e) => `${e.epoch} ${e.startOffset}`,
  fromLine(line) {
    const parts = line.split(/\s+/);
    if (parts.length !== 2) return undefined;
    const epoch = parseJavaInt(parts[0]);
    const startOffset = parseJavaLong(parts[1]);
    if (epoch === undefined || startOffset === undefined) return undefined;
    return { epoch, startOffset };
  },
};

export class LeaderEpochCheckpointFile {
  private readonly file: CheckpointFile<EpochEntry>;

  constructor(readonly path: string) {
    this.file = new CheckpointFile(path, LEADER_EPOCH_CHECKPOINT_VERSION, formatter);
  }

  /** The checkpoint of a partition directory. */
  static forPartitionDir(partitionDir: string): LeaderEpochCheckpointFile {
    return new LeaderEpochCheckpointFile(join(partitionDir, LEADER_EPOCH_CHECKPOINT_FILENAME));
  }

  /** The entries as stored; [] when missing or empty. Throws CheckpointFileError on a malformed file. */
  read(): EpochEntry[] {
    return this.file.read();
  }

  /** Parses checkpoint text (for tools). */
  parse(text: string): EpochEntry[] {
    return this.file.parse(text);
  }

  /** The file's text for these entries. */
  format(entries: Iterable<EpochEntry>): string {
    return this.file.format(entries);
  }

  /** Replaces the entries atomically. */
  write(entries: Iterable<EpochEntry>, sync = true): void {
    this.file.write(entries, sync);
  }
}
