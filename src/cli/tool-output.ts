// What every tool does when the reader of its output goes away (`tributary … | head`): Node reports a
// write to a pipe whose reader has exited as an EPIPE 'error' event on process.stdout, and an 'error'
// event nobody handles kills the process with a stack trace — in the middle of whatever the tool was
// doing. `guardToolOutput` (main.ts runs it before any tool) takes those errors once for all tools:
// an EPIPE is quiet, another write error (a full disk behind `> file`) is one line on stderr, and from
// then on `stdoutClosed()` is true. Every tool therefore finishes its work — a tool that changes state
// (reassign-partitions clearing throttles, delete-records, configs --alter, …) completes it and exits
// with its usual status, its remaining lines going nowhere, as Kafka's tools (a PrintStream swallows
// write errors). A tool that only produces a stream of output (console-consumer, dump-log, the perf
// tests, consumer-groups --describe of many groups) writes through `writeOutput`, which rejects with
// StdoutClosedError once the reader has gone, or checks `stdoutClosed()` in its loop, and stops; runTool
// and main.ts end such a run quietly with status 0 (Kafka's console consumer ends its run the same way).

/** The reader of standard output has gone: a tool that only produces output stops (status 0). */
export class StdoutClosedError extends Error {
  override readonly name = "StdoutClosedError";
  constructor() {
    super("standard output is closed");
  }
}

/** Streams whose write errors are taken here, and those of them that failed (written no more). */
const guarded = new WeakSet<NodeJS.WritableStream>();
const closed = new WeakSet<NodeJS.WritableStream>();

/** A write error that means the reader has gone, not a fault to report. */
function readerGone(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED" || code === "ECONNRESET";
}

/** Takes `stream`'s write errors: it is marked closed; only a stdout error other than EPIPE is reported. */
function guard(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  stream.on("error", (e: Error) => {
    if (closed.has(stream)) return;
    closed.add(stream);
    if (stream === process.stdout && !readerGone(e) && !closed.has(process.stderr)) {
      const code = (e as NodeJS.ErrnoException).code;
      process.stderr.write(
        `tributary: cannot write to standard output${code ? ` (${code})` : ""}: ${e.message}\n`,
      );
    }
  });
}

/** Installs the guard on process.stdout and process.stderr (idempotent). */
export function guardToolOutput(): void {
  guard(process.stdout);
  guard(process.stderr);
}

/** Whether the reader of standard output has gone (a write to it failed). */
export function stdoutClosed(): boolean {
  return closed.has(process.stdout);
}

/**
 * Writes `chunk` to `stream` (standard output by default) and waits while the stream's buffer is full
 * (a reader slower than the tool), so a long stream of output never piles up in memory. Rejects with
 * StdoutClosedError when the stream's reader has gone — before the write, or while waiting.
 */
export function writeOutput(
  chunk: string | Uint8Array,
  stream: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  guard(stream);
  if (closed.has(stream)) return Promise.reject(new StdoutClosedError());
  if (stream.write(chunk)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const settle = (gone: boolean) => (): void => {
      stream.removeListener("drain", onDrain);
      stream.removeListener("error", onGone);
      stream.removeListener("close", onGone);
      if (gone) reject(new StdoutClosedError());
      else resolve();
    };
    const onDrain = settle(false);
    const onGone = settle(true);
    stream.once("drain", onDrain);
    stream.once("error", onGone);
    stream.once("close", onGone);
  });
}
