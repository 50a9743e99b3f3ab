// The output of `dump-log`: stdout buffered in 64 KiB chunks written with pipe back-pressure (a huge dump
// must not pile up in memory), stderr lines written after what stdout has buffered so the two stay in order
// on a terminal, and the count of errors that makes the exit status 1. A reader that goes away (`| head`)
// surfaces as StdoutClosedError from the write (tool-output.ts).

import { writeOutput } from "../../tool-output.js";

/** Buffered stdout/stderr that respects pipe back-pressure (huge dumps must not pile up in memory). */
export class Output {
  private out = "";
  private line = "";
  errors = 0;

  constructor(
    private readonly stdout: NodeJS.WritableStream,
    private readonly stderr: NodeJS.WritableStream,
  ) {}

  print(s: string): void {
    this.line += s;
  }

  println(s = ""): void {
    this.out += `${this.line}${s}\n`;
    this.line = "";
  }

  /** A line on stderr (flushes stdout first so the two stay in order on a terminal). */
  err(s: string): void {
    this.flushSync();
    this.stderr.write(`${s}\n`);
  }

  private flushSync(): void {
    if (this.out === "") return;
    this.stdout.write(this.out);
    this.out = "";
  }

  /** Writes what is buffered, waiting while the reader is behind; throws StdoutClosedError once it has gone. */
  private async flush(): Promise<void> {
    const chunk = this.out;
    this.out = "";
    await writeOutput(chunk, this.stdout);
  }

  async maybeFlush(): Promise<void> {
    if (this.out.length < 64 * 1024) return;
    await this.flush();
  }

  async end(): Promise<void> {
    if (this.line !== "") this.println();
    await this.flush();
  }
}
