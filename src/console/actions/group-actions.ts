// Consumer-group actions of the console: reset a group's offsets (the consumer-groups tool's scenarios:
// to-earliest, to-latest, to-current, to-offset, shift-by, to-datetime; for all the group's partitions
// or one topic's; new offsets clamped to each partition's log range) with a dry-run that only returns
// the plan, and deleting a group. As Kafka, offsets can only be reset while the group is inactive.

import type { AdminClient } from "../../client/admin/admin-client.js";
import { GroupAdmin, parseTpKey, tpKey } from "../../client/admin/group-admin.js";
import { HttpError } from "../http/router.js";
import { type Body, bool, int, str } from "./inputs.js";

const SCENARIOS = ["to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime"] as const;
type Scenario = (typeof SCENARIOS)[number];

export interface PlannedOffset {
  readonly topic: string;
  readonly partition: number;
  readonly currentOffset: number | null;
  readonly newOffset: number;
}

export async function resetOffsets(admin: AdminClient, groupId: string, b: Body) {
  const scenario = str(b, "scenario") as Scenario;
  if (!SCENARIOS.includes(scenario))
    throw new HttpError(400, `scenario: expected one of ${SCENARIOS.join(", ")}`);
  const topic = str(b, "topic", true);
  const dryRun = bool(b, "dryRun");
  const value =
    scenario === "to-offset" || scenario === "to-datetime"
      ? int(b, "value", 0, Number.MAX_SAFE_INTEGER)
      : scenario === "shift-by"
        ? int(b, "value", -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
        : 0;

  const groups = new GroupAdmin(admin.cluster);
  const [description] = await groups.describeGroups([groupId]);
  if (description.error) throw new HttpError(404, `group '${groupId}': ${description.error.message}`);
  const committed = await groups.listConsumerGroupOffsets(groupId);
  let refs = [...committed.keys()].map(parseTpKey);
  if (topic !== undefined) {
    const [t] = await admin.describeTopics([topic]);
    if (t.error) throw new HttpError(400, `topic '${topic}': ${t.error.message}`);
    refs = t.partitions.map((p) => ({ topic, partition: p.partition }));
  }
  if (refs.length === 0)
    throw new HttpError(400, `group '${groupId}' has no committed offsets; name a topic`);
  refs.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));

  const [earliest, latest, atTime] = await Promise.all([
    admin.listOffsets(refs.map((r) => ({ ...r, spec: "earliest" as const }))),
    admin.listOffsets(refs.map((r) => ({ ...r, spec: "latest" as const }))),
    scenario === "to-datetime"
      ? admin.listOffsets(refs.map((r) => ({ ...r, spec: { timestamp: value } })))
      : Promise.resolve(undefined),
  ]);
  const plan = refs.map((r, i): PlannedOffset => {
    const failed = earliest[i].error ?? latest[i].error ?? atTime?.[i].error;
    if (failed) throw new HttpError(502, `${r.topic}-${r.partition}: ${failed.message}`);
    const lo = Number(earliest[i].offset);
    const hi = Number(latest[i].offset);
    const cur = committed.get(tpKey(r.topic, r.partition));
    const current = cur === undefined ? null : Number(cur.offset);
    let target: number;
    if (scenario === "to-earliest") target = lo;
    else if (scenario === "to-latest") target = hi;
    else if (scenario === "to-current") target = current ?? hi;
    else if (scenario === "to-offset") target = value;
    else if (scenario === "shift-by") target = (current ?? lo) + value;
    else target = atTime && atTime[i].offset >= 0n ? Number(atTime[i].offset) : hi;
    return {
      topic: r.topic,
      partition: r.partition,
      currentOffset: current,
      newOffset: Math.min(hi, Math.max(lo, target)),
    };
  });
  if (dryRun) return { groupId, dryRun: true, plan };
  if (description.state !== "Empty" && description.state !== "Dead")
    throw new HttpError(
      409,
      `Assignments can only be reset if the group '${groupId}' is inactive, but the current state is ${description.state}.`,
    );
  const results = await groups.alterConsumerGroupOffsets(
    groupId,
    plan.map((p) => ({ topic: p.topic, partition: p.partition, offset: BigInt(p.newOffset) })),
  );
  const failed = results.find((r) => r.error);
  if (failed?.error) throw new HttpError(502, `${failed.topic}-${failed.partition}: ${failed.error.message}`);
  return { groupId, dryRun: false, plan };
}

export async function deleteGroup(admin: AdminClient, groupId: string) {
  const [r] = await new GroupAdmin(admin.cluster).deleteGroups([groupId]);
  if (r.error) throw new HttpError(/NON_EMPTY/.test(r.error.errorName) ? 409 : 502, r.error.message);
  return { deleted: groupId };
}
