// Checks that the table at the top of docs/benchmarks.md says what the runs in docs/benchmarks/ measured,
// so the two cannot drift apart. Run by `npm test` (after the build):
//
//   npm run check:benchmarks        # node dist/scripts/check-benchmarks.js
//
// The table has the columns benchmark | command | latest figure | date | goal | runs, and each row's "runs"
// cell links to a heading of an area file (docs/benchmarks/<area>.md#<heading>). A row is checked against
// the section under that heading (down to the next heading of the same or a higher level) and against the
// benchmark's "## " section that holds it:
// - figure: every number in it appears, as a whole number, in the linked section (numbers are what can
//   drift; the words around them are the table's own);
// - date: it is the latest date of a run in the benchmark's section (a date in a heading, or on a line
//   that starts with "Date:" or "Runs"), so a run added to the section — `npm run bench` appends its
//   own — fails the check until the row says what that run measured;
// - command: every `code` span of the cell appears in the benchmark's section;
// - goal: every number in it appears in the benchmark's section ("—" where the issue set none).
// Every file in docs/benchmarks/ must be linked from a row, and every link to docs/benchmarks.md or a file
// of docs/benchmarks/ in README.md and docs/ must lead to a file, and to a heading where it names one.
// It prints one line per problem and exits 1 when there is any.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const TABLE_DOC = "docs/benchmarks.md";
const AREA_DIR = "docs/benchmarks";
const COLUMNS = ["benchmark", "command", "latest figure", "date", "goal", "runs"] as const;

interface Heading {
  level: number;
  slug: string;
  text: string;
  /** Index of the heading's line. */
  line: number;
}

interface AreaFile {
  lines: string[];
  headings: Heading[];
}

/** The numbers of a text, as written ("5,802", "0.63", "1,000,000"); a digit run after a letter ("p99", "v9") is a name, not a number. */
export function numbersOf(text: string): string[] {
  return [...text.matchAll(/(?<![\p{L}\d.,])\d[\d,]*(?:\.\d+)?/gu)].map((m) => m[0].replace(/,+$/, ""));
}

/** GitHub's anchor for a heading: lower case, punctuation and symbols dropped, spaces made hyphens. */
export function headingSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

