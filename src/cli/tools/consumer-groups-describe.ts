// `consumer-groups --describe` (ConsumerGroupService.describeGroups): the --offsets table (the default:
// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID, LEADER-EPOCH with
// --verbose), the --members table (#PARTITIONS; epochs and assignments with --verbose) and the --state
// table (COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, #MEMBERS), with Kafka's column widths, "-" for
// missing values and the "has no active members" / "is rebalancing" (stderr) and "does not exist"
// (stdout `Error:`) notes.

import type { TopicPartitionRef } from "../../client/admin/admin-types.js";
import { type CommittedOffset, type GroupDescription, tpKey } from "../../client/admin/group-admin.js";
import { StdoutClosedError, stdoutClosed } from "../tool-output.js";
import {
  compareStrings,
  err,
  type GroupsContext,
  getLogOffsets,
  leaderlessPartitions,
  listConsumerGroupIds,
  MISSING_COLUMN_VALUE,
  out,
  printError,
  row,
  sortPartitions,
} from "./consumer-groups-common.js";

const REBALANCING = new Set(["PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"]);

interface PartitionAssignmentState {
  readonly group: string;
  readonly topic?: string;
  readonly partition?: number;
  readonly offset?: bigint;
  readonly lag?: bigint;
  readonly consumerId: string;
  readonly host: string;
  readonly clientId: string;
  readonly logEndOffset?: bigint;
  readonly leaderEpoch?: number;
}

/** Describes the groups, failing the command on a group-level error (as Kafka's future.get() does). */
async function describeAll(ctx: GroupsContext, groupIds: readonly string[]): Promise<GroupDescription[]> {
  const described = await ctx.groups.describeGroups(groupIds);
  for (const d of described) if (d.error) throw d.error;
  return [...described].sort((a, b) => compareStrings(a.groupId, b.groupId));
}

/** shouldPrintMemberState: prints the note for the group's state; true when its rows should be shown. */
function shouldPrintMemberState(
  ctx: GroupsContext,
  group: string,
  state: string,
  numRows: number | undefined,
): boolean {
  if (numRows === undefined) {
    printError(ctx, `The consumer group '${group}' does not exist.`);
    return false;
  }
  if (state === "Dead") printError(ctx, `Consumer group '${group}' does not exist.`);
  else if (state === "Empty") err(`\nConsumer group '${group}' has no active members.\n`);
  else if (REBALANCING.has(state)) err(`\nWarning: Consumer group '${group}' is rebalancing.\n`);
  else if (state !== "Stable")
    throw new Error(`Expected a valid consumer group state, but found '${state}'.`);
  return state !== "Dead" && numRows > 0;
}

async function describePartitions(
  ctx: GroupsContext,
  group: string,
  partitions: readonly TopicPartitionRef[],
  committed: ReadonlyMap<string, CommittedOffset>,
  consumerId: string,
  host: string,
  clientId: string,
): Promise<PartitionAssignmentState[]> {
  const noLeader = await leaderlessPartitions(ctx, partitions);
  const withLeader = partitions.filter((p) => !noLeader.has(tpKey(p.topic, p.partition)));
  const ends = await getLogOffsets(ctx, withLeader, "latest");
  const rows = partitions.map((p): PartitionAssignmentState => {
    const c = committed.get(tpKey(p.topic, p.partition));
    const end = ends.get(tpKey(p.topic, p.partition));
    const logEndOffset = end?.kind === "offset" ? end.value : undefined;
    const offset = c?.offset;
    const lag =
      offset !== undefined && offset !== -1n && logEndOffset !== undefined
        ? logEndOffset - offset
        : undefined;
    return {
      group,
      topic: p.topic,
      partition: p.partition,
      offset,
      lag,
      consumerId,
      host,
      clientId,
      logEndOffset,
      leaderEpoch: c && c.leaderEpoch >= 0 ? c.leaderEpoch : undefined,
    };
  });
  return rows.sort(
    (a, b) => compareStrings(a.topic ?? "", b.topic ?? "") || (a.partition ?? -1) - (b.partition ?? -1),
  );
}

