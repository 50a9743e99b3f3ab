// TLS benchmark (issue 21): produce and consume MB/s over an SSL listener against a PLAINTEXT listener of the
// same broker, in the same run (goal: TLS ≥ 0.6× plaintext). Run with `npm run bench:tls` (options after
// `--`: `--records N`, default 500000; `--rounds R`, default 3).
//
// One fresh broker (test/support/broker-harness.ts, the build this file was compiled into unless
// TRIBUTARY_DIST says otherwise) with two listeners: PLAINTEXT and SSL (a PEM keystore made with openssl for
// the run: a CA and a certificate for 127.0.0.1). Each round, for each listener in turn (the order swaps
// every round so neither always runs on a warmer machine): `tributary producer-perf-test` sends N records of
// 1 KiB (8 partitions, acks=1, batch.size=1048576, linger.ms=5, unthrottled) to a topic of its own, then
// `tributary consumer-perf-test --messages N` reads them back (fetch.MB.sec: the group join left out). The
// SSL runs take the TLS settings from --producer.config / --consumer.config (security.protocol=SSL, the CA as
// a PEM truststore) as a user would. Prints every tool's summary line and a table of the medians, MB/s =
// 10^6 bytes of record data per second, with the TLS ÷ plaintext ratios, and the CPU seconds per GB the
// broker and each tool used (/proc/<pid>/stat), which a loaded machine changes less than MB/s. Every child process and temporary
// directory is removed on every exit path.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BrokerHarness } from "../test/support/broker-harness.js";
import {
  installCleanup,
  registerTempDir,
  spawnChild,
  tail,
  tributaryCommand,
} from "./support/child-processes.js";
import { loadAverage, machineLine } from "./support/machine.js";
import { consumerSummary, producerSummary } from "./support/perf-output.js";
import { cpuSeconds, ProcSampler } from "./support/proc-sampler.js";

const USAGE = "usage: tls.bench [--records N] [--rounds R]";
const PARTITIONS = 8;
const RECORD_SIZE = 1024;
const PRODUCER_PROPS = ["acks=1", "batch.size=1048576", "linger.ms=5"];
const DIST = resolve(process.env.TRIBUTARY_DIST ?? fileURLToPath(new URL("..", import.meta.url)));
process.env.TRIBUTARY_DIST = DIST;

function parseArgs(argv: string[]): { records: number; rounds: number } {
  let records = 500_000;
  let rounds = 3;
  for (let i = 0; i < argv.length; i++) {
    const n = Number(argv[i + 1]);
    if (argv[i] === "--records" && Number.isInteger(n) && n > 0) records = n;
    else if (argv[i] === "--rounds" && Number.isInteger(n) && n > 0) rounds = n;
    else {
      console.error(`${USAGE}\nunexpected argument: ${argv[i]}`);
      process.exit(2);
    }
    i++;
  }
  return { records, rounds };
}

const OPTIONS = parseArgs(process.argv.slice(2));

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { stdio: "pipe", cwd: dir });
}

/** A CA and a broker certificate for 127.0.0.1 / localhost; returns [keystore.pem, ca.pem]. */
function certificates(dir: string): [string, string] {
  openssl(
    dir,
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem"].concat([
      "-days",
      "1",
      "-subj",
      "/CN=bench CA",
    ]),
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "b.key",
    "-out",
    "b.csr",
    "-subj",
    "/CN=localhost",
  ]);
  openssl(
    dir,
    ["x509", "-req", "-in", "b.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
      "-out",
      "b.pem",
      "-days",
      "1",
      "-extfile",
      "san.ext",
    ]),
  );
  const keystore = join(dir, "keystore.pem");
  writeFileSync(
    keystore,
    readFileSync(join(dir, "b.key"), "utf8") + readFileSync(join(dir, "b.pem"), "utf8"),
  );
  return [keystore, join(dir, "ca.pem")];
}

let brokerPid = 0;

interface ToolRun {
  readonly stdout: string;
  /** CPU seconds of the tool's process (start-up included) and of the broker while it ran. */
  readonly clientCpu: number;
  readonly brokerCpu: number;
}

async function tool(args: string[]): Promise<ToolRun> {
  const { cmd, argv } = tributaryCommand(DIST, args);
  const brokerBefore = cpuSeconds(brokerPid);
  const sampler = new ProcSampler(100);
  const child = spawnChild(cmd, argv, { timeoutMs: 180_000, cwd: process.cwd() });
  sampler.add("tool", child.pid);
  sampler.start();
  const r = await child.done;
  sampler.stop();
  if (r.code !== 0) throw new Error(`tributary ${args[0]}: exit ${r.code ?? r.signal} (${tail(r)})`);
  return {
    stdout: r.stdout,
    clientCpu: sampler.usage("tool")?.cpuSeconds ?? Number.NaN,
    brokerCpu: cpuSeconds(brokerPid) - brokerBefore,
  };
}

interface Mode {
  readonly name: "plaintext" | "TLS";
  readonly bootstrap: string;
  /** --producer.config / --consumer.config file (TLS), or none. */
  readonly config?: string;
}

interface Result {
  producedMBps: number;
  consumedMBps: number;
  /** CPU seconds per GB (10^9 bytes of record data) of the broker and of the tool, per phase. */
  produceBrokerCpuPerGB: number;
  produceClientCpuPerGB: number;
  consumeBrokerCpuPerGB: number;
  consumeClientCpuPerGB: number;
}

