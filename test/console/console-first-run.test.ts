// The console's first run (issue 35), with real `tributary console` processes and a real headless
// Chromium (no broker is needed: the pages and the login work while the cluster cannot be reached):
//   - no user configured and no users file: user admin is created, its password printed once; the file
//     keeps only its scrypt hash (mode 0600); in Chromium the Log in link and form log admin in; a restart
//     prints no password and the same one still logs in;
//   - a user in the config: no users file, nothing printed;
//   - the users file turned off (console.users.file empty) and no user: the header says read-only with a
//     link to how to add a user (`--hash-password`), and an action's 403 says the same.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser } from "playwright-core";
import { freePort } from "../support/broker-harness.js";
import { skipUnlessInstalled } from "../support/required-tools.js";
import { ConsoleHarness, launchChromium } from "./console-harness.js";

const skip = skipUnlessInstalled("chromium");
const FIRST_RUN =
  /^First run: no console users are configured, so user 'admin' \(role admin\) was created with password: (\S+)$/m;

let dir: string;
let bootstrap: string;
let browser: Browser;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "console-first-run-"));
  // Nothing listens there: the console keeps trying to sample, and serves its pages meanwhile.
  bootstrap = `127.0.0.1:${await freePort()}`;
  if (!skip) browser = await launchChromium();
});

after(async () => {
  await browser?.close().catch(() => {});
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function config(name: string, lines: readonly string[] = []): string {
  const sub = join(dir, name);
  mkdirSync(sub, { recursive: true });
  const file = join(sub, "console.properties");
  writeFileSync(
    file,
    ["console.cluster.alias=local", `local.bootstrap.servers=${bootstrap}`, ...lines].join("\n"),
  );
  return file;
}

const start = (file: string) =>
  ConsoleHarness.start(["--config", file, "--port", "0", "--history-url", "sqlite::memory:"]);

async function login(url: string, user: string, password: string): Promise<number> {
  const res = await fetch(`${url}/api/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user, password }),
  });
  await res.arrayBuffer();
  return res.status;
}

test("no user configured: a first-run admin whose password is printed once and survives a restart", {
  skip,
}, async () => {
  const file = config("first");
  const usersFile = join(dir, "first", "console-users.properties");
  let c = await start(file);
  let password: string;
  try {
    const m = await waitForLine(c, FIRST_RUN);
    password = m[1];
    assert.ok(password.length >= 20, "a long random password");
    assert.match(c.stdout, new RegExp(`its hash is kept in ${usersFile.replace(/[.]/g, "\\.")}`));
    const text = readFileSync(usersFile, "utf8");
    assert.match(text, /^console\.user\.admin\.password=scrypt\$\d+\$\S+$/m);
    assert.match(text, /^console\.user\.admin\.role=admin$/m);
    assert.ok(!text.includes(password), "the file keeps the hash, not the password");
    assert.equal(statSync(usersFile).mode & 0o777, 0o600);

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${c.url}/#/c/local/overview`);
    await page.locator("[data-testid=login-link]").click();
    await page.locator("[data-testid=add-user-help]").waitFor({ timeout: 15_000 });
    assert.match((await page.locator("[data-testid=add-user-help]").textContent()) ?? "", /--hash-password/);
    await page.fill("input[name=user]", "admin");
    await page.fill("input[name=password]", password);
    await page.click("button[type=submit]");
    await page.locator("[data-testid=whoami]").waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("[data-testid=whoami]").textContent(), "admin (admin)");
    await page.close();
  } finally {
    assert.equal(await c.stop(), 0);
  }
  c = await start(file);
  try {
    assert.doesNotMatch(c.stdout, /First run/);
    assert.ok(!c.stdout.includes(password), "the password is not printed again");
    assert.equal(await login(c.url, "admin", password), 200);
    assert.equal(await login(c.url, "admin", "wrong"), 401);
  } finally {
    assert.equal(await c.stop(), 0);
  }
});

test("a user in the config: no users file is made and nothing is printed", async () => {
  const file = config("configured", [
    // The hash of "secret" (tributary console --hash-password).
    "console.user.ops.password=scrypt$16384$Kjbot2mCchub62KKF+I4eA==$qCx72RgYSBoHp21wDnm+xNenpk+zugF/Q3rsX8lQrek=",
    "console.user.ops.role=admin",
  ]);
  const c = await start(file);
  try {
    assert.doesNotMatch(c.stdout, /First run/);
    assert.equal(existsSync(join(dir, "configured", "console-users.properties")), false);
  } finally {
    assert.equal(await c.stop(), 0);
  }
});

test("no users at all: the page links to how to add one and an action's 403 says how", { skip }, async () => {
  const file = config("none", ["console.users.file="]);
  const c = await start(file);
  try {
    assert.doesNotMatch(c.stdout, /First run/);
    const res = await fetch(`${c.url}/api/clusters/local/topics`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "t" }),
    });
    assert.equal(res.status, 403);
    assert.match(((await res.json()) as { error: string }).error, /tributary console --hash-password/);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${c.url}/#/c/local/overview`);
    await page.locator("[data-testid=no-users]").click();
    await page.locator("[data-testid=no-users-note]").waitFor({ timeout: 15_000 });
    assert.match((await page.locator("[data-testid=add-user-help]").textContent()) ?? "", /--hash-password/);
    assert.equal(await page.locator("input[name=password]").count(), 0, "no login form: nobody can log in");
    await page.close();
  } finally {
    assert.equal(await c.stop(), 0);
  }
});

async function waitForLine(c: ConsoleHarness, re: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const m = re.exec(c.stdout);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`no line ${re} in\n${c.stdout}\n${c.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
