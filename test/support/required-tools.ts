// What the tests need installed beside Node, and what a test file does when it is not there.
//
// Each tool is named with the Debian package that provides it (.ci/run installs them all). A test file
// asks `skipUnlessInstalled(...)` for the tools it uses and passes the answer as node:test's `skip`:
//   - everything installed: `false`, the tests run;
//   - something missing under CI (`CI=true`, set by .ci/run): the file stops at once with exit status 1 and
//     one line naming the tool and its package, so the run fails instead of passing without the tests;
//   - something missing elsewhere: a skip reason naming the packages, and the reason is appended to the
//     file named by TRIBUTARY_SKIP_LOG (set by the test runner, dist/scripts/run-tests.js) for the one summary
//     line the runner prints at the end.
// `requireEnvironment` does the same for needs that are not packages (mounting a tmpfs as root).

import { appendFileSync, existsSync } from "node:fs";
import { basename } from "node:path";

export type RequiredTool =
  | "kcat"
  | "python3"
  | "confluent-kafka"
  | "kafka-python"
  | "chromium"
  | "zookeeper"
  | "mariadb"
  | "promtool"
  | "openssl";

interface ToolCheck {
  /** The file whose presence means the tool is installed. */
  readonly path: string;
  /** The Debian package that installs it. */
  readonly debianPackage: string;
}

const PYTHON_PACKAGES = "/usr/lib/python3/dist-packages";

const TOOLS: Readonly<Record<RequiredTool, ToolCheck>> = {
  kcat: { path: "/usr/bin/kcat", debianPackage: "kcat" },
  python3: { path: "/usr/bin/python3", debianPackage: "python3" },
  "confluent-kafka": { path: `${PYTHON_PACKAGES}/confluent_kafka`, debianPackage: "python3-confluent-kafka" },
  "kafka-python": { path: `${PYTHON_PACKAGES}/kafka`, debianPackage: "python3-kafka" },
  chromium: { path: "/usr/bin/chromium", debianPackage: "chromium" },
  zookeeper: { path: "/usr/share/java/zookeeper.jar", debianPackage: "zookeeper" },
  mariadb: { path: "/usr/sbin/mariadbd", debianPackage: "mariadb-server" },
  promtool: { path: "/usr/bin/promtool", debianPackage: "prometheus" },
  openssl: { path: "/usr/bin/openssl", debianPackage: "openssl" },
};

/** True when the run must not skip a test for something missing (.ci/run sets CI=true). */
export function underCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0";
}

/** The test file that asked: its basename, for the skip summary. */
function askingFile(): string {
  return basename(process.argv[1] ?? "unknown");
}

/**
 * A missing need: under CI the file stops here with one line (status 1); elsewhere the reason is recorded
 * for the runner's summary and returned for node:test's `skip`.
 */
function missing(reason: string): string {
  if (underCi()) {
    process.stderr.write(`${askingFile()}: ${reason} (CI=true: tests may not skip)\n`);
    process.exit(1);
  }
  const log = process.env.TRIBUTARY_SKIP_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ file: askingFile(), reason })}\n`);
  return reason;
}

/** `false` when every tool is installed, else the skip reason naming the missing Debian packages. */
export function skipUnlessInstalled(...tools: RequiredTool[]): string | false {
  const absent = [...new Set(tools)].filter((t) => !existsSync(TOOLS[t].path));
  if (absent.length === 0) return false;
  const named = absent.map((t) => `${TOOLS[t].path} (Debian package ${TOOLS[t].debianPackage})`);
  return missing(`not installed: ${named.join(", ")}`);
}

/** `false` when `unmet` is undefined, else the reason, handled as a missing tool is. */
export function requireEnvironment(unmet: string | undefined): string | false {
  return unmet === undefined ? false : missing(unmet);
}

/**
 * Throws one line naming the Debian package when `command` is one of the tools above and is not installed.
 * The harness's runCommand/startCommand call it, so a test that runs a tool without asking first fails with
 * that line rather than spawn's ENOENT.
 */
export function assertCommandInstalled(command: string): void {
  for (const check of Object.values(TOOLS)) {
    if (check.path === command && !existsSync(command)) {
      throw new Error(
        `${command} is not installed (Debian package ${check.debianPackage}; .ci/run installs it)`,
      );
    }
  }
}
