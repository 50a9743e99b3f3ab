// `npm start`: a broker (`tributary server-start`, with any arguments given here) and the console
// watching it, together. The broker runs as a child process (its log lines pass through); once it has
// started, this prints "Broker listening on …" with the listeners it advertises — what it tells clients in
// Metadata, so the address they will connect to (an empty listener host advertises this machine's name,
// or localhost, src/server/advertised-host.ts) — and starts the console in this process, bootstrapping on
// the bound port through loopback, which prints "Console listening on http://127.0.0.1:8048/". The
// broker's /metrics endpoint (its "Metrics HTTP endpoint listening on …" line, :9404 by default) is given
// to the console as the cluster's metrics URL, so the Overview shows the broker's traffic. The console's
// users file sits beside its history file, so the first-run admin's password is printed on the first
// start only. Ctrl-C or SIGTERM stops both.
//
//   node --initial-old-space-size=256 dist/src/console/start-all.js [server.properties] [--override k=v]...
//   (console settings from TRIBUTARY_CONSOLE_PORT, TRIBUTARY_CONSOLE_HISTORY and TRIBUTARY_CONSOLE_USERS
//   when set)

import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { TRIBUTARY_NODE_OPTIONS } from "../cli/node-options.js";
import { guardToolOutput } from "../cli/tool-output.js";
import { runConsole } from "./console-tool.js";

const PORT_LINE = /Awaiting socket connections on ([0-9.]+|\[[0-9a-f:]+\]|[\w.-]+):(\d+)/;
/** The broker's "Advertised listener PLAINTEXT://host:port" lines, then its "started" line. */
const ADVERTISED_LINE = /\] Advertised listener (\S+) \(kafka\.server\.KafkaServer\)/g;
const STARTED_LINE = /\[KafkaServer id=(\d+)\] started \(kafka\.server\.KafkaServer\)/;
/** The broker's /metrics endpoint (absent when metrics.http.listener is empty or failed to bind). */
const METRICS_LINE = /Metrics HTTP endpoint listening on http:\/\/([^\s/]+):(\d+)\/metrics/;
const ANY_ADDRESS = ["0.0.0.0", "[::]", ""];

/** The sqlite history's folder (the users file goes beside it), or undefined for MySQL. */
function historyDir(url: string): string | undefined {
  return url.startsWith("sqlite:") ? dirname(url.slice("sqlite:".length)) : undefined;
}

async function main(args: string[]): Promise<number> {
  // Its output piped into a reader that goes away (`npm start | head`) must not kill it half-way.
  guardToolOutput();
  const cli = new URL("../cli/main.js", import.meta.url).href;
  const script = `import(${JSON.stringify(cli)}).then((m) => m.run(process.argv.slice(1))).then((c) => { process.exitCode = c; })`;
  const broker = spawn(process.execPath, [...TRIBUTARY_NODE_OPTIONS, "-e", script, "server-start", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number>((resolve) => broker.once("exit", (code) => resolve(code ?? 1)));
  const started = await new Promise<
    { bootstrap: string; advertised: string[]; brokerId: string; metricsUrl?: string } | undefined
  >((resolve) => {
    let seen = "";
    let found = false;
    broker.stdout?.setEncoding("utf8").on("data", (d: string) => {
      process.stdout.write(d);
      if (found) return;
      seen += d;
      const m = PORT_LINE.exec(seen);
      const up = STARTED_LINE.exec(seen);
      if (!m || !up) return;
      found = true;
      const host = ANY_ADDRESS.includes(m[1]) ? "127.0.0.1" : m[1];
      const metrics = METRICS_LINE.exec(seen);
      resolve({
        bootstrap: `${host}:${m[2]}`,
        advertised: [...seen.matchAll(ADVERTISED_LINE)].map((a) => a[1]),
        brokerId: up[1],
        ...(metrics
          ? {
              metricsUrl: `http://${ANY_ADDRESS.includes(metrics[1]) ? "127.0.0.1" : metrics[1]}:${metrics[2]}/metrics`,
            }
          : {}),
      });
      seen = "";
    });
    void exited.then(() => resolve(undefined));
  });
  if (started === undefined) return exited;
  const { bootstrap } = started;
  process.stdout.write(`Broker listening on ${started.advertised.join(", ")}\n`);
  // The broker is signalled once: it ignores a repeat while it shuts down, but once it has shut down it
  // no longer handles signals, and a second SIGTERM in the moment before it exits would kill it (exit
  // code "killed by a signal" instead of 0).
  let signalled = false;
  const stopBroker = (signal: NodeJS.Signals): void => {
    if (signalled || broker.exitCode !== null) return;
    signalled = true;
    broker.kill(signal);
  };
  const forward = (signal: NodeJS.Signals) => () => stopBroker(signal);
  process.on("SIGTERM", forward("SIGTERM"));
  process.on("SIGINT", forward("SIGINT"));
  // The broker stopping on its own stops the console too.
  void exited.then(() => process.emit("SIGTERM", "SIGTERM"));
  const historyUrl =
    process.env.TRIBUTARY_CONSOLE_HISTORY ?? `sqlite:${join(tmpdir(), "tributary-console-history.db")}`;
  const consoleArgs = [
    "--cluster",
    `local=${bootstrap}`,
    "--port",
    process.env.TRIBUTARY_CONSOLE_PORT ?? "8048",
    "--history-url",
    historyUrl,
    "--users-file",
    process.env.TRIBUTARY_CONSOLE_USERS ??
      join(historyDir(historyUrl) ?? tmpdir(), "tributary-console-users.properties"),
    ...(started.metricsUrl
      ? ["--override", `local.metrics.urls=${started.brokerId}=${started.metricsUrl}`]
      : []),
  ];
  const consoleCode = await runConsole(consoleArgs);
  stopBroker("SIGTERM");
  const brokerCode = await exited;
  return consoleCode || brokerCode;
}

process.exitCode = await main(process.argv.slice(2));
