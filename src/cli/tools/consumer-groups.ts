// `tributary consumer-groups` (kafka-consumer-groups.sh, Kafka's ConsumerGroupCommand): the options and
// argument checks of ConsumerGroupCommandOptions, and the actions --list (a GROUP table with TYPE and
// STATE columns for --type / --state, which also filter), --describe (consumer-groups-describe.ts),
// --reset-offsets (consumer-groups-reset.ts), --delete, --delete-offsets (TOPIC PARTITION STATUS table) and --validate-regex, over the admin
// client and GroupAdmin. Failures print one line; the exit status is 1 whenever something failed.

import { AdminClient } from "../../client/admin/admin-client.js";
import type { TopicPartitionRef } from "../../client/admin/admin-types.js";
import { GroupAdmin } from "../../client/admin/group-admin.js";
import { KafkaClientError, kafkaExceptionClass } from "../../client/errors.js";
import {
  adminClientOptions,
  checkInvalid,
  type ParsedArgs,
  runTool,
  type ToolSpec,
  UsageError,
} from "../args.js";
import { bootstrapServerOption, commandConfigOption } from "../tool-options.js";
import {
  compareStrings,
  type GroupsContext,
  listConsumerGroupIds,
  MISSING_COLUMN_VALUE,
  out,
  printError,
  row,
} from "./consumer-groups-common.js";
import { describeGroups } from "./consumer-groups-describe.js";
import {
  exportOffsetsToCsv,
  parseTopicWithPartitions,
  precheckReset,
  printOffsetsToReset,
  RESET_SCENARIO_MISSING,
  resetOffsets,
} from "./consumer-groups-reset.js";

const NL = "\n";
const ACTIONS = ["list", "describe", "delete", "reset-offsets", "delete-offsets", "validate-regex"];
const SCENARIOS = [
  "to-offset",
  "shift-by",
  "to-datetime",
  "by-duration",
  "to-earliest",
  "to-latest",
  "to-current",
  "from-file",
];
/** Kafka's GroupState names (GroupState.parse is case-insensitive) valid for consumer groups. */
const CONSUMER_STATES = [
  "PreparingRebalance",
  "CompletingRebalance",
  "Stable",
  "Dead",
  "Empty",
  "Assigning",
  "Reconciling",
];

