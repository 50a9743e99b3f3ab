// Console users from the configuration: `console.user.<name>.password=<scrypt hash>` and
// `console.user.<name>.role=admin|read-only`. Admins may act (create/delete topics, …); read-only users
// and visitors who are not logged in may only look. With no users configured nobody can act.

import { ConfigError } from "../console-config.js";
import { isPasswordHash } from "./passwords.js";

export type Role = "admin" | "read-only";

export interface ConsoleUser {
  readonly name: string;
  readonly role: Role;
  readonly passwordHash: string;
}

const USER_KEY = /^console\.user\.([^.]+)\.(password|role)$/;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function usersFrom(props: Record<string, string>): ConsoleUser[] {
  const found = new Map<string, { password?: string; role?: string }>();
  for (const [k, v] of Object.entries(props)) {
    const m = USER_KEY.exec(k);
    if (!m) continue;
    if (!NAME.test(m[1])) throw new ConfigError(`${k}: user names are 1 to 64 letters, digits, '_' or '-'`);
    const u = found.get(m[1]) ?? {};
    if (m[2] === "password") u.password = v.trim();
    else u.role = v.trim();
    found.set(m[1], u);
  }
  return [...found].map(([name, u]): ConsoleUser => {
    if (u.password === undefined) throw new ConfigError(`console.user.${name}.password is missing`);
    if (!isPasswordHash(u.password))
      throw new ConfigError(
        `console.user.${name}.password: expected a hash from \`tributary console --hash-password\` (scrypt$…)`,
      );
    const role = u.role ?? "read-only";
    if (role !== "admin" && role !== "read-only")
      throw new ConfigError(`console.user.${name}.role: '${role}' is neither admin nor read-only`);
    return { name, role, passwordHash: u.password };
  });
}
