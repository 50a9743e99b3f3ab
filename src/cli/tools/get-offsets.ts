// `tributary get-offsets` (kafka-get-offsets.sh, Kafka's GetOffsetShell): offsets of the partitions
// chosen by --topic (a regular expression) and --partitions, or by --topic-partitions patterns
// (`t1:1,t2:0-3,t3,t4:5-,t5:-3`), at --time latest|earliest|max-timestamp|earliest-local|
// latest-tiered (-1..-5) or a timestamp. Prints `topic:partition:offset` lines sorted as Kafka sorts
// TopicPartition strings; partitions without an offset are left out. Errors: `Error occurred: …`.

import { type OffsetSpec, type TopicPartitionRef, throwFirstError } from "../../client/admin/admin-types.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";
import { includeList } from "../topic-filter.js";

export const GET_OFFSETS_SPEC: ToolSpec = {
  name: "get-offsets",
  description: "An interactive shell for getting topic-partition offsets.",
  options: [
    bootstrapServerOption(
      "REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.",
      "HOST1:PORT1,...,HOST3:PORT3",
    ),
    commandConfigOption("config file"),
    {
      name: "exclude-internal-topics",
      description: "By default, internal topics are included. If specified, internal topics are excluded.",
    },
    {
      name: "partitions",
      description:
        "Comma separated list of partition ids to get the offsets for. If not present, all partitions of the authorized topics are queried. Cannot be used if --topic-partitions is present.",
      arg: { type: "String", describedAs: "partition ids" },
    },
    {
      name: "time",
      description:
        "timestamp of the offsets before that. [Note: No offset is returned, if the timestamp greater than recently committed record timestamp is given.]",
      arg: {
        type: "String",
        describedAs:
          "<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered",
      },
      defaultValue: "latest",
    },
    {
      name: "topic",
      description:
        "The topic to get the offsets for. It also accepts a regular expression. If not present, all authorized topics are queried. Cannot be used if --topic-partitions is present.",
      arg: { type: "String", describedAs: "topic" },
    },
    {
      name: "topic-partitions",
      description:
        "Comma separated list of topic-partition patterns to get the offsets for, with the format of '([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?'. The first group is an optional regex for the topic name, if omitted, it matches any topic name. The section after ':' describes a 'partition' pattern, which can be: a number, a range in the format of 'NUMBER-NUMBER' (lower inclusive, upper exclusive), an inclusive lower bound in the format of 'NUMBER-', an exclusive upper bound in the format of '-NUMBER' or may be omitted to accept all partitions.",
      arg: { type: "String", describedAs: "topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3" },
    },
  ],
};

export function runGetOffsets(argv: string[]): Promise<number> {
  return runTool(GET_OFFSETS_SPEC, argv, getOffsets, {
    errorPrefix: "Error occurred: ",
    prefixUsageErrors: true,
  });
}

const SPEC_NAMES: Record<string, OffsetSpec> = {
  latest: "latest",
  earliest: "earliest",
  "max-timestamp": "max-timestamp",
  "earliest-local": "earliest-local",
  "latest-tiered": "latest-tiered",
  "-1": "latest",
  "-2": "earliest",
  "-3": "max-timestamp",
  "-4": "earliest-local",
  "-5": "latest-tiered",
};

/** GetOffsetShell.parseOffsetSpec. */
export function parseOffsetSpec(time: string): OffsetSpec {
  const named = SPEC_NAMES[time];
  if (named) return named;
  if (!/^[+-]?\d+$/.test(time) || BigInt(time) > 2n ** 63n - 1n || BigInt(time) < -(2n ** 63n))
    throw new UsageError(
      `Malformed time argument ${time}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long format timestamp`,
    );
  return { timestamp: BigInt(time) };
}

interface Filter {
  topic(name: string): boolean;
  partition(tp: TopicPartitionRef): boolean;
}

const RULE = /^([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?$/;

/** --topic-partitions: one rule per comma-separated entry; a partition passes if any rule accepts it. */
function patternListFilter(list: string): Filter {
  const rules = list.split(",").map((spec) => {
    const m = RULE.exec(spec);
    if (!m) throw new UsageError(`Invalid rule specification: ${spec}`);
    const g = (i: number): string | undefined => (m[i] ? m[i] : undefined);
    const topic = includeList(g(1) ?? ".*");
    const exact = g(2) !== undefined ? Number(g(2)) : undefined;
    const lower = g(3) !== undefined ? Number(g(3)) : 0;
    const upper = g(4) !== undefined ? Number(g(4)) : 2 ** 31 - 1;
    return {
      topic,
      partition: (p: number) => (exact !== undefined ? p === exact : p >= lower && p < upper),
    };
  });
  return {
    topic: (name) => rules.some((r) => r.topic.test(name)),
    partition: (tp) => rules.some((r) => r.topic.test(tp.topic) && r.partition(tp.partition)),
  };
}

function topicAndPartitionsFilter(topic: string | undefined, partitions: string | undefined): Filter {
  const re = includeList(topic ?? ".*");
  let ids: Set<number> | undefined;
  if (partitions !== undefined && partitions !== "") {
    const parts = partitions.split(",");
    if (!parts.every((p) => /^[+-]?\d+$/.test(p)))
      throw new UsageError(
        `--partitions expects a comma separated list of numeric partition ids, but received: ${partitions}`,
      );
    ids = new Set(parts.map(Number));
  }
  return {
    topic: (name) => re.test(name),
    partition: (tp) => re.test(tp.topic) && (!ids || ids.has(tp.partition)),
  };
}

async function getOffsets(args: ParsedArgs): Promise<number> {
  checkRequired(args, "bootstrap-server");
  if (args.has("topic-partitions") && (args.has("topic") || args.has("partitions")))
    throw new UsageError("--topic-partitions cannot be used with --topic or --partitions");
  const spec = parseOffsetSpec(args.value("time")!);
  const filter = args.has("topic-partitions")
    ? patternListFilter(args.value("topic-partitions")!)
    : topicAndPartitionsFilter(args.value("topic"), args.value("partitions"));
  return withAdminClient(
    args,
    async (admin) => {
      const topics = (await admin.listTopics({ listInternal: !args.has("exclude-internal-topics") }))
        .map((t) => t.name)
        .filter((name) => filter.topic(name));
      const described = topics.length > 0 ? await admin.describeTopics(topics) : [];
      throwFirstError(described);
      const partitions = described.flatMap((t) =>
        t.partitions
          .map((p) => ({ topic: t.name, partition: p.partition }))
          .filter((tp) => filter.partition(tp)),
      );
      if (partitions.length === 0)
        throw new UsageError("Could not match any topic-partitions with the specified filters");
      const results = await admin.listOffsets(partitions.map((tp) => ({ ...tp, spec })));
      const found: Array<[string, string]> = [];
      for (const r of results) {
        if (r.error) {
          process.stderr.write(
            `Skip getting offsets for topic-partition ${r.topic}-${r.partition} due to error: ${r.error.message}\n`,
          );
          continue;
        }
        if (r.offset !== -1n)
          found.push([`${r.topic}-${r.partition}`, `${r.topic}:${r.partition}:${r.offset}`]);
      }
      // TreeMap ordered by TopicPartition.toString(), i.e. "topic-partition" compared as strings.
      found.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      if (found.length > 0) process.stdout.write(`${found.map(([, line]) => line).join("\n")}\n`);
      return 0;
    },
    (o) => ({ ...o, clientId: "GetOffsetShell" }),
  );
}