async function collectOffsets(ctx: GroupsContext, g: GroupDescription): Promise<PartitionAssignmentState[]> {
  const committed = await ctx.groups.listConsumerGroupOffsets(g.groupId);
  const assigned = new Set<string>();
  const rows: PartitionAssignmentState[] = [];
  const members = g.members
    .filter((m) => m.assignment.length > 0)
    .sort((a, b) => b.assignment.length - a.assignment.length);
  for (const m of members) {
    for (const p of m.assignment) assigned.add(tpKey(p.topic, p.partition));
    rows.push(
      ...(await describePartitions(ctx, g.groupId, m.assignment, committed, m.memberId, m.host, m.clientId)),
    );
  }
  const unassigned: TopicPartitionRef[] = [];
  for (const key of committed.keys()) {
    if (assigned.has(key)) continue;
    const i = key.lastIndexOf("\u0000");
    unassigned.push({ topic: key.slice(0, i), partition: Number(key.slice(i + 1)) });
  }
  if (unassigned.length > 0)
    rows.push(
      ...(await describePartitions(
        ctx,
        g.groupId,
        sortPartitions(unassigned),
        committed,
        MISSING_COLUMN_VALUE,
        MISSING_COLUMN_VALUE,
        MISSING_COLUMN_VALUE,
      )),
    );
  return rows;
}

function str(v: bigint | number | undefined): string {
  return v === undefined ? MISSING_COLUMN_VALUE : String(v);
}

