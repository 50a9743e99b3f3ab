// Test-support command (not part of the broker): captures the request frames real Kafka clients send, as golden fixtures.
//
//   npm run capture:fixtures                       # every client found on this machine
//   npm run capture:fixtures -- kcat kafkajs       # only these
//
// For each client it starts a CaptureServer (test/support/capture-server.ts) on 127.0.0.1, runs the
// client against it (kcat command lines; confluent-kafka and kafka-python driver scripts under
// /usr/bin/python3; a KafkaJS driver; @platformatic/kafka when installed), then writes
//   test/fixtures/captures/<client>-<version>/<NNN>-<ApiName>-v<version>.bin   (frame without size prefix)
//   test/fixtures/captures/<client>-<version>/manifest.json
// The manifest names the client and its exact version (read at capture time), the commands, the date,
// every fixture file, and the exact records each produce scenario sent.
//
// Frames are kept small: Produce frames are all kept; other frames are deduplicated (ignoring the
// correlation id) and at most MAX_PER_API_VERSION are kept per API key and version.
//

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiKey } from "../src/protocol/generated/api-table.js";
import type { CapturePlan, Codec, ProduceScenario } from "../test/support/capture-plan.js";
import { sampleRecords } from "../test/support/capture-plan.js";
import { type CapturedFrame, CaptureServer } from "../test/support/capture-server.js";

// Compiled to dist/scripts/capture-fixtures.js: the repository root is two levels up.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT_DIR = join(ROOT, "test/fixtures/captures");
const CLIENTS_DIR = join(ROOT, "test/support/clients");
const PYTHON = "/usr/bin/python3";
const MAX_PER_API_VERSION = 4;
const STEP_TIMEOUT_MS = 60_000;

/** What a fixture directory's manifest.json holds. */
export interface CaptureManifest {
  client: string;
  version: string;
  capturedAt: string;
  commands: string[];
  notes: string[];
  consumed: boolean;
  framesReceived: number;
  frames: Array<{ file: string; apiKey: number; apiName: string; apiVersion: number; connection: number }>;
  produce: ProduceScenario[];
  serverProblems: string[];
}

interface StepResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function run(
  cmd: string,
  args: string[],
  o: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<StepResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: o.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8");
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, o.timeoutMs ?? STEP_TIMEOUT_MS);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(o.input ?? "");
  });
}

/** Runs a step that must succeed; prints its stderr tail when it does not. */
async function mustRun(
  what: string,
  cmd: string,
  args: string[],
  o: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<StepResult> {
  const r = await run(cmd, args, o);
  if (r.code !== 0 || r.timedOut) {
    const tail = r.stderr.split("\n").slice(-25).join("\n");
    throw new Error(
      `${what} failed (${r.timedOut ? "timed out" : `exit ${r.code ?? r.signal}`}):\n${tail}\n${r.stdout.slice(-2000)}`,
    );
  }
  return r;
}

function pythonEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONNOUSERSITE: "1", PYTHONDONTWRITEBYTECODE: "1" };
  delete env.PYTHONPATH;
  delete env.PYTHONHOME;
  return env;
}