export const CONSUMER_GROUPS_SPEC: ToolSpec = {
  name: "consumer-groups",
  description:
    "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group offsets.",
  options: [
    { name: "all-groups", description: "Apply to all consumer groups." },
    {
      name: "all-topics",
      description: "Consider all topics assigned to a group in the `reset-offsets` process.",
    },
    bootstrapServerOption(),
    {
      name: "by-duration",
      description: "Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'",
      arg: { type: "String", describedAs: "duration" },
    },
    commandConfigOption(
      "command config property file",
      "Property file containing configs to be passed to Admin Client and Consumer.",
    ),
    {
      name: "delete",
      description:
        "Pass in groups to delete topic partition offsets and ownership information over the entire consumer group. For instance --group g1 --group g2",
    },
    {
      name: "delete-offsets",
      description:
        "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.",
    },
    {
      name: "describe",
      description:
        "Describe consumer group and list offset lag (number of messages not yet processed) related to given group.",
    },
    {
      name: "dry-run",
      description:
        "Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets.",
    },
    { name: "execute", description: "Execute operation. Supported operations: reset-offsets." },
    {
      name: "export",
      description: "Export operation execution to a CSV file. Supported operations: reset-offsets.",
    },
    {
      name: "from-file",
      description: "Reset offsets to values defined in CSV file.",
      arg: { type: "String", describedAs: "path to CSV file" },
    },
    {
      name: "group",
      description: "The consumer group we wish to act on.",
      arg: { type: "String", describedAs: "consumer group" },
    },
    { name: "list", description: "List all consumer groups." },
    {
      name: "members",
      description: `Describe members of the group. This option may be used with '--describe' and '--bootstrap-server' options only.${NL}Example: --bootstrap-server localhost:9092 --describe --group group1 --members`,
    },
    {
      name: "offsets",
      description: `Describe the group and list all topic partitions in the group along with their offset lag. This is the default sub-action of and may be used with '--describe' and '--bootstrap-server' options only.${NL}Example: --bootstrap-server localhost:9092 --describe --group group1 --offsets`,
    },
    {
      name: "reset-offsets",
      description: `Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive${NL}Has 2 execution options: --dry-run (the default) to plan which offsets to reset, and --execute to update the offsets. Additionally, the --export option is used to export the results to a CSV format.${NL}You must choose one of the following reset specifications: --to-datetime, --by-duration, --to-earliest, --to-latest, --shift-by, --from-file, --to-current, --to-offset.${NL}To define the scope use --all-topics or --topic. One scope must be specified unless you use '--from-file'.`,
    },
    {
      name: "shift-by",
      description: "Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.",
      arg: { type: "Long", describedAs: "number-of-offsets" },
    },
    {
      name: "state",
      description: `When specified with '--describe', includes the state of the group.${NL}Example: --bootstrap-server localhost:9092 --describe --group group1 --state${NL}When specified with '--list', it displays the state of all groups. It can also be used to list groups with specific states.${NL}Example: --bootstrap-server localhost:9092 --list --state stable,empty${NL}This option may be used with '--describe', '--list' and '--bootstrap-server' options only.`,
      arg: { type: "String", describedAs: "String" },
    },
    {
      name: "type",
      description: `When specified with '--list', it displays the types of all the groups. It can also be used to list groups with specific types.${NL}Example: --bootstrap-server localhost:9092 --list --type classic,consumer${NL}This option may be used with the '--list' option only.`,
      arg: { type: "String", describedAs: "String" },
    },
    {
      name: "timeout",
      description:
        "The timeout that can be set for some use cases. For example, it can be used when describing the group to specify the maximum amount of time in milliseconds to wait before the group stabilizes (when the group is just created, or is going through some changes).",
      arg: { type: "Long", describedAs: "timeout (ms)" },
      defaultValue: "5000",
    },
    { name: "to-current", description: "Reset offsets to current offset." },
    {
      name: "to-datetime",
      description: "Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'",
      arg: { type: "String", describedAs: "datetime" },
    },
    { name: "to-earliest", description: "Reset offsets to earliest offset." },
    { name: "to-latest", description: "Reset offsets to latest offset." },
    {
      name: "to-offset",
      description: "Reset offsets to a specific offset.",
      arg: { type: "Long", describedAs: "offset" },
    },
    {
      name: "topic",
      description:
        "The topic whose consumer group information should be deleted or topic whose should be included in the reset offset process. In `reset-offsets` case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the partition to be included in the process. Reset-offsets also supports multiple topic inputs.",
      arg: { type: "String", describedAs: "topic" },
    },
    {
      name: "validate-regex",
      description: "Validate that the syntax of the provided regular expression is valid.",
      arg: { type: "String", describedAs: "regex" },
    },
    {
      name: "verbose",
      description: `Provide additional information, if any, when describing the group. This option may be used with '--offsets'/'--members'/'--state' and '--bootstrap-server' options only.${NL}Example: --bootstrap-server localhost:9092 --describe --group group1 --members --verbose`,
    },
  ],
};

/** `--state` and `--type` take an optional value (joptsimple withOptionalArg): none when an option follows. */
function normalizeOptionalArgs(argv: readonly string[]): string[] {
  const outArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if ((a === "--state" || a === "--type") && (i + 1 >= argv.length || argv[i + 1].startsWith("--")))
      outArgs.push(`${a}=`);
    else outArgs.push(a);
  }
  return outArgs;
}

export function runConsumerGroups(argv: string[]): Promise<number> {
  return runTool(CONSUMER_GROUPS_SPEC, normalizeOptionalArgs(argv), consumerGroups, {
    errorPrefix: "Error: Executing consumer group command failed due to ",
  });
}

