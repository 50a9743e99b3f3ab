// Benchmark support: the rows a bench prints as it goes (`  what: value`, phases as bold rows) and, at the
// end, as the markdown table docs/benchmarks.md takes, with the findings listed under it.

export interface ReportRow {
  readonly what: string;
  readonly value: string;
}

export class BenchReport {
  readonly rows: ReportRow[] = [];
  readonly findings: string[] = [];

  record(what: string, value: string): void {
    this.rows.push({ what, value });
    console.log(`  ${what}: ${value}`);
  }

  phase(title: string): void {
    this.rows.push({ what: `**${title}**`, value: "" });
    console.log(`\n${title}`);
  }

  finding(f: string): void {
    this.findings.push(f);
    console.log(`  FINDING: ${f}`);
  }

  /** The markdown table of every row, then the findings. */
  printTable(): void {
    console.log("\n| measurement | figure |\n|---|---|");
    for (const r of this.rows)
      console.log(r.what.startsWith("**") ? `| ${r.what} | |` : `| ${r.what} | ${r.value} |`);
    if (this.findings.length > 0) {
      console.log("\nfindings:");
      for (const f of this.findings) console.log(`- ${f}`);
    }
  }
}