/** Writes the plan to a temporary JSON file, runs `fn` with its path, and removes it afterwards. */
async function withPlanFile<T>(plan: CapturePlan, fn: (file: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "tributary-capture-"));
  const file = join(dir, "plan.json");
  writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
  try {
    return await fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Keeps every Produce frame; drops repeated frames (ignoring the correlation id) and caps the rest. */
function selectFrames(frames: readonly CapturedFrame[]): CapturedFrame[] {
  const seen = new Set<string>();
  const perVersion = new Map<string, number>();
  const kept: CapturedFrame[] = [];
  for (const f of frames) {
    if (f.apiKey !== ApiKey.Produce) {
      const norm = Buffer.from(f.frame);
      if (norm.length >= 8) norm.writeInt32BE(0, 4);
      const digest = createHash("sha256").update(norm).digest("hex");
      if (seen.has(digest)) continue;
      seen.add(digest);
      const k = `${f.apiKey}:${f.apiVersion}`;
      const n = perVersion.get(k) ?? 0;
      if (n >= MAX_PER_API_VERSION) continue;
      perVersion.set(k, n + 1);
    }
    kept.push(f);
  }
  return kept;
}

interface ClientCapture {
  /** Directory prefix and manifest `client` name, e.g. "kcat". */
  client: string;
  /** Short version for the directory name, e.g. "1.7.1". */
  dirVersion: string;
  /** Full version string for the manifest. */
  version: string;
  commands: string[];
  notes: string[];
  produce: ProduceScenario[];
  consumed: boolean;
}

async function capture(
  name: string,
  body: (server: CaptureServer) => Promise<ClientCapture>,
): Promise<{ dir: string; frames: number } | null> {
  const log = process.env.CAPTURE_DEBUG
    ? (l: string) => process.stderr.write(`  [server] ${l}\n`)
    : undefined;
  const server = await CaptureServer.start({ log });
  let c: ClientCapture;
  try {
    c = await body(server);
  } finally {
    await server.close();
  }
  const dirName = `${c.client}-${c.dirVersion}`;
  for (const old of existsSync(OUT_DIR) ? readdirSync(OUT_DIR) : []) {
    if (old.startsWith(`${c.client}-`) && /^\d/.test(old.slice(c.client.length + 1))) {
      rmSync(join(OUT_DIR, old), { recursive: true, force: true });
    }
  }
  const dir = join(OUT_DIR, dirName);
  mkdirSync(dir, { recursive: true });
  const kept = selectFrames(server.frames);
  const files: CaptureManifest["frames"] = [];
  kept.forEach((f, i) => {
    const file = `${String(i).padStart(3, "0")}-${f.apiName}-v${f.apiVersion}.bin`;
    writeFileSync(join(dir, file), f.frame);
    files.push({
      file,
      apiKey: f.apiKey,
      apiName: f.apiName,
      apiVersion: f.apiVersion,
      connection: f.connection,
    });
  });
  const manifest: CaptureManifest = {
    client: c.client,
    version: c.version,
    capturedAt: new Date().toISOString(),
    commands: c.commands,
    notes: c.notes,
    consumed: c.consumed,
    framesReceived: server.frames.length,
    frames: files,
    produce: c.produce,
    serverProblems: server.problems.map((p) => `seq ${p.seq} api ${p.apiKey} v${p.apiVersion}: ${p.message}`),
  };
  writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  const summary = new Map<string, number>();
  for (const f of kept)
    summary.set(`${f.apiName} v${f.apiVersion}`, (summary.get(`${f.apiName} v${f.apiVersion}`) ?? 0) + 1);
  process.stdout.write(
    `${name}: ${c.version}: kept ${kept.length} of ${server.frames.length} frames -> ${dir}\n` +
      `  ${[...summary.entries()].map(([k, n]) => `${k} x${n}`).join(", ")}\n`,
  );
  if (server.problems.length > 0) {
    process.stdout.write(
      `  server problems:\n${manifest.serverProblems.map((p) => `    ${p}`).join("\n")}\n`,
    );
  }
  return { dir, frames: kept.length };
}

// ---- kcat ------------------------------------------------------------------------------------

async function kcatVersion(): Promise<{ kcat: string; librdkafka: string } | null> {
  if (!existsSync("/usr/bin/kcat")) return null;
  const r = await run("/usr/bin/kcat", ["-V"], { timeoutMs: 10_000 });
  const m = /Version (\S+) .*librdkafka (\S+)/.exec(r.stdout + r.stderr);
  return m ? { kcat: m[1], librdkafka: m[2] } : null;
}

const KCAT_CODECS: Codec[] = ["none", "gzip", "snappy", "lz4", "zstd"];

async function captureKcat(server: CaptureServer): Promise<ClientCapture> {
  const v = await kcatVersion();
  if (!v) throw new Error("kcat not found");
  const kcat = "/usr/bin/kcat";
  const b = server.bootstrap;
  const commands: string[] = [];
  const shown = (args: string[]) =>
    `kcat ${args.map((a) => (a === b ? "<bootstrap>" : /[\s|]/.test(a) ? `'${a}'` : a)).join(" ")}`;
  const step = async (args: string[], input?: string, timeoutMs?: number) => {
    commands.push(shown(args) + (input !== undefined ? " < records.txt" : ""));
    return mustRun(shown(args), kcat, args, { input, timeoutMs });
  };
  await step(["-b", b, "-L"]);
  const produce: ProduceScenario[] = [];
  for (const codec of KCAT_CODECS) {
    const topic = `kcat-${codec}`;
    // kcat -H puts the same headers on every message; -K: splits key and value at the first ':'; a line
    // without ':' has a null key; -Z sends the empty value of "key:" as a null value.
    const fixedHeaders = codec === "gzip" ? [] : [{ key: "source", value: `kcat-${codec}` }];
    const records = sampleRecords(topic, { fixedHeaders });
    produce.push({ topic, compression: codec, records, acks: -1 });
    const lines = records.map((r) => `${r.key === null ? "" : `${r.key}:`}${r.value ?? ""}`).join("\n");
    const args = ["-b", b, "-P", "-t", topic, "-p", "0", "-z", codec, "-K", ":", "-Z", "-X", "acks=all"];
    for (const h of fixedHeaders) args.push("-H", `${h.key}=${h.value}`);
    await step(args, `${lines}\n`);
  }
  await step(["-b", b, "-L", "-t", "kcat-none"]);
  await step(["-b", b, "-C", "-t", "kcat-none", "-p", "0", "-o", "beginning", "-e", "-q"]);
  await step(["-b", b, "-Q", "-t", "kcat-gzip:0:1000"]);
  await step(
    ["-b", b, "-G", "kcat-group", "-X", "auto.offset.reset=earliest", "-e", "-q", "kcat-zstd"],
    undefined,
    30_000,
  );
  return {
    client: "kcat",
    dirVersion: v.kcat,
    version: `librdkafka ${v.librdkafka} via kcat ${v.kcat}`,
    commands,
    notes: ["records.txt holds the produce scenario's records as key:value lines (no ':' for a null key)."],
    produce,
    consumed: true,
  };
}

// ---- confluent-kafka ---------------------------------------------------------------------------

async function pythonProbe(code: string): Promise<string | null> {
  if (!existsSync(PYTHON)) return null;
  const r = await run(PYTHON, ["-c", code], { timeoutMs: 20_000, env: pythonEnv() });
  return r.code === 0 ? r.stdout.trim() : null;
}

async function captureConfluent(server: CaptureServer): Promise<ClientCapture> {
  const out = await pythonProbe("import confluent_kafka as c; print(c.version()[0], c.libversion()[0])");
  if (!out) throw new Error("confluent_kafka not importable by /usr/bin/python3");
  const [py, lib] = out.split(" ");
  const produce: ProduceScenario[] = KCAT_CODECS.map((codec) => ({
    topic: `ck-${codec}`,
    compression: codec,
    records: sampleRecords(`ck-${codec}`, { nullHeaderValue: true }),
    acks: -1,
    ...(codec === "zstd" ? { idempotent: true } : {}),
  }));
  produce.push({
    topic: "ck-txn",
    compression: "none",
    records: sampleRecords("ck-txn"),
    acks: -1,
    transactionalId: "capture-ck-txn",
  });
  const plan: CapturePlan = {
    bootstrap: server.bootstrap,
    admin: { topics: ["ck-admin-a", "ck-admin-b"] },
    produce,
    consume: { group: "ck-group", topic: "ck-lz4", expect: 5 },
  };
  const script = join(CLIENTS_DIR, "confluent_kafka_driver.py");
  await withPlanFile(plan, (file) =>
    mustRun("confluent-kafka driver", PYTHON, [script, file], {
      env: pythonEnv(),
      timeoutMs: 120_000,
    }),
  );
  return {
    client: "confluent-kafka",
    dirVersion: py,
    version: `confluent-kafka-python ${py} with librdkafka ${lib}`,
    commands: [`/usr/bin/python3 test/support/clients/confluent_kafka_driver.py <plan.json>`],
    notes: [`plan: ${JSON.stringify({ ...plan, bootstrap: "<bootstrap>", produce: "see produce" })}`],
    produce,
    consumed: true,
  };
}

// ---- kafka-python ------------------------------------------------------------------------------

async function captureKafkaPython(server: CaptureServer): Promise<ClientCapture> {
  const out = await pythonProbe(
    "import kafka, kafka.codec as c; print(kafka.__version__, int(c.has_snappy()), int(c.has_lz4()), int(c.has_zstd()))",
  );
  if (!out) throw new Error("kafka-python not importable by /usr/bin/python3");
  const [version, snappy, lz4, zstd] = out.split(" ");
  const codecs: Codec[] = ["none", "gzip"];
  const notes: string[] = [];
  for (const [codec, ok] of [
    ["snappy", snappy],
    ["lz4", lz4],
    ["zstd", zstd],
  ] as const) {
    if (ok === "1") codecs.push(codec);
    else notes.push(`${codec} skipped: kafka-python has no ${codec} library on this machine`);
  }
  const produce: ProduceScenario[] = codecs.map((codec) => ({
    topic: `kp-${codec}`,
    compression: codec,
    records: sampleRecords(`kp-${codec}`),
    acks: -1,
  }));
  const plan: CapturePlan = {
    bootstrap: server.bootstrap,
    admin: { topics: ["kp-admin-a", "kp-admin-b"] },
    produce,
    consume: { group: "kp-group", topic: "kp-gzip", expect: 5 },
  };
  const script = join(CLIENTS_DIR, "kafka_python_driver.py");
  await withPlanFile(plan, (file) =>
    mustRun("kafka-python driver", PYTHON, [script, file], {
      env: pythonEnv(),
      timeoutMs: 120_000,
    }),
  );
  return {
    client: "kafka-python",
    dirVersion: version,
    version: `kafka-python ${version}`,
    commands: [`/usr/bin/python3 test/support/clients/kafka_python_driver.py <plan.json>`],
    notes: [
      ...notes,
      `plan: ${JSON.stringify({ ...plan, bootstrap: "<bootstrap>", produce: "see produce" })}`,
    ],
    produce,
    consumed: true,
  };
}

// ---- KafkaJS ---------------------------------------------------------------------------------

function packageVersion(name: string): string | null {
  const file = join(ROOT, "node_modules", name, "package.json");
  if (!existsSync(file)) return null;
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

async function captureKafkaJs(server: CaptureServer): Promise<ClientCapture> {
  const version = packageVersion("kafkajs");
  if (!version) throw new Error("kafkajs is not installed");
  const produce: ProduceScenario[] = [
    { topic: "kjs-none", compression: "none", records: sampleRecords("kjs-none"), acks: -1 },
    { topic: "kjs-gzip", compression: "gzip", records: sampleRecords("kjs-gzip"), acks: -1 },
    {
      topic: "kjs-idem",
      compression: "none",
      records: sampleRecords("kjs-idem"),
      acks: -1,
      idempotent: true,
    },
    {
      topic: "kjs-txn",
      compression: "gzip",
      records: sampleRecords("kjs-txn"),
      acks: -1,
      transactionalId: "capture-kjs-txn",
    },
  ];
  const plan: CapturePlan = {
    bootstrap: server.bootstrap,
    admin: { topics: ["kjs-admin-a", "kjs-admin-b"] },
    produce,
    consume: { group: "kjs-group", topic: "kjs-gzip", expect: 5 },
  };
  const driver = join(ROOT, "dist/test/support/clients/kafkajs-driver.js");
  await withPlanFile(plan, (file) =>
    mustRun("KafkaJS driver", process.execPath, [driver, file], { timeoutMs: 120_000 }),
  );
  return {
    client: "kafkajs",
    dirVersion: version,
    version: `kafkajs ${version} on Node.js ${process.versions.node}`,
    commands: [`node dist/test/support/clients/kafkajs-driver.js <plan.json>`],
    notes: [`plan: ${JSON.stringify({ ...plan, bootstrap: "<bootstrap>", produce: "see produce" })}`],
    produce,
    consumed: true,
  };
}

// ---- @platformatic/kafka ------------------------------------------------------------------------

async function capturePlatformatic(server: CaptureServer): Promise<ClientCapture> {
  const version = packageVersion("@platformatic/kafka");
  if (!version) throw new Error("@platformatic/kafka is not installed");
  const notes: string[] = [];
  // zstd needs zlib's zstd, which Node.js 20 does not have.
  const codecs: Codec[] = ["none", "gzip", "snappy", "lz4"];
  notes.push(
    `zstd skipped: @platformatic/kafka uses node:zlib zstd, absent from Node.js ${process.versions.node}`,
  );
  const produce: ProduceScenario[] = codecs.map((codec) => ({
    topic: `pkf-${codec}`,
    compression: codec,
    records: sampleRecords(`pkf-${codec}`),
    acks: -1,
    ...(codec === "none" ? { idempotent: true } : {}),
  }));
  const plan: CapturePlan = {
    bootstrap: server.bootstrap,
    admin: { topics: ["pkf-admin-a", "pkf-admin-b"] },
    produce,
    consume: { group: "pkf-group", topic: "pkf-gzip", expect: 5 },
  };
  const driver = join(ROOT, "dist/test/support/clients/platformatic-kafka-driver.js");
  await withPlanFile(plan, (file) =>
    mustRun("@platformatic/kafka driver", process.execPath, [driver, file], {
      timeoutMs: 120_000,
    }),
  );
  return {
    client: "platformatic-kafka",
    dirVersion: version,
    version: `@platformatic/kafka ${version} on Node.js ${process.versions.node}`,
    commands: [`node dist/test/support/clients/platformatic-kafka-driver.js <plan.json>`],
    notes: [
      ...notes,
      `plan: ${JSON.stringify({ ...plan, bootstrap: "<bootstrap>", produce: "see produce" })}`,
    ],
    produce,
    consumed: true,
  };
}

// ---- main ------------------------------------------------------------------------------------

const CLIENTS: Record<string, (s: CaptureServer) => Promise<ClientCapture>> = {
  kcat: captureKcat,
  "confluent-kafka": captureConfluent,
  "kafka-python": captureKafkaPython,
  kafkajs: captureKafkaJs,
  "platformatic-kafka": capturePlatformatic,
};

async function main(args: string[]): Promise<number> {
  const wanted = args.length > 0 ? args : Object.keys(CLIENTS);
  let failed = 0;
  for (const name of wanted) {
    const fn = CLIENTS[name];
    if (!fn) {
      process.stderr.write(`unknown client ${name}; known: ${Object.keys(CLIENTS).join(", ")}\n`);
      return 2;
    }
    try {
      await capture(name, fn);
    } catch (e) {
      failed++;
      process.stderr.write(`${name}: capture failed: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
