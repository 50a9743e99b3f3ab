import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  fsyncDirectory,
  writeFileAtomically,
  writeFileAtomicallyAsync,
} from "../../src/common/atomic-file.js";

const dir = mkdtempSync(join(tmpdir(), "tributary-atomic-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("atomic file writes", () => {
  for (const [name, write] of [
    [
      "writeFileAtomically",
      async (p: string, d: string | Buffer, sync?: boolean) => writeFileAtomically(p, d, sync),
    ],
    ["writeFileAtomicallyAsync", writeFileAtomicallyAsync],
  ] as const) {
    it(`${name}: creates, replaces, leaves no temporary file, replaces a leftover one`, async () => {
      const file = join(dir, `${name}.txt`);
      await write(file, "first");
      assert.equal(readFileSync(file, "utf8"), "first");
      await write(file, Buffer.from("second, longer"));
      assert.equal(readFileSync(file, "utf8"), "second, longer");
      writeFileSync(`${file}.tmp`, "a crash left this behind, longer than what comes next");
      await write(file, "third", false);
      assert.equal(readFileSync(file, "utf8"), "third");
      assert.equal(existsSync(`${file}.tmp`), false);
      await write(file, "");
      assert.equal(readFileSync(file, "utf8"), "");
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.startsWith(name)),
        [`${name}.txt`],
      );
    });
  }

  it("a write into a missing directory fails and leaves nothing", async () => {
    const file = join(dir, "missing", "f");
    assert.throws(() => writeFileAtomically(file, "x"), /ENOENT/);
    await assert.rejects(writeFileAtomicallyAsync(file, "x"), /ENOENT/);
    assert.equal(existsSync(join(dir, "missing")), false);
  });

  it("fsyncDirectory is quiet where the directory cannot be opened", () => {
    fsyncDirectory(dir);
    fsyncDirectory(join(dir, "no-such-dir"));
  });
});
