// Benchmark support: appends a dated run to a section of a docs/benchmarks/ file. The section ("## Title") is
// created at the end of the file with an introduction when absent; a run goes at the end of its section,
// before the next "## " heading, so later sections stay where they are.

import { existsSync, readFileSync, writeFileSync } from "node:fs";

export function appendRunToSection(path: string, heading: string, intro: string, run: string): void {
  let doc = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  if (!doc.endsWith("\n")) doc += "\n";
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) {
    doc = `${doc.replace(/\n+$/, "\n")}\n${heading}\n\n${intro.trim()}\n`;
    writeFileSync(path, `${doc}\n${run.trim()}\n`);
    return;
  }
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (lines[i].startsWith("## ")) {
      end = i;
      break;
    }
  }
  const before = lines.slice(0, end).join("\n").replace(/\n+$/, "");
  const after = lines.slice(end).join("\n");
  writeFileSync(path, `${before}\n\n${run.trim()}\n${after === "" ? "" : `\n${after}`}`);
}
