// `tributary console`: the web console as its own process (EFAK's `ke.sh start`). Reads the config
// file and flags (console-config.ts; `--override key=value` sets any key), its users (auth/users.ts, and
// the users file with its first-run admin, auth/first-run.ts) and alert rules (alerts/), opens the
// history store, starts the collector and the HTTP server, prints "Console listening on
// http://HOST:PORT/" (and on a first run the admin's password, once), and stops cleanly on SIGINT/SIGTERM.

import { type ParsedArgs, runTool, type ToolSpec, UsageError } from "../cli/args.js";
import { AlertManager } from "./alerts/alert-manager.js";
import { type AlertRule, alertRulesFrom } from "./alerts/alert-rules.js";
import { completeFirstRun, setUpUsers, USERS_FILE_KEY, type UsersSetup } from "./auth/first-run.js";
import { hashPassword } from "./auth/passwords.js";
import { Sessions } from "./auth/sessions.js";
import { Collector } from "./collector/collector.js";
import { buildConfig, ConfigError, checkBootstrap, configBaseDir, loadConfigFile } from "./console-config.js";
import { openHistory } from "./history/open-history.js";
import { buildRouter, listen, urlOf } from "./http/console-server.js";

export const CONSOLE_SPEC: ToolSpec = {
  name: "console",
  description:
    "The web console: brokers, topics, consumer groups with lag (messages and seconds) over time, and /metrics.",
  options: [
    {
      name: "config",
      description: "A console.properties (or .json) file.",
      arg: { type: "String", describedAs: "file" },
    },
    {
      name: "bootstrap-server",
      description: "Bootstrap servers of a cluster with the alias 'default' (or --alias).",
      arg: { type: "String", describedAs: "HOST1:PORT1,HOST2:PORT2" },
    },
    {
      name: "alias",
      description: "The alias of --bootstrap-server's cluster.",
      arg: { type: "String", describedAs: "alias" },
      defaultValue: "default",
    },
    {
      name: "cluster",
      description: "A cluster as alias=HOST1:PORT1,HOST2:PORT2; repeat for more clusters.",
      arg: { type: "String", describedAs: "alias=servers" },
    },
    {
      name: "host",
      description: "Address to listen on (console.listen.host).",
      arg: { type: "String", describedAs: "address" },
    },
    {
      name: "port",
      description: "Port to listen on, 0 for any free port (console.port).",
      arg: { type: "Integer", describedAs: "port" },
    },
    {
      name: "sample-interval-ms",
      description: "How often the collector samples (console.sample.interval.ms, default 5000).",
      arg: { type: "Integer", describedAs: "ms" },
    },
    {
      name: "history-url",
      description:
        "sqlite:<file> (default console-history.db beside the config) or mysql://user:pass@host:port/db.",
      arg: { type: "String", describedAs: "url" },
    },
    {
      name: "users-file",
      description:
        "Console users file (console.users.file, default console-users.properties beside the config); '' for none. Created with a first-run admin when no user is configured.",
      arg: { type: "String", describedAs: "file" },
    },
    {
      name: "override",
      description:
        "Any console setting as key=value, on top of the config file (e.g. local.metrics.urls=0=http://h:9404/metrics); repeat for more.",
      arg: { type: "String", describedAs: "key=value" },
    },
    {
      name: "hash-password",
      description: "Read a password from stdin, print its hash for console.user.<name>.password, and exit.",
    },
    {
      name: "retention-days",
      description: "Days of history kept (default 7).",
      arg: { type: "Integer", describedAs: "days" },
    },
  ],
};

function settings(args: ParsedArgs): Record<string, string> {
  const file = args.value("config");
  const props = file ? loadConfigFile(file) : {};
  const aliases = (props["console.cluster.alias"] ?? props["kafka.eagle.zk.cluster.alias"] ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  const add = (alias: string, servers: string, what: string): void => {
    if (!aliases.includes(alias)) aliases.push(alias);
    props[`${alias}.bootstrap.servers`] = checkBootstrap(servers, what);
  };
  const bootstrap = args.value("bootstrap-server");
  if (bootstrap !== undefined) add(args.value("alias") ?? "default", bootstrap, "--bootstrap-server");
  for (const c of args.values("cluster")) {
    const eq = c.indexOf("=");
    if (eq <= 0) throw new UsageError(`--cluster '${c}': expected alias=HOST1:PORT1,HOST2:PORT2`);
    add(c.slice(0, eq).trim(), c.slice(eq + 1), `--cluster ${c.slice(0, eq)}`);
  }
  if (aliases.length > 0) props["console.cluster.alias"] = aliases.join(",");
  for (const o of args.values("override")) {
    const eq = o.indexOf("=");
    if (eq <= 0) throw new UsageError(`--override '${o}': expected key=value`);
    props[o.slice(0, eq).trim()] = o.slice(eq + 1);
  }
  const flag = (name: string, key: string): void => {
    const v = args.value(name);
    if (v !== undefined) props[key] = v;
  };
  flag("host", "console.listen.host");
  flag("port", "console.port");
  flag("sample-interval-ms", "console.sample.interval.ms");
  flag("history-url", "console.history.url");
  flag("retention-days", "console.history.retention.days");
  flag("users-file", USERS_FILE_KEY);
  return props;
}

export async function runConsole(argv: string[]): Promise<number> {
  return runTool(
    CONSOLE_SPEC,
    argv,
    async (args) => {
      if (args.has("hash-password")) {
        const chunks: Buffer[] = [];
        for await (const c of process.stdin) chunks.push(c as Buffer);
        const password = Buffer.concat(chunks)
          .toString("utf8")
          .replace(/\r?\n$/, "");
        if (password === "") throw new UsageError("--hash-password: give the password on stdin");
        process.stdout.write(`${await hashPassword(password)}\n`);
        return 0;
      }
      let config: ReturnType<typeof buildConfig>;
      let sessions: Sessions;
      let rules: AlertRule[];
      let users: UsersSetup;
      try {
        const props = settings(args);
        config = buildConfig(props, configBaseDir(args.value("config")));
        users = await setUpUsers(props, configBaseDir(args.value("config")));
        sessions = new Sessions(users.users);
        rules = alertRulesFrom(
          props,
          config.clusters.map((c) => c.alias),
        );
      } catch (e) {
        if (e instanceof ConfigError) throw new UsageError(e.message);
        throw e;
      }
      const history = await openHistory(config.historyUrl).catch((e) => {
        throw e instanceof ConfigError ? new UsageError(e.message) : e;
      });
      const collector = new Collector({
        clusters: config.clusters,
        intervalMs: config.sampleIntervalMs,
        retentionDays: config.retentionDays,
        history,
      });
      const alerts = new AlertManager(rules, collector, history);
      const server = await listen(buildRouter(collector, sessions, alerts), config.host, config.port).catch(
        async (e) => {
          await history.close();
          throw new UsageError(
            `cannot listen on ${config.host}:${config.port}: ${(e as NodeJS.ErrnoException).code ?? e}`,
          );
        },
      );
      collector.start();
      // Listening for the signals before saying it listens: a SIGTERM sent on that line must stop it cleanly.
      const stopped = new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      const clusters = config.clusters.map((c) => `${c.alias}=${c.bootstrapServers}`).join(" ");
      process.stdout.write(
        `Console listening on ${urlOf(server)}/ (clusters: ${clusters}; history: ${history.description})\n`,
      );
      process.stdout.write(completeFirstRun(users, urlOf(server)));
      await stopped;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await collector.close();
      await alerts.settled();
      await history.close();
      return 0;
    },
    { allowNoArgs: true },
  );
}
