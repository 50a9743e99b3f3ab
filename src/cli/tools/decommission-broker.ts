// `tributary decommission-broker --broker-id N` (no Kafka tool does this in one step): moves every replica
// off broker N so it can be stopped without leaving anything under-replicated. It moves only what must
// move: each partition with a replica on N gets that replica replaced, in place, by a remaining live
// broker (decommission-planning.ts: rack-aware, spreading evenly); every other partition is left alone.
// It prints the current and the proposed assignment of those partitions (the first to roll back with
// reassign-partitions), starts the reassignments, and waits, printing progress, until no partition lists
// N among its replicas. It will not say "done" while N still holds the only in-sync copy of a partition:
// it names such partitions and keeps waiting (up to --timeout, then exit 1). --throttle B/s throttles the moves as `reassign-partitions
// --execute --throttle` does (same configs, same lines) and clears the throttles once they are complete.

import { PartitionAdmin } from "../../client/admin/partition-admin.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";
import { planBrokerRemoval } from "./decommission-planning.js";
import { formatAsReassignmentJson } from "./reassign-partitions-json.js";
import { clusterBrokers, currentAssignment, type TopicAssignments } from "./reassignment-planning.js";
import {
  clearAllThrottles,
  modifyReassignmentThrottle,
  parseThrottle,
  proposedMoveMap,
} from "./reassignment-throttles.js";

export const DECOMMISSION_BROKER_SPEC: ToolSpec = {
  name: "decommission-broker",
  description:
    "This tool moves every partition replica off a broker (each replaced in place by one of the other brokers, rack-aware and spreading evenly; partitions without a replica on it are left alone), waits until it holds none, and says when it can be stopped.",
  options: [
    bootstrapServerOption("REQUIRED: The server(s) to connect to.", "server to connect to"),
    commandConfigOption("Admin client property file"),
    {
      name: "broker-id",
      description: "REQUIRED: The id of the broker to empty.",
      arg: { type: "Integer", describedAs: "broker id" },
    },
    { name: "disable-rack-aware", description: "Disable rack aware replica assignment" },
    {
      name: "throttle",
      description:
        "The movement of partitions between brokers will be throttled to this value (bytes/sec), as reassign-partitions --execute --throttle sets it; the throttle is removed once every move is complete. The throttle rate should be at least 1 KB/s.",
      arg: { type: "Long", describedAs: "throttle" },
      defaultValue: "-1",
    },
    {
      name: "timeout",
      description: "The longest time in ms to wait for the moves to complete (default: no limit).",
      arg: { type: "Long", describedAs: "timeout ms" },
    },
  ],
};

export function runDecommissionBroker(argv: string[]): Promise<number> {
  return runTool(DECOMMISSION_BROKER_SPEC, argv, decommission);
}

function partitionsOn(assignment: TopicAssignments, brokerId: number): string[] {
  const out: string[] = [];
  for (const topic of [...assignment.keys()].sort())
    for (const [p, replicas] of [...assignment.get(topic)!].sort((a, b) => a[0] - b[0]))
      if (replicas.includes(brokerId)) out.push(`${topic}-${p}`);
  return out;
}

