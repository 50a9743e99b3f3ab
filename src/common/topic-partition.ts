// TopicPartition: the (topic, partition) pair and its directory name `<topic>-<partition>`, as Kafka
// names partition folders under log.dirs and lines in checkpoint files.

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** `<topic>-<partition>`, the partition's folder name and the key used in maps. */
export function topicPartitionKey(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** Parses a partition folder name; topics may contain '-', so the partition is after the last one. */
export function parseTopicPartitionDir(name: string): TopicPartition | undefined {
  const m = /^(.+)-(\d+)$/.exec(name);
  if (!m) return undefined;
  const partition = Number(m[2]);
  if (!Number.isSafeInteger(partition) || partition > 0x7fffffff) return undefined;
  return { topic: m[1], partition };
}
