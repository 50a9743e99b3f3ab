// `tributary reassign-partitions` (kafka-reassign-partitions.sh, Kafka's ReassignPartitionsCommand), one
// action a run:
//   --generate   --topics-to-move-json-file F --broker-list "0,1,2" [--disable-rack-aware]: prints
//                "Current partition replica assignment" and "Proposed partition reassignment configuration",
//                each as Kafka's compact JSON (placement by Kafka's AdminUtils.assignReplicasToBrokers).
//   --execute    --reassignment-json-file F [--additional] [--throttle B/s] [--replica-alter-log-dirs-throttle
//                B/s] [--timeout MS]: prints the current assignment to save for a rollback, sets the
//                replication throttles (reassignment-throttles.ts; with --additional the rate of one in progress
//                can be changed), starts the reassignments (AlterPartitionReassignments) and says so; then each
//                replica given a log dir (not "any") is sent AlterReplicaLogDirs on its broker, retried every
//                100 ms while the broker does not have the replica yet (REPLICA_NOT_AVAILABLE: a replica being
//                added), until --timeout (10000 ms): "Successfully started moving log directory to …".
//   --verify     --reassignment-json-file F: "Reassignment of partition t-0 is completed." / "… is still in
//                progress." per partition; then per replica given a log dir, Kafka's move states
//                ("Reassignment of replica t-0-1 completed successfully." / "… is still in progress.", …);
//                once nothing is in progress, clears the throttles (unless --preserve-throttles).
//   --cancel     --reassignment-json-file F: cancels the reassignments of those partitions in progress, then
//                clears the throttles (unless --preserve-throttles).
//   --list       the reassignments in progress ("t-0: replicas: 3,0,1. adding: 3. removing: 1.").
// Everything a file names is checked against the cluster before anything changes: an unknown broker or a
// partition that does not exist is one line naming the file and the JSON path.

import type { AdminClient } from "../../client/admin/admin-client.js";
import { PartitionAdmin } from "../../client/admin/partition-admin.js";
import {
  ReplicaLogDirAdmin,
  replicaName,
  type TopicPartitionReplica,
} from "../../client/admin/replica-log-dir-admin.js";
import { checkRequired, type ParsedArgs, runTool, type ToolSpec, UsageError } from "../args.js";
import { bootstrapServerOption, commandConfigOption, withAdminClient } from "../tool-options.js";
import {
  ANY_LOG_DIR,
  formatAsReassignmentJson,
  type ReassignmentPlan,
  readReassignmentJson,
  readTopicsToMoveJson,
} from "./reassign-partitions-json.js";
import { clusterBrokers, currentAssignment, proposeAssignment } from "./reassignment-planning.js";
import {
  clearAllThrottles,
  modifyLogDirThrottle,
  modifyReassignmentThrottle,
  parseThrottle,
  proposedMoveMap,
  YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE,
} from "./reassignment-throttles.js";

