// Test-only: the GroupCoordinator set-up the coordinator tests share — a coordinator (and its
// GroupMetadataManager) over a test broker's real ReplicaManager with Kafka's default group settings,
// elected for every __consumer_offsets partition — and the JoinGroup / SyncGroup request parameters
// with a classic "consumer" member's defaults.

import { writeConsumerProtocolSubscription } from "../../../src/protocol/generated/messages/ConsumerProtocolSubscription.js";
import { Writer } from "../../../src/protocol/primitives/writer.js";
import type {
  JoinGroupParams,
  SyncGroupParams,
} from "../../../src/server/coordinator/group/classic-group-coordinator.js";
import { GroupCoordinator } from "../../../src/server/coordinator/group/group-coordinator.js";
import { GroupMetadataManager } from "../../../src/server/coordinator/group/group-metadata-manager.js";
import type { Broker } from "../replication/replication-test-utils.js";

export interface CoordinatorSettings {
  /** offsets.topic.num.partitions. */
  readonly partitions: number;
  readonly offsetsRetentionMs: number;
  readonly offsetsRetentionCheckIntervalMs?: number;
  readonly initialRebalanceDelayMs: number;
  readonly groupMaxSize?: number;
  /** group.consumer.max.size; left to the coordinator's default when absent. */
  readonly consumerGroupMaxSize?: number;
}

/** A started GroupCoordinator (broker 0) over the broker's replica manager, clock and scheduler. */
export function coordinatorOver(b: Broker, s: CoordinatorSettings): GroupCoordinator {
  const manager = new GroupMetadataManager(
    0,
    {
      offsetsTopicNumPartitions: s.partitions,
      offsetsRetentionMs: s.offsetsRetentionMs,
      offsetsRetentionCheckIntervalMs: s.offsetsRetentionCheckIntervalMs ?? 600_000,
      offsetCommitTimeoutMs: 5000,
      offsetsLoadBufferSize: 5 * 1024 * 1024,
    },
    b.replicaManager,
    b.time,
    b.scheduler,
  );
  const gc = new GroupCoordinator(
    0,
    {
      groupMinSessionTimeoutMs: 6000,
      groupMaxSessionTimeoutMs: 1_800_000,
      groupInitialRebalanceDelayMs: s.initialRebalanceDelayMs,
      groupMaxSize: s.groupMaxSize ?? 1000,
      offsetMetadataMaxBytes: 4096,
      ...(s.consumerGroupMaxSize !== undefined ? { consumerGroup: { maxSize: s.consumerGroupMaxSize } } : {}),
    },
    manager,
    b.time,
    b.scheduler,
  );
  gc.startup();
  return gc;
}

/** Makes the coordinator the leader of every __consumer_offsets partition and lets the loads run. */
export async function electAll(b: Broker, gc: GroupCoordinator, partitions: number): Promise<void> {
  for (let p = 0; p < partitions; p++) gc.onElection(p);
  await b.scheduler.tick(0);
}

/** A ConsumerProtocolSubscription (version 0) to `topics`, as JoinGroup's protocol metadata. */
export function subscription(topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolSubscription(
    w,
    { topics, userData: null, ownedPartitions: [], generationId: -1, rackId: null },
    0,
  );
  return w.toBuffer();
}

/** JoinGroup of a new dynamic member of "g" (range over topic t) unless `over` says otherwise. */
export function joinParams(over: Partial<JoinGroupParams> = {}): JoinGroupParams {
  return {
    groupId: "g",
    memberId: "",
    groupInstanceId: null,
    requireKnownMemberId: true,
    supportSkippingAssignment: false,
    clientId: "c",
    clientHost: "/127.0.0.1",
    rebalanceTimeoutMs: 10_000,
    sessionTimeoutMs: 10_000,
    protocolType: "consumer",
    protocols: [{ name: "range", metadata: subscription(["t"]) }],
    reason: null,
    ...over,
  };
}

/** SyncGroup of a dynamic member of "g" with no protocol check and no assignments unless given. */
export function syncParams(
  over: Partial<SyncGroupParams> & Pick<SyncGroupParams, "generationId" | "memberId">,
): SyncGroupParams {
  return {
    groupId: "g",
    groupInstanceId: null,
    protocolType: null,
    protocolName: null,
    assignments: new Map(),
    ...over,
  };
}
