// OrderedAtomicFile: synchronous and background replacements of one file, on real files: a background
// write never lands over a later synchronous one, requests during a background write are merged into one
// more write of the latest state, close writes or drops what is pending, and errors go to onError except a
// missing directory. Background writes across files are bounded and all land; writeNowIfPending makes the
// pending contents durable at once.

import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { OrderedAtomicFile } from "../../src/common/ordered-atomic-file.js";

const root = mkdtempSync(join(tmpdir(), "tributary-ordered-"));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function setup(): { dir: string; file: OrderedAtomicFile; errors: Error[]; text: () => string } {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir);
  const errors: Error[] = [];
  const file = new OrderedAtomicFile(join(dir, "checkpoint"), (e) => errors.push(e));
  return { dir, file, errors, text: () => readFileSync(join(dir, "checkpoint"), "utf8") };
}

describe("OrderedAtomicFile", () => {
  it("a background write lands off the event loop; a later synchronous write wins over it", async () => {
    const { dir, file, errors, text } = setup();
    file.write("1");
    let state = "2";
    file.writeInBackground(() => state);
    assert.equal(text(), "1");
    file.write("3");
    await file.flushed();
    assert.equal(text(), "3");
    // Requests during a background write: one more write, of the state when it starts.
    file.writeInBackground(() => state);
    state = "4";
    file.writeInBackground(() => state);
    state = "5";
    file.writeInBackground(() => state);
    await file.flushed();
    assert.equal(text(), "5");
    assert.deepEqual(readdirSync(dir), ["checkpoint"]);
    assert.deepEqual(errors, []);
  });

  it("close writes a pending background request now, close(false) drops it; nothing is written after", async () => {
    const a = setup();
    a.file.write("1");
    a.file.writeInBackground(() => "2");
    a.file.close();
    assert.equal(a.text(), "2");
    a.file.writeInBackground(() => "3");
    await a.file.flushed();
    assert.equal(a.text(), "2");
    const b = setup();
    b.file.write("1");
    b.file.writeInBackground(() => "2");
    b.file.close(false);
    await b.file.flushed();
    assert.equal(b.text(), "1");
    assert.deepEqual(readdirSync(b.dir), ["checkpoint"]);
  });

  it("a failed background write goes to onError and keeps the previous file; a removed directory is quiet", async () => {
    const a = setup();
    a.file.write("1");
    // The temporary file's name taken by a directory: the write fails (EISDIR).
    mkdirSync(join(a.dir, "checkpoint.bg.tmp"));
    a.file.writeInBackground(() => "2");
    await a.file.flushed();
    assert.equal(a.text(), "1");
    assert.equal(a.errors.length, 1);
    assert.match(a.errors[0].message, /EISDIR/);
    const b = setup();
    b.file.writeInBackground(() => "1");
    renameSync(b.dir, `${b.dir}-deleted`); // as a deleted partition's dir
    await b.file.flushed();
    assert.deepEqual(b.errors, []);
  });

  it("removeLeftovers deletes what a background write cut short left", () => {
    const { dir, file } = setup();
    writeFileSync(join(dir, "checkpoint.bg.tmp"), "half");
    file.removeLeftovers();
    assert.deepEqual(readdirSync(dir), []);
  });

  it("many files' background writes at once (more than run together) all land, each with its latest contents; writeNowIfPending writes what is pending", async () => {
    const files = Array.from({ length: 60 }, () => setup());
    for (const [i, f] of files.entries()) {
      f.file.writeInBackground(() => `first ${i}`);
      f.file.writeInBackground(() => `latest ${i}`);
    }
    // One of them is made durable now, on this turn of the event loop.
    files[59].file.writeNowIfPending();
    assert.equal(files[59].text(), "latest 59");
    assert.equal(files[59].file.pending, false);
    await Promise.all(files.map((f) => f.file.flushed()));
    for (const [i, f] of files.entries()) {
      assert.equal(f.text(), `latest ${i}`);
      assert.equal(f.file.pending, false);
      assert.deepEqual(f.errors, []);
      assert.deepEqual(readdirSync(f.dir), ["checkpoint"]);
    }
  });
});
