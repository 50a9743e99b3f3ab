// PartitionState: a partition's leadership as stored at /brokers/topics/<t>/partitions/<p>/state
// ({"controller_epoch":N,"leader":1,"version":1,"leader_epoch":E,"isr":[1,2,0]}) plus its assignment,
// as the controller hands it to brokers (LeaderAndIsr) and the metadata cache serves it.

export interface PartitionState {
  readonly topic: string;
  /** base64url topic id */
  readonly topicId: string;
  readonly partition: number;
  readonly controllerEpoch: number;
  /** Broker id of the leader, or -1 when there is none. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly replicas: readonly number[];
  /** Version of the state znode (for compare-and-set writes). */
  readonly zkVersion: number;
}

/** The fields LeaderAndIsr's and UpdateMetadata's partition states share. */
export interface WirePartitionState {
  readonly partitionIndex: number;
  readonly controllerEpoch: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly isr: readonly number[];
  readonly replicas: readonly number[];
}

/** A partition state from the controller's request (`zkVersion`: its partition epoch / zk version field). */
export function partitionStateFrom(
  topic: string,
  topicId: string,
  p: WirePartitionState,
  zkVersion: number,
): PartitionState {
  return {
    topic,
    topicId,
    partition: p.partitionIndex,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    replicas: p.replicas,
    zkVersion,
  };
}
