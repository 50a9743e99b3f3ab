// Command-line options of the Kafka tools (the joptsimple conventions Kafka's *Command classes use):
// `--name value` and `--name=value`, repeated options, typed values (String/Integer/Long), `--help`
// printing the tool's description and an "Option / Description" table, and the one-line errors
// (unknown option, missing value, missing required option, options that cannot be combined) that
// CommandLineUtils reports. `runTool` wraps a tool so that no error ever prints a stack trace.

import type { AdminClientOptions } from "../client/admin/admin-client.js";
import { securityFromProperties } from "../client/config-parsing.js";
import { KafkaClientError } from "../client/errors.js";
import { CLIENT_SOFTWARE_VERSION } from "../client/network/broker-connection.js";
import { loadPropertiesFile } from "../client/producer/properties-file.js";
import { StdoutClosedError } from "./tool-output.js";

export interface OptionDef {
  readonly name: string;
  readonly description: string;
  /** Options that take a value: the value's type and what it is, as in `<String: topic>`. */
  readonly arg?: { readonly type: "String" | "Integer" | "Long"; readonly describedAs: string };
  /** Shown as "(default: …)" and returned by value() when the option is absent. */
  readonly defaultValue?: string;
}

export interface ToolSpec {
  /** The tool's name, `tributary <name>`. */
  readonly name: string;
  /** The line printed before the option table (Kafka's CommandLineUtils message). */
  readonly description: string;
  readonly options: readonly OptionDef[];
}

/** A bad command line: printed as one line, exit status 1. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

const HELP: OptionDef = { name: "help", description: "Print usage information." };
const VERSION: OptionDef = { name: "version", description: "Display Tributary version." };

export class ParsedArgs {
  constructor(
    private readonly spec: ToolSpec,
    private readonly given: ReadonlyMap<string, readonly string[]>,
    /** Arguments that are not options, in order. */
    readonly positional: readonly string[],
  ) {}

  has(name: string): boolean {
    return this.given.has(name);
  }

  /** The last value given, else the option's default. */
  value(name: string): string | undefined {
    const v = this.given.get(name);
    if (v && v.length > 0) return v[v.length - 1];
    return this.spec.options.find((o) => o.name === name)?.defaultValue;
  }

  /** Every value given for a repeated option, in order. */
  values(name: string): string[] {
    return [...(this.given.get(name) ?? [])];
  }

  /** The value as an integer (checked when parsed for Integer/Long options). */
  int(name: string): number | undefined {
    const v = this.value(name);
    return v === undefined ? undefined : Number(v);
  }

  /** Names of the options given, in spec order. */
  givenNames(): string[] {
    return this.spec.options.filter((o) => this.given.has(o.name)).map((o) => o.name);
  }
}

const INT32 = /^[+-]?\d+$/;

/** Parses argv against the spec; throws UsageError naming the first problem. */
export function parseArgs(spec: ToolSpec, argv: readonly string[]): ParsedArgs {
  const defs = new Map<string, OptionDef>();
  for (const o of [...spec.options, HELP, VERSION]) defs.set(o.name, o);
  const given = new Map<string, string[]>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith("--") || a.length === 2) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    const def = defs.get(name);
    if (!def) throw new UsageError(`${name} is not a recognized option`);
    let value: string | undefined;
    if (def.arg) {
      if (eq >= 0) value = a.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new UsageError(`Option ${name} requires an argument`);
      if (def.arg.type !== "String") {
        const n = Number(value);
        const max = def.arg.type === "Integer" ? 2 ** 31 - 1 : Number.MAX_SAFE_INTEGER;
        if (!INT32.test(value.trim()) || !Number.isSafeInteger(n) || n > max || n < -max - 1)
          throw new UsageError(`Cannot parse argument '${value}' of option ${name}`);
        value = String(n);
      }
    } else if (eq >= 0) {
      throw new UsageError(`Option ${name} does not take an argument`);
    }
    const list = given.get(name) ?? [];
    if (value !== undefined) list.push(value);
    given.set(name, list);
  }
  return new ParsedArgs(spec, given, positional);
}

/** `Missing required argument "[topic]"` when any of `names` is absent. */
export function checkRequired(args: ParsedArgs, ...names: string[]): void {
  for (const n of names) if (!args.has(n)) throw new UsageError(`Missing required argument "[${n}]"`);
}

/** `Option "[x]" can't be used with option "[y]"` when `name` is given with one of `invalid`. */
export function checkInvalid(args: ParsedArgs, name: string, invalid: readonly string[]): void {
  if (!args.has(name)) return;
  for (const other of invalid)
    if (args.has(other)) throw new UsageError(`Option "[${name}]" can't be used with option "[${other}]"`);
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const para of text.split("\n")) {
    let line = "";
    for (const word of para.split(/\s+/).filter((w) => w !== "")) {
      if (line === "") line = word;
      else if (line.length + 1 + word.length <= width) line += ` ${word}`;
      else {
        out.push(line);
        line = word;
      }
    }
    out.push(line);
  }
  return out;
}