function unavailable(args: ParsedArgs, option: string, ...needs: string[]): void {
  if (args.has(option) && !needs.some((n) => args.has(n)))
    throw new UsageError(`Option(s) [${option}] are unavailable given other options on the command line`);
}

/** ConsumerGroupCommand.main's action check and ConsumerGroupCommandOptions.checkArgs. */
function checkArgs(args: ParsedArgs): void {
  unavailable(args, "members", "describe");
  unavailable(args, "verbose", "describe");
  unavailable(args, "offsets", "describe");
  unavailable(args, "state", "describe", "list");
  unavailable(args, "type", "list");
  if (ACTIONS.filter((a) => args.has(a)).length !== 1)
    throw new UsageError(
      `Command must include exactly one action: ${ACTIONS.map((a) => `--${a}`).join(", ")}`,
    );
  if (args.has("validate-regex")) return;
  if (!args.has("bootstrap-server") && !args.has("command-config"))
    throw new UsageError('Missing required argument "[bootstrap-server]"');
  const groupScope = "[group], [all-groups]";
  if (args.has("describe")) {
    if (!args.has("group") && !args.has("all-groups"))
      throw new UsageError(`Option [describe] takes one of these options: ${groupScope}`);
    if (["members", "offsets", "state"].filter((o) => args.has(o)).length > 1)
      throw new UsageError(
        "Option [describe] takes at most one of these options: [members], [offsets], [state]",
      );
    if (args.has("state") && args.value("state") !== "")
      throw new UsageError("Option [describe] does not take a value for [state]");
  }
  if (args.has("delete")) {
    if (!args.has("group") && !args.has("all-groups"))
      throw new UsageError(`Option [delete] takes one of these options: ${groupScope}`);
    if (args.has("topic"))
      throw new UsageError(
        "The consumer does not support topic-specific offset deletion from a consumer group.",
      );
  }
  if (args.has("delete-offsets") && (!args.has("group") || !args.has("topic")))
    throw new UsageError("Option [delete-offsets] takes the following options: [group], [topic]");
  if (args.has("reset-offsets")) {
    if (args.has("dry-run") && args.has("execute"))
      throw new UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]");
    if (!args.has("group") && !args.has("all-groups"))
      throw new UsageError(`Option [reset-offsets] takes one of these options: ${groupScope}`);
    for (const s of SCENARIOS)
      checkInvalid(
        args,
        s,
        SCENARIOS.filter((x) => x !== s),
      );
    if (!SCENARIOS.some((s) => args.has(s))) throw new UsageError(RESET_SCENARIO_MISSING);
    if (!args.has("all-topics") && !args.has("topic") && !args.has("from-file"))
      throw new UsageError("One of the reset scopes should be defined: --all-topics, --topic.");
    checkInvalid(args, "all-topics", ["topic"]);
  }
  checkInvalid(args, "group", ["all-groups"]);
  checkInvalid(args, "group", ["list"]);
  checkInvalid(args, "topic", ["list", "describe"]);
}

async function consumerGroups(args: ParsedArgs): Promise<number> {
  checkArgs(args);
  if (args.has("validate-regex")) return validateRegex(args.value("validate-regex")!);
  const timeoutMs = args.int("timeout")!;
  const admin = new AdminClient({
    ...adminClientOptions(args.value("bootstrap-server"), args.value("command-config")),
    defaultApiTimeoutMs: timeoutMs,
  });
  const ctx: GroupsContext = {
    args,
    admin,
    groups: new GroupAdmin(admin.cluster, { timeoutMs }),
    failed: false,
  };
  try {
    // Datetimes, durations and CSV plans are checked before anything else is printed.
    const filePlan = args.has("reset-offsets") ? precheckReset(ctx) : undefined;
    if (args.has("reset-offsets") && !args.has("dry-run") && !args.has("execute"))
      process.stderr.write(
        "WARN: No action will be performed as the --execute option is missing.In a future major release, the default behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.\n",
      );
    if (args.has("list")) await listGroups(ctx);
    else if (args.has("describe")) await describeGroups(ctx);
    else if (args.has("delete")) await deleteGroups(ctx);
    else if (args.has("reset-offsets")) {
      const plan = await resetOffsets(ctx, filePlan);
      if (args.has("export")) out(`${exportOffsetsToCsv(plan, args.values("group").length === 1)}\n`);
      else printOffsetsToReset(plan);
    } else await deleteOffsets(ctx);
    return ctx.failed ? 1 : 0;
  } finally {
    await ctx.admin.close();
  }
}