export const REASSIGN_PARTITIONS_SPEC: ToolSpec = {
  name: "reassign-partitions",
  description: "This tool helps to move topic partitions between replicas.",
  options: [
    {
      name: "verify",
      description:
        "Verify if the reassignment completed as specified by the --reassignment-json-file option. If there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will be removed",
    },
    {
      name: "generate",
      description:
        "Generate a candidate partition reassignment configuration. Note that this only generates a candidate assignment, it does not execute it.",
    },
    {
      name: "execute",
      description: "Kick off the reassignment as specified by the --reassignment-json-file option.",
    },
    { name: "cancel", description: "Cancel an active reassignment." },
    { name: "list", description: "List all active partition reassignments." },
    bootstrapServerOption("the server(s) to use for bootstrapping.", "Server(s) to use for bootstrapping"),
    commandConfigOption("Admin client property file"),
    {
      name: "reassignment-json-file",
      description:
        'The JSON file with the partition reassignment configurationThe format to use is - \n{"partitions":\n\t[{"topic": "foo",\n\t  "partition": 1,\n\t  "replicas": [1,2,3],\n\t  "log_dirs": ["dir1","dir2","dir3"] }],\n"version":1\n}\nNote that "log_dirs" is optional. When it is specified, its length must equal the length of the replicas list. The value in this list can be either "any" or the absolution path of the log directory on the broker. If absolute log directory path is specified, the replica will be moved to the specified log directory on the broker.',
      arg: { type: "String", describedAs: "manual assignment json file path" },
    },
    {
      name: "topics-to-move-json-file",
      description:
        'Generate a reassignment configuration to move the partitions of the specified topics to the list of brokers specified by the --broker-list option. The format to use is - \n{"topics":\n\t[{"topic": "foo"},{"topic": "foo1"}],\n"version":1\n}',
      arg: { type: "String", describedAs: "topics to reassign json file path" },
    },
    {
      name: "broker-list",
      description:
        'The list of brokers to which the partitions need to be reassigned in the form "0,1,2". This is required if --topics-to-move-json-file is used to generate reassignment configuration',
      arg: { type: "String", describedAs: "brokerlist" },
    },
    { name: "disable-rack-aware", description: "Disable rack aware replica assignment" },
    {
      name: "additional",
      description:
        "Execute this reassignment in addition to any other ongoing ones. This option can also be used to change the throttle of an ongoing reassignment.",
    },
    { name: "preserve-throttles", description: "Do not modify broker or topic throttles." },
    {
      name: "throttle",
      description:
        "The movement of partitions between brokers will be throttled to this value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s.",
      arg: { type: "Long", describedAs: "throttle" },
      defaultValue: "-1",
    },
    {
      name: "replica-alter-log-dirs-throttle",
      description:
        "The movement of replicas between log directories on the same broker will be throttled to this value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s.",
      arg: { type: "Long", describedAs: "replicaAlterLogDirsThrottle" },
      defaultValue: "-1",
    },
    {
      name: "timeout",
      description: "The maximum time in ms to wait for log directory replica assignment to begin.",
      arg: { type: "Long", describedAs: "timeout" },
      defaultValue: "10000",
    },
  ],
};

const ACTIONS = ["generate", "execute", "verify", "cancel", "list"] as const;
type Action = (typeof ACTIONS)[number];

/** Kafka's requiredArgs and permittedArgs of each action. */
const REQUIRED: Record<Action, string[]> = {
  verify: ["reassignment-json-file"],
  generate: ["topics-to-move-json-file", "broker-list"],
  execute: ["reassignment-json-file"],
  cancel: ["reassignment-json-file"],
  list: [],
};
const PERMITTED: Record<Action, string[]> = {
  verify: ["bootstrap-server", "command-config", "preserve-throttles"],
  generate: ["bootstrap-server", "command-config", "disable-rack-aware"],
  execute: [
    "additional",
    "bootstrap-server",
    "command-config",
    "throttle",
    "replica-alter-log-dirs-throttle",
    "timeout",
  ],
  cancel: ["bootstrap-server", "command-config", "preserve-throttles"],
  list: ["bootstrap-server", "command-config"],
};

const CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE =
  "Cannot execute because there is an existing partition assignment.  Use --additional to override this and create a new partition assignment in addition to the existing one. The --additional flag can also be used to change the throttle by resubmitting the current reassignment.";

export function runReassignPartitions(argv: string[]): Promise<number> {
  return runTool(REASSIGN_PARTITIONS_SPEC, argv, reassignPartitions);
}

function chooseAction(args: ParsedArgs): Action {
  const given = ACTIONS.filter((a) => args.has(a));
  if (given.length !== 1)
    throw new UsageError(
      `Command must include exactly one action: ${ACTIONS.map((a) => `--${a}`).join(", ")}`,
    );
  const action = given[0];
  if (!args.has("bootstrap-server"))
    throw new UsageError("Please specify either --bootstrap-server or --bootstrap-controller");
  checkRequired(args, ...REQUIRED[action]);
  for (const name of args.givenNames())
    if (name !== action && !REQUIRED[action].includes(name) && !PERMITTED[action].includes(name))
      throw new UsageError(`Option "[${name}]" can't be used with action "[${action}]"`);
  return action;
}

