// `tributary log-recover` on hand-made log dirs: every bad input is one line naming what and why with exit
// status 1 (no log dir, a missing dir, conflicting or missing modes, --reproduce without
// --bootstrap-server, a restore while the broker runs or
// after a crash, a restore while another process holds the dir's `.lock`), an unreadable or missing manifest is listed as such and refused by --restore in one line,
// and an empty log dir lists and restores nothing. (The real quarantine made by a broker's recovery, listed
// and restored, is test/server/log-quarantine.test.ts.)

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { DirLock } from "../../../src/common/dir-lock.js";
import { runTributarySync } from "../../support/tributary-cli.js";

const root = mkdtempSync(join(tmpdir(), "log-recover-"));
after(() => rmSync(root, { recursive: true, force: true }));

function run(...args: string[]) {
  return runTributarySync(["log-recover", ...args]);
}

function oneLine(r: { status: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
}

test("bad command lines are one line each", () => {
  oneLine(run("--list"), /^Missing required argument "\[log-dir\]"$/);
  oneLine(
    run("--log-dir", join(root, "nope"), "--list"),
    /^--log-dir .*nope: expected an existing log directory$/,
  );
  oneLine(run("--log-dir", root, "--list", "--restore"), /can't be used with option/);
  oneLine(run("--log-dir", root), /^Exactly one of --list, --restore or --reproduce must be given$/);
  oneLine(run("--log-dir", root, "--bogus"), /^bogus is not a recognized option$/);
  oneLine(run("--log-dir", root, "--reproduce"), /^Missing required argument "\[bootstrap-server\]"$/);
  oneLine(run("--log-dir", root, "--restore", "--reproduce"), /can't be used with option/);
});

test("an empty log dir: nothing listed, nothing restored", () => {
  const dir = join(root, "empty");
  mkdirSync(dir);
  writeFileSync(join(dir, ".kafka_cleanshutdown"), "");
  const list = run("--log-dir", dir, "--list");
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^No quarantined data in /);
  const restore = run("--log-dir", dir, "--restore");
  assert.equal(restore.status, 0, restore.stderr);
  assert.match(restore.stdout, /^Nothing to restore in /);
});

test("missing and unreadable manifests are listed, and refused by --restore in one line each", () => {
  const dir = join(root, "broken");
  mkdirSync(join(dir, "t-0", "quarantine-1"), { recursive: true });
  writeFileSync(join(dir, "t-0", "quarantine-1", "00000000000000000005.log"), Buffer.alloc(70));
  mkdirSync(join(dir, "t-1", "quarantine-2"), { recursive: true });
  writeFileSync(join(dir, "t-1", "quarantine-2", "quarantine.json"), "{not json");
  const list = run("--log-dir", dir, "--list");
  assert.equal(list.status, 0, list.stderr);
  assert.match(
    list.stdout,
    /^Partition t-0\n {2}quarantine-1: no quarantine\.json \(an interrupted quarantine\); 70 bytes of files$/m,
  );
  assert.match(list.stdout, /^ {2}quarantine-2: .*quarantine\.json is unreadable: /m);
  const only = run("--log-dir", dir, "--list", "--partition", "t-1");
  assert.doesNotMatch(only.stdout, /t-0/);

  // No clean-shutdown marker: the broker runs or crashed.
  oneLine(
    run("--log-dir", dir, "--restore"),
    /^cannot restore in .*broken: the broker using it is running or did not stop cleanly/,
  );
  writeFileSync(join(dir, ".kafka_cleanshutdown"), "");
  const r = run("--log-dir", dir, "--restore");
  assert.equal(r.status, 1);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 2, r.stderr);
  assert.match(lines[0], /^cannot restore quarantine-1 of partition t-0: no quarantine\.json/);
  assert.match(lines[1], /^cannot restore quarantine-2 of partition t-1: .*unreadable/);
});

test("--restore is refused in one line while another process holds the log dir's lock", () => {
  const dir = join(root, "held");
  mkdirSync(join(dir, "t-0", "quarantine-1"), { recursive: true });
  // A broker that started after it stopped cleanly still holds the dir: its lock says so.
  writeFileSync(join(dir, ".kafka_cleanshutdown"), "");
  const lock = DirLock.tryAcquire(dir);
  try {
    oneLine(
      run("--log-dir", dir, "--restore"),
      new RegExp(
        `^cannot restore in ${dir}: a broker is using it \\(pid ${process.pid} holds ${dir}/\\.lock\\); stop it with server-stop first$`,
      ),
    );
  } finally {
    lock.release();
  }
  const r = run("--log-dir", dir, "--restore");
  assert.match(r.stderr, /^cannot restore quarantine-1 of partition t-0: /, "tried once the lock is free");
});
