// required-tools.ts and the runner's summary: under CI a missing need stops the test file with status 1 and
// one line; elsewhere it is a skip reason, recorded for the one summary line the runner prints.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { skipSummary } from "../../scripts/run-tests.js";

const MODULE = fileURLToPath(new URL("./required-tools.js", import.meta.url));

/** Runs a child that asks required-tools.ts for an unmet need, with `env` added. */
function ask(env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const script = `const { requireEnvironment } = await import(${JSON.stringify(MODULE)});
console.log(JSON.stringify(requireEnvironment("no frobnicator here")));`;
  const childEnv = { ...process.env, ...env };
  if (!("CI" in env)) delete childEnv.CI;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    env: childEnv,
    encoding: "utf8",
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("under CI=true an unmet need stops the file: status 1, one line naming it", () => {
  const r = ask({ CI: "true" });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /^[^\n]*: no frobnicator here \(CI=true: tests may not skip\)\n$/);
});

test("outside CI an unmet need is the skip reason, recorded for the runner's summary", () => {
  const dir = mkdtempSync(join(tmpdir(), "required-tools-"));
  try {
    const log = join(dir, "skipped.jsonl");
    const r = ask({ TRIBUTARY_SKIP_LOG: log });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), "no frobnicator here");
    const recorded = readFileSync(log, "utf8");
    assert.equal(JSON.parse(recorded.trim()).reason, "no frobnicator here");
    assert.match(
      skipSummary(recorded) ?? "",
      /^skipped \(set CI=true to fail instead\): no frobnicator here → \S+$/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the summary names each reason once with the files it skipped; nothing skipped, no line", () => {
  const line = (file: string, reason: string) => JSON.stringify({ file, reason });
  const log = [
    line("b.test.js", "not installed: kcat"),
    line("a.test.js", "not installed: kcat"),
    line("c.test.js", "needs root"),
  ]
    .join("\n")
    .concat("\n");
  assert.equal(
    skipSummary(log),
    "skipped (set CI=true to fail instead): not installed: kcat → a.test.js, b.test.js; needs root → c.test.js",
  );
  assert.equal(skipSummary(""), undefined);
});
