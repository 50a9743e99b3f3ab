// Test-only: the shared setup of the CLI tool tests — one real broker per test file (and, when asked, an
// AdminClient on it) started before the file's tests and closed after them, the runner of
// `tributary <tool> --bootstrap-server <broker> …`, and the checks on a tool's exit status and output lines.

import assert from "node:assert/strict";
import { after, before } from "node:test";
import { AdminClient } from "../../src/client/admin/admin-client.js";
import { BrokerHarness, type BrokerOptions, type CommandResult, describeResult } from "./broker-harness.js";
import { runTributary } from "./tributary-cli.js";

export interface CliToolFixture {
  /** The broker; available once the file's before() hooks run. */
  readonly broker: BrokerHarness;
  /** An AdminClient on the broker (only with `admin: true`). */
  readonly admin: AdminClient;
  /** A runner of `tributary <name> --bootstrap-server <broker> <args>`. */
  tool(name: string): (...args: string[]) => Promise<CommandResult>;
  /** Creates topics (replication factor 1) with the AdminClient, asserting each succeeded. */
  createTopics(topics: ReadonlyArray<{ name: string; partitions: number }>): Promise<void>;
}

export interface CliToolFixtureOptions extends BrokerOptions {
  /** Also open an AdminClient on the broker. */
  readonly admin?: boolean;
  /** Runs after the broker (and admin client) started, still in before(). */
  readonly setup?: (fixture: CliToolFixture) => Promise<void>;
  /** Runs in after(), before the admin client and the broker are closed. */
  readonly teardown?: () => Promise<void>;
}

/** Registers before()/after() hooks that start and close the broker; returns its handles. */
export function cliToolFixture(options: CliToolFixtureOptions): CliToolFixture {
  const { admin: withAdmin, setup, teardown, ...brokerOptions } = options;
  let broker: BrokerHarness | undefined;
  let admin: AdminClient | undefined;
  const fixture: CliToolFixture = {
    get broker(): BrokerHarness {
      if (!broker) throw new Error("the broker is started in before()");
      return broker;
    },
    get admin(): AdminClient {
      if (!admin) throw new Error("no AdminClient: start the fixture with admin: true");
      return admin;
    },
    tool:
      (name) =>
      (...args) =>
        tributary(name, "--bootstrap-server", fixture.broker.bootstrap, ...args),
    async createTopics(topics) {
      const res = await fixture.admin.createTopics(
        topics.map((t) => ({ name: t.name, numPartitions: t.partitions, replicationFactor: 1 })),
      );
      for (const r of res) assert.equal(r.error, undefined, `create topic ${r.name}`);
    },
  };
  before(async () => {
    broker = await BrokerHarness.start(brokerOptions);
    if (withAdmin) admin = new AdminClient({ bootstrapServers: broker.bootstrap });
    await setup?.(fixture);
  });
  after(async () => {
    await teardown?.();
    await admin?.close();
    await broker?.close();
  });
  return fixture;
}

/** Runs `tributary <args>` with a 30 s deadline. */
export function tributary(...args: string[]): Promise<CommandResult> {
  return runTributary(args, { timeoutMs: 30_000 });
}

/** A command's output split into lines (no trailing empty line; none for ""). */
export function lines(s: string): string[] {
  return s === "" ? [] : s.replace(/\n$/, "").split("\n");
}

/** Exit 0 and (unless `anyStderr`) nothing on stderr; returns the stdout lines. */
export function ok(r: CommandResult, what: string, options: { anyStderr?: boolean } = {}): string[] {
  assert.equal(r.code, 0, describeResult(what, r));
  if (!options.anyStderr) assert.equal(r.stderr, "", describeResult(what, r));
  return lines(r.stdout);
}

/** Exit 1 with exactly one line on stderr and no stack trace; returns that line. */
export function oneLineError(r: CommandResult, what: string): string {
  assert.equal(r.code, 1, describeResult(what, r));
  const err = lines(r.stderr);
  assert.equal(err.length, 1, describeResult(what, r));
  assert.doesNotMatch(r.stderr + r.stdout, /^\s+at /m, "no stack trace");
  return err[0];
}