async function reassignPartitions(args: ParsedArgs): Promise<number> {
  const action = chooseAction(args);
  // Files are read and checked before any connection: a bad file changes nothing.
  const plan =
    action === "execute" || action === "verify" || action === "cancel"
      ? readReassignmentJson(args.value("reassignment-json-file")!, action === "execute")
      : undefined;
  const topicsToMove =
    action === "generate" ? readTopicsToMoveJson(args.value("topics-to-move-json-file")!) : [];
  const brokerList = action === "generate" ? parseBrokerList(args.value("broker-list")!) : [];
  const throttles = {
    interBroker: parseThrottle("throttle", args.value("throttle")),
    logDir: parseThrottle("replica-alter-log-dirs-throttle", args.value("replica-alter-log-dirs-throttle")),
  };
  const timeoutMs = action === "execute" ? parseTimeout(args.value("timeout") ?? "10000") : 0;
  return withAdminClient(
    args,
    async (admin) => {
      const partitions = new PartitionAdmin(admin.cluster);
      switch (action) {
        case "generate":
          await generate(
            admin,
            args.value("topics-to-move-json-file")!,
            topicsToMove,
            brokerList,
            !args.has("disable-rack-aware"),
          );
          return 0;
        case "execute":
          return execute(admin, partitions, plan!, args.has("additional"), throttles, timeoutMs);
        case "verify":
          return verify(admin, partitions, plan!, args.has("preserve-throttles"));
        case "cancel":
          return cancel(admin, partitions, plan!, args.has("preserve-throttles"));
        case "list":
          return list(partitions);
      }
    },
    (o) => ({ ...o, clientId: o.clientId ?? "reassign-partitions-tool" }),
  );
}

function parseTimeout(s: string): number {
  if (!/^\d+$/.test(s.trim()) || !Number.isSafeInteger(Number(s.trim())))
    throw new UsageError(`Invalid value '${s}' for --timeout: expected a number of milliseconds`);
  return Number(s.trim());
}

/** The replicas the plan gives a log dir (Kafka's replicaAssignment of parseExecuteAssignmentArgs). */
function logDirMoves(plan: ReassignmentPlan): Array<TopicPartitionReplica & { dir: string }> {
  return plan.partitions.flatMap((p) =>
    p.replicas
      .map((brokerId, i) => ({ topic: p.topic, partition: p.partition, brokerId, dir: p.logDirs[i] }))
      .filter((m) => m.dir !== ANY_LOG_DIR),
  );
}

/** Kafka's compareTopicPartitionReplicas: broker, then topic, then partition. */
function byReplica(a: TopicPartitionReplica, b: TopicPartitionReplica): number {
  if (a.brokerId !== b.brokerId) return a.brokerId - b.brokerId;
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  return a.partition - b.partition;
}

/**
 * Kafka's executeMoves: AlterReplicaLogDirs for every replica given a log dir, again every 100 ms for those
 * whose broker does not have them yet (REPLICA_NOT_AVAILABLE), until timeoutMs.
 */
