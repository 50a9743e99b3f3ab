// `tributary leader-election` (kafka-leader-election.sh, Kafka's LeaderElectionCommand): preferred or
// unclean leader elections for --all-topic-partitions, one --topic/--partition, or the partitions of a
// --path-to-json-file (`{"partitions": [{"topic": "foo", "partition": 1}]}`). Prints Kafka's lines:
// "Successfully completed leader election (PREFERRED) for partitions t-0, t-1", "Valid replica already
// elected for partitions t-2", and one "Error completing leader election (PREFERRED) for partition: t-3:
// <exception>: <message>" per failure (then exit 1 with "N replica(s) could not be elected").

import type { TopicPartitionRef } from "../../client/admin/admin-types.js";
import { type ElectionType, PartitionAdmin } from "../../client/admin/partition-admin.js";
import { kafkaExceptionClass } from "../../client/errors.js";
import { ErrorCode } from "../../protocol/errors.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { type JsonNode, readJsonFile } from "../json-input.js";
import { bootstrapServerOption, withAdminClient } from "../tool-options.js";

export const LEADER_ELECTION_SPEC: ToolSpec = {
  name: "leader-election",
  description:
    "This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are preferred replicas and unclean replicas.",
  options: [
    bootstrapServerOption(
      "A hostname and port for the broker to connect to, in the form host:port. Multiple comma separated URLs can be given. REQUIRED.",
      "host:port",
    ),
    {
      name: "admin.config",
      description: "Configuration properties files to pass to the admin client",
      arg: { type: "String", describedAs: "config file" },
    },
    {
      name: "path-to-json-file",
      description:
        'The JSON file with the list  of partition for which leader elections should be performed. This is an example format. \n{"partitions":\n\t[{"topic": "foo", "partition": 1},\n\t {"topic": "foobar", "partition": 2}]\n}\nNot allowed if --all-topic-partitions or --topic flags are specified.',
      arg: { type: "String", describedAs: "Path to JSON file" },
    },
    {
      name: "topic",
      description:
        "Name of topic for which to perform an election. Not allowed if --path-to-json-file or --all-topic-partitions is specified.",
      arg: { type: "String", describedAs: "topic name" },
    },
    {
      name: "partition",
      description: "Partition id for which to perform an election. REQUIRED if --topic is specified.",
      arg: { type: "Integer", describedAs: "partition id" },
    },
    {
      name: "all-topic-partitions",
      description:
        "Perform election on all of the eligible topic partitions based on the type of election (see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.",
    },
    {
      name: "election-type",
      description:
        'Type of election to attempt. Possible values are "preferred" for preferred leader election or "unclean" for unclean leader election. If preferred election is selection, the election is only performed if the current leader is not the preferred leader for the topic partition. If unclean election is selected, the election is only performed if there are no leader for the topic partition. REQUIRED.',
      arg: { type: "String", describedAs: "election type" },
    },
  ],
};

export function runLeaderElection(argv: string[]): Promise<number> {
  return runTool(LEADER_ELECTION_SPEC, argv, leaderElection);
}

/** The election JSON file: `{"partitions": [{"topic": …, "partition": …}, …]}`, no duplicates. */
export function electionPartitionsFromJson(root: JsonNode): TopicPartitionRef[] {
  root.object();
  const list = root.field("partitions");
  if (list.isMissing) throw root.error('Replica election data is missing "partitions" field');
  const out: TopicPartitionRef[] = [];
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const p of list.elements("an array of {topic, partition}")) {
    p.object();
    const tp = { topic: p.field("topic").topicName(), partition: p.field("partition").partitionId() };
    const k = `${tp.topic}-${tp.partition}`;
    if (seen.has(k)) dups.add(k);
    seen.add(k);
    out.push(tp);
  }
  if (dups.size > 0)
    throw root.error(`Replica election data contains duplicate partitions: ${[...dups].join(",")}`);
  return out;
}

function electionType(args: ParsedArgs): ElectionType {
  const v = args.value("election-type")!;
  const t = v.toLowerCase();
  if (t !== "preferred" && t !== "unclean")
    throw new UsageError(`Invalid value '${v}' for --election-type: expected preferred or unclean`);
  return t;
}

async function leaderElection(args: ParsedArgs): Promise<number> {
  const missing = ["bootstrap-server", "election-type"].filter((n) => !args.has(n));
  if (missing.length > 0) throw new UsageError(`Missing required option(s): ${missing.join(", ")}`);
  const exclusive = ["topic", "all-topic-partitions", "path-to-json-file"];
  if (exclusive.filter((n) => args.has(n)).length !== 1)
    throw new UsageError(`One and only one of the following options is required: ${exclusive.join(", ")}`);
  if (args.has("topic")) checkRequired(args, "partition");
  if (!args.has("topic") && args.has("partition"))
    throw new UsageError("Option partition is only allowed if topic is used");
  const type = electionType(args);
  let partitions: TopicPartitionRef[] | undefined;
  if (args.has("path-to-json-file"))
    partitions = electionPartitionsFromJson(readJsonFile(args.value("path-to-json-file")!));
  else if (args.has("topic")) {
    const partition = args.int("partition")!;
    if (partition < 0)
      throw new UsageError(`Invalid value ${partition} for --partition: expected a partition id >= 0`);
    partitions = [{ topic: args.value("topic")!, partition }];
  }
  const name = type.toUpperCase();
  return withAdminClient(
    args,
    async (admin) => {
      const results = await new PartitionAdmin(admin.cluster).electLeaders(type, partitions);
      const succeeded = results.filter((r) => r.error === undefined);
      const noop = results.filter((r) => r.error?.code === ErrorCode.ELECTION_NOT_NEEDED);
      const failed = results.filter(
        (r) => r.error !== undefined && r.error.code !== ErrorCode.ELECTION_NOT_NEEDED,
      );
      const names = (rs: readonly TopicPartitionRef[]): string =>
        rs.map((r) => `${r.topic}-${r.partition}`).join(", ");
      const out: string[] = [];
      if (succeeded.length > 0)
        out.push(`Successfully completed leader election (${name}) for partitions ${names(succeeded)}`);
      if (noop.length > 0) out.push(`Valid replica already elected for partitions ${names(noop)}`);
      for (const f of failed)
        out.push(
          `Error completing leader election (${name}) for partition: ${f.topic}-${f.partition}: ${kafkaExceptionClass(f.error!)}: ${f.error!.message}`,
        );
      if (out.length > 0) process.stdout.write(`${out.join("\n")}\n`);
      if (failed.length > 0) throw new UsageError(`${failed.length} replica(s) could not be elected`);
      return 0;
    },
    (o) => o,
    "admin.config",
  );
}