function printOffsets(
  ctx: GroupsContext,
  g: GroupDescription,
  rows: readonly PartitionAssignmentState[],
  verbose: boolean,
): void {
  if (!shouldPrintMemberState(ctx, g.groupId, g.state, rows.length)) return;
  let maxGroup = 15;
  let maxTopic = 15;
  let maxConsumer = 15;
  let maxHost = 15;
  for (const r of rows) {
    maxGroup = Math.max(maxGroup, r.group.length);
    maxTopic = Math.max(maxTopic, (r.topic ?? MISSING_COLUMN_VALUE).length);
    maxConsumer = Math.max(maxConsumer, r.consumerId.length);
    maxHost = Math.max(maxHost, r.host.length);
  }
  const widths = verbose
    ? [maxGroup, maxTopic, 10, 15, 15, 15, 15, maxConsumer, maxHost, undefined]
    : [maxGroup, maxTopic, 10, 15, 15, 15, maxConsumer, maxHost, undefined];
  const header = ["GROUP", "TOPIC", "PARTITION"];
  if (verbose) header.push("LEADER-EPOCH");
  header.push("CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
  let text = `\n${row(header, widths)}`;
  for (const r of rows) {
    const values = [r.group, r.topic ?? MISSING_COLUMN_VALUE, str(r.partition)];
    if (verbose) values.push(str(r.leaderEpoch));
    values.push(str(r.offset), str(r.logEndOffset), str(r.lag), r.consumerId, r.host, r.clientId);
    text += `\n${row(values, widths)}`;
  }
  out(`${text}\n`);
}

/** "t1:0,1;t2:3": partitions by topic, topics sorted. */
function assignmentString(assignment: readonly TopicPartitionRef[]): string {
  const byTopic = new Map<string, number[]>();
  for (const p of assignment) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
  return [...byTopic]
    .map(([topic, ps]) => `${topic}:${ps.sort((a, b) => a - b).join(",")}`)
    .sort(compareStrings)
    .join(";");
}

function printMembers(ctx: GroupsContext, g: GroupDescription, verbose: boolean): void {
  let maxGroup = 15;
  let maxConsumer = 15;
  let maxInstance = 17;
  let maxHost = 15;
  let maxClient = 15;
  let maxCurrent = 20;
  const maxTarget = 20;
  let includeInstance = false;
  if (shouldPrintMemberState(ctx, g.groupId, g.state, g.members.length)) {
    for (const m of g.members) {
      maxGroup = Math.max(maxGroup, g.groupId.length);
      maxConsumer = Math.max(maxConsumer, m.memberId.length);
      maxInstance = Math.max(maxInstance, (m.groupInstanceId ?? "").length);
      maxHost = Math.max(maxHost, m.host.length);
      maxClient = Math.max(maxClient, m.clientId.length);
      includeInstance ||= (m.groupInstanceId ?? "") !== "";
      const current = m.assignment.length === 0 ? MISSING_COLUMN_VALUE : assignmentString(m.assignment);
      maxCurrent = Math.max(maxCurrent, current.length);
    }
  }
  // Every column is followed by a space, #PARTITIONS included (Kafka's "%-15s " formats).
  const base = includeInstance
    ? [maxGroup, maxConsumer, maxInstance, maxHost, maxClient, 15]
    : [maxGroup, maxConsumer, maxHost, maxClient, 15];
  const line = (values: readonly string[]) => `${row(values, base)} `;
  const extraWidths = [15, maxCurrent, 15, maxTarget];
  let text = `\n${line(
    includeInstance
      ? ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
      : ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"],
  )}`;
  if (verbose)
    text += row(["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"], extraWidths);
  text += "\n";
  if (g.state !== "Dead") {
    for (const m of g.members) {
      const n = String(m.assignment.length);
      text += line(
        includeInstance
          ? [g.groupId, m.memberId, m.groupInstanceId ?? "", m.host, m.clientId, n]
          : [g.groupId, m.memberId, m.host, m.clientId, n],
      );
      if (verbose) {
        const current = m.assignment.length === 0 ? MISSING_COLUMN_VALUE : assignmentString(m.assignment);
        // Classic-protocol members have no epochs and no target assignment.
        text += row([MISSING_COLUMN_VALUE, current, MISSING_COLUMN_VALUE, MISSING_COLUMN_VALUE], extraWidths);
      }
      text += "\n";
    }
  }
  out(text);
}

function printState(ctx: GroupsContext, g: GroupDescription, verbose: boolean): void {
  if (!shouldPrintMemberState(ctx, g.groupId, g.state, 1)) return;
  const c = g.coordinator;
  const coordinator = `${c.host}:${c.port}  (${c.nodeId})`;
  const coordinatorLen = Math.max(25, coordinator.length);
  const groupLen = Math.max(15, g.groupId.length);
  const strategy = g.partitionAssignor === "" ? MISSING_COLUMN_VALUE : g.partitionAssignor;
  const members = String(g.members.length);
  if (verbose) {
    const widths = [groupLen, coordinatorLen, 20, 20, 15, 25, undefined];
    out(
      `\n${row(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"], widths)}` +
        `\n${row([g.groupId, coordinator, strategy, g.state, MISSING_COLUMN_VALUE, MISSING_COLUMN_VALUE, members], widths)}\n`,
    );
  } else {
    const widths = [groupLen, coordinatorLen, 20, 20, undefined];
    out(
      `\n${row(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"], widths)}` +
        `\n${row([g.groupId, coordinator, strategy, g.state, members], widths)}\n`,
    );
  }
}

export async function describeGroups(ctx: GroupsContext): Promise<void> {
  const { args } = ctx;
  const groupIds = args.has("all-groups") ? await listConsumerGroupIds(ctx) : args.values("group");
  const verbose = args.has("verbose");
  const described = await describeAll(ctx, groupIds);
  if (args.has("members") && !args.has("offsets")) {
    for (const g of described) printMembers(ctx, g, verbose);
  } else if (args.has("state") && !args.has("offsets")) {
    for (const g of described) printState(ctx, g, verbose);
  } else {
    // One group's offsets at a time, each asking the brokers: stopped when the reader has gone (`| head`).
    for (const g of described) {
      if (stdoutClosed()) throw new StdoutClosedError();
      printOffsets(ctx, g, await collectOffsets(ctx, g), verbose);
    }
  }
}