async function executeMoves(
  dirs: ReplicaLogDirAdmin,
  moves: ReadonlyArray<TopicPartitionReplica & { dir: string }>,
  timeoutMs: number,
): Promise<void> {
  const start = Date.now();
  let pending = [...moves];
  for (;;) {
    const results = await dirs.alterReplicaLogDirs(pending);
    const failed = results.find(
      (r) => r.error !== undefined && r.error.errorName !== "REPLICA_NOT_AVAILABLE",
    );
    if (failed !== undefined)
      throw new UsageError(`Failed to alter dir for ${replicaName(failed)}: ${failed.error!.message}`);
    const started = new Set(results.filter((r) => r.error === undefined).map(replicaName));
    for (const m of pending.filter((x) => started.has(replicaName(x))).sort(byReplica))
      process.stdout.write(
        `Successfully started moving log directory to ${m.dir} for replica ${m.topic}-${m.partition} with broker ${m.brokerId} \n`,
      );
    pending = pending.filter((x) => !started.has(replicaName(x)));
    if (pending.length === 0) return;
    if (Date.now() >= start + timeoutMs)
      throw new UsageError(
        `Timed out before log directory move${pending.length === 1 ? "" : "s"} could be started for: ${[
          ...pending,
        ]
          .sort(byReplica)
          .map(replicaName)
          .join(",")}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Kafka's findLogDirMoveStates + replicaMoveStatesToString: one line per replica given a log dir, and
 * whether every move is done (completed, or cancelled: the replica is in another dir and none is moving).
 */
async function verifyReplicaMoves(
  dirs: ReplicaLogDirAdmin,
  moves: ReadonlyArray<TopicPartitionReplica & { dir: string }>,
): Promise<{ lines: string[]; done: boolean }> {
  const infos = await dirs.describeReplicaLogDirs(moves);
  const failed = infos.find((i) => i.error !== undefined);
  if (failed !== undefined) throw failed.error!;
  const out: string[] = [];
  let done = true;
  const sorted = moves.map((m, i) => ({ m, info: infos[i] })).sort((a, b) => byReplica(a.m, b.m));
  for (const { m, info } of sorted) {
    const tp = `${m.topic}-${m.partition}`;
    if (info.currentReplicaLogDir === null || info.futureReplicaLogDir !== null) done = false;
    if (info.currentReplicaLogDir === null)
      out.push(
        `Partition ${tp} is not found in any live log dir on broker ${m.brokerId}. There is likely an offline log directory on the broker.`,
      );
    else if (info.futureReplicaLogDir !== null) {
      if (info.futureReplicaLogDir === m.dir)
        out.push(`Reassignment of replica ${replicaName(m)} is still in progress.`);
      else
        out.push(
          `Partition ${tp} on broker ${m.brokerId} is being moved to log dir ${info.futureReplicaLogDir} instead of ${m.dir}.`,
        );
    } else if (info.currentReplicaLogDir === m.dir)
      out.push(`Reassignment of replica ${replicaName(m)} completed successfully.`);
    else
      out.push(
        `Partition ${tp} on broker ${m.brokerId} is not being moved from log dir ${info.currentReplicaLogDir} to ${m.dir}.`,
      );
  }
  return { lines: out, done };
}

function parseBrokerList(s: string): number[] {
  const ids = s.split(",").map((x) => {
    const t = x.trim();
    if (!/^\d+$/.test(t) || Number(t) > 2 ** 31 - 1)
      throw new UsageError(
        `Invalid value '${s}' for --broker-list: expected broker ids separated by commas, e.g. "0,1,2" ('${t}' is not a broker id)`,
      );
    return Number(t);
  });
  const dups = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
  if (dups.length > 0) throw new UsageError(`Broker list contains duplicate entries: ${dups.join(",")}`);
  return ids;
}

async function generate(
  admin: AdminClient,
  file: string,
  topics: readonly string[],
  brokerIds: readonly number[],
  rackAware: boolean,
): Promise<void> {
  const brokers = await clusterBrokers(admin);
  const known = new Set(brokers.map((b) => b.id));
  const unknown = brokerIds.filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new UsageError(
      `--broker-list: broker ${unknown.join(",")} is not in the cluster (its brokers: ${[...known].sort((x, y) => x - y).join(",")})`,
    );
  const current = await currentAssignment(admin, topics);
  const missing = topics.findIndex((t) => !current.has(t));
  if (missing >= 0)
    throw new UsageError(`${file}: topics[${missing}].topic: topic ${topics[missing]} does not exist`);
  const proposed = proposeAssignment(current, brokers, brokerIds, rackAware, "--broker-list");
  process.stdout.write(
    `Current partition replica assignment\n${formatAsReassignmentJson(current)}\n\nProposed partition reassignment configuration\n${formatAsReassignmentJson(proposed)}\n`,
  );
}

/** Checks every broker and partition of the plan against the cluster; returns the current replicas. */
async function checkAgainstCluster(
  admin: AdminClient,
  plan: ReassignmentPlan,
): Promise<Map<string, Map<number, number[]>>> {
  const known = new Set((await clusterBrokers(admin)).map((b) => b.id));
  for (const p of plan.partitions)
    p.replicas.forEach((r, i) => {
      if (!known.has(r))
        throw new UsageError(
          `${plan.file}: ${p.replicaPaths[i]}: Unknown broker id ${r} (the cluster's brokers: ${[...known].sort((a, b) => a - b).join(",")})`,
        );
    });
  const current = await currentAssignment(
    admin,
    plan.partitions.map((p) => p.topic),
  );
  for (const p of plan.partitions) {
    const parts = current.get(p.topic);
    if (parts === undefined)
      throw new UsageError(`${plan.file}: ${p.path}.topic: topic ${p.topic} does not exist`);
    if (!parts.has(p.partition))
      throw new UsageError(
        `${plan.file}: ${p.path}.partition: partition ${p.topic}-${p.partition} does not exist (${p.topic} has ${parts.size} partition${parts.size === 1 ? "" : "s"})`,
      );
  }
  return current;
}

