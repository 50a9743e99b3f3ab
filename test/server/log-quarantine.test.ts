// Issue 20, "recovery that destroys nothing acknowledged", with real processes: a broker from dist with small
// segments (log.segment.bytes=8192) takes acknowledged records (KafkaJS, acks=all) on two topics; it is
// SIGKILLed once with nothing damaged (the restart creates no quarantine and logs no ERROR), takes more
// records, is SIGKILLed again, and one batch in a middle segment of each topic is damaged on disk. After
// the restart: the batches before the damage are served (kcat), the rest is in a quarantine folder inside
// the partition directory, one ERROR per partition names it, /metrics counts it, `log-recover --list`
// shows it and `dump-log` reads its intact segment files. A record produced to the second topic takes the
// quarantined offsets. With the broker stopped, `log-recover --restore` restores the first topic and
// refuses the second in one line; after a restart kcat reads every acknowledged record of the first topic
// but the damaged batch's, and the second topic is as it was. `--restore` on a running broker is refused.
// `--reproduce` then produces the second topic's intact quarantined records again (new offsets), and kcat
// reads every acknowledged record of it but the damaged batch's.

import assert from "node:assert/strict";
import { closeSync, openSync, readdirSync, readFileSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import kafkajs from "kafkajs";
import { BrokerHarness, runCommand } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { runTributary } from "../support/tributary-cli.js";

const { Kafka, logLevel } = kafkajs;
const KCAT = "/usr/bin/kcat";
const TOPICS = ["qa", "qb"];
let broker: BrokerHarness;

/** offset → value of every acknowledged record, per topic. */
const acked = new Map<string, Map<number, string>>(TOPICS.map((t) => [t, new Map()]));

async function produce(from: number, sends: number): Promise<void> {
  const kafka = new Kafka({
    clientId: "quarantine-test",
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await admin.connect();
    if (from === 0)
      await admin.createTopics({
        topics: TOPICS.map((topic) => ({ topic, numPartitions: 1 })),
        waitForLeaders: true,
      });
    await producer.connect();
    for (let i = from; i < from + sends; i++) {
      for (const topic of TOPICS) {
        const values = Array.from({ length: 10 }, (_, j) => `${topic}-${i}-${j}-${"x".repeat(40)}`);
        const [meta] = await producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) });
        assert.equal(meta.errorCode, 0);
        const base = Number(meta.baseOffset);
        for (const [j, v] of values.entries()) acked.get(topic)?.set(base + j, v);
      }
    }
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
}