/** The description line and joptsimple's option table (options sorted by name). */
export function helpText(spec: ToolSpec): string {
  const optWidth = 39;
  const descWidth = 38;
  const lines = [
    spec.description,
    `${"Option".padEnd(optWidth + 2)}Description`,
    `${"------".padEnd(optWidth + 2)}-----------`,
  ];
  const all = [...spec.options, HELP, VERSION].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  for (const o of all) {
    const head = o.arg ? `--${o.name} <${o.arg.type}: ${o.arg.describedAs}>` : `--${o.name}`;
    const desc =
      o.defaultValue !== undefined ? `${o.description} (default: ${o.defaultValue})` : o.description;
    const left = wrap(head, optWidth).map((l, i) => (i === 0 ? l : `  ${l}`));
    const right = wrap(desc, descWidth).map((l, i) => (i === 0 ? l : `  ${l}`));
    for (let i = 0; i < Math.max(left.length, right.length); i++)
      lines.push(`${(left[i] ?? "").padEnd(optWidth + 2)}${right[i] ?? ""}`.trimEnd());
  }
  return lines.join("\n");
}

/** One line for any error: the message of a usage or Kafka error, never a stack trace. */
export function errorLine(e: unknown): string {
  if (e instanceof UsageError || e instanceof KafkaClientError) return e.message;
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}

/**
 * Runs a tool: `--help` prints the help (exit 0), no arguments print the help and exit 1 (as Kafka's
 * tools do), a UsageError prints its one line (exit 1); a StdoutClosedError (the reader of a tool's
 * output has gone, tool-output.ts) ends the run quietly (exit 0); any other error prints `errorPrefix` +
 * its message (exit 1).
 */
export async function runTool(
  spec: ToolSpec,
  argv: readonly string[],
  body: (args: ParsedArgs) => Promise<number>,
  options: { errorPrefix?: string; allowNoArgs?: boolean; prefixUsageErrors?: boolean } = {},
): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(spec, argv);
  } catch (e) {
    process.stderr.write(`${options.prefixUsageErrors ? (options.errorPrefix ?? "") : ""}${errorLine(e)}\n`);
    return 1;
  }
  if (args.has("help")) {
    process.stdout.write(`${helpText(spec)}\n`);
    return 0;
  }
  if (args.has("version")) {
    process.stdout.write(`${CLIENT_SOFTWARE_VERSION}\n`);
    return 0;
  }
  if (argv.length === 0 && !options.allowNoArgs) {
    process.stderr.write(`${helpText(spec)}\n`);
    return 1;
  }
  if (args.positional.length > 0) {
    process.stderr.write(`Found non-option argument '${args.positional[0]}'; options start with --\n`);
    return 1;
  }
  try {
    return await body(args);
  } catch (e) {
    if (e instanceof StdoutClosedError) return 0;
    const prefix = e instanceof UsageError && !options.prefixUsageErrors ? "" : (options.errorPrefix ?? "");
    const line = `${prefix}${errorLine(e)}`;
    process.stderr.write(`${line.split("\n")[0]}\n`);
    return 1;
  }
}

/**
 * AdminClient options from `--bootstrap-server` and `--command-config <file>` (Kafka's admin
 * properties: bootstrap.servers, client.id, request.timeout.ms, default.api.timeout.ms,
 * retry.backoff.ms, socket.connection.setup.timeout.ms, security.protocol, ssl.* and sasl.*).
 */
export function adminClientOptions(
  bootstrapServer: string | undefined,
  commandConfig?: string,
): AdminClientOptions {
  const props = commandConfig ? loadPropertiesFile(commandConfig) : {};
  const bootstrap = bootstrapServer ?? props["bootstrap.servers"];
  if (!bootstrap) throw new UsageError("--bootstrap-server must be specified");
  const num = (key: string): number | undefined => {
    const v = props[key];
    if (v === undefined) return undefined;
    const n = Number(v.trim());
    if (!Number.isSafeInteger(n) || n < 0)
      throw new UsageError(`Invalid value ${v} for configuration ${key}: Not a number of type INT`);
    return n;
  };
  const options: { -readonly [K in keyof AdminClientOptions]: AdminClientOptions[K] } = {
    bootstrapServers: bootstrap,
    clientId: props["client.id"] ?? "adminclient-1",
  };
  const requestTimeoutMs = num("request.timeout.ms");
  if (requestTimeoutMs !== undefined) options.requestTimeoutMs = requestTimeoutMs;
  const apiTimeoutMs = num("default.api.timeout.ms");
  if (apiTimeoutMs !== undefined) options.defaultApiTimeoutMs = apiTimeoutMs;
  const backoffMs = num("retry.backoff.ms");
  if (backoffMs !== undefined) options.retryBackoffMs = backoffMs;
  const connectMs = num("socket.connection.setup.timeout.ms");
  if (connectMs !== undefined) options.connectTimeoutMs = connectMs;
  // security.protocol with the ssl.* (TLS) and sasl.* (SASL) settings.
  const { ssl, sasl } = securityFromProperties(props);
  if (ssl !== undefined) options.ssl = ssl;
  if (sasl !== undefined) options.sasl = sasl;
  return options;
}
