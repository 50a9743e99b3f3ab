// Test-only: the steps the leader-epoch and exactly-once failover tests stage on a ClusterHarness, each read
// from what a broker leaves on disk or says over ZooKeeper (no broker internals).
//
// `produceOne` writes one record with kcat and the given acks; `epochCheckpoint` and `hwCheckpoint` read a
// replica's `leader-epoch-checkpoint` and its log dir's `replication-offset-checkpoint` (Kafka's text
// formats: version, count, entry lines); `killUntilExpired` SIGKILLs a broker and waits until ZooKeeper has
// expired its session (its /brokers/ids znode gone), so it can be started again (a broker restarted inside its
// old session cannot register: NodeExists) and so the controller has acted on its death;
// `waitForPartition` waits for a leader and ISR on the partition's state znode.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { describeResult, runCommand } from "./broker-harness.js";
import { type ClusterHarness, type PartitionState, withLogTails } from "./cluster-harness.js";

export const KCAT = "/usr/bin/kcat";
export const PYTHON = "/usr/bin/python3";

/** Writes one record to `topic`/`partition` with kcat (`acks` as given); throws unless it is acknowledged. */
export async function produceOne(
  bootstrap: string,
  topic: string,
  partition: number,
  value: string,
  acks: "all" | "1",
): Promise<void> {
  const r = await runCommand(
    KCAT,
    [
      "-b",
      bootstrap,
      "-P",
      "-t",
      topic,
      "-p",
      String(partition),
      "-X",
      `acks=${acks}`,
      "-X",
      "message.timeout.ms=20000",
    ],
    { input: `${value}\n`, timeoutMs: 30_000 },
  );
  if (r.code !== 0 || /error|fail/i.test(r.stderr)) throw new Error(describeResult(`kcat -P ${value}`, r));
}

/**
 * A replica's leader-epoch-checkpoint as `"<epoch> <startOffset>"` lines (none when the file is absent, or
 * empty as a new log's is until its first epoch is written: Kafka reads an empty checkpoint as no entries).
 */
export function epochCheckpoint(
  c: ClusterHarness,
  broker: number,
  topic: string,
  partition: number,
): string[] {
  const file = join(c.broker(broker).logDir, `${topic}-${partition}`, "leader-epoch-checkpoint");
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  if (lines.length === 0) return [];
  const [version, count, ...entries] = lines;
  if (version !== "0" || Number(count) !== entries.length)
    throw new Error(`${file} is not a version-0 checkpoint of ${count} entries:\n${lines.join("\n")}`);
  return entries;
}

/** The high watermark a broker's replication-offset-checkpoint holds for a partition, or undefined. */
export function hwCheckpoint(
  c: ClusterHarness,
  broker: number,
  topic: string,
  partition: number,
): number | undefined {
  const file = join(c.broker(broker).logDir, "replication-offset-checkpoint");
  if (!existsSync(file)) return undefined;
  for (const line of readFileSync(file, "utf8").split("\n").slice(2)) {
    const [t, p, o] = line.trim().split(/\s+/);
    if (t === topic && Number(p) === partition) return Number(o);
  }
  return undefined;
}

/** SIGKILLs broker i and waits until its ZooKeeper session expired (it left /brokers/ids). */
export async function killUntilExpired(c: ClusterHarness, i: number, ms = 20_000): Promise<void> {
  await c.stopBroker(i, "SIGKILL");
  await waitUnregistered(c, i, ms);
}

/** Waits until broker i is no longer registered under /brokers/ids. */
export function waitUnregistered(c: ClusterHarness, i: number, ms = 20_000): Promise<true> {
  return c.waitFor(`broker ${i} gone from /brokers/ids`, ms, async () =>
    (await c.registeredIds()).includes(i) ? undefined : true,
  );
}

/**
 * Waits until the partition's state znode names `leader` (-1: none) and, when given, exactly the ISR `isr`
 * (any order); returns the state.
 */
export function waitForPartition(
  c: ClusterHarness,
  topic: string,
  partition: number,
  leader: number,
  isr?: readonly number[],
  ms = 30_000,
): Promise<PartitionState> {
  const want = isr ? [...isr].sort().join(",") : undefined;
  let last: PartitionState | undefined;
  return c
    .waitFor(`${topic}-${partition} led by ${leader}${want ? ` with ISR [${want}]` : ""}`, ms, async () => {
      last = await c.partitionState(topic, partition);
      if (last === undefined || last.leader !== leader) return undefined;
      if (want !== undefined && [...last.isr].sort().join(",") !== want) return undefined;
      return last;
    })
    .catch((e) => {
      throw new Error(`${(e as Error).message}; last state: ${JSON.stringify(last)}`);
    });
}

/**
 * A one-partition topic on exactly `replicas` (the first the preferred leader) with topic `configs`, once
 * its state znode shows that leader and every replica in the ISR.
 */
export async function createAssignedTopic(
  c: ClusterHarness,
  topic: string,
  replicas: readonly number[],
  configs: Readonly<Record<string, string>> = {},
): Promise<void> {
  const args = ["--create", "--topic", topic, "--replica-assignment", replicas.join(":")];
  for (const [k, v] of Object.entries(configs)) args.push("--config", `${k}=${v}`);
  await c.topics(args);
  await waitForPartition(c, topic, 0, replicas[0], replicas);
}

/** Two brokers of the cluster other than the controller: [first, second]. */
export async function twoNonControllers(c: ClusterHarness): Promise<[number, number]> {
  const controller = await c.waitForController();
  const others = c.brokers.map((_, i) => i).filter((i) => i !== controller);
  if (others.length < 2) throw new Error(`need 2 brokers besides controller ${controller}`);
  return [others[0], others[1]];
}

/**
 * Runs `body` with `withLogTails`; when it throws, also writes every broker's whole output to
 * `<tmpdir>/<name>-b<i>.log` (the tails rarely reach back to the cause) and names the files; with
 * CLUSTER_FULL_LOGS=1 in the environment, after a passing body too.
 */
export async function withFullLogsOnFailure<T>(
  name: string,
  cluster: () => ClusterHarness | undefined,
  body: () => Promise<T>,
): Promise<T> {
  const dump = (): void => {
    const c = cluster();
    if (c) {
      const files = c.brokers.map((b, i) => {
        const file = join(tmpdir(), `${name}-b${i}.log`);
        writeFileSync(file, `${b.stdout}\n--- stderr ---\n${b.stderr}`);
        return file;
      });
      process.stderr.write(`\nfull broker logs: ${files.join(" ")}\n`);
    }
  };
  try {
    const result = await withLogTails(cluster, body);
    if (process.env.CLUSTER_FULL_LOGS) dump();
    return result;
  } catch (e) {
    dump();
    throw e;
  }
}
