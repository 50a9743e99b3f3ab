// Benchmark (not part of `npm test`): what one collector sampling round costs the broker, in CPU time —
// to choose console.sample.interval.ms. A real broker with SAMPLE_GROUPS consumer groups (default 20; not GROUPS, which bash keeps for itself) × 10
// partitions, every partition lagging (so lag in seconds reads a record of each), and its /metrics read
// each round as the console does. The broker's CPU time (utime + stime from /proc/<pid>/stat) is read
// over ROUNDS back-to-back sampling rounds (default 40) and over as long a time without sampling (its
// idle cost, subtracted). Prints the broker CPU per round and what that is at several intervals, as a
// share of one core.
//
//   npm run build && SAMPLE_GROUPS=20 node dist/test/console/sample-cost.bench.js

import { readFileSync } from "node:fs";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { GroupAdmin } from "../../src/client/admin/group-admin.js";
import { KafkaProducer } from "../../src/client/producer/kafka-producer.js";
import { sampleCluster } from "../../src/console/collector/sample-cluster.js";
import { BrokerHarness, sleep } from "../support/broker-harness.js";

const GROUPS = Number(process.env.SAMPLE_GROUPS ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 40);
const PARTITIONS = 10;
const TOPIC = "cost";
/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s. */
const TICKS_PER_S = 100;

/** The process's CPU time so far (user + system), ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After "pid (comm) ": state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

const broker = await BrokerHarness.start({ name: "console-sample-cost" });
const admin = new AdminClient({ bootstrapServers: broker.bootstrap });
try {
  const pid = broker.pid;
  if (pid === undefined) throw new Error("no broker pid");
  await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }]);
  const producer = new KafkaProducer({ "bootstrap.servers": broker.bootstrap, "linger.ms": "5" });
  const sends: Promise<unknown>[] = [];
  for (let p = 0; p < PARTITIONS; p++)
    for (let i = 0; i < 200; i++) sends.push(producer.send({ topic: TOPIC, partition: p, value: `v${i}` }));
  await Promise.all(sends);
  await producer.close();
  const groups = new GroupAdmin(admin.cluster);
  for (let g = 0; g < GROUPS; g++)
    await groups.alterConsumerGroupOffsets(
      `group-${g}`,
      Array.from({ length: PARTITIONS }, (_, p) => ({ topic: TOPIC, partition: p, offset: BigInt(g % 100) })),
    );
  const config = { alias: "cost", bootstrapServers: broker.bootstrap, metricsUrls: { 0: broker.metricsUrl } };
  // Warm up (connections, metadata, JIT on both sides).
  for (let i = 0; i < 5; i++) await sampleCluster(config, admin, Date.now);
  await sleep(2_000);

  let cpu0 = cpuMs(pid);
  let t0 = performance.now();
  let took = 0;
  let last: Awaited<ReturnType<typeof sampleCluster>> | undefined;
  for (let i = 0; i < ROUNDS; i++) {
    const s = performance.now();
    last = await sampleCluster(config, admin, Date.now);
    took += performance.now() - s;
  }
  const sampling = { cpu: cpuMs(pid) - cpu0, wall: performance.now() - t0 };
  cpu0 = cpuMs(pid);
  t0 = performance.now();
  await sleep(sampling.wall);
  const idle = { cpu: cpuMs(pid) - cpu0, wall: performance.now() - t0 };
  const idlePerMs = idle.cpu / idle.wall;
  const perRound = (sampling.cpu - idlePerMs * sampling.wall) / ROUNDS;
  const rows = last ? last.groups.reduce((n, g) => n + g.partitions.length, 0) : 0;
  console.log(
    `${GROUPS} groups × ${PARTITIONS} partitions (${rows} lagging rows, ${last?.timestampReads.requests} Fetch requests a round), ${ROUNDS} rounds back to back:`,
  );
  console.log(
    `  broker CPU ${sampling.cpu.toFixed(0)} ms over ${sampling.wall.toFixed(0)} ms sampling; idle ${idle.cpu.toFixed(0)} ms over ${idle.wall.toFixed(0)} ms`,
  );
  console.log(
    `  one round: ${perRound.toFixed(1)} ms of broker CPU, ${(took / ROUNDS).toFixed(0)} ms wall (the console side included)`,
  );
  for (const intervalS of [1, 2, 5, 10, 30])
    console.log(
      `  every ${intervalS} s: ${((perRound / (intervalS * 1000)) * 100).toFixed(2)} % of one core`,
    );
} finally {
  await admin.close();
  await broker.close();
}