function validateRegex(regex: string): number {
  try {
    new RegExp(regex);
    out(`The regular expression \`${regex}\` is valid.\n`);
    return 0;
  } catch (e) {
    out(`The regular expression \`${regex}\` is invalid: ${(e as Error).message}.\n`);
    return 1;
  }
}

/** groupStatesFromString: comma-separated, case-insensitive state names. */
function parseStates(input: string): string[] {
  return input.split(",").map((s) => {
    const found = CONSUMER_STATES.find((x) => x.toLowerCase() === s.trim().toLowerCase());
    if (!found)
      throw new UsageError(`Invalid state list '${input}'. Valid states are: ${CONSUMER_STATES.join(", ")}`);
    return found;
  });
}

/** Kafka's GroupType names (toString), parsed case-insensitively by consumerGroupTypesFromString. */
const GROUP_TYPES = ["Consumer", "Classic", "Share"];

function parseTypes(input: string): string[] {
  return input
    .toLowerCase()
    .split(",")
    .map((s) => {
      const found = GROUP_TYPES.find((t) => t.toLowerCase() === s.trim());
      if (!found)
        throw new UsageError(`Invalid types list '${input}'. Valid types are: ${GROUP_TYPES.join(", ")}`);
      return found;
    });
}

/** listGroups / printGroupInfo: plain ids, or GROUP with TYPE and/or STATE columns (--type, --state). */
async function listGroups(ctx: GroupsContext): Promise<void> {
  const includeType = ctx.args.has("type");
  const includeState = ctx.args.has("state");
  if (!includeType && !includeState) {
    const ids = await listConsumerGroupIds(ctx);
    if (ids.length > 0) out(`${ids.join("\n")}\n`);
    return;
  }
  const stateValue = ctx.args.value("state") ?? "";
  const typeValue = ctx.args.value("type") ?? "";
  const states = stateValue === "" ? [] : parseStates(stateValue);
  const types = typeValue === "" ? [] : parseTypes(typeValue);
  const listed = (await ctx.groups.listGroups({ states, types })).filter(
    (g) => g.protocolType === "consumer" || g.protocolType === "",
  );
  const groupLen = Math.max(15, ...listed.map((g) => g.groupId.length)) + 10;
  const columns: Array<[string, (g: (typeof listed)[number]) => string]> = [["GROUP", (g) => g.groupId]];
  // GroupType.toString of the listing's type ("classic" → "Classic"), Unknown when not given.
  if (includeType)
    columns.push([
      "TYPE",
      (g) => GROUP_TYPES.find((t) => t.toLowerCase() === g.type.toLowerCase()) ?? "Unknown",
    ]);
  if (includeState) columns.push(["STATE", (g) => (g.state === "" ? "Unknown" : g.state)]);
  const widths = columns.map((_, i) => (i === 0 ? groupLen : 20));
  let text = `${row(
    columns.map(([h]) => h),
    widths,
  )}\n`;
  for (const g of listed)
    text += `${row(
      columns.map(([, f]) => f(g)),
      widths,
    )}\n`;
  out(text);
}

/** The Java exception Kafka's admin client raises for an error code, as `Throwable.toString()` prints it. */
function javaException(e: KafkaClientError): string {
  return `${kafkaExceptionClass(e)}: ${e.message}`;
}

