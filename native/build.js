// Builds the native addons under native/ (crc32c, allocator, file-lock) with node-gyp; run by the root
// package's "install" script, so `npm install` and `npm ci` build it, and by hand with `node native/build.js`.
// It never fails the install: when the build cannot run (no C compiler, no Node headers, another OS), it
// prints one line, keeps the compiler output in native/<addon>/build.log, and the project falls back: to
// @node-rs/crc32 for CRC32C (src/protocol/records/crc32c.ts), to glibc's default malloc settings for the
// allocator (src/common/allocator-tuning.ts). file-lock has no fallback: without it brokers and dev-cluster
// refuse to start unless told to run with their dirs unlocked (src/common/dir-lock.ts, native/file-lock).
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** Each addon and what happens when it is not built. */
const ADDONS = {
  crc32c: "crc32c will use @node-rs/crc32",
  allocator: "allocator will use the C library's default settings",
  "file-lock":
    "log dirs cannot be locked: brokers refuse to start unless TRIBUTARY_ALLOW_UNLOCKED_DIRS=true (native/file-lock/README.md)",
};

/** npm hands lifecycle scripts its bundled node-gyp; by hand, use the one inside this Node's npm. */
function findNodeGyp() {
  const prefix = dirname(dirname(process.execPath));
  const candidates = [
    process.env.npm_config_node_gyp,
    join(prefix, "lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"),
    join(dirname(process.execPath), "node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"),
  ];
  return candidates.find((c) => c && existsSync(c));
}

/** Headers installed with this Node (e.g. /usr/include/node) spare node-gyp a download: works offline. */
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, "include/node/node_api.h")) ? [`--nodedir=${prefix}`] : [];
}

const nodeGyp = findNodeGyp();
for (const [addon, without] of Object.entries(ADDONS)) {
  const dir = join(here, addon);
  const log = join(dir, "build.log");
  const fallback = `tributary: native ${addon} addon not built, ${without}`;
  if (!nodeGyp) {
    console.log(`${fallback} (node-gyp not found)`);
    continue;
  }
  const result = spawnSync(process.execPath, [nodeGyp, "rebuild", "--loglevel=warn", ...nodedirArgs()], {
    cwd: dir,
    encoding: "utf8",
  });
  if (result.status === 0) {
    rmSync(log, { force: true });
    console.log(`tributary: built native ${addon} addon`);
  } else {
    writeFileSync(log, `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}`);
    console.log(`${fallback} (details in ${relative(process.cwd(), log)})`);
  }
}