function parseArea(text: string): AreaFile {
  const lines = text.split("\n");
  const headings: Heading[] = [];
  const seen = new Map<string, number>();
  let fence = false;
  lines.forEach((line, i) => {
    if (line.startsWith("```")) fence = !fence;
    const m = fence ? null : /^(#{1,6}) (.+?)\s*$/.exec(line);
    if (!m) return;
    const base = headingSlug(m[2]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    headings.push({ level: m[1].length, slug: n === 0 ? base : `${base}-${n}`, text: m[2], line: i });
  });
  return { lines, headings };
}

/** The lines under heading `h`, down to the next heading of the same or a higher level. */
function sectionOf(area: AreaFile, h: Heading): string[] {
  const next = area.headings.find((o) => o.line > h.line && o.level <= h.level);
  return area.lines.slice(h.line, next ? next.line : area.lines.length);
}

/** The latest run date of a section: dates in headings and on "Date:" / "Runs" lines. */
function latestRunDate(section: string[]): string | undefined {
  let latest: string | undefined;
  for (const line of section) {
    if (!/^#{1,6} /.test(line) && !/^\s*(?:-\s*)?(?:Dates?|Runs?)\b/.test(line)) continue;
    for (const m of line.matchAll(/\b(\d{4}-\d{2}-\d{2})\b/g)) if (!latest || m[1] > latest) latest = m[1];
  }
  return latest;
}

const collapse = (s: string): string => s.replace(/\s+/g, " ");

function tableRows(doc: string): { cells: Record<(typeof COLUMNS)[number], string>; line: number }[] {
  const lines = doc.split("\n");
  const split = (l: string): string[] =>
    l
      .trim()
      .replace(/^\||\|$/g, "")
      .split("|")
      .map((c) => c.trim());
  const start = lines.findIndex((l) => l.startsWith("|"));
  if (start < 0) throw new Error(`${TABLE_DOC} has no table`);
  const header = split(lines[start]);
  if (header.join("|") !== COLUMNS.join("|"))
    throw new Error(`${TABLE_DOC}: the first table's columns are not ${COLUMNS.join(" | ")}`);
  const rows = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith("|"); i++) {
    const c = split(lines[i]);
    const cells = Object.fromEntries(COLUMNS.map((name, k) => [name, c[k] ?? ""]));
    rows.push({ cells: cells as Record<(typeof COLUMNS)[number], string>, line: i + 1 });
  }
  return rows;
}

/** Every problem found under `root` (a checkout), one line each; empty when the table and the runs agree. */
export function checkBenchmarks(root: string): string[] {
  const problems: string[] = [];
  const areas = new Map<string, AreaFile | undefined>();
  const area = (path: string): AreaFile | undefined => {
    if (!areas.has(path))
      areas.set(path, existsSync(path) ? parseArea(readFileSync(path, "utf8")) : undefined);
    return areas.get(path);
  };
  const linked = new Set<string>();

  let rows: ReturnType<typeof tableRows>;
  try {
    rows = tableRows(readFileSync(join(root, TABLE_DOC), "utf8"));
  } catch (e) {
    return [(e as Error).message];
  }
  for (const { cells, line } of rows) {
    const at = `${TABLE_DOC}:${line} (${cells.benchmark})`;
    const link = /\]\((benchmarks\/[\w-]+\.md)#([^)\s]+)\)/.exec(cells.runs);
    if (!link) {
      problems.push(`${at}: the runs cell links to no heading of a docs/benchmarks/ file`);
      continue;
    }
    const file = join(root, "docs", link[1]);
    linked.add(resolve(file));
    const a = area(file);
    const h = a?.headings.find((x) => x.slug === link[2]);
    if (!a || !h) {
      problems.push(`${at}: ${link[1]}#${link[2]} is not a heading`);
      continue;
    }
    const benchmark = [...a.headings].reverse().find((x) => x.level === 2 && x.line <= h.line);
    if (!benchmark || h.level < 2) {
      problems.push(`${at}: ${link[1]}#${link[2]} is not inside a "## " section`);
      continue;
    }
    const cited = sectionOf(a, h).join("\n");
    const whole = sectionOf(a, benchmark).join("\n");
    const where = `${link[1]} "${benchmark.text}"`;

    const citedNumbers = new Set(numbersOf(cited));
    for (const n of numbersOf(cells["latest figure"]))
      if (!citedNumbers.has(n)) problems.push(`${at}: figure ${n} is not in ${link[1]} "${h.text}"`);

    const latest = latestRunDate(sectionOf(a, benchmark));
    if (!/^\d{4}-\d{2}-\d{2}$/.test(cells.date))
      problems.push(`${at}: date "${cells.date}" is not YYYY-MM-DD`);
    else if (latest === undefined) problems.push(`${at}: ${where} has no dated run`);
    else if (cells.date !== latest)
      problems.push(`${at}: date ${cells.date}, but the latest run in ${where} is of ${latest}`);

    const commands = [...cells.command.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    if (commands.length === 0) problems.push(`${at}: the command cell has no \`command\``);
    for (const c of commands)
      if (!collapse(whole).includes(collapse(c))) problems.push(`${at}: command \`${c}\` is not in ${where}`);

    const wholeNumbers = new Set(numbersOf(whole));
    if (cells.goal === "") problems.push(`${at}: no goal (write — where the issue set none)`);
    for (const n of numbersOf(cells.goal))
      if (!wholeNumbers.has(n)) problems.push(`${at}: goal's ${n} is not in ${where}`);
  }

  const areaDir = join(root, AREA_DIR);
  const areaFiles = existsSync(areaDir) ? readdirSync(areaDir).filter((f) => f.endsWith(".md")) : [];
  for (const f of areaFiles.sort())
    if (!linked.has(resolve(areaDir, f)))
      problems.push(`${AREA_DIR}/${f}: no row of ${TABLE_DOC} links to it`);

  // Links into the benchmarks from the other docs.
  const docs = ["README.md", ...readdirSync(join(root, "docs")).map((f) => `docs/${f}`)]
    .concat(areaFiles.map((f) => `${AREA_DIR}/${f}`))
    .filter((f) => f.endsWith(".md") && existsSync(join(root, f)));
  const isBenchmarks = (abs: string): boolean =>
    abs === resolve(root, TABLE_DOC) || dirname(abs) === resolve(areaDir);
  for (const doc of docs) {
    let text = readFileSync(join(root, doc), "utf8");
    // The table's own rows were checked above.
    if (doc === TABLE_DOC) text = text.replace(/^\|.*$/gm, "");
    const lineOf = (index: number): number => text.slice(0, index).split("\n").length;
    for (const m of text.matchAll(/\]\(([^)\s#]+\.md)(?:#([^)\s]+))?\)/g)) {
      const target = resolve(root, dirname(doc), m[1]);
      if (!isBenchmarks(target)) continue;
      const a = area(target);
      if (!a) problems.push(`${doc}:${lineOf(m.index)}: ${m[1]} does not exist`);
      else if (m[2] && !a.headings.some((h) => h.slug === m[2]))
        problems.push(`${doc}:${lineOf(m.index)}: ${m[1]}#${m[2]} is not a heading`);
    }
    // Plain mentions: docs/benchmarks/<area>.md, optionally followed by , "<start of a heading>".
    for (const m of text.matchAll(/docs\/benchmarks\/([\w-]+\.md)(?:,\s+"([^"]+)")?/g)) {
      const a = area(join(areaDir, m[1]));
      if (!a) problems.push(`${doc}:${lineOf(m.index)}: docs/benchmarks/${m[1]} does not exist`);
      else if (m[2] && !a.headings.some((h) => collapse(h.text).startsWith(collapse(m[2]))))
        problems.push(`${doc}:${lineOf(m.index)}: docs/benchmarks/${m[1]} has no heading "${m[2]}"`);
    }
  }
  return problems;
}

function main(): void {
  // Compiled to dist/scripts/check-benchmarks.js: the repository root is two levels up.
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const problems = checkBenchmarks(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(
      `check-benchmarks: ${problems.length} problem(s); the table in ${TABLE_DOC} must say what the runs in ${AREA_DIR}/ measured`,
    );
    process.exit(1);
  }
  console.log(
    `check-benchmarks: the table of ${relative(root, join(root, TABLE_DOC))} agrees with ${AREA_DIR}/`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
