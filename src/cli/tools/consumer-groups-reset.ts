// `consumer-groups --reset-offsets` (ConsumerGroupService.resetOffsets + Kafka's GroupOffsetsResetter):
// the scopes --topic t / --topic t:0,1 / --all-topics, the scenarios --to-earliest, --to-latest,
// --to-current, --to-offset, --shift-by, --to-datetime, --by-duration and --from-file (CSV
// `topic,partition,offset` or `group,topic,partition,offset`), offsets clamped to the log range, the
// dry-run plan table (GROUP TOPIC PARTITION NEW-OFFSET), --execute (OffsetCommit as an admin, only for
// inactive groups) and --export (CSV). Bad datetimes, durations and CSV lines fail with one line.

import { readFileSync } from "node:fs";
import type { TopicPartitionRef } from "../../client/admin/admin-types.js";
import { type CommittedOffset, parseTpKey, tpKey } from "../../client/admin/group-admin.js";
import { KafkaClientError } from "../../client/errors.js";
import { UsageError } from "../args.js";
import {
  compareStrings,
  err,
  type GroupsContext,
  getLogOffsets,
  leaderlessPartitions,
  listConsumerGroupIds,
  out,
  printError,
  row,
  sortPartitions,
} from "./consumer-groups-common.js";

/** Offsets to reset, by group, then by tpKey. */
export type ResetPlan = Map<string, Map<string, bigint>>;

const DATETIME_HELP =
  "--to-datetime expects YYYY-MM-DDTHH:mm:SS.sss with an optional timezone (Z, +hh, +hhmm or +hh:mm)";

/**
 * Utils.getDateTime: `YYYY-MM-DDTHH:mm:SS.sss` then an optional timezone (UTC when none is given), as
 * epoch milliseconds. Throws an Error naming the value and the expected format.
 */
export function parseDateTime(value: string): number {
  const parts = value.split("T");
  if (parts.length < 2)
    throw new Error(
      `java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format. Timestamp: ${value} (${DATETIME_HELP})`,
    );
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(
    value,
  );
  const bad = new Error(`java.text.ParseException: Unparseable date: "${value}" (${DATETIME_HELP})`);
  if (!m) throw bad;
  const [y, mo, d, h, mi, s, ms] = m.slice(1, 8).map(Number);
  const utc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const check = new Date(utc);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) throw bad;
  const tz = m[8] ?? "Z";
  if (tz === "Z") return utc;
  const sign = tz[0] === "-" ? -1 : 1;
  const digits = tz.slice(1).replace(":", "");
  const offsetMin = Number(digits.slice(0, 2)) * 60 + (digits.length > 2 ? Number(digits.slice(2)) : 0);
  if (Number(digits.slice(0, 2)) > 18 || (digits.length > 2 && Number(digits.slice(2)) > 59)) throw bad;
  return utc - sign * offsetMin * 60_000;
}

