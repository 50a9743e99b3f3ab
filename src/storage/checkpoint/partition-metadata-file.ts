// PartitionMetadataFile: `<partition dir>/partition.metadata`, Kafka's PartitionMetadataFile (KIP-516). It
// records the topic id the partition's data belongs to, so a topic deleted and re-created under the same
// name is never confused with the old one. The exact bytes Kafka writes (no trailing newline):
//
//   version: 0
//   topic_id: <topic id: 16 bytes, base64url without padding, 22 characters>
//
// Reading follows Kafka's PartitionMetadataReadBuffer: each line is `<key>:<whitespace><value>`; a version
// >= 0 is accepted (newer versions stay readable), the zero UUID is not a topic id. Anything else is a
// PartitionMetadataFileError naming the file, the line and what was expected.

import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomically } from "../../common/atomic-file.js";
import {
  CheckpointFileError,
  MetadataFileError,
  parseJavaInt,
  readSmallFile,
  showLine,
  splitLines,
} from "./checkpoint-file.js";

export const PARTITION_METADATA_FILENAME = "partition.metadata";
export const PARTITION_METADATA_VERSION = 0;
const MAX_PARTITION_METADATA_BYTES = 64 * 1024;

export interface PartitionMetadata {
  version: number;
  /** Base64url topic id, as Kafka's Uuid.toString. */
  topicId: string;
}

export class PartitionMetadataFileError extends MetadataFileError {
  constructor(file: string, line: number | undefined, expected: string, found: string) {
    super("partition metadata file", file, line, expected, found);
    this.name = "PartitionMetadataFileError";
  }
}

/**
 * The canonical form of a topic id in Kafka's text form (base64url of 16 bytes, optional "==" padding, as
 * Kafka's Uuid.fromString accepts), or undefined when `id` is not one or is the zero UUID.
 */
export function canonicalTopicId(id: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{22}(==)?$/.test(id)) return undefined;
  const bytes = Buffer.from(id.slice(0, 22), "base64url");
  if (bytes.length !== 16 || bytes.every((b) => b === 0)) return undefined;
  return bytes.toString("base64url");
}

/** True when `id` is a valid non-zero topic id. */
export function isValidTopicId(id: string): boolean {
  return canonicalTopicId(id) !== undefined;
}

export class PartitionMetadataFile {
  readonly path: string;

  /** The partition.metadata file of a partition directory. */
  constructor(readonly partitionDir: string) {
    this.path = join(partitionDir, PARTITION_METADATA_FILENAME);
  }

  exists(): boolean {
    return existsSync(this.path);
  }

  /**
   * Writes the topic id atomically (temp file, fsync, rename, fsync dir); without `sync` the fsyncs are left
   * to the caller (a new log's batch, new-logs-sync.ts).
   */
  write(topicId: string, sync = true): void {
    const canonical = canonicalTopicId(topicId);
    if (canonical === undefined) {
      throw new RangeError(
        `${JSON.stringify(topicId)} is not a topic id (22 base64url characters, not zero)`,
      );
    }
    writeFileAtomically(this.path, `version: ${PARTITION_METADATA_VERSION}\ntopic_id: ${canonical}`, sync);
  }

  /** The file's contents, or undefined when there is no file. Throws PartitionMetadataFileError when malformed. */
  read(): PartitionMetadata | undefined {
    let bytes: Buffer | undefined;
    try {
      bytes = readSmallFile(this.path, MAX_PARTITION_METADATA_BYTES);
    } catch (e) {
      if (e instanceof CheckpointFileError) {
        throw new PartitionMetadataFileError(this.path, undefined, e.expected, e.found);
      }
      throw e;
    }
    if (bytes === undefined) return undefined;
    return this.parse(bytes.toString("utf8"));
  }

  /** Parses the text of a partition.metadata file. */
  parse(text: string): PartitionMetadata {
    const lines = splitLines(text);
    const versionText = this.value(lines, 0, "version");
    const version = parseJavaInt(versionText);
    if (version === undefined || version < PARTITION_METADATA_VERSION) {
      throw new PartitionMetadataFileError(this.path, 1, "a version >= 0", showLine(lines[0]));
    }
    const topicId = canonicalTopicId(this.value(lines, 1, "topic_id"));
    if (topicId === undefined) {
      throw new PartitionMetadataFileError(
        this.path,
        2,
        "a non-zero topic id of 22 base64url characters",
        showLine(lines[1]),
      );
    }
    return { version, topicId };
  }

  private value(lines: string[], index: number, key: string): string {
    const line = lines[index];
    if (line === undefined) {
      throw new PartitionMetadataFileError(this.path, index + 1, `"${key}: <value>"`, "the end of the file");
    }
    const m = /^([^:]*):\s+([\s\S]*)$/.exec(line);
    if (!m || m[1] !== key) {
      throw new PartitionMetadataFileError(this.path, index + 1, `"${key}: <value>"`, showLine(line));
    }
    return m[2];
  }

  delete(): void {
    rmSync(this.path, { force: true });
  }
}
