// Allocator tuning (native/allocator, src/common/allocator-tuning.ts): built and in force on Linux with
// glibc; what it changes, observed through malloc's own counters in fresh processes — eight live 4 MiB
// Buffers are eight mappings of their own by default and none once tuned; `tributary` tunes before any
// tool runs; without the addon's build output the module loads and tunes nothing. Huge-page advice: in a
// fresh process a 16 MiB Buffer advised (directly, or as a large response frame of the client's) is
// backed by transparent huge pages once filled, one that is not advised (or is small) is not.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  ALLOCATOR_ADDON_LOADED,
  adviseHugePages,
  HUGE_PAGE_BYTES,
  MMAP_THRESHOLD_BYTES,
  TRIM_THRESHOLD_BYTES,
} from "../../src/common/allocator-tuning.js";

const here = dirname(fileURLToPath(import.meta.url));
const tuningModule = pathToFileURL(join(here, "../../src/common/allocator-tuning.js")).href;
const cliModule = pathToFileURL(join(here, "../../src/cli/main.js")).href;
const connectionModule = pathToFileURL(join(here, "../../src/client/network/broker-connection.js")).href;
const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header
  ?.glibcVersionRuntime;

/** Runs `setup` in a fresh Node process, then counts malloc's own mappings around 8 live 4 MiB Buffers. */
function mappingsForEightBuffers(setup: string): number {
  const script = `
    const { allocatorStats } = await import(${JSON.stringify(tuningModule)});
    ${setup}
    const before = allocatorStats().mmappedChunks;
    const live = [];
    for (let i = 0; i < 8; i++) live.push(Buffer.allocUnsafe(4 * 1024 * 1024).fill(i));
    console.log(allocatorStats().mmappedChunks - before, live.length);
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.trim().split(" ")[0]);
}

test("the addon is built and tunes the allocator on Linux with glibc", (t) => {
  if (process.platform !== "linux" || glibc === undefined) {
    t.skip(`not Linux with glibc (${process.platform})`);
    return;
  }
  assert.ok(ALLOCATOR_ADDON_LOADED, "native/allocator was not built (see native/allocator/build.log)");
  assert.equal(MMAP_THRESHOLD_BYTES, 32 * 1024 * 1024);
  assert.equal(TRIM_THRESHOLD_BYTES, 256 * 1024 * 1024);
  assert.equal(mappingsForEightBuffers(""), 8, "by default each 4 MiB Buffer is a mapping of its own");
  const tuned = mappingsForEightBuffers(`
    const { tuneAllocator } = await import(${JSON.stringify(tuningModule)});
    if (!tuneAllocator()) throw new Error("tuneAllocator() returned false");
  `);
  assert.equal(tuned, 0, "tuned, they come from the heap (and are reused after free)");
});

test("tributary tunes the allocator before running a tool", (t) => {
  if (process.platform !== "linux" || glibc === undefined) {
    t.skip(`not Linux with glibc (${process.platform})`);
    return;
  }
  const mappings = mappingsForEightBuffers(`
    const { run } = await import(${JSON.stringify(cliModule)});
    const log = console.log;
    console.log = () => {};
    await run(["--help"]);
    console.log = log;
  `);
  assert.equal(mappings, 0);
});

test("without the addon's build output the module loads and tunes nothing", async () => {
  const root = mkdtempSync(join(tmpdir(), "allocator-fallback-"));
  try {
    const target = join(root, "out/src/common/allocator-tuning.js");
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(fileURLToPath(tuningModule), target);
    copyFileSync(join(here, "../../src/common/native-addon.js"), join(dirname(target), "native-addon.js"));
    const isolated = (await import(
      pathToFileURL(target).href
    )) as typeof import("../../src/common/allocator-tuning.js");
    assert.equal(isolated.ALLOCATOR_ADDON_LOADED, false);
    assert.equal(isolated.tuneAllocator(), false);
    assert.equal(isolated.allocatorStats(), undefined);
    assert.equal(isolated.adviseHugePages(Buffer.alloc(16 * 1024 * 1024)), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** The kernel's transparent huge page mode ("always", "madvise", "never"), or undefined. */
function thpMode(): string | undefined {
  try {
    return /\[(\w+)\]/.exec(readFileSync("/sys/kernel/mm/transparent_hugepage/enabled", "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/** In a fresh process: KiB of AnonHugePages gained by allocating `size` bytes with `allocate`, then filling them. */
function hugePagesGained(allocate: string, size: number): number {
  const script = `
    import { readFileSync } from "node:fs";
    const { adviseHugePages } = await import(${JSON.stringify(tuningModule)});
    const { RESPONSE_FRAMES } = await import(${JSON.stringify(connectionModule)});
    const huge = () => Number(/AnonHugePages:\\s+(\\d+) kB/.exec(readFileSync("/proc/self/smaps_rollup", "utf8"))[1]);
    const before = huge();
    const size = ${size};
    const buffer = ${allocate};
    buffer.fill(7);
    console.log(huge() - before);
  `;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return Number(r.stdout.trim());
}

test("adviseHugePages: whole huge pages inside a large Buffer become transparent huge pages", (t) => {
  if (process.platform !== "linux" || !ALLOCATOR_ADDON_LOADED) {
    t.skip(`no allocator addon on ${process.platform}`);
    return;
  }
  assert.equal(HUGE_PAGE_BYTES, 2 * 1024 * 1024);
  assert.equal(adviseHugePages(Buffer.allocUnsafe(HUGE_PAGE_BYTES - 1)), false, "no whole huge page inside");
  assert.equal(adviseHugePages(Buffer.allocUnsafe(16 * 1024 * 1024)), true);
  const mode = thpMode();
  if (mode !== "madvise" && mode !== "always") {
    t.diagnostic(`transparent huge pages are "${mode}" here: the advice has no effect to observe`);
    return;
  }
  // 16 MiB advised: at least 14 MiB of whole, aligned huge pages inside it.
  const gained = hugePagesGained(
    "(() => { const b = Buffer.allocUnsafe(size); adviseHugePages(b); return b; })()",
    16 << 20,
  );
  assert.ok(gained >= 14 * 1024, `advised: ${gained} KiB in huge pages (no free 2 MiB pages left?)`);
  const frame = hugePagesGained("RESPONSE_FRAMES.allocate(size)", 16 << 20);
  assert.ok(frame >= 14 * 1024, `a 16 MiB response frame: ${frame} KiB in huge pages`);
  if (mode === "madvise") {
    assert.equal(hugePagesGained("Buffer.allocUnsafe(size)", 16 << 20), 0, "not advised: no huge pages");
    // Under two huge pages a frame is not advised (at this size it may hold one whole huge page).
    const below = (4 << 20) - 1;
    assert.equal(hugePagesGained("RESPONSE_FRAMES.allocate(size)", below), 0, "a frame under 4 MiB: none");
  }
});
