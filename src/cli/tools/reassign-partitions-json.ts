// The JSON files of `tributary reassign-partitions` (Kafka's ReassignPartitionsCommand formats):
//   --reassignment-json-file  {"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3],
//                              "log_dirs":["any","any","any"]}]}   (log_dirs optional, one per replica)
//   --topics-to-move-json-file {"version":1,"topics":[{"topic":"foo"},{"topic":"foo1"}]}
// Each is checked entry by entry, every error one line naming the file and the JSON path
// (`plan.json: partitions[1].replicas[2]: expected a broker id …`), with Kafka's messages for duplicate
// partitions, duplicate replicas and a log_dirs list whose length differs from the replicas'. What needs
// the cluster (unknown brokers, partitions that do not exist) is checked by the tool against its metadata,
// naming the same paths.

import { type JsonNode, readJsonFile } from "../json-input.js";

/** Kafka's ANY_LOG_DIR: the broker picks the log dir. */
export const ANY_LOG_DIR = "any";

export interface PlannedReassignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: number[];
  readonly logDirs: string[];
  /** The entry's JSON path (`partitions[3]`), for errors found later against the cluster. */
  readonly path: string;
  /** The JSON path of each replica id. */
  readonly replicaPaths: string[];
}

export interface ReassignmentPlan {
  readonly file: string;
  readonly partitions: PlannedReassignment[];
}

/** Reads and checks a --reassignment-json-file (`requireEntries`: --execute refuses an empty list). */
export function readReassignmentJson(file: string, requireEntries: boolean): ReassignmentPlan {
  const root = readJsonFile(file);
  root.object();
  root.checkVersion();
  const list = root.field("partitions");
  const entries = list.isMissing ? [] : list.elements("an array of {topic, partition, replicas, log_dirs}");
  if (requireEntries && entries.length === 0) throw list.error("Partition reassignment list cannot be empty");
  const partitions = entries.map(reassignmentEntry);
  const seen = new Map<string, string>();
  for (const p of partitions) {
    const k = `${p.topic}-${p.partition}`;
    const first = seen.get(k);
    if (first !== undefined)
      throw root.error(
        `Partition reassignment contains duplicate topic partitions: ${k} (${first} and ${p.path})`,
      );
    seen.set(k, p.path);
  }
  return { file, partitions };
}

function reassignmentEntry(e: JsonNode): PlannedReassignment {
  e.object();
  const topic = e.field("topic").topicName();
  const partition = e.field("partition").partitionId();
  const replicasNode = e.field("replicas");
  const replicaNodes = replicasNode.elements("an array of broker ids");
  if (replicaNodes.length === 0) throw replicasNode.error("Partition replica list cannot be empty");
  const replicas: number[] = [];
  for (const r of replicaNodes) {
    const id = r.brokerId();
    if (replicas.includes(id))
      throw r.error(
        `Partition replica lists may not contain duplicate entries: ${topic}-${partition} contains multiple entries for ${id}`,
      );
    replicas.push(id);
  }
  const dirsNode = e.field("log_dirs");
  let logDirs = replicas.map(() => ANY_LOG_DIR);
  if (!dirsNode.isMissing) {
    logDirs = dirsNode.elements('an array of log dirs ("any" or an absolute path)').map((d) => {
      const dir = d.string('a log dir ("any" or an absolute path)');
      if (dir !== ANY_LOG_DIR && !dir.startsWith("/"))
        throw d.expected('a log dir ("any" or an absolute path)');
      return dir;
    });
    if (logDirs.length !== replicas.length)
      throw dirsNode.error(
        `Size of replicas list [${replicas.join(", ")}] is different from size of log dirs list [${logDirs.join(", ")}] for partition ${topic}-${partition}`,
      );
  }
  return { topic, partition, replicas, logDirs, path: e.path, replicaPaths: replicaNodes.map((r) => r.path) };
}

/** Reads and checks a --topics-to-move-json-file: the topic names, without duplicates. */
export function readTopicsToMoveJson(file: string): string[] {
  const root = readJsonFile(file);
  root.object();
  root.checkVersion();
  const list = root.field("topics");
  if (list.isMissing) return [];
  const topics: string[] = [];
  for (const t of list.elements('an array of {"topic": name}')) {
    t.object();
    const name = t.field("topic").topicName();
    if (topics.includes(name))
      throw t.error(`List of topics to reassign contains duplicate entries: ${name}`);
    topics.push(name);
  }
  return topics;
}

/** Kafka's formatAsReassignmentJson: compact, partitions sorted by topic then partition. */
export function formatAsReassignmentJson(
  assignment: ReadonlyMap<string, ReadonlyMap<number, readonly number[]>>,
): string {
  const partitions: Array<{ topic: string; partition: number; replicas: number[]; log_dirs: string[] }> = [];
  for (const topic of [...assignment.keys()].sort()) {
    const parts = assignment.get(topic)!;
    for (const p of [...parts.keys()].sort((a, b) => a - b)) {
      const replicas = [...parts.get(p)!];
      partitions.push({ topic, partition: p, replicas, log_dirs: replicas.map(() => ANY_LOG_DIR) });
    }
  }
  return JSON.stringify({ version: 1, partitions });
}