/** java.time.Duration.parse (`PnDTnHnMn.nS`) in milliseconds; throws an Error naming the value. */
export function parseDuration(value: string): number {
  const m =
    /^([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$/i.exec(
      value,
    );
  const ok =
    m && (m[2] !== undefined || (m[3] !== undefined && m[3].length > 1 && m[3].toUpperCase() !== "T"));
  if (!m || !ok)
    throw new Error(
      `Text cannot be parsed to a Duration: '${value}' (--by-duration expects PnDTnHnMnS, e.g. P1DT2H or PT30M)`,
    );
  const n = (i: number) => (m[i] ? Number(m[i]) : 0);
  const seconds = n(6);
  const frac = m[7]
    ? Number(m[7].padEnd(3, "0").slice(0, 3)) * (seconds < 0 || m[6]?.startsWith("-") ? -1 : 1)
    : 0;
  const total = n(2) * 86_400_000 + n(4) * 3_600_000 + n(5) * 60_000 + seconds * 1000 + frac;
  return m[1] === "-" ? -total : total;
}

interface CsvRow {
  readonly group?: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
}

function parseCsvLine(line: string, withGroup: boolean): CsvRow | undefined {
  const f = line.replace(/\r$/, "").split(",");
  if (f.length !== (withGroup ? 4 : 3)) return undefined;
  const group = withGroup ? f[0] : undefined;
  const [topic, partition, offset] = withGroup ? f.slice(1) : f;
  if (topic === "" || !/^[+-]?\d+$/.test(partition) || !/^[+-]?\d+$/.test(offset)) return undefined;
  const p = Number(partition);
  const o = BigInt(offset);
  if (p > 2 ** 31 - 1 || p < -(2 ** 31) || o > 2n ** 63n - 1n || o < -(2n ** 63n)) return undefined;
  return { group, topic, partition: p, offset: o };
}

/**
 * GroupOffsetsResetter.parseResetPlan: with one --group, lines may be `topic,partition,offset` (decided
 * by the first line); otherwise `group,topic,partition,offset`. A bad line fails naming its number.
 */
export function parseResetPlan(path: string, groups: readonly string[]): ResetPlan {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(
      code === "ENOENT" ? `java.nio.file.NoSuchFileException: ${path}` : `Cannot read ${path}: ${code}`,
    );
  }
  const lines = text.split("\n");
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const single = groups.length === 1;
  const noGroup = single && lines.length > 0 && parseCsvLine(lines[0], false) !== undefined;
  const plan: ResetPlan = new Map();
  lines.forEach((line, i) => {
    const r = parseCsvLine(line, !noGroup);
    if (!r)
      throw new Error(
        `Invalid CSV line ${i + 1} of ${path}: '${line}' (expected ${noGroup ? "topic,partition,offset" : single ? "topic,partition,offset or group,topic,partition,offset" : "group,topic,partition,offset"})`,
      );
    const group = r.group ?? groups[0];
    const m = plan.get(group) ?? new Map<string, bigint>();
    m.set(tpKey(r.topic, r.partition), r.offset);
    plan.set(group, m);
  });
  return plan;
}

/** Validates the scenario inputs that need no broker (datetime, duration, CSV) before connecting. */
export function precheckReset(ctx: GroupsContext): ResetPlan | undefined {
  const { args } = ctx;
  if (args.has("to-datetime")) parseDateTime(args.value("to-datetime")!);
  if (args.has("by-duration")) parseDuration(args.value("by-duration")!);
  return args.has("from-file") ? parseResetPlan(args.value("from-file")!, args.values("group")) : undefined;
}

/** parseTopicsWithPartitions: `t:0,1,2`. */
export function parseTopicWithPartitions(arg: string): TopicPartitionRef[] {
  const arr = arg.split(":");
  if (arr.length !== 2 || arr[0] === "" || arr[1] === "")
    throw new UsageError(`Invalid topic arg '${arg}', expected topic name and partitions`);
  return arr[1].split(",").map((p) => {
    if (!/^[+-]?\d+$/.test(p) || Number(p) > 2 ** 31 - 1 || Number(p) < -(2 ** 31))
      throw new UsageError(`Invalid partition '${p}' specified in topic arg '${arg}''`);
    return { topic: arr[0], partition: Number(p) };
  });
}

/** The partitions of --topic values: explicit `t:0,1` or every partition of `t`. */
export async function parseTopicPartitions(ctx: GroupsContext, topicArgs: readonly string[]) {
  const specified = topicArgs.filter((t) => t.includes(":")).flatMap(parseTopicWithPartitions);
  const whole = topicArgs.filter((t) => !t.includes(":"));
  if (whole.length > 0) {
    const described = await ctx.admin.describeTopics(whole);
    for (const t of described) if (t.error) throw t.error;
    for (const t of described)
      for (const p of t.partitions) specified.push({ topic: t.name, partition: p.partition });
  }
  return specified;
}

function tpString(p: TopicPartitionRef): string {
  return `${p.topic}-${p.partition}`;
}

/** checkAllTopicPartitionsValid: every partition exists and has a leader. */
async function checkAllTopicPartitionsValid(ctx: GroupsContext, partitions: readonly TopicPartitionRef[]) {
  const topics = [...new Set(partitions.map((p) => p.topic))];
  if (topics.length === 0) return;
  const described = await ctx.admin.describeTopics(topics);
  const existing = new Set<string>();
  for (const t of described)
    if (!t.error) for (const p of t.partitions) existing.add(tpKey(t.name, p.partition));
  const missing = partitions.filter((p) => !existing.has(tpKey(p.topic, p.partition)));
  if (missing.length > 0)
    throw KafkaClientError.of(
      "UNKNOWN_TOPIC_OR_PARTITION",
      `The partitions "${missing.map(tpString).join(",")}" do not exist`,
    );
  const noLeader = await leaderlessPartitions(ctx, partitions);
  if (noLeader.size > 0)
    throw KafkaClientError.of(
      "LEADER_NOT_AVAILABLE",
      `The partitions "${[...noLeader].map((k) => tpString(parseTpKey(k))).join(",")}" have no leader`,
    );
}

/** checkOffsetsRange: offsets above the log end or below the log start are moved inside the log. */
async function checkOffsetsRange(ctx: GroupsContext, requested: ReadonlyMap<string, bigint>) {
  const parts = [...requested.keys()].map(parseTpKey);
  const starts = await getLogOffsets(ctx, parts, "earliest");
  const ends = await getLogOffsets(ctx, parts, "latest");
  const res = new Map<string, bigint>();
  for (const [key, offset] of requested) {
    const end = ends.get(key);
    const start = starts.get(key);
    const tp = tpString(parseTpKey(key));
    if (end?.kind === "offset" && offset > end.value) {
      err(
        `WARN New offset (${offset}) is higher than latest offset for topic partition ${tp}. Value will be set to ${end.value}.\n`,
      );
      res.set(key, end.value);
    } else if (start?.kind === "offset" && offset < start.value) {
      err(
        `WARN New offset (${offset}) is lower than earliest offset for topic partition ${tp}. Value will be set to ${start.value}.\n`,
      );
      res.set(key, start.value);
    } else res.set(key, offset);
  }
  return res;
}

async function logOffsetsOrFail(
  ctx: GroupsContext,
  partitions: readonly TopicPartitionRef[],
  spec: "earliest" | "latest",
): Promise<Map<string, bigint>> {
  const offsets = await getLogOffsets(ctx, partitions, spec);
  const res = new Map<string, bigint>();
  for (const p of partitions) {
    const o = offsets.get(tpKey(p.topic, p.partition));
    if (o?.kind !== "offset")
      throw new UsageError(
        `Error getting ${spec === "earliest" ? "starting" : "ending"} offset of topic partition: ${tpString(p)}`,
      );
    res.set(tpKey(p.topic, p.partition), o.value);
  }
  return res;
}

/** Offsets at a timestamp; partitions with no record at or after it fall back to the log end. */
async function timestampOffsets(ctx: GroupsContext, partitions: readonly TopicPartitionRef[], ts: number) {
  const found = await getLogOffsets(ctx, partitions, { timestamp: BigInt(ts) });
  const res = new Map<string, bigint>();
  const empty: TopicPartitionRef[] = [];
  for (const p of partitions) {
    const o = found.get(tpKey(p.topic, p.partition));
    if (o?.kind === "offset" && o.value !== -1n) res.set(tpKey(p.topic, p.partition), o.value);
    else if (o?.kind === "offset") empty.push(p);
    else throw new UsageError(`Error getting offset by timestamp of topic partition: ${tpString(p)}`);
  }
  for (const p of empty)
    out(
      `\nWarn: Partition ${p.partition} from topic ${p.topic} is empty. Falling back to latest known offset.\n`,
    );
  for (const [k, v] of await logOffsetsOrFail(ctx, empty, "latest")) res.set(k, v);
  return res;
}

async function prepareOffsetsToReset(
  ctx: GroupsContext,
  groupId: string,
  partitions: readonly TopicPartitionRef[],
  plan: ResetPlan | undefined,
  committed: () => Promise<Map<string, CommittedOffset>>,
): Promise<Map<string, bigint> | undefined> {
  const { args } = ctx;
  await checkAllTopicPartitionsValid(ctx, partitions);
  const keys = partitions.map((p) => tpKey(p.topic, p.partition));
  const each = (offset: (k: string) => bigint) => new Map(keys.map((k) => [k, offset(k)]));
  if (args.has("to-offset"))
    return checkOffsetsRange(
      ctx,
      each(() => BigInt(args.value("to-offset")!)),
    );
  if (args.has("to-earliest")) return logOffsetsOrFail(ctx, partitions, "earliest");
  if (args.has("to-latest")) return logOffsetsOrFail(ctx, partitions, "latest");
  if (args.has("shift-by")) {
    const current = await committed();
    const shift = BigInt(args.value("shift-by")!);
    return checkOffsetsRange(
      ctx,
      each((k) => {
        const c = current.get(k);
        if (!c)
          throw new UsageError(
            `Cannot shift offset for partition ${tpString(parseTpKey(k))} since there is no current committed offset`,
          );
        return c.offset + shift;
      }),
    );
  }
  if (args.has("to-datetime"))
    return timestampOffsets(ctx, partitions, parseDateTime(args.value("to-datetime")!));
  if (args.has("by-duration"))
    return timestampOffsets(ctx, partitions, Date.now() - parseDuration(args.value("by-duration")!));
  if (plan) {
    const forGroup = plan.get(groupId);
    if (!forGroup) {
      printError(ctx, `No reset plan for group ${groupId} found.`);
      return new Map();
    }
    await checkAllTopicPartitionsValid(ctx, [...forGroup.keys()].map(parseTpKey));
    return checkOffsetsRange(ctx, forGroup);
  }
  if (args.has("to-current")) {
    const current = await committed();
    const res = new Map<string, bigint>();
    const without: TopicPartitionRef[] = [];
    for (const p of partitions) {
      const c = current.get(tpKey(p.topic, p.partition));
      if (c) res.set(tpKey(p.topic, p.partition), c.offset);
      else without.push(p);
    }
    for (const [k, v] of await logOffsetsOrFail(ctx, without, "latest")) res.set(k, v);
    return res;
  }
  return undefined;
}

async function resetInactiveGroup(ctx: GroupsContext, groupId: string, plan: ResetPlan | undefined) {
  const { args } = ctx;
  let cached: Map<string, CommittedOffset> | undefined;
  const committed = async () => {
    cached ??= await ctx.groups.listConsumerGroupOffsets(groupId);
    return cached;
  };
  let partitions: TopicPartitionRef[] = [];
  if (args.has("all-topics")) partitions = [...(await committed()).keys()].map(parseTpKey);
  else if (args.has("topic")) partitions = await parseTopicPartitions(ctx, args.values("topic"));
  const prepared = await prepareOffsetsToReset(ctx, groupId, partitions, plan, committed);
  if (prepared === undefined) throw new UsageError(RESET_SCENARIO_MISSING);
  if (args.has("execute") && prepared.size > 0) {
    const results = await ctx.groups.alterConsumerGroupOffsets(
      groupId,
      [...prepared].map(([k, offset]) => ({ ...parseTpKey(k), offset })),
    );
    const failed = results.find((r) => r.error);
    if (failed?.error) throw failed.error;
  }
  return prepared;
}

export const RESET_SCENARIO_MISSING =
  "Option '[reset-offsets]' requires one of the following scenarios: [[to-offset], [shift-by], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [from-file]]";

/** resetOffsets: the plan per group (empty for active groups, which are reported and left alone). */
export async function resetOffsets(ctx: GroupsContext, plan: ResetPlan | undefined): Promise<ResetPlan> {
  const { args } = ctx;
  const groupIds = args.has("all-groups") ? await listConsumerGroupIds(ctx) : args.values("group");
  const described = await ctx.groups.describeGroups(groupIds);
  const result: ResetPlan = new Map();
  for (const g of [...described].sort((a, b) => compareStrings(a.groupId, b.groupId))) {
    if (g.error && g.error.errorName !== "GROUP_ID_NOT_FOUND") throw g.error;
    if (g.error || g.state === "Empty" || g.state === "Dead") {
      result.set(g.groupId, await resetInactiveGroup(ctx, g.groupId, plan));
    } else {
      printError(
        ctx,
        `Assignments can only be reset if the group '${g.groupId}' is inactive, but the current state is ${g.state}.`,
      );
      result.set(g.groupId, new Map());
    }
  }
  return result;
}

function sortedEntries(offsets: ReadonlyMap<string, bigint>): Array<[TopicPartitionRef, bigint]> {
  const list = [...offsets].map(([k, v]) => ({ ...parseTpKey(k), v }));
  return sortPartitions(list).map((e) => [{ topic: e.topic, partition: e.partition }, e.v]);
}

/** GroupOffsetsResetter.printOffsetsToReset. */
export function printOffsetsToReset(plan: ResetPlan): void {
  let maxGroup = 15;
  let maxTopic = 15;
  for (const [g, m] of plan) {
    maxGroup = Math.max(maxGroup, g.length);
    for (const k of m.keys()) maxTopic = Math.max(maxTopic, parseTpKey(k).topic.length);
  }
  const widths = [maxGroup, maxTopic, 10, undefined];
  let text = plan.size > 0 ? `\n${row(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], widths)}` : "";
  for (const [g, m] of plan)
    for (const [tp, offset] of sortedEntries(m))
      text += `\n${row([g, tp.topic, String(tp.partition), String(offset)], widths)}`;
  out(`${text}\n`);
}

/** exportOffsetsToCsv: `topic,partition,offset` lines for one --group, else with the group first. */
export function exportOffsetsToCsv(plan: ResetPlan, singleGroup: boolean): string {
  let csv = "";
  for (const [g, m] of plan)
    for (const [tp, offset] of sortedEntries(m))
      csv += singleGroup
        ? `${tp.topic},${tp.partition},${offset}\n`
        : `${g},${tp.topic},${tp.partition},${offset}\n`;
  return csv;
}
