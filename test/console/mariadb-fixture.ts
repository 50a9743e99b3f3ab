// Test-only: a real MariaDB server for the history tests. Debian's mariadb-server, started as .ci/run
// starts it when it is installed but not answering (and stops it afterwards when it was the one to start
// it: a test stops what it starts); a database and a user of the test's own, dropped afterwards. When the server is not installed the MariaDB variant is skipped with that reason.

import { runCommand, sleep } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";

export const MARIADBD = "/usr/sbin/mariadbd";

/** `false`, or why the MariaDB tests cannot run (.ci/run installs and starts the server). */
export const mariadbSkip: string | false = skipUnlessInstalled("mariadb");

async function answers(): Promise<boolean> {
  const r = await runCommand("mariadb", ["-e", "select 1"], { timeoutMs: 10_000 }).catch(() => undefined);
  return r?.code === 0;
}

async function sql(statements: string): Promise<void> {
  const r = await runCommand("mariadb", ["-e", statements], { timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(`mariadb -e failed (${r.code}): ${r.stderr}`);
}

let startedHere = false;

/** Starts the server if it does not answer (as root, like .ci/run), waiting at most 60 s. */
export async function ensureMariadb(): Promise<void> {
  if (await answers()) return;
  startedHere = true;
  await runCommand("sh", [
    "-c",
    `mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld && start-stop-daemon --start --oknodo --background --exec ${MARIADBD} -- --user=mysql`,
  ]);
  for (let i = 0; i < 60; i++) {
    if (await answers()) return;
    await sleep(1000);
  }
  throw new Error("MariaDB did not answer `mariadb -e 'select 1'` within 60 s");
}

/** Stops the server if ensureMariadb started it (a server that was already running is left alone). */
export async function stopMariadbIfStarted(): Promise<void> {
  if (!startedHere) return;
  startedHere = false;
  await runCommand("start-stop-daemon", ["--stop", "--oknodo", "--retry", "30", "--exec", MARIADBD], {
    timeoutMs: 40_000,
  });
}

/** A fresh database with a password user allowed on it; returns its mysql:// URL and a drop function. */
export async function createDatabase(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const user = "tributary_test";
  const pass = "tributary_test";
  await sql(
    [
      `DROP DATABASE IF EXISTS ${name}`,
      `CREATE DATABASE ${name}`,
      `CREATE USER IF NOT EXISTS '${user}'@'localhost' IDENTIFIED BY '${pass}'`,
      `CREATE USER IF NOT EXISTS '${user}'@'127.0.0.1' IDENTIFIED BY '${pass}'`,
      `GRANT ALL ON ${name}.* TO '${user}'@'localhost'`,
      `GRANT ALL ON ${name}.* TO '${user}'@'127.0.0.1'`,
    ].join("; "),
  );
  return {
    url: `mysql://${user}:${pass}@127.0.0.1:3306/${name}`,
    drop: () => sql(`DROP DATABASE IF EXISTS ${name}`),
  };
}