function names(parts: ReadonlyArray<{ topic: string; partition: number }>): string[] {
  return [...parts]
    .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
    .map((p) => `${p.topic}-${p.partition}`);
}

async function execute(
  admin: AdminClient,
  partitions: PartitionAdmin,
  plan: ReassignmentPlan,
  additional: boolean,
  throttles: { interBroker: bigint; logDir: bigint },
  timeoutMs: number,
): Promise<number> {
  const ongoing = await partitions.listPartitionReassignments();
  if (!additional && ongoing.length > 0) throw new UsageError(CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE);
  const current = await checkAgainstCluster(admin, plan);
  const rollback = new Map<string, Map<number, number[]>>();
  for (const p of plan.partitions) {
    const m = rollback.get(p.topic) ?? new Map<number, number[]>();
    m.set(p.partition, current.get(p.topic)!.get(p.partition)!);
    rollback.set(p.topic, m);
  }
  process.stdout.write(
    `Current partition replica assignment\n\n${formatAsReassignmentJson(rollback)}\n\nSave this to use as the --reassignment-json-file option during rollback\n`,
  );
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  if (throttles.interBroker >= 0n || throttles.logDir >= 0n) {
    out(YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE);
    if (throttles.interBroker >= 0n)
      await modifyReassignmentThrottle(
        admin,
        proposedMoveMap(ongoing, plan.partitions, current),
        throttles.interBroker,
        out,
      );
    // The brokers whose replicas move between log dirs (Kafka's calculateMovingBrokers).
    if (throttles.logDir >= 0n) {
      const moving = plan.partitions.flatMap((p) =>
        p.replicas.filter((_, i) => p.logDirs[i] !== ANY_LOG_DIR),
      );
      await modifyLogDirThrottle(
        admin,
        [...new Set(moving)].sort((a, b) => a - b),
        throttles.logDir,
        out,
      );
    }
  }
  const results = await partitions.alterPartitionReassignments(
    plan.partitions.map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas })),
  );
  const failed = results.filter((r) => r.error !== undefined);
  if (failed.length > 0)
    throw new UsageError(
      `Error reassigning partition(s): ${failed.map((f) => `${f.topic}-${f.partition}: ${f.error!.message}`).join("; ")}`,
    );
  process.stdout.write(
    `Successfully started partition reassignment${plan.partitions.length === 1 ? "" : "s"} for ${names(plan.partitions).join(",")}\n`,
  );
  const moves = logDirMoves(plan);
  if (moves.length > 0) await executeMoves(new ReplicaLogDirAdmin(admin.cluster), moves, timeoutMs);
  return 0;
}

