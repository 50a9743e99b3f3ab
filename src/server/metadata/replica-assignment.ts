// Replica placement, as Kafka's AdminUtils.assignReplicasToBrokers computes it for new topics and new
// partitions. Rack-unaware (no broker has a rack): the first replica of partition p on broker
// (p + startIndex) mod n, the others shifted round-robin after it, the shift growing by one each time every
// broker has led once; startIndex and the first shift are random (fixed when adding partitions and in
// tests), so leaders and replicas spread evenly. Rack-aware (every broker has a rack): the same walk over
// the rack-alternated broker list, a follower skipped while its rack (or itself) already holds a replica
// and some rack (or broker) does not. Some brokers with a rack and others without is an error unless the
// caller asks for rack-unaware placement (Kafka's RackAwareMode, applied by brokerPlacements).
// Pure: no I/O; `random` returns [0, 1).

import { KafkaError } from "../../protocol/errors.js";

/** A broker as placement sees it (Kafka's BrokerMetadata). */
export interface BrokerPlacement {
  readonly id: number;
  readonly rack: string | null;
}

/** Kafka's RackAwareMode: how racks are used when placing replicas. */
export const RackAwareMode = {
  /** Ignore racks. */
  Disabled: "disabled",
  /** Use racks; some brokers with and some without a rack is an error. */
  Enforced: "enforced",
  /** Use racks when every broker has one, ignore them otherwise. */
  Safe: "safe",
} as const;
export type RackAwareMode = (typeof RackAwareMode)[keyof typeof RackAwareMode];

/**
 * The brokers to place replicas on, sorted by id, with their racks dropped when `mode` says so (Kafka's
 * AdminZkClient.getBrokerMetadatas). Enforced keeps them: assignReplicasToBrokers refuses a mix.
 */
export function brokerPlacements(
  brokers: readonly BrokerPlacement[],
  mode: RackAwareMode = RackAwareMode.Enforced,
): BrokerPlacement[] {
  const dropRacks =
    mode === RackAwareMode.Disabled || (mode === RackAwareMode.Safe && brokers.some((b) => b.rack === null));
  return brokers.map((b) => ({ id: b.id, rack: dropRacks ? null : b.rack })).sort((a, b) => a.id - b.id);
}

/**
 * Where the first replica of a topic's new partitions starts (Kafka's AdminZkClient
 * createNewPartitionsAssignment): the index, among the brokers sorted by id, of the first broker whose id
 * is at least partition 0's first replica, or 0.
 */
export function startIndexForNewPartitions(
  brokers: readonly BrokerPlacement[],
  partition0Leader: number,
): number {
  const ids = brokers.map((b) => b.id).sort((a, b) => a - b);
  return Math.max(
    0,
    ids.findIndex((id) => id >= partition0Leader),
  );
}

/**
 * Kafka's AdminUtils.assignReplicasToBrokers: partition id → replicas (the first is the preferred leader).
 * `fixedStartIndex` >= 0 fixes both the start index and the first replica shift (Kafka uses it when adding
 * partitions, and its tests use it); `startPartitionId` >= 0 numbers the partitions from there (adding
 * partitions). Brokers are taken in id order. Throws INVALID_PARTITIONS / INVALID_REPLICATION_FACTOR with
 * Kafka's messages, and UNKNOWN_SERVER_ERROR (Kafka's AdminOperationException) when only some brokers have
 * a rack.
 */
export function assignReplicasToBrokers(
  brokers: readonly BrokerPlacement[],
  nPartitions: number,
  replicationFactor: number,
  random: () => number = Math.random,
  fixedStartIndex = -1,
  startPartitionId = -1,
): Map<number, number[]> {
  if (nPartitions <= 0)
    throw new KafkaError("INVALID_PARTITIONS", "Number of partitions must be larger than 0.");
  if (replicationFactor <= 0) {
    throw new KafkaError("INVALID_REPLICATION_FACTOR", "Replication factor must be larger than 0.");
  }
  if (replicationFactor > brokers.length) {
    throw new KafkaError(
      "INVALID_REPLICATION_FACTOR",
      `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`,
    );
  }
  const sorted = [...brokers].sort((a, b) => a.id - b.id);
  const withRack = sorted.filter((b) => b.rack !== null).length;
  if (withRack === 0) {
    const ids = sorted.map((b) => b.id);
    return roundRobin(ids, nPartitions, replicationFactor, random, fixedStartIndex, startPartitionId);
  }
  if (withRack < sorted.length) {
    throw new KafkaError(
      "UNKNOWN_SERVER_ERROR",
      "Not all brokers have rack information for replica rack aware assignment.",
    );
  }
  const rackOf = new Map(sorted.map((b) => [b.id, b.rack!]));
  const arranged = rackAlternatedBrokerList(sorted);
  return roundRobin(
    arranged,
    nPartitions,
    replicationFactor,
    random,
    fixedStartIndex,
    startPartitionId,
    rackOf,
  );
}