async function decommission(args: ParsedArgs): Promise<number> {
  checkRequired(args, "bootstrap-server", "broker-id");
  const brokerId = args.int("broker-id")!;
  if (brokerId < 0)
    throw new UsageError(`Invalid value ${brokerId} for --broker-id: expected a broker id >= 0`);
  const timeoutMs = args.has("timeout") ? Number(args.value("timeout")) : Number.POSITIVE_INFINITY;
  if (!(timeoutMs > 0))
    throw new UsageError(`Invalid value ${args.value("timeout")} for --timeout: expected a time in ms > 0`);
  const throttle = parseThrottle("throttle", args.value("throttle"));
  return withAdminClient(args, async (admin) => {
    const partitions = new PartitionAdmin(admin.cluster);
    const topics = (await admin.listTopics({ listInternal: true })).map((t) => t.name);
    const all = await currentAssignment(admin, topics);
    // topic → the partitions with a replica on the broker (their current replicas): all that moves.
    const onBroker: TopicAssignments = new Map();
    for (const [topic, parts] of all) {
      const on = new Map([...parts].filter(([, r]) => r.includes(brokerId)));
      if (on.size > 0) onBroker.set(topic, on);
    }
    if (onBroker.size === 0) {
      process.stdout.write(
        `Broker ${brokerId} holds no partition replicas: nothing to move. It can be stopped.\n`,
      );
      return 0;
    }
    const brokers = await clusterBrokers(admin);
    const remaining = brokers.map((b) => b.id).filter((id) => id !== brokerId);
    const proposed = planBrokerRemoval(all, brokers, brokerId, !args.has("disable-rack-aware"));
    if ((await partitions.listPartitionReassignments()).length > 0)
      throw new UsageError(
        "Cannot decommission while other partition reassignments are in progress (reassign-partitions --list shows them); wait for them or cancel them first.",
      );
    const moving = partitionsOn(onBroker, brokerId);
    process.stdout.write(
      `Decommissioning broker ${brokerId}: ${moving.length} partition${moving.length === 1 ? "" : "s"} of ${onBroker.size} topic${onBroker.size === 1 ? "" : "s"} have a replica on it; the other brokers are ${remaining.join(",")}.\n` +
        `Current partition replica assignment\n${formatAsReassignmentJson(onBroker)}\n\n` +
        `Proposed partition reassignment configuration\n${formatAsReassignmentJson(proposed)}\n`,
    );
    const changes = [...proposed].flatMap(([topic, parts]) =>
      [...parts]
        .filter(([p, r]) => onBroker.get(topic)?.get(p)?.join(",") !== r.join(","))
        .map(([partition, replicas]) => ({ topic, partition, replicas })),
    );
    const out = (line: string): void => void process.stdout.write(`${line}\n`);
    if (throttle >= 0n) {
      out(
        `Moves throttled: the throttle configs are removed when the moves complete (or, if this tool stops before, by reassign-partitions --verify).`,
      );
      await modifyReassignmentThrottle(admin, proposedMoveMap([], changes, onBroker), throttle, out);
    }
    const results = await partitions.alterPartitionReassignments(changes);
    const failed = results.filter((r) => r.error !== undefined);
    if (failed.length > 0)
      throw new UsageError(
        `Error reassigning partition(s): ${failed.map((f) => `${f.topic}-${f.partition}: ${f.error!.message}`).join("; ")}`,
      );
    process.stdout.write(
      `Successfully started ${changes.length} partition reassignment${changes.length === 1 ? "" : "s"}\n`,
    );
    const deadline = Date.now() + timeoutMs;
    let lastProgress = "";
    const warned = new Set<string>();
    for (;;) {
      const now = await currentAssignment(admin, [...onBroker.keys()]);
      const left = partitionsOn(now, brokerId);
      const progress = `Moved ${moving.length - left.length} of ${moving.length} partitions off broker ${brokerId}${left.length > 0 ? ` (still on it: ${left.join(",")})` : ""}`;
      if (progress !== lastProgress) process.stdout.write(`${progress}\n`);
      lastProgress = progress;
      // A partition whose only in-sync replica is on this broker cannot lose it yet.
      for (const d of await admin.describeTopics([...onBroker.keys()]))
        for (const p of d.partitions) {
          const k = `${d.name}-${p.partition}`;
          if (p.isr.length === 1 && p.isr[0] === brokerId && !warned.has(k)) {
            warned.add(k);
            process.stdout.write(
              `${k}: broker ${brokerId} holds the only in-sync replica; waiting for the new replicas to catch up\n`,
            );
          }
        }
      if (left.length === 0 && (await partitions.listPartitionReassignments()).length === 0) break;
      if (Date.now() >= deadline)
        throw new UsageError(
          `Timed out after ${timeoutMs} ms with ${left.length} partition${left.length === 1 ? "" : "s"} still on broker ${brokerId}: ${left.join(",")} (the reassignments go on; reassign-partitions --list shows them)`,
        );
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (throttle >= 0n) await clearAllThrottles(admin, changes, out);
    process.stdout.write(`Broker ${brokerId} holds no partition replicas now: it can be stopped.\n`);
    return 0;
  });
}
