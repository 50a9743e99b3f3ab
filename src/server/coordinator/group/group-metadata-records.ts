// The records of `__consumer_offsets` in Kafka's exact format (Kafka's GroupMetadataManager serde over
// ../shared/kafka-protocol/coordinator-records): every record's key is an int16 schema version followed by
// the key struct, its value an int16 version followed by the value struct, or null (a tombstone).
//   key version 0 or 1: OffsetCommitKey (group, topic, partition) → OffsetCommitValue
//   key version 2:      GroupMetadataKey (group)                  → GroupMetadataValue
//   key versions 3–8:   the KIP-848 consumer-group records, decoded and replayed by consumer-group-records.ts
//                       and consumer-group-coordinator.ts (kind "consumer-group" here).
// Written versions are the ones Kafka 3.x/4.x writes: OffsetCommitKey v1, OffsetCommitValue v3 (v1 when the
// commit carries an expire timestamp), GroupMetadataKey v2, GroupMetadataValue v3.

import {
  type GroupMetadataKey,
  readGroupMetadataKey,
  writeGroupMetadataKey,
} from "../../../protocol/generated/coordinator-records/GroupMetadataKey.js";
import {
  type GroupMetadataValue,
  readGroupMetadataValue,
  writeGroupMetadataValue,
} from "../../../protocol/generated/coordinator-records/GroupMetadataValue.js";
import {
  type OffsetCommitKey,
  readOffsetCommitKey,
  writeOffsetCommitKey,
} from "../../../protocol/generated/coordinator-records/OffsetCommitKey.js";
import {
  type OffsetCommitValue,
  readOffsetCommitValue,
  writeOffsetCommitValue,
} from "../../../protocol/generated/coordinator-records/OffsetCommitValue.js";
import { Reader } from "../../../protocol/primitives/reader.js";
import { Writer } from "../../../protocol/primitives/writer.js";
import type { CommittedOffset, GroupMetadata } from "./group-metadata.js";

export const OFFSET_COMMIT_KEY_VERSION = 1;
export const GROUP_METADATA_KEY_VERSION = 2;
export const GROUP_METADATA_VALUE_VERSION = 3;

function versioned(version: number, write: (w: Writer) => void): Buffer {
  const w = new Writer(64);
  w.int16(version);
  write(w);
  return w.toBuffer();
}

export function offsetCommitKey(group: string, topic: string, partition: number): Buffer {
  return versioned(OFFSET_COMMIT_KEY_VERSION, (w) =>
    writeOffsetCommitKey(w, { group, topic, partition }, OFFSET_COMMIT_KEY_VERSION),
  );
}

export function offsetCommitValue(o: CommittedOffset): Buffer {
  const version = o.expireTimestamp !== null ? 1 : 3;
  const v: OffsetCommitValue = {
    offset: o.offset,
    leaderEpoch: o.leaderEpoch,
    metadata: o.metadata,
    commitTimestamp: o.commitTimestamp,
    expireTimestamp: o.expireTimestamp ?? -1n,
  };
  return versioned(version, (w) => writeOffsetCommitValue(w, v, version));
}

export function groupMetadataKey(group: string): Buffer {
  return versioned(GROUP_METADATA_KEY_VERSION, (w) =>
    writeGroupMetadataKey(w, { group }, GROUP_METADATA_KEY_VERSION),
  );
}

/** The group as Kafka's groupMetadataValue writes it; `assignments` overrides the members' own. */
export function groupMetadataValue(group: GroupMetadata, assignments?: ReadonlyMap<string, Buffer>): Buffer {
  const protocol = group.protocolName;
  const v: GroupMetadataValue = {
    protocolType: group.protocolType ?? "",
    generation: group.generationId,
    protocol,
    leader: group.leaderId,
    currentStateTimestamp: group.currentStateTimestamp ?? -1n,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeout: m.rebalanceTimeoutMs,
      sessionTimeout: m.sessionTimeoutMs,
      subscription: protocol !== null ? m.metadata(protocol) : Buffer.alloc(0),
      assignment: assignments?.get(m.memberId) ?? m.assignment,
    })),
  };
  return versioned(GROUP_METADATA_VALUE_VERSION, (w) =>
    writeGroupMetadataValue(w, v, GROUP_METADATA_VALUE_VERSION),
  );
}

export type CoordinatorRecordKey =
  | { readonly kind: "offset"; readonly version: number; readonly key: OffsetCommitKey }
  | { readonly kind: "group"; readonly version: number; readonly key: GroupMetadataKey }
  | { readonly kind: "consumer-group"; readonly version: number }
  | { readonly kind: "other"; readonly version: number };

/** Kafka's readMessageKey. Throws ProtocolDecodeError on a malformed key. */
export function readCoordinatorRecordKey(bytes: Buffer): CoordinatorRecordKey {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version === 0 || version === 1)
    return { kind: "offset", version, key: readOffsetCommitKey(r, version) };
  if (version === 2) return { kind: "group", version, key: readGroupMetadataKey(r, version) };
  if (version >= 3 && version <= 8) return { kind: "consumer-group", version };
  return { kind: "other", version };
}

/** Kafka's readOffsetMessageValue; null for a tombstone. */
export function readOffsetCommitValueRecord(bytes: Buffer | null): CommittedOffset | null {
  if (bytes === null) return null;
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < 0 || version > 4) throw new RangeError(`unknown offset commit value version ${version}`);
  const v = readOffsetCommitValue(r, version);
  return {
    offset: v.offset,
    leaderEpoch: v.leaderEpoch,
    metadata: v.metadata,
    commitTimestamp: v.commitTimestamp,
    expireTimestamp: version === 1 && v.expireTimestamp >= 0n ? v.expireTimestamp : null,
  };
}

/** Kafka's readGroupMessageValue; null for a tombstone. */
export function readGroupMetadataValueRecord(bytes: Buffer | null): GroupMetadataValue | null {
  if (bytes === null) return null;
  const r = new Reader(bytes);
  const version = r.int16();
  if (version < 0 || version > 4) throw new RangeError(`unknown group metadata value version ${version}`);
  return readGroupMetadataValue(r, version);
}
