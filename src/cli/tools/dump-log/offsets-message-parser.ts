// OffsetsMessageParser: how `dump-log --offsets-decoder` prints a __consumer_offsets record, as Kafka 4.0's
// DumpLogSegments does: the key as {"type":"<record type>","data":<key as JSON>} and the value as
// {"version":"<value version>","data":<value as JSON>} (the generated JSON converters of the coordinator
// record schemas), "<DELETE>" for a tombstone. A classic group's members have their subscription and
// assignment decoded in place when the group uses the "consumer" protocol (kept as base64 when they do not
// decode). A record that does not decode prints "Error at offset N, skipping. <why>" as its key; an unknown
// record type "Unknown record type T at offset N, skipping." Record types 9–15 (share groups) are not in
// the schemas this project generates from, so they print as unknown.

import {
  ConsumerGroupCurrentMemberAssignmentKeyToJson,
  readConsumerGroupCurrentMemberAssignmentKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupCurrentMemberAssignmentKey.js";
import {
  ConsumerGroupCurrentMemberAssignmentValueToJson,
  ConsumerGroupCurrentMemberAssignmentValueVersions,
  readConsumerGroupCurrentMemberAssignmentValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupCurrentMemberAssignmentValue.js";
import {
  ConsumerGroupMemberMetadataKeyToJson,
  readConsumerGroupMemberMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMemberMetadataKey.js";
import {
  ConsumerGroupMemberMetadataValueToJson,
  ConsumerGroupMemberMetadataValueVersions,
  readConsumerGroupMemberMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMemberMetadataValue.js";
import {
  ConsumerGroupMetadataKeyToJson,
  readConsumerGroupMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMetadataKey.js";
import {
  ConsumerGroupMetadataValueToJson,
  ConsumerGroupMetadataValueVersions,
  readConsumerGroupMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupMetadataValue.js";
import {
  ConsumerGroupPartitionMetadataKeyToJson,
  readConsumerGroupPartitionMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupPartitionMetadataKey.js";
import {
  ConsumerGroupPartitionMetadataValueToJson,
  ConsumerGroupPartitionMetadataValueVersions,
  readConsumerGroupPartitionMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupPartitionMetadataValue.js";
import {
  ConsumerGroupTargetAssignmentMemberKeyToJson,
  readConsumerGroupTargetAssignmentMemberKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMemberKey.js";
import {
  ConsumerGroupTargetAssignmentMemberValueToJson,
  ConsumerGroupTargetAssignmentMemberValueVersions,
  readConsumerGroupTargetAssignmentMemberValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMemberValue.js";
import {
  ConsumerGroupTargetAssignmentMetadataKeyToJson,
  readConsumerGroupTargetAssignmentMetadataKey,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMetadataKey.js";
import {
  ConsumerGroupTargetAssignmentMetadataValueToJson,
  ConsumerGroupTargetAssignmentMetadataValueVersions,
  readConsumerGroupTargetAssignmentMetadataValue,
} from "../../../protocol/generated/coordinator-records/ConsumerGroupTargetAssignmentMetadataValue.js";
import {
  GroupMetadataKeyToJson,
  readGroupMetadataKey,
} from "../../../protocol/generated/coordinator-records/GroupMetadataKey.js";
import {
  GroupMetadataValueToJson,
  GroupMetadataValueVersions,
  readGroupMetadataValue,
} from "../../../protocol/generated/coordinator-records/GroupMetadataValue.js";
import {
  OffsetCommitKeyToJson,
  readOffsetCommitKey,
} from "../../../protocol/generated/coordinator-records/OffsetCommitKey.js";
import {
  OffsetCommitValueToJson,
  OffsetCommitValueVersions,
  readOffsetCommitValue,
} from "../../../protocol/generated/coordinator-records/OffsetCommitValue.js";
import {
  ConsumerProtocolAssignmentToJson,
  readConsumerProtocolAssignment,
} from "../../../protocol/generated/messages/ConsumerProtocolAssignment.js";
import {
  ConsumerProtocolSubscriptionToJson,
  readConsumerProtocolSubscription,
} from "../../../protocol/generated/messages/ConsumerProtocolSubscription.js";
import { type JsonObject, stringifyJson } from "../../../protocol/primitives/json-node.js";
import { Reader } from "../../../protocol/primitives/reader.js";
import type { DecodedRecord } from "../../../protocol/records/index.js";

/** Reads a message of one version and returns it as JSON. */
type JsonReader = (r: Reader, version: number) => JsonObject;

interface RecordType {
  readonly key: JsonReader;
  readonly value: JsonReader;
  readonly valueName: string;
  readonly valueVersions: { readonly min: number; readonly max: number };
}

function json<T>(read: (r: Reader, v: number) => T, toJson: (m: T, v: number) => JsonObject): JsonReader {
  return (r, v) => toJson(read(r, v), v);
}

const OFFSET_COMMIT: RecordType = {
  key: json(readOffsetCommitKey, OffsetCommitKeyToJson),
  value: json(readOffsetCommitValue, OffsetCommitValueToJson),
  valueName: "OffsetCommitValue",
  valueVersions: OffsetCommitValueVersions,
};

/** Kafka's GroupCoordinatorRecordSerde: the key's version is the record type. */
const RECORD_TYPES: ReadonlyMap<number, RecordType> = new Map<number, RecordType>([
  [0, OFFSET_COMMIT],
  [1, OFFSET_COMMIT],
  [
    2,
    {
      key: json(readGroupMetadataKey, GroupMetadataKeyToJson),
      value: groupMetadataValueJson,
      valueName: "GroupMetadataValue",
      valueVersions: GroupMetadataValueVersions,
    },
  ],
  [
    3,
    {
      key: json(readConsumerGroupMetadataKey, ConsumerGroupMetadataKeyToJson),
      value: json(readConsumerGroupMetadataValue, ConsumerGroupMetadataValueToJson),
      valueName: "ConsumerGroupMetadataValue",
      valueVersions: ConsumerGroupMetadataValueVersions,
    },
  ],
  [
    4,
    {
      key: json(readConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataKeyToJson),
      value: json(readConsumerGroupPartitionMetadataValue, ConsumerGroupPartitionMetadataValueToJson),
      valueName: "ConsumerGroupPartitionMetadataValue",
      valueVersions: ConsumerGroupPartitionMetadataValueVersions,
    },
  ],
  [
    5,
    {
      key: json(readConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataKeyToJson),
      value: json(readConsumerGroupMemberMetadataValue, ConsumerGroupMemberMetadataValueToJson),
      valueName: "ConsumerGroupMemberMetadataValue",
      valueVersions: ConsumerGroupMemberMetadataValueVersions,
    },
  ],
  [
    6,
    {
      key: json(readConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataKeyToJson),
      value: json(
        readConsumerGroupTargetAssignmentMetadataValue,
        ConsumerGroupTargetAssignmentMetadataValueToJson,
      ),
      valueName: "ConsumerGroupTargetAssignmentMetadataValue",
      valueVersions: ConsumerGroupTargetAssignmentMetadataValueVersions,
    },
  ],
  [
    7,
    {
      key: json(readConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberKeyToJson),
      value: json(
        readConsumerGroupTargetAssignmentMemberValue,
        ConsumerGroupTargetAssignmentMemberValueToJson,
      ),
      valueName: "ConsumerGroupTargetAssignmentMemberValue",
      valueVersions: ConsumerGroupTargetAssignmentMemberValueVersions,
    },
  ],
  [
    8,
    {
      key: json(readConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentKeyToJson),
      value: json(
        readConsumerGroupCurrentMemberAssignmentValue,
        ConsumerGroupCurrentMemberAssignmentValueToJson,
      ),
      valueName: "ConsumerGroupCurrentMemberAssignmentValue",
      valueVersions: ConsumerGroupCurrentMemberAssignmentValueVersions,
    },
  ],
]);

/**
 * Kafka's prepareGroupMetadataValue: with protocolType "consumer", each member's subscription and
 * assignment (a version, then the message) as their JSON; bytes that do not decode stay as bytes.
 */
function groupMetadataValueJson(r: Reader, version: number): JsonObject {
  const value = readGroupMetadataValue(r, version);
  const json = GroupMetadataValueToJson(value, version);
  if (value.protocolType !== "consumer") return json;
  const members = json.members as JsonObject[];
  value.members.forEach((m, i) => {
    const subscription = embedded(m.subscription, readSubscription);
    if (subscription !== undefined) members[i].subscription = subscription;
    const assignment = embedded(m.assignment, readAssignment);
    if (assignment !== undefined) members[i].assignment = assignment;
  });
  return json;
}

const readSubscription = json(readConsumerProtocolSubscription, ConsumerProtocolSubscriptionToJson);
const readAssignment = json(readConsumerProtocolAssignment, ConsumerProtocolAssignmentToJson);

function embedded(bytes: Buffer, read: JsonReader): JsonObject | undefined {
  try {
    const r = new Reader(bytes);
    return read(r, r.int16());
  } catch {
    return undefined; // Kafka swallows the error and keeps the original bytes.
  }
}

function readVersion(r: Reader, name: string): number {
  try {
    return r.int16();
  } catch {
    throw new Error(`Could not read version from ${name}'s buffer.`);
  }
}

function readMessage(read: () => JsonObject, version: number, name: string): JsonObject {
  try {
    return read();
  } catch (e) {
    throw new Error(
      `Could not read record with version ${version} from ${name}'s buffer due to: ${(e as Error).message}.`,
    );
  }
}

/**
 * The key and payload text of one __consumer_offsets record. Throws only for a record without a key (as
 * Kafka's parser does); anything else that does not decode becomes the key text.
 */
export function parseOffsetsRecord(record: DecodedRecord): [string | undefined, string | undefined] {
  if (record.key === null) {
    throw new Error(
      `Failed to decode message at offset ${record.offset} using offset topic decoder (message had a missing key)`,
    );
  }
  try {
    const kr = new Reader(record.key);
    const recordType = readVersion(kr, "key");
    const type = RECORD_TYPES.get(recordType);
    if (type === undefined)
      return [`Unknown record type ${recordType} at offset ${record.offset}, skipping.`, undefined];
    const key = readMessage(() => type.key(kr, recordType), recordType, "key");
    const keyText = stringifyJson({ type: String(recordType), data: key });
    if (record.value === null) return [keyText, "<DELETE>"];
    const vr = new Reader(record.value);
    const version = readVersion(vr, "value");
    const value = readMessage(
      () => {
        if (version < type.valueVersions.min || version > type.valueVersions.max)
          throw new Error(`Can't read version ${version} of ${type.valueName}`);
        return type.value(vr, version);
      },
      version,
      "value",
    );
    return [keyText, stringifyJson({ version: String(version), data: value })];
  } catch (e) {
    return [`Error at offset ${record.offset}, skipping. ${(e as Error).message}`, undefined];
  }
}
