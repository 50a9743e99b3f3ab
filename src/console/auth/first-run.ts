// The console's users file and its first-run admin (as Grafana creates one). The users file
// (console.users.file, default console-users.properties beside the config file, else in the working
// directory; empty to have none) holds `console.user.<name>.password=<hash>` and `.role=` lines in the
// config file's format, read on top of the users in the config. When no user is configured anywhere and
// the file does not exist yet, the console creates user `admin` (role admin) with a random password,
// keeps only its scrypt hash in the file (mode 0600), and prints the password once, at start: a restart
// finds the file and prints nothing. Passwords are never written anywhere.

import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ConfigError, loadConfigFile } from "../console-config.js";
import { hashPassword } from "./passwords.js";
import { type ConsoleUser, usersFrom } from "./users.js";

export const USERS_FILE_KEY = "console.users.file";
export const DEFAULT_USERS_FILE = "console-users.properties";
export const FIRST_RUN_USER = "admin";

export interface UsersSetup {
  /** The config's users, then the file's (a name in both: the config's wins). */
  readonly users: ConsoleUser[];
  /** The users file, absolute; undefined when console.users.file is empty. */
  readonly file: string | undefined;
  /** Set on a first run: the password to print once, and the file text to write. */
  readonly firstRun?: { readonly password: string; readonly fileText: string };
}

/** The users file from the settings (relative to `baseDir`), or undefined when disabled. */
export function usersFilePath(props: Record<string, string>, baseDir: string): string | undefined {
  const raw = (props[USERS_FILE_KEY] ?? DEFAULT_USERS_FILE).trim();
  if (raw === "") return undefined;
  return isAbsolute(raw) ? raw : resolve(baseDir, raw);
}

export async function setUpUsers(props: Record<string, string>, baseDir: string): Promise<UsersSetup> {
  const configured = usersFrom(props);
  const file = usersFilePath(props, baseDir);
  if (file !== undefined && existsSync(file)) {
    let fromFile: ConsoleUser[];
    try {
      fromFile = usersFrom(loadConfigFile(file));
    } catch (e) {
      if (e instanceof ConfigError) throw new ConfigError(`${file}: ${e.message}`);
      throw e;
    }
    const names = new Set(configured.map((u) => u.name));
    return { users: [...configured, ...fromFile.filter((u) => !names.has(u.name))], file };
  }
  if (configured.length > 0 || file === undefined) return { users: configured, file };
  const password = randomBytes(18).toString("base64url");
  const hash = await hashPassword(password);
  const fileText = [
    "# Tributary console users (docs/console.md): console.user.<name>.password=<hash from",
    "# `tributary console --hash-password`>, console.user.<name>.role=admin|read-only.",
    `# Created at the first start, ${new Date().toISOString()}: user ${FIRST_RUN_USER}, whose password was printed once.`,
    `console.user.${FIRST_RUN_USER}.password=${hash}`,
    `console.user.${FIRST_RUN_USER}.role=admin`,
    "",
  ].join("\n");
  return {
    users: [{ name: FIRST_RUN_USER, role: "admin", passwordHash: hash }],
    file,
    firstRun: { password, fileText },
  };
}

/**
 * Writes the first-run users file (never over an existing one) and returns the lines to print: the
 * password, where its hash is kept, how to log in and add users.
 */
export function completeFirstRun(setup: UsersSetup, consoleUrl: string): string {
  if (!setup.firstRun || setup.file === undefined) return "";
  let kept = `its hash is kept in ${setup.file}; a restart keeps it`;
  try {
    writeFileSync(setup.file, setup.firstRun.fileText, { mode: 0o600, flag: "wx" });
  } catch (e) {
    kept = `WARN: could not write ${setup.file} (${(e as NodeJS.ErrnoException).code ?? e}): this password lasts until the console stops`;
  }
  return [
    `First run: no console users are configured, so user '${FIRST_RUN_USER}' (role admin) was created with password: ${setup.firstRun.password}`,
    `  It is shown this once (${kept}).`,
    `  Log in at ${consoleUrl}/#/login. More users: \`tributary console --hash-password\` (docs/console.md).`,
    "",
  ].join("\n");
}
