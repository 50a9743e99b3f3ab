// Error codes reach log lines and tool output by Kafka's name (INELIGIBLE_REPLICA), never as a bare
// number ("error code 107"): errorNameOf maps a code to its name, and a scan of every source file under
// src/ finds no template string that prints a numeric error code — `error code ${…}`, `error ${code}`,
// or an `errorCode` field interpolated as it is.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ErrorCode, errorNameOf } from "../../src/protocol/errors.js";

test("errorNameOf: Kafka's name of a code; UNKNOWN_SERVER_ERROR for a code Kafka does not define", () => {
  assert.equal(errorNameOf(107), "INELIGIBLE_REPLICA");
  assert.equal(errorNameOf(ErrorCode.NOT_LEADER_OR_FOLLOWER), "NOT_LEADER_OR_FOLLOWER");
  assert.equal(errorNameOf(0), "NONE");
  assert.equal(errorNameOf(-1), "UNKNOWN_SERVER_ERROR");
  assert.equal(errorNameOf(31_999), "UNKNOWN_SERVER_ERROR");
});

/** Template-string interpolations that print an error code as its number. */
const NUMERIC_CODE_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/error code \$\{/i, "'error code' and a number"],
  [/\b[Ee]rror \$\{(code|error|errorCode|err)\}/, "'error' and a code"],
  [/\$\{[\w.?!]*\.?errorCode\}/, "an errorCode field as it is"],
  [/returning \$\{error\}/, "'returning' and a code"],
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      // Generated code prints nothing; the browser front end shows what the JSON API gives it.
      if (path.endsWith(join("protocol", "generated")) || path.endsWith(join("console", "web"))) continue;
      out.push(...sourceFiles(path));
    } else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

test("no source line under src/ prints an error code as a number", () => {
  const root = join(process.cwd(), "src");
  const files = sourceFiles(root);
  assert.ok(files.length > 100, `the sources under ${root}`);
  const found: string[] = [];
  for (const file of files) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        for (const [pattern, what] of NUMERIC_CODE_PATTERNS)
          if (pattern.test(line)) found.push(`${relative(root, file)}:${i + 1}: ${what}: ${line.trim()}`);
      });
  }
  // The one place a number stays: the client's text for a code no Kafka version defines.
  const allowed = /^client\/errors\.ts:\d+: 'error code' and a number: const text = message \|\| def/;
  assert.deepEqual(
    found.filter((f) => !allowed.test(f)),
    [],
    "print errorNameOf(code) (src/protocol/errors.ts) instead",
  );
});