async function deleteGroups(ctx: GroupsContext): Promise<void> {
  const ids = ctx.args.has("all-groups") ? await listConsumerGroupIds(ctx) : ctx.args.values("group");
  const results = await ctx.groups.deleteGroups(ids);
  const success = results.filter((r) => !r.error).map((r) => `'${r.groupId}'`);
  const failed = results.filter((r) => r.error);
  if (failed.length === 0) {
    out(`Deletion of requested consumer groups (${success.join(", ")}) was successful.\n`);
    return;
  }
  printError(ctx, "Deletion of some consumer groups failed:");
  for (const f of failed)
    out(`* Group '${f.groupId}' could not be deleted due to: ${javaException(f.error!)}\n`);
  if (success.length > 0) out(`\nThese consumer groups were deleted successfully: ${success.join(", ")}\n`);
}

async function deleteOffsets(ctx: GroupsContext): Promise<void> {
  const groupId = ctx.args.value("group")!;
  const topics = ctx.args.values("topic");
  const rows = new Map<string, { tp: TopicPartitionRef; error?: string }>();
  const partitions = new Map<string, TopicPartitionRef>();
  for (const t of topics.filter((x) => x.includes(":")))
    for (const p of parseTopicWithPartitions(t)) partitions.set(`${p.topic}\u0000${p.partition}`, p);
  const whole = [...new Set(topics.filter((x) => !x.includes(":")))];
  if (whole.length > 0)
    for (const t of await ctx.admin.describeTopics(whole)) {
      if (t.error) {
        const e = t.error instanceof KafkaClientError ? t.error : KafkaClientError.of("UNKNOWN_SERVER_ERROR");
        rows.set(`${t.name}\u0000-1`, {
          tp: { topic: t.name, partition: -1 },
          error: `${javaException(e)}`,
        });
        continue;
      }
      for (const p of t.partitions)
        partitions.set(`${t.name}\u0000${p.partition}`, { topic: t.name, partition: p.partition });
    }
  const result = await ctx.groups.deleteConsumerGroupOffsets(groupId, [...partitions.values()]);
  let topLevel = result.error?.errorName ?? "NONE";
  if (topLevel === "NONE") topLevel = result.partitions.find((p) => p.error)?.error?.errorName ?? "NONE";
  if (topLevel === "NONE") out(`Request succeeded for deleting offsets from group ${groupId}.\n`);
  else if (
    ["INVALID_GROUP_ID", "GROUP_ID_NOT_FOUND", "GROUP_AUTHORIZATION_FAILED", "NON_EMPTY_GROUP"].includes(
      topLevel,
    )
  )
    printError(ctx, result.error?.message ?? topLevel);
  else if (
    ["GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION"].includes(
      topLevel,
    )
  )
    printError(ctx, "Encountered some partition-level error, see the follow-up details.");
  else printError(ctx, `Encountered some unknown error: ${topLevel}`);
  for (const p of result.partitions)
    rows.set(`${p.topic}\u0000${p.partition}`, {
      tp: p,
      error: p.error ? javaException(p.error) : undefined,
    });
  if (rows.size > 0 && [...rows.values()].some((r) => r.error)) ctx.failed = true;
  const maxTopic = Math.max(15, ...[...rows.values()].map((r) => r.tp.topic.length));
  const widths = [maxTopic, 10, 15];
  let text = `\n${row(["TOPIC", "PARTITION", "STATUS"], widths)}`;
  const sorted = [...rows.values()].sort((a, b) =>
    compareStrings(`${a.tp.topic}${a.tp.partition}`, `${b.tp.topic}${b.tp.partition}`),
  );
  for (const r of sorted)
    text += `\n${row(
      [
        r.tp.topic,
        r.tp.partition >= 0 ? String(r.tp.partition) : MISSING_COLUMN_VALUE,
        r.error !== undefined ? `Error: ${r.error}` : "Successful",
      ],
      widths,
    )}`;
  out(`${text}\n`);
}
