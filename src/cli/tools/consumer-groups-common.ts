// What the parts of `tributary consumer-groups` share (Kafka's ConsumerGroupService helpers): the
// clients, printError (`\nError: …` on stdout, as Kafka prints it, marking the run as failed), Java's
// `%-Ns` padding, the consumer-group listing, and log end offsets / leaderless partitions of the
// partitions a group touches.

import type { AdminClient } from "../../client/admin/admin-client.js";
import type { TopicPartitionRef } from "../../client/admin/admin-types.js";
import { type GroupAdmin, tpKey } from "../../client/admin/group-admin.js";
import type { ParsedArgs } from "../args.js";

export const MISSING_COLUMN_VALUE = "-";

export interface GroupsContext {
  readonly args: ParsedArgs;
  readonly admin: AdminClient;
  readonly groups: GroupAdmin;
  /** Set by printError: the run ends with exit status 1. */
  failed: boolean;
}

export function out(text: string): void {
  process.stdout.write(text);
}

export function err(text: string): void {
  process.stderr.write(text);
}

/** ConsumerGroupCommand.printError: a blank line, then `Error: msg`, on stdout. */
export function printError(ctx: GroupsContext, msg: string): void {
  ctx.failed = true;
  out(`\nError: ${msg}\n`);
}

/** Java's `%-Ns`. */
export function pad(s: string, width: number): string {
  return s.padEnd(width);
}

/** Java's printf of a row: `%-w1s %-w2s … %s` (the last width undefined = no padding). */
export function row(values: readonly string[], widths: ReadonlyArray<number | undefined>): string {
  return values.map((v, i) => (widths[i] === undefined ? v : pad(v, widths[i]!))).join(" ");
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortPartitions<T extends TopicPartitionRef>(list: T[]): T[] {
  return list.sort((a, b) => compareStrings(a.topic, b.topic) || a.partition - b.partition);
}

/** listConsumerGroups: groups of protocol type "consumer" or "" (simple consumers), by id. */
export async function listConsumerGroupIds(ctx: GroupsContext): Promise<string[]> {
  const all = await ctx.groups.listGroups();
  return all.filter((g) => g.protocolType === "consumer" || g.protocolType === "").map((g) => g.groupId);
}

export type LogOffsetResult = { kind: "offset"; value: bigint } | { kind: "unknown" };

/** Log start ("earliest") or end ("latest") offsets; failures are "unknown". */
export async function getLogOffsets(
  ctx: GroupsContext,
  partitions: readonly TopicPartitionRef[],
  spec: "earliest" | "latest" | { timestamp: bigint },
): Promise<Map<string, LogOffsetResult>> {
  const outMap = new Map<string, LogOffsetResult>();
  if (partitions.length === 0) return outMap;
  const results = await ctx.admin.listOffsets(partitions.map((p) => ({ ...p, spec })));
  for (const r of results)
    outMap.set(
      tpKey(r.topic, r.partition),
      r.error ? { kind: "unknown" } : { kind: "offset", value: r.offset },
    );
  return outMap;
}

/** Partition keys of the given partitions whose topic exists but that have no leader. */
export async function leaderlessPartitions(
  ctx: GroupsContext,
  partitions: readonly TopicPartitionRef[],
): Promise<Set<string>> {
  const topics = [...new Set(partitions.map((p) => p.topic))];
  const outSet = new Set<string>();
  if (topics.length === 0) return outSet;
  const described = await ctx.admin.describeTopics(topics);
  const wanted = new Set(partitions.map((p) => tpKey(p.topic, p.partition)));
  for (const t of described) {
    if (t.error) continue;
    for (const p of t.partitions)
      if (p.leader < 0 && wanted.has(tpKey(t.name, p.partition))) outSet.add(tpKey(t.name, p.partition));
  }
  return outSet;
}
