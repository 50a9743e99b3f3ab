// scripts/check-benchmarks.ts: the table at the top of docs/benchmarks.md against the runs in
// docs/benchmarks/. A small checkout is written to a temp dir: it passes as written, and each kind of drift
// (a figure that is not in its section, a run newer than the row's date, a command or a goal's number that
// is not there, a link to no heading, an area file no row links to) fails with a line naming it. The
// repository's own table passes too.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { checkBenchmarks, headingSlug, numbersOf } from "../../scripts/check-benchmarks.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const HEADER =
  "| benchmark | command | latest figure | date | goal | runs |\n| --- | --- | --- | --- | --- | --- |";
const ROW =
  "| codec | `npm run bench:codec` | validate 5,802 MB/s, 0.92× of crc32c | 2026-11-29 | ≥ 2 GB/s | [codec](benchmarks/codec.md#run-of-2026-11-29-1307-utc) |";
const AREA = `# Benchmarks: codec

## Codec (issue 2)

- Command: \`npm run bench:codec\`. Target: batch validation ≥ 2 GB/s.

### Run of 2026-11-28 09:00 UTC

| measurement | MB/s |
| --- | --- |
| validate 1 MiB batch | 4,100 |

### Run of 2026-11-29 13:07 UTC

| measurement | MB/s |
| --- | --- |
| validate 1 MiB batch | **5,802** (0.92× of crc32c) |
`;

/** A checkout with the table, one area file and a README that names it; `edit` changes a file's text. */
function checkout(edit: Record<string, (text: string) => string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "check-benchmarks-"));
  dirs.push(root);
  mkdirSync(join(root, "docs/benchmarks"), { recursive: true });
  const files: Record<string, string> = {
    "docs/benchmarks.md": `# Benchmarks\n\n${HEADER}\n${ROW}\n\nThe runs: [codec](benchmarks/codec.md).\n`,
    "docs/benchmarks/codec.md": AREA,
    "README.md": 'Figures: docs/benchmarks/codec.md, "Codec".\n',
  };
  for (const [path, text] of Object.entries(files))
    writeFileSync(join(root, path), (edit[path] ?? ((t) => t))(text));
  return root;
}

describe("check-benchmarks", () => {
  test("numbers and anchors are read as written", () => {
    assert.deepEqual(numbersOf("p99 17.28 ms, 10,002 commits/s, 0.63× (v9), 5, 4, 1,000,000"), [
      "17.28",
      "10,002",
      "0.63",
      "5",
      "4",
      "1,000,000",
    ]);
    assert.equal(headingSlug("Run of 2026-11-30 03:18 UTC"), "run-of-2026-11-30-0318-utc");
    assert.equal(
      headingSlug(
        "The produce path's append, and index entries written behind (2026-11-29, 18:42–18:47 UTC)",
      ),
      "the-produce-paths-append-and-index-entries-written-behind-2026-11-29-18421847-utc",
    );
    assert.equal(
      headingSlug("Every run of `npm run bench`, in brief"),
      "every-run-of-npm-run-bench-in-brief",
    );
  });

  test("a table that says what the runs measured passes", () => {
    assert.deepEqual(checkBenchmarks(checkout()), []);
  });

  test("a figure that is not in the section the row links to fails", () => {
    const root = checkout({
      "docs/benchmarks.md": (t) => t.replace("validate 5,802 MB/s", "validate 5,902 MB/s"),
    });
    assert.deepEqual(checkBenchmarks(root), [
      'docs/benchmarks.md:5 (codec): figure 5,902 is not in benchmarks/codec.md "Run of 2026-11-29 13:07 UTC"',
    ]);
  });

  test("a figure of an older run than the linked one fails", () => {
    const root = checkout({
      "docs/benchmarks.md": (t) => t.replace("validate 5,802 MB/s", "validate 4,100 MB/s"),
    });
    assert.match(checkBenchmarks(root).join("\n"), /figure 4,100 is not in/);
  });

  test("a run added to the section after the row's date fails until the row is updated", () => {
    const newer = "\n### Run of 2026-12-03 10:00 UTC\n\n| validate 1 MiB batch | 6,010 |\n";
    const stale = checkout({ "docs/benchmarks/codec.md": (t) => t + newer });
    assert.deepEqual(checkBenchmarks(stale), [
      'docs/benchmarks.md:5 (codec): date 2026-11-29, but the latest run in benchmarks/codec.md "Codec (issue 2)" is of 2026-12-03',
    ]);
    const updated = checkout({
      "docs/benchmarks/codec.md": (t) => t + newer,
      "docs/benchmarks.md": (t) =>
        t
          .replace("validate 5,802 MB/s, 0.92× of crc32c | 2026-11-29", "validate 6,010 MB/s | 2026-12-03")
          .replace("#run-of-2026-11-29-1307-utc", "#run-of-2026-12-03-1000-utc"),
    });
    assert.deepEqual(checkBenchmarks(updated), []);
  });

  test("a command or a goal's number that the section does not have fails", () => {
    const root = checkout({
      "docs/benchmarks.md": (t) =>
        t.replace("`npm run bench:codec`", "`npm run bench:codecs`").replace("≥ 2 GB/s", "≥ 3 GB/s"),
    });
    assert.deepEqual(checkBenchmarks(root), [
      'docs/benchmarks.md:5 (codec): command `npm run bench:codecs` is not in benchmarks/codec.md "Codec (issue 2)"',
      'docs/benchmarks.md:5 (codec): goal\'s 3 is not in benchmarks/codec.md "Codec (issue 2)"',
    ]);
  });

  test("links to no heading, unlinked area files and wrong mentions in other docs fail", () => {
    const root = checkout({
      "docs/benchmarks.md": (t) => t.replace("#run-of-2026-11-29-1307-utc", "#run-of-2026-11-29"),
      "README.md": (t) => `${t}More: docs/benchmarks/tls.md, and docs/benchmarks/codec.md, "Storage".\n`,
    });
    writeFileSync(
      join(root, "docs/benchmarks/storage.md"),
      "# Benchmarks: storage\n\n## Storage (issue 3)\n",
    );
    assert.deepEqual(checkBenchmarks(root), [
      "docs/benchmarks.md:5 (codec): benchmarks/codec.md#run-of-2026-11-29 is not a heading",
      "docs/benchmarks/storage.md: no row of docs/benchmarks.md links to it",
      "README.md:2: docs/benchmarks/tls.md does not exist",
      'README.md:2: docs/benchmarks/codec.md has no heading "Storage"',
    ]);
  });

  test("the repository's own table agrees with its runs", () => {
    assert.deepEqual(checkBenchmarks(REPO), []);
  });
});
