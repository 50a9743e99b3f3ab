// Logged-in sessions: a random token in an HttpOnly, SameSite=Strict cookie, kept in memory (a console
// restart logs everyone out), expiring after 12 hours. Login checks the password hash; the caller of
// userOf() gets the user of a request's cookie, or undefined.

import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { verifyPassword } from "./passwords.js";
import type { ConsoleUser } from "./users.js";

export const COOKIE = "tributary_console_session";
const TTL_MS = 12 * 3_600_000;

export class Sessions {
  private readonly byToken = new Map<string, { user: ConsoleUser; expires: number }>();
  private readonly users: Map<string, ConsoleUser>;

  constructor(users: readonly ConsoleUser[]) {
    this.users = new Map(users.map((u) => [u.name, u]));
  }

  get enabled(): boolean {
    return this.users.size > 0;
  }

  /** A new session token, or undefined for a wrong user name or password. */
  async login(name: string, password: string): Promise<{ token: string; user: ConsoleUser } | undefined> {
    const user = this.users.get(name);
    // Hash even for an unknown user, so timing does not tell which names exist.
    const ok = await verifyPassword(password, user?.passwordHash ?? "scrypt$16384$AAAA$AAAA");
    if (!user || !ok) return undefined;
    const token = randomBytes(32).toString("base64url");
    this.byToken.set(token, { user, expires: Date.now() + TTL_MS });
    return { token, user };
  }

  logout(req: IncomingMessage): void {
    const token = tokenOf(req);
    if (token) this.byToken.delete(token);
  }

  userOf(req: IncomingMessage): ConsoleUser | undefined {
    const token = tokenOf(req);
    if (!token) return undefined;
    const s = this.byToken.get(token);
    if (!s) return undefined;
    if (s.expires < Date.now()) {
      this.byToken.delete(token);
      return undefined;
    }
    return s.user;
  }
}

function tokenOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === COOKIE) return v.join("=");
  }
  return undefined;
}

export function sessionCookie(token: string): string {
  return `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${TTL_MS / 1000}`;
}

export function clearedCookie(): string {
  return `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
}