/**
 * The walk both placements share, over `brokers` in the order given. Without `rackOf` every follower is the
 * next broker of the shifted round-robin; with it, followers on a rack (or broker) that already holds a
 * replica are skipped while another rack (or broker) holds none, and the shift is multiplied by the number
 * of racks (as Kafka does).
 */
function roundRobin(
  brokers: readonly number[],
  nPartitions: number,
  replicationFactor: number,
  random: () => number,
  fixedStartIndex: number,
  startPartitionId: number,
  rackOf?: ReadonlyMap<number, string>,
): Map<number, number[]> {
  const n = brokers.length;
  const randInt = (bound: number): number => Math.min(bound - 1, Math.floor(random() * bound));
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : randInt(n);
  let nextReplicaShift = fixedStartIndex >= 0 ? fixedStartIndex : randInt(n);
  let currentPartitionId = Math.max(0, startPartitionId);
  const numRacks = rackOf ? new Set(rackOf.values()).size : 0;
  const ret = new Map<number, number[]>();
  for (let i = 0; i < nPartitions; i++) {
    if (currentPartitionId > 0 && currentPartitionId % n === 0) nextReplicaShift += 1;
    const first = (currentPartitionId + startIndex) % n;
    const leader = brokers[first];
    const replicas = [leader];
    if (rackOf === undefined) {
      for (let j = 0; j < replicationFactor - 1; j++)
        replicas.push(brokers[replicaIndex(first, nextReplicaShift, j, n)]);
    } else {
      const racksWithReplicas = new Set([rackOf.get(leader)]);
      const brokersWithReplicas = new Set([leader]);
      let k = 0;
      while (replicas.length < replicationFactor) {
        const broker = brokers[replicaIndex(first, nextReplicaShift * numRacks, k, n)];
        const rack = rackOf.get(broker);
        k++;
        if (
          (!racksWithReplicas.has(rack) || racksWithReplicas.size === numRacks) &&
          (!brokersWithReplicas.has(broker) || brokersWithReplicas.size === n)
        ) {
          replicas.push(broker);
          racksWithReplicas.add(rack);
          brokersWithReplicas.add(broker);
        }
      }
    }
    ret.set(currentPartitionId, replicas);
    currentPartitionId++;
  }
  return ret;
}

/** Kafka's AdminUtils.replicaIndex: the broker index of follower `replicaIdx` of a partition. */
function replicaIndex(
  firstReplicaIndex: number,
  secondReplicaShift: number,
  replicaIdx: number,
  nBrokers: number,
): number {
  const shift = 1 + ((secondReplicaShift + replicaIdx) % (nBrokers - 1));
  return (firstReplicaIndex + shift) % nBrokers;
}

/**
 * Brokers ordered so that consecutive ones are on different racks (Kafka's getRackAlternatedBrokerList):
 * racks in name order, each rack's brokers in id order, one broker per rack in turn.
 */
export function rackAlternatedBrokerList(brokers: readonly BrokerPlacement[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of [...brokers].sort((x, y) => x.id - y.id)) {
    const list = byRack.get(b.rack!) ?? [];
    list.push(b.id);
    byRack.set(b.rack!, list);
  }
  const racks = [...byRack.keys()].sort();
  const cursors = new Map(racks.map((r) => [r, 0]));
  const out: number[] = [];
  let r = 0;
  while (out.length < brokers.length) {
    const rack = racks[r];
    const list = byRack.get(rack)!;
    const c = cursors.get(rack)!;
    if (c < list.length) {
      out.push(list[c]);
      cursors.set(rack, c + 1);
    }
    r = (r + 1) % racks.length;
  }
  return out;
}