async function round(mode: Mode, topic: string, records: number): Promise<Result> {
  const configArgs = mode.config ? ["--command-config", mode.config] : [];
  await tool(
    ["topics", "--bootstrap-server", mode.bootstrap, ...configArgs, "--create", "--topic", topic].concat([
      "--partitions",
      String(PARTITIONS),
      "--replication-factor",
      "1",
    ]),
  );
  spawnSync("sync");
  const gb = (records * RECORD_SIZE) / 1e9;
  const produceRun = await tool(
    [
      "producer-perf-test",
      "--topic",
      topic,
      "--num-records",
      String(records),
      "--record-size",
      String(RECORD_SIZE),
    ]
      .concat([
        "--throughput",
        "-1",
        "--producer-props",
        `bootstrap.servers=${mode.bootstrap}`,
        ...PRODUCER_PROPS,
      ])
      .concat(mode.config ? ["--producer.config", mode.config] : []),
  );
  const produced = produceRun.stdout;
  const p = producerSummary(produced);
  if (p === undefined || p.records !== records)
    throw new Error(`producer-perf-test: no summary in ${produced}`);
  console.log(`  ${mode.name.padEnd(9)} produce | ${p.line}`);
  const consumeRun = await tool(
    [
      "consumer-perf-test",
      "--bootstrap-server",
      mode.bootstrap,
      "--topic",
      topic,
      "--messages",
      String(records),
    ].concat(mode.config ? ["--consumer.config", mode.config] : []),
  );
  const consumed = consumeRun.stdout;
  const c = consumerSummary(consumed);
  if (c === undefined || c.messages !== records)
    throw new Error(`consumer-perf-test: no summary in ${consumed}`);
  console.log(`  ${mode.name.padEnd(9)} consume | ${c.line}`);
  return {
    producedMBps: (p.records * RECORD_SIZE) / ((p.records / p.recordsPerSec) * 1e6),
    consumedMBps: (c.fetchMibPerSec * 2 ** 20) / 1e6,
    produceBrokerCpuPerGB: produceRun.brokerCpu / gb,
    produceClientCpuPerGB: produceRun.clientCpu / gb,
    consumeBrokerCpuPerGB: consumeRun.brokerCpu / gb,
    consumeClientCpuPerGB: consumeRun.clientCpu / gb,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main(): Promise<void> {
  installCleanup();
  const dir = mkdtempSync(join(tmpdir(), "tributary-tls-bench-"));
  registerTempDir(dir);
  const [keystore, ca] = certificates(dir);
  const clientConfig = join(dir, "client-ssl.properties");
  writeFileSync(
    clientConfig,
    `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${ca}\n`,
  );
  const broker = await BrokerHarness.start({
    name: "tributary-tls-bench",
    overrides: {
      listeners: "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": keystore,
    },
  });
  registerTempDir(broker.root);
  brokerPid = broker.pid!;
  const results = new Map<string, Result[]>([
    ["plaintext", []],
    ["TLS", []],
  ]);
  try {
    const [plainPort, sslPort] = broker.listenerPorts();
    const modes: Mode[] = [
      { name: "plaintext", bootstrap: `127.0.0.1:${plainPort}` },
      { name: "TLS", bootstrap: `127.0.0.1:${sslPort}`, config: clientConfig },
    ];
    console.log(
      `TLS vs plaintext: ${OPTIONS.rounds} rounds × ${OPTIONS.records} records of ${RECORD_SIZE} B, ${PARTITIONS} partitions, ${PRODUCER_PROPS.join(" ")}`,
    );
    for (let r = 0; r < OPTIONS.rounds; r++) {
      for (const mode of r % 2 === 0 ? modes : [...modes].reverse())
        results
          .get(mode.name)!
          .push(await round(mode, `bench-${mode.name.toLowerCase()}-${r}`, OPTIONS.records));
    }
  } finally {
    await broker.close();
  }
  const m = (name: string, k: keyof Result): number => median(results.get(name)!.map((x) => x[k]));
  const fmt = (x: number): string => x.toFixed(1);
  const rows = (["producedMBps", "consumedMBps"] as const).map((k) => {
    const plain = m("plaintext", k);
    const tls = m("TLS", k);
    const all = (name: string): string =>
      results
        .get(name)!
        .map((x) => fmt(x[k]))
        .join(", ");
    return `| ${k === "producedMBps" ? "produce" : "consume"} | ${fmt(plain)} (${all("plaintext")}) | ${fmt(tls)} (${all("TLS")}) | **${(tls / plain).toFixed(2)}×** | ${tls / plain >= 0.6 ? "met" : "not met"} |`;
  });
  console.log(`\nMachine: ${machineLine()}, load average ${loadAverage()}`);
  console.log(
    "\n| | plaintext MB/s, median (rounds) | TLS MB/s, median (rounds) | TLS ÷ plaintext | goal ≥ 0.6× |",
  );
  console.log("|---|---:|---:|---:|---|");
  for (const r of rows) console.log(r);
  const cpu = (name: string, k: keyof Result): string => m(name, k).toFixed(2);
  console.log(
    "\nCPU seconds per GB of records (median; the tool's start-up included, the broker's whole run of the tool):\n",
  );
  console.log("| | plaintext broker | plaintext client | TLS broker | TLS client |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [what, b, c] of [
    ["produce", "produceBrokerCpuPerGB", "produceClientCpuPerGB"],
    ["consume", "consumeBrokerCpuPerGB", "consumeClientCpuPerGB"],
  ] as const)
    console.log(
      `| ${what} | ${cpu("plaintext", b)} | ${cpu("plaintext", c)} | ${cpu("TLS", b)} | ${cpu("TLS", c)} |`,
    );
}

main().catch((e) => {
  console.error(`tls.bench: ${(e as Error).message}`);
  process.exit(1);
});