async function verify(
  admin: AdminClient,
  partitions: PartitionAdmin,
  plan: ReassignmentPlan,
  preserveThrottles: boolean,
): Promise<number> {
  const ongoing = new Map(
    (await partitions.listPartitionReassignments()).map((r) => [`${r.topic}-${r.partition}`, r]),
  );
  const current = await currentAssignment(
    admin,
    plan.partitions.map((p) => p.topic),
  );
  const out = ["Status of partition reassignment:"];
  const sorted = [...plan.partitions].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
  let inProgress = false;
  for (const p of sorted) {
    const k = `${p.topic}-${p.partition}`;
    if (ongoing.has(k)) {
      out.push(`Reassignment of partition ${k} is still in progress.`);
      inProgress = true;
      continue;
    }
    const replicas = current.get(p.topic)?.get(p.partition) ?? [];
    if (replicas.join(",") === p.replicas.join(",")) out.push(`Reassignment of partition ${k} is completed.`);
    else
      out.push(
        `There is no active reassignment of partition ${k}, but replica set is ${replicas.join(",")} rather than ${p.replicas.join(",")}.`,
      );
  }
  process.stdout.write(`${out.join("\n")}\n`);
  // Then the states of the replicas' log dir moves (an empty line when the plan has none, as Kafka).
  const moves = logDirMoves(plan);
  const moveStates =
    moves.length > 0
      ? await verifyReplicaMoves(new ReplicaLogDirAdmin(admin.cluster), moves)
      : { lines: [], done: true };
  process.stdout.write(`${moveStates.lines.join("\n")}\n`);
  // Every reassignment and move done: the throttles any of them set are cleared (all of them: which
  // brokers an earlier reassignment throttled is not known any more).
  if (!inProgress && moveStates.done && !preserveThrottles)
    await clearAllThrottles(admin, plan.partitions, (line) => void process.stdout.write(`${line}\n`));
  return 0;
}

async function cancel(
  admin: AdminClient,
  partitions: PartitionAdmin,
  plan: ReassignmentPlan,
  preserveThrottles: boolean,
): Promise<number> {
  const active = await partitions.listPartitionReassignments(
    plan.partitions.map((p) => ({ topic: p.topic, partition: p.partition })),
  );
  if (active.length === 0) {
    process.stdout.write("None of the specified partition reassignments are active.\n");
    return 0;
  }
  const results = await partitions.alterPartitionReassignments(
    active.map((a) => ({ topic: a.topic, partition: a.partition, replicas: null })),
  );
  const failed = results.filter((r) => r.error !== undefined);
  if (failed.length > 0)
    throw new UsageError(
      `Error cancelling partition reassignment${failed.length === 1 ? "" : "s"} for: ${failed.map((f) => `${f.topic}-${f.partition}: ${f.error!.message}`).join("; ")}`,
    );
  process.stdout.write(
    `Successfully cancelled partition reassignment${active.length === 1 ? "" : "s"} for: ${names(active).join(",")}\n`,
  );
  if (!preserveThrottles)
    await clearAllThrottles(admin, plan.partitions, (line) => void process.stdout.write(`${line}\n`));
  return 0;
}

async function list(partitions: PartitionAdmin): Promise<number> {
  const ongoing = await partitions.listPartitionReassignments();
  if (ongoing.length === 0) {
    process.stdout.write("No partition reassignments found.\n");
    return 0;
  }
  const lines = ongoing.map(
    (r) =>
      `${r.topic}-${r.partition}: replicas: ${r.replicas.join(",")}.${r.addingReplicas.length > 0 ? ` adding: ${r.addingReplicas.join(",")}.` : ""}${r.removingReplicas.length > 0 ? ` removing: ${r.removingReplicas.join(",")}.` : ""}`,
  );
  process.stdout.write(`Current partition reassignments:\n${lines.join("\n")}\n`);
  return 0;
}