/** offset → value read with kcat from the beginning to the end of the partition. */
async function consume(topic: string): Promise<Map<number, string>> {
  const r = await runCommand(
    KCAT,
    ["-b", broker.bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%o %s\\n"],
    { timeoutMs: 30_000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const out = new Map<number, string>();
  for (const line of r.stdout.split("\n")) {
    const m = /^(\d+) (.*)$/.exec(line);
    if (m) out.set(Number(m[1]), m[2]);
  }
  return out;
}

interface Batch {
  position: number;
  size: number;
  base: number;
  last: number;
}

function batchesOf(file: string): Batch[] {
  const bytes = readFileSync(file);
  const out: Batch[] = [];
  for (let p = 0; p + 61 <= bytes.length; ) {
    const size = 12 + bytes.readInt32BE(p + 8);
    const base = Number(bytes.readBigInt64BE(p));
    out.push({ position: p, size, base, last: base + bytes.readInt32BE(p + 23) });
    p += size;
  }
  return out;
}

/** Flips a record byte of the second batch of the middle segment; returns that batch. */
function damageMiddleSegment(topic: string): { batch: Batch; segments: number } {
  const dir = join(broker.logDir, `${topic}-0`);
  const logs = readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort();
  assert.ok(logs.length >= 4, `${topic}: expected several segments, got ${logs.join(", ")}`);
  const file = join(dir, logs[Math.floor(logs.length / 2)]);
  const victim = batchesOf(file)[1];
  const fd = openSync(file, "r+");
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, victim.position + 61 + 7);
  one[0] ^= 0xff;
  writeSync(fd, one, 0, 1, victim.position + 61 + 7);
  closeSync(fd);
  return { batch: victim, segments: logs.length };
}

function quarantineDirs(topic: string): string[] {
  return readdirSync(join(broker.logDir, `${topic}-0`)).filter((n) => n.startsWith("quarantine-"));
}

async function metrics(): Promise<string> {
  return (await fetch(broker.metricsUrl)).text();
}

before(async () => {
  broker = await BrokerHarness.start({
    name: "quarantine",
    overrides: { "log.segment.bytes": "8192", "log.flush.offset.checkpoint.interval.ms": "600000" },
  });
});

after(async () => {
  await broker?.close();
});

test("SIGKILL + a damaged middle batch: the rest is quarantined, listed, restored and read back", {
  skip: skipUnlessInstalled("kcat"),
  timeout: 240_000,
}, async () => {
  await produce(0, 30);
  // A SIGKILL with nothing damaged: recovery runs and finds nothing to quarantine.
  await broker.stop("SIGKILL");
  await broker.restart();
  for (const t of TOPICS)
    assert.deepEqual(quarantineDirs(t), [], `${t}: no quarantine after a clean recovery`);
  assert.ok(!broker.errorLines.some((l) => /Quarantined/.test(l)), broker.errorLines.join("\n"));
  assert.match(await metrics(), /^kafka_log_logmanager_quarantinedpartitioncount 0$/m);

  await produce(30, 30);
  await broker.stop("SIGKILL");
  const damaged = new Map(TOPICS.map((t) => [t, damageMiddleSegment(t).batch]));
  await broker.restart();

  const qa = damaged.get("qa")!;
  const qb = damaged.get("qb")!;
  for (const t of TOPICS) {
    const v = damaged.get(t)!;
    // Served: exactly the acknowledged records before the damaged batch.
    const got = await consume(t);
    const expected = new Map([...acked.get(t)!].filter(([o]) => o < v.base));
    assert.deepEqual(got, expected, `${t}: the records before offset ${v.base}`);
    assert.equal(quarantineDirs(t).length, 1, `${t}: one quarantine`);
    const errors = broker.errorLines.filter((l) =>
      new RegExp(`Quarantined \\d+ bytes of partition ${t}-0 `).test(l),
    );
    assert.equal(errors.length, 1, broker.errorLines.join("\n"));
    assert.match(errors[0], /damaged \S+\.damaged = bytes \[\d+, \d+\)/);
    assert.match(errors[0], /segment \d{20}\.log = bytes \[0, \d+\) offsets \d+\.\.\d+/);
  }
  const m = await metrics();
  assert.match(m, /^kafka_log_logmanager_quarantinedpartitioncount 2$/m);
  assert.match(m, /^kafka_log_log_quarantinedbytes\{topic="qa",partition="0"\} [1-9]\d*$/m);

  const list = await runTributary(["log-recover", "--log-dir", broker.logDir, "--list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^Partition qa-0$/m);
  assert.match(list.stdout, /^Partition qb-0$/m);
  assert.match(list.stdout, new RegExp(`the log ended at offset ${qa.base} after the cut`));
  assert.match(list.stdout, /damaged +\S+ bytes \[\d+, \d+\) of \d{20}\.log/);
  assert.match(
    list.stdout,
    /segment +\d{20}\.log bytes \[0, \d+\) of \d{20}\.log offsets \d+\.\.\d+ \d+ batches \d+ records/,
  );

  // dump-log reads the quarantined segment files as it reads any segment.
  const qdir = join(broker.logDir, "qa-0", quarantineDirs("qa")[0]);
  const qlogs = readdirSync(qdir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort();
  assert.ok(qlogs.length >= 2);
  const dump = await runTributary(["dump-log", "--files", join(qdir, qlogs[0])]);
  assert.equal(dump.code, 0, dump.stderr);
  assert.match(
    dump.stdout,
    new RegExp(`baseOffset: ${Number(qlogs[0].slice(0, 20))} lastOffset: \\d+ count: 10 .*isvalid: true`),
  );
  assert.doesNotMatch(dump.stdout, /isvalid: false|invalid bytes/);

  // Restore while the broker runs: refused, naming the broker's pid (it holds the dir's lock).
  const running = await runTributary(["log-recover", "--log-dir", broker.logDir, "--restore"]);
  assert.equal(running.code, 1);
  assert.equal(
    running.stderr,
    `cannot restore in ${broker.logDir}: a broker is using it (pid ${broker.pid} holds ${broker.logDir}/.lock); stop it with server-stop first\n`,
  );
  assert.equal(running.stderr.trim().split("\n").length, 1);

  // A new record in qb takes the first quarantined offset.
  const p = await runCommand(KCAT, ["-b", broker.bootstrap, "-P", "-t", "qb", "-p", "0"], {
    input: "after-restart\n",
    timeoutMs: 20_000,
  });
  assert.equal(p.code, 0, p.stderr);

  assert.equal(await broker.stop("SIGTERM"), 0);
  const restore = await runTributary(["log-recover", "--log-dir", broker.logDir, "--restore"]);
  assert.equal(restore.code, 1, `${restore.stdout}\n${restore.stderr}`);
  assert.match(
    restore.stdout,
    /^Restored quarantine-\d+ of partition qa-0: \d+ segments .* the log now ends at offset \d+/m,
  );
  const refusals = restore.stderr.trim().split("\n");
  assert.equal(refusals.length, 1, restore.stderr);
  assert.match(
    refusals[0],
    new RegExp(
      `^cannot restore quarantine-\\d+ of partition qb-0: records were appended after the quarantine \\(the log end offset is ${qb.base + 1}, it was ${qb.base} after the cut\\)`,
    ),
  );

  await broker.restart();
  const all = await consume("qa");
  const expectedQa = new Map([...acked.get("qa")!].filter(([o]) => o < qa.base || o > qa.last));
  assert.equal(all.size, acked.get("qa")!.size - (qa.last - qa.base + 1));
  assert.deepEqual(all, expectedQa, "every acknowledged record of qa but the damaged batch's");
  const qbNow = await consume("qb");
  assert.deepEqual(
    qbNow,
    new Map([...[...acked.get("qb")!].filter(([o]) => o < qb.base), [qb.base, "after-restart"]]),
  );
  const after = await metrics();
  assert.match(after, /^kafka_log_logmanager_quarantinedpartitioncount 1$/m);
  assert.doesNotMatch(after, /kafka_log_log_quarantinedbytes\{topic="qa"/);

  // The alternative for qb: its intact records produced again through the running broker (new offsets).
  const rep = await runTributary([
    "log-recover",
    "--log-dir",
    broker.logDir,
    "--reproduce",
    "--bootstrap-server",
    broker.bootstrap,
    "--partition",
    "qb-0",
  ]);
  assert.equal(rep.code, 0, rep.stderr);
  const lostQb = qb.last - qb.base + 1;
  const quarantinedQb = [...acked.get("qb")!.keys()].filter((o) => o > qb.last).length;
  assert.match(
    rep.stdout,
    new RegExp(
      `^Reproduced ${quarantinedQb} records of quarantine-\\d+ of partition qb-0 to qb-0 at offsets ${qb.base + 1}\\.\\.${qb.base + quarantinedQb}$`,
      "m",
    ),
  );
  const qbAfter = await consume("qb");
  const values = [...qbAfter.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
  const expectedValues = [
    ...[...acked.get("qb")!].filter(([o]) => o < qb.base).map(([, v]) => v),
    "after-restart",
    ...[...acked.get("qb")!].filter(([o]) => o > qb.last).map(([, v]) => v),
  ];
  assert.deepEqual(values, expectedValues, `every acknowledged qb record but the damaged batch's ${lostQb}`);
  const again = await runTributary([
    "log-recover",
    "--log-dir",
    broker.logDir,
    "--reproduce",
    "--bootstrap-server",
    broker.bootstrap,
  ]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^Nothing to reproduce$/m);
  const listed = await runTributary([
    "log-recover",
    "--log-dir",
    broker.logDir,
    "--list",
    "--partition",
    "qb-0",
  ]);
  assert.match(listed.stdout, /reproduced at \S+: \d+ records to qb-0 offsets/);
  // The restored log was recovered on this start without cutting anything.
  assert.equal(
    broker.errorLines.filter((l) => /Quarantined/.test(l)).length,
    2,
    broker.errorLines.join("\n"),
  );
});
