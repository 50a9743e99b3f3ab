// `tributary topics` (kafka-topics.sh, Kafka's TopicCommand): --create, --list, --describe, --alter
// --partitions, --delete over the admin client, with TopicCommand's options, argument checks, messages
// and describe format (`Topic: t\tTopicId: …\tPartitionCount: …\tReplicationFactor: …\tConfigs: …`
// and one `\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0` line per partition). `--topic`
// is a regular expression (Kafka's IncludeList) except with --create.

import type { AdminClient } from "../../client/admin/admin-client.js";
import { type NewTopic, type TopicDescription, throwFirstError } from "../../client/admin/admin-types.js";
import { KafkaClientError } from "../../client/errors.js";
import { isInternalTopic } from "../../server/metadata/internal-topics.js";
import { checkInvalid, checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";
import { includeList } from "../topic-filter.js";

const CONFIGS_NOTE = " (To alter topic configurations, the kafka-configs tool can be used.)";
const ACTIONS = ["create", "list", "alter", "describe", "delete"];
const REPORT_OPTS = [
  "under-replicated-partitions",
  "under-min-isr-partitions",
  "at-min-isr-partitions",
  "unavailable-partitions",
];

export const TOPICS_SPEC: ToolSpec = {
  name: "topics",
  description: "This tool helps to create, delete, describe, or change a topic.",
  options: [
    { name: "alter", description: `Alter the number of partitions and replica assignment.${CONFIGS_NOTE}` },
    {
      name: "at-min-isr-partitions",
      description:
        "If set when describing topics, only show partitions whose isr count is equal to the configured minimum.",
    },
    bootstrapServerOption("REQUIRED: The Kafka server to connect to."),
    commandConfigOption("command config property file"),
    {
      name: "config",
      description: `A topic configuration override for the topic being created. See the Kafka documentation for full details on the topic configs. It is supported only in combination with --create.${CONFIGS_NOTE}`,
      arg: { type: "String", describedAs: "name=value" },
    },
    { name: "create", description: "Create a new topic." },
    { name: "delete", description: "Delete a topic." },
    { name: "describe", description: "List details for the given topics." },
    {
      name: "exclude-internal",
      description:
        "Exclude internal topics when listing or describing topics. By default, the internal topics are included.",
    },
    {
      name: "if-exists",
      description:
        "If set when altering or deleting or describing topics, the action will only execute if the topic exists.",
    },
    {
      name: "if-not-exists",
      description:
        "If set when creating topics, the action will only execute if the topic does not already exist.",
    },
    { name: "list", description: "List all available topics." },
    {
      name: "partitions",
      description:
        "The number of partitions for the topic being created or altered. If not supplied with --create, the topic uses the cluster default. (WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected).",
      arg: { type: "Integer", describedAs: "# of partitions" },
    },
    {
      name: "replica-assignment",
      description: "A list of manual partition-to-broker assignments for the topic being created or altered.",
      arg: {
        type: "String",
        describedAs:
          "broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , broker_id_for_part2_replica1 : broker_id_for_part2_replica2 , ...",
      },
    },
    {
      name: "replication-factor",
      description:
        "The replication factor for each partition in the topic being created. If not supplied, the topic uses the cluster default.",
      arg: { type: "Integer", describedAs: "replication factor" },
    },
    {
      name: "topic",
      description:
        "The topic to create, alter, describe or delete. It also accepts a regular expression, except for --create option. Put topic name in double quotes and use the '\\' prefix to escape regular expression symbols; e.g. \"test\\.topic\".",
      arg: { type: "String", describedAs: "topic" },
    },
    {
      name: "topic-id",
      description: "The topic-id to describe.",
      arg: { type: "String", describedAs: "topic-id" },
    },
    {
      name: "topics-with-overrides",
      description: "If set when describing topics, only show topics that have overridden configs.",
    },
    {
      name: "unavailable-partitions",
      description: "If set when describing topics, only show partitions whose leader is not available.",
    },
    {
      name: "under-min-isr-partitions",
      description:
        "If set when describing topics, only show partitions whose isr count is less than the configured minimum.",
    },
    {
      name: "under-replicated-partitions",
      description: "If set when describing topics, only show under-replicated partitions.",
    },
  ],
};

export function runTopics(argv: string[]): Promise<number> {
  return runTool(TOPICS_SPEC, argv, topicsCommand, { errorPrefix: "Error while executing topic command : " });
}

/** TopicCommandOptions.checkArgs. */
function checkArgs(args: ParsedArgs): void {
  const actions = ACTIONS.filter((a) => args.has(a));
  if (actions.length !== 1)
    throw new UsageError(
      "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
    );
  if (!args.has("bootstrap-server")) throw new UsageError("--bootstrap-server must be specified");
  if (args.has("describe") && args.has("if-exists") && !args.has("topic") && !args.has("topic-id"))
    throw new UsageError("--topic or --topic-id is required to describe a topic");
  if (!args.has("list") && !args.has("describe")) checkRequired(args, "topic");
  if (args.has("alter")) {
    if (args.has("config"))
      throw new UsageError(`Option "[config]" can't be used with option "[alter]"${CONFIGS_NOTE}`);
    checkRequired(args, "partitions");
  }
  const except = (...keep: string[]) => ACTIONS.filter((a) => !keep.includes(a));
  checkInvalid(args, "config", except("alter", "create"));
  checkInvalid(args, "partitions", except("alter", "create"));
  checkInvalid(args, "replication-factor", except("create"));
  checkInvalid(args, "replica-assignment", except("alter", "create"));
  if (args.has("create")) checkInvalid(args, "replica-assignment", ["partitions", "replication-factor"]);
  for (const r of REPORT_OPTS) checkInvalid(args, r, [...except("describe"), "topics-with-overrides"]);
  checkInvalid(args, "topics-with-overrides", [...except("describe"), ...REPORT_OPTS]);
  checkInvalid(args, "if-exists", except("alter", "delete", "describe"));
  checkInvalid(args, "if-not-exists", except("create"));
  checkInvalid(args, "exclude-internal", except("list", "describe"));
}

/** TopicCommand.parseReplicaAssignment: "0:1,1:2" → [[0,1],[1,2]]. */
export function parseReplicaAssignment(text: string): number[][] {
  const out: number[][] = [];
  for (const [i, part] of text.split(",").entries()) {
    const ids = part.split(":").map((s) => {
      const t = s.trim();
      if (!/^[+-]?\d+$/.test(t)) throw new UsageError(`For input string: "${t}"`);
      return Number(t);
    });
    const dups = [...new Set(ids.filter((id, k) => ids.indexOf(id) !== k))];
    if (dups.length > 0)
      throw new UsageError(`Partition replica lists may not contain duplicate entries: ${dups.join(",")}`);
    out.push(ids);
    if (ids.length !== out[0].length)
      throw new UsageError(`Partition ${i} has different replication factor: [${ids.join(", ")}]`);
  }
  return out;
}

function parseTopicConfigs(entries: readonly string[]): Record<string, string> {
  const props: Record<string, string> = {};
  for (const e of entries) {
    const kv = e.split(/\s*=\s*/);
    if (kv.length !== 2)
      throw new UsageError(
        'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".',
      );
    props[kv[0].trim()] = kv[1].trim();
  }
  return props;
}

function isInternal(name: string, flagged: boolean): boolean {
  return flagged || isInternalTopic(name);
}

async function topicsCommand(args: ParsedArgs): Promise<number> {
  checkArgs(args);
  await withAdminClient(args, async (admin) => {
    if (args.has("create")) await createTopic(admin, args);
    else if (args.has("alter")) await alterTopic(admin, args);
    else if (args.has("list")) await listTopics(admin, args);
    else if (args.has("describe")) await describeTopics(admin, args);
    else if (args.has("delete")) await deleteTopic(admin, args);
  });
  return 0;
}

/** Sorted topic names matching --topic (all without it), internal ones unless --exclude-internal. */
async function getTopics(admin: AdminClient, args: ParsedArgs): Promise<string[]> {
  const exclude = args.has("exclude-internal");
  const all = await admin.listTopics({ listInternal: true });
  const pattern = args.value("topic");
  const filter = pattern !== undefined ? includeList(pattern) : undefined;
  return all
    .filter((t) => (!filter || filter.test(t.name)) && !(exclude && isInternal(t.name, t.isInternal)))
    .map((t) => t.name);
}

function ensureTopicExists(found: readonly string[], args: ParsedArgs): void {
  const requested = args.value("topic");
  if (requested && found.length === 0 && !args.has("if-exists"))
    throw new Error(`Topic '${requested}' does not exist as expected`);
}

async function createTopic(admin: AdminClient, args: ParsedArgs): Promise<void> {
  const name = args.value("topic")!;
  if (name.includes(".") || name.includes("_"))
    process.stdout.write(
      "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\n",
    );
  const rf = args.int("replication-factor");
  const partitions = args.int("partitions");
  if (rf !== undefined && (rf > 32767 || rf < 1))
    throw new UsageError("The replication factor must be between 1 and 32767 inclusive");
  if (partitions !== undefined && partitions < 1)
    throw new UsageError("The partitions must be greater than 0");
  const assignment = args.value("replica-assignment");
  const configs = parseTopicConfigs(args.values("config"));
  const topic: NewTopic = assignment
    ? { name, assignments: parseReplicaAssignment(assignment), configs }
    : { name, numPartitions: partitions ?? -1, replicationFactor: rf ?? -1, configs };
  const [result] = await admin.createTopics([topic]);
  if (result.error) {
    if (result.error.code === KafkaClientError.of("TOPIC_ALREADY_EXISTS").code && args.has("if-not-exists"))
      return;
    throw result.error;
  }
  process.stdout.write(`Created topic ${name}.\n`);
}

async function alterTopic(admin: AdminClient, args: ParsedArgs): Promise<void> {
  const topics = await getTopics(admin, args);
  ensureTopicExists(topics, args);
  if (topics.length === 0) return;
  const total = args.int("partitions")!;
  const assignment = args.value("replica-assignment");
  const descriptions = assignment ? await admin.describeTopics(topics) : [];
  throwFirstError(descriptions);
  const results = await admin.createPartitions(
    topics.map((topic) => {
      if (!assignment) return { topic, totalCount: total };
      const existing = descriptions.find((d) => d.name === topic)!.partitions.length;
      return { topic, totalCount: total, assignments: parseReplicaAssignment(assignment).slice(existing) };
    }),
  );
  throwFirstError(results);
}

async function listTopics(admin: AdminClient, args: ParsedArgs): Promise<void> {
  const topics = await getTopics(admin, args);
  process.stdout.write(`${topics.join("\n")}\n`);
}

async function deleteTopic(admin: AdminClient, args: ParsedArgs): Promise<void> {
  const topics = await getTopics(admin, args);
  ensureTopicExists(topics, args);
  if (topics.length === 0) return;
  throwFirstError(await admin.deleteTopics(topics));
}

async function describeTopics(admin: AdminClient, args: ParsedArgs): Promise<void> {
  let topics: string[];
  const topicId = args.value("topic-id");
  if (topicId !== undefined && topicId !== "AAAAAAAAAAAAAAAAAAAAAA") {
    const all = await admin.listTopics({ listInternal: !args.has("exclude-internal") });
    topics = all.filter((t) => t.topicId === topicId).map((t) => t.name);
    if (topics.length === 0 && !args.has("if-exists"))
      throw new Error(`TopicId '${topicId}' does not exist as expected`);
  } else {
    topics = await getTopics(admin, args);
    ensureTopicExists(topics, args);
  }
  if (topics.length === 0) return;
  const descriptions = await admin.describeTopics(topics);
  throwFirstError(descriptions);
  const configs = await admin.describeConfigs(topics.map((name) => ({ type: "topic" as const, name })));
  throwFirstError(configs);
  const live = new Set((await admin.describeCluster()).brokers.map((b) => b.id));
  const reportPartitions = REPORT_OPTS.some((r) => args.has(r));
  const overridesOnly = args.has("topics-with-overrides");
  const lines: string[] = [];
  for (const [i, td] of descriptions.entries()) {
    const entries = configs[i].entries;
    const minIsr = Number(entries.find((e) => e.name === "min.insync.replicas")?.value ?? "1");
    const overrides = entries.filter((e) => !e.isDefault);
    if (!reportPartitions && (!overridesOnly || overrides.length > 0)) {
      lines.push(topicLine(td, overrides.map((e) => `${e.name}=${e.value}`).join(",")));
    }
    if (overridesOnly) continue;
    for (const p of td.partitions) {
      const hasLeader = p.leader >= 0;
      const show =
        !reportPartitions ||
        (args.has("under-replicated-partitions") && p.replicas.length - p.isr.length > 0) ||
        (args.has("unavailable-partitions") && (!hasLeader || !live.has(p.leader))) ||
        (args.has("under-min-isr-partitions") && (!hasLeader || p.isr.length < minIsr)) ||
        (args.has("at-min-isr-partitions") && p.isr.length === minIsr);
      if (!show) continue;
      lines.push(
        `\tTopic: ${td.name}\tPartition: ${p.partition}\tLeader: ${hasLeader ? p.leader : "none"}` +
          `\tReplicas: ${p.replicas.join(",")}\tIsr: ${p.isr.join(",")}`,
      );
    }
  }
  if (lines.length > 0) process.stdout.write(`${lines.join("\n")}\n`);
}

function topicLine(td: TopicDescription, configs: string): string {
  const id = td.topicId !== "AAAAAAAAAAAAAAAAAAAAAA" ? `\tTopicId: ${td.topicId}` : "";
  const rf = td.partitions[0]?.replicas.length ?? 0;
  return `Topic: ${td.name}${id}\tPartitionCount: ${td.partitions.length}\tReplicationFactor: ${rf}\tConfigs: ${configs}`;
}
