// DirLock (common/dir-lock.ts) on real files and real processes: a second lock of a held dir is refused in
// this process too (flock: per open file) and names this process's pid; closing another descriptor of
// `.lock` does not drop the lock (as an fcntl lock would be dropped); a lock held by a child process is
// refused with the child's pid, and is free again once the child is SIGKILLed — the OS releases it, no
// stale pid file — even while a grandchild the holder spawned still runs (the descriptor is not inherited).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { DIR_LOCKS_AVAILABLE, DirLock, DirLockHeldError, LOCK_FILE_NAME } from "../../src/common/dir-lock.js";
import { withDeadline } from "../support/deadline.js";

const root = mkdtempSync(join(tmpdir(), "tributary-dir-lock-"));
const pids = new Set<number>();
after(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  rmSync(root, { recursive: true, force: true });
});

function refusedBy(dir: string): number | undefined {
  try {
    DirLock.tryAcquire(dir).release();
  } catch (e) {
    if (e instanceof DirLockHeldError) {
      assert.equal(e.dir, dir);
      return e.holderPid ?? -1;
    }
    throw e;
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("the native file-lock addon is built (npm run build:native)", () => {
  assert.ok(DIR_LOCKS_AVAILABLE, "native/file-lock/build/Release/file_lock.node did not load");
});

test("a held dir is refused in the same process, with this pid; closing another fd keeps the lock", () => {
  const dir = mkdtempSync(join(root, "same-"));
  const lock = DirLock.tryAcquire(dir);
  assert.equal(lock.locked, true);
  assert.deepEqual(readdirSync(dir), [LOCK_FILE_NAME]);
  assert.equal(readFileSync(join(dir, LOCK_FILE_NAME)).length, 0, ".lock stays empty");
  assert.throws(
    () => DirLock.tryAcquire(dir),
    (e: unknown) =>
      e instanceof DirLockHeldError &&
      e.holderPid === process.pid &&
      e.message === `${join(dir, LOCK_FILE_NAME)} is locked by pid ${process.pid} (this process)`,
  );
  // An fcntl lock would be gone now: closing any descriptor of the file drops the process's locks.
  closeSync(openSync(join(dir, LOCK_FILE_NAME), "r"));
  assert.equal(refusedBy(dir), process.pid);
  lock.release();
  lock.release(); // twice is harmless
  assert.equal(lock.locked, false);
  const again = DirLock.tryAcquire(dir);
  assert.equal(again.locked, true);
  again.release();
});

test("a lock held by a child process names its pid and is released by the OS when the child is SIGKILLed", async () => {
  const dir = mkdtempSync(join(root, "child-"));
  const moduleUrl = new URL("../../src/common/dir-lock.js", import.meta.url).href;
  // The child locks the dir, then starts a long-lived grandchild (as dev-cluster starts ZooKeeper and
  // brokers) and reports both pids.
  const script = `
    const { DirLock } = await import(${JSON.stringify(moduleUrl)});
    const { spawn } = await import("node:child_process");
    DirLock.tryAcquire(process.argv[1]);
    const grandchild = spawn("sleep", ["60"], { stdio: "ignore", detached: true });
    grandchild.unref();
    console.log("locked " + process.pid + " " + grandchild.pid);
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script, dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  pids.add(child.pid!);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await withDeadline(
    "the child's 'locked' line",
    15_000,
    new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(out);
      });
      child.once("exit", (code) => reject(new Error(`child exited (${code}) before locking: ${out}`)));
    }),
  );
  const m = /^locked (\d+) (\d+)$/m.exec(line);
  assert.ok(m, line);
  const [childPid, grandchildPid] = [Number(m[1]), Number(m[2])];
  pids.add(grandchildPid);
  assert.equal(childPid, child.pid);

  assert.equal(refusedBy(dir), childPid, "the holder is the child, named from /proc/locks");
  child.kill("SIGKILL");
  await withDeadline("the child's exit", 10_000, exited);
  assert.ok(alive(grandchildPid), "the grandchild still runs");
  const lock = DirLock.tryAcquire(dir);
  assert.equal(lock.locked, true, "free once the holder died, though its grandchild lives on");
  lock.release();
});
