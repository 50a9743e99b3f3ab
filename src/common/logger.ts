// Logger: leveled, one line per event, with the component name, as Kafka's log4j lines
// ("[2026-11-29 12:00:00,123] INFO [LogLoader partition=t-0] ... (component)"). Tests can capture lines.

export type LogLevel = "ERROR" | "WARN" | "INFO" | "DEBUG";

const ORDER: Record<LogLevel, number> = { ERROR: 0, WARN: 1, INFO: 2, DEBUG: 3 };

export type LogSink = (line: string, level: LogLevel) => void;

/**
 * Streams whose reader has gone (a broker whose parent terminal or pipe closed): writing to them again
 * would fail again, and an unhandled write error is an uncaught exception that gets logged — a loop that
 * spins a core. Their errors are taken here and they are written no more (log4j's console appender
 * likewise drops what it cannot write).
 */
const closedStreams = new WeakSet<NodeJS.WriteStream>();
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", () => closedStreams.add(stream));
}

function write(stream: NodeJS.WriteStream, line: string): void {
  if (closedStreams.has(stream) || stream.destroyed) return;
  stream.write(`${line}\n`);
}

let sink: LogSink = (line, level) => {
  write(level === "ERROR" || level === "WARN" ? process.stderr : process.stdout, line);
};
let threshold: LogLevel = (process.env.TRIBUTARY_LOG_LEVEL as LogLevel) ?? "INFO";

/** Replaces where log lines go (tests capture them); returns the previous sink. */
export function setLogSink(next: LogSink): LogSink {
  const prev = sink;
  sink = next;
  return prev;
}

/** Whether lines of `level` are written (to skip building a message nobody reads). */
export function logLevelEnabled(level: LogLevel): boolean {
  return ORDER[level] <= ORDER[threshold];
}

export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

function stamp(d: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())},${p(d.getMilliseconds(), 3)}`;
}

export class Logger {
  constructor(
    private readonly component: string,
    private readonly context = "",
  ) {}

  withContext(context: string): Logger {
    return new Logger(this.component, context);
  }

  private log(level: LogLevel, msg: string): void {
    if (ORDER[level] > ORDER[threshold]) return;
    const ctx = this.context ? `[${this.context}] ` : "";
    sink(`[${stamp(new Date())}] ${level} ${ctx}${msg} (${this.component})`, level);
  }

  error(msg: string): void {
    this.log("ERROR", msg);
  }

  warn(msg: string): void {
    this.log("WARN", msg);
  }

  info(msg: string): void {
    this.log("INFO", msg);
  }

  debug(msg: string): void {
    this.log("DEBUG", msg);
  }
}
