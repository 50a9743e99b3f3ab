// `tributary zookeeper-shell` and `tributary zookeeper-server-start` end to end: the real executable against
// a real ZooKeeper (test/support/zookeeper-harness.ts). The shell prints ZooKeeperMain's lines (connection
// banner, `[a, b]`, data and the Stat block, errors in its words); the server tool runs a server in the
// foreground and stops with it; a missing install is one line.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  findZooKeeper,
  parseSrvr,
  serverStatus,
  ZooKeeperNotInstalledError,
  zooCfgText,
} from "../../../src/cli/zookeeper/zookeeper-command.js";
import { javaDateString } from "../../../src/cli/zookeeper/zookeeper-shell-commands.js";
import { setLogLevel } from "../../../src/common/logger.js";
import { ZooKeeperMetadataStore } from "../../../src/server/metadata/zookeeper-metadata-store.js";
import {
  describeResult,
  freePort,
  runCommand,
  sleep,
  startCommand,
  tributaryArgv,
} from "../../support/broker-harness.js";
import { runTributary } from "../../support/tributary-cli.js";
import { ZooKeeperHarness } from "../../support/zookeeper-harness.js";

setLogLevel("WARN");

const lines = (text: string): string[] => text.replace(/\n$/, "").split("\n");
const hex = (v: bigint): string => `0x${v.toString(16)}`;

describe("tributary zookeeper-shell", () => {
  let zk: ZooKeeperHarness;
  let store: ZooKeeperMetadataStore;
  const banner = (): string[] => [
    `Connecting to ${zk.address(0)}`,
    "",
    "WATCHER::",
    "",
    "WatchedEvent state:SyncConnected type:None path:null",
  ];

  before(async () => {
    zk = await ZooKeeperHarness.start();
    store = await ZooKeeperMetadataStore.connect(zk.connectString, {
      sessionTimeoutMs: 6000,
      connectionTimeoutMs: 10_000,
    });
    await store.create("/shell", Buffer.from("hello"));
    await store.create("/shell/b", Buffer.alloc(0));
    await store.create("/shell/a", Buffer.alloc(0));
  });
  after(async () => {
    await store?.close();
    await zk?.close();
  });

  it("ls prints the sorted children", async () => {
    const r = await runTributary(["zookeeper-shell", zk.address(0), "ls", "/shell"]);
    assert.equal(r.code, 0, describeResult("ls", r));
    assert.deepEqual(lines(r.stdout), [...banner(), "[a, b]"]);
  });

  it("get -s prints the data and ZooKeeperMain's stat block", async () => {
    const node = await store.get("/shell");
    assert.ok(node);
    const r = await runTributary(["zookeeper-shell", zk.address(0), "get", "-s", "/shell"]);
    assert.equal(r.code, 0, describeResult("get -s", r));
    const out = lines(r.stdout);
    assert.deepEqual(out.slice(0, 6), [...banner(), "hello"]);
    const stat = out.slice(6);
    assert.deepEqual(stat, [
      `cZxid = ${hex(node.stat.czxid)}`,
      `ctime = ${javaDateString(node.stat.ctime)}`,
      `mZxid = ${hex(node.stat.mzxid)}`,
      `mtime = ${javaDateString(node.stat.mtime)}`,
      stat[4], // pZxid: the last child change, not in the store's Stat
      "cversion = 2",
      "dataVersion = 0",
      "aclVersion = 0",
      "ephemeralOwner = 0x0",
      "dataLength = 5",
      "numChildren = 2",
    ]);
    assert.match(stat[4], /^pZxid = 0x[0-9a-f]+$/);
    assert.match(
      stat[1],
      /^ctime = (Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}$/,
    );
  });

  it("errors are one line in ZooKeeperMain's words, with its exit status", async () => {
    const missing = await runTributary(["zookeeper-shell", zk.address(0), "get", "/nope"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, "Node does not exist: /nope\n");
    const exists = await runTributary(["zookeeper-shell", zk.address(0), "create", "/shell", "x"]);
    assert.equal(exists.stderr, "Node already exists: /shell\n");
    const notEmpty = await runTributary(["zookeeper-shell", zk.address(0), "delete", "/shell"]);
    assert.equal(notEmpty.stderr, "Node not empty: /shell\n");
    const usage = await runTributary(["zookeeper-shell", zk.address(0), "get"]);
    assert.equal(usage.stderr, "get [-s] [-w] path\n");
    const unknown = await runTributary(["zookeeper-shell", zk.address(0), "bogus"]);
    assert.equal(unknown.code, 127);
    assert.match(unknown.stderr, /Command not found: Command not found bogus\n$/);
    const badServer = await runTributary(["zookeeper-shell", "127.0.0.1:notaport", "ls", "/"]);
    assert.equal(badServer.code, 1);
    assert.equal(lines(badServer.stderr).length, 1, badServer.stderr);
  });

  it("reads commands from stdin, under a chroot", async () => {
    const r = await runTributary(["zookeeper-shell", `${zk.address(0)}/shell`], {
      input: "create /c 'two words'\nget /c\nls /\n\ncreate -e -s /e- \nquit\n",
    });
    assert.equal(r.code, 0, describeResult("interactive", r));
    assert.deepEqual(lines(r.stdout), [
      `Connecting to ${zk.address(0)}/shell`,
      "Welcome to ZooKeeper!",
      "JLine support is disabled",
      "",
      "WATCHER::",
      "",
      "WatchedEvent state:SyncConnected type:None path:null",
      "two words",
      "[a, b, c]",
      "",
      "WATCHER::",
      "",
      "WatchedEvent state:Closed type:None path:null",
    ]);
    assert.deepEqual(lines(r.stderr), ["Created /c", "Created /e-0000000003"]);
    assert.deepEqual(
      await store.getChildren("/shell"),
      ["a", "b", "c"],
      "the ephemeral node went with the session",
    );
    assert.equal((await store.get("/shell/c"))?.data.toString(), "two words");
  });
});

describe("tributary zookeeper-server-start", () => {
  const dir = mkdtempSync(join(tmpdir(), "tributary-zk-start-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs ZooKeeper in the foreground until SIGTERM", async () => {
    const port = await freePort();
    const cfg = join(dir, "zoo.cfg");
    writeFileSync(
      cfg,
      zooCfgText({
        tickTime: 500,
        dataDir: join(dir, "data"),
        clientPort: port,
        clientPortAddress: "127.0.0.1",
      }),
    );
    process.env.KAFKA_HEAP_OPTS = "-Xmx128m -Xms32m";
    const server = startCommand(process.execPath, tributaryArgv(["zookeeper-server-start", cfg]));
    try {
      let mode: string | undefined;
      for (let i = 0; i < 150 && mode === undefined; i++) {
        mode = (await serverStatus("127.0.0.1", port, 1000))?.mode;
        if (mode === undefined) await sleep(100);
      }
      assert.equal(mode, "standalone", server.stdout().slice(-3000));
    } finally {
      const r = await server.stop("SIGTERM");
      assert.equal(r.code, 143, describeResult("zookeeper-server-start", r));
    }
  });

  it("says in one line that ZooKeeper is not installed", async () => {
    const jar = join(dir, "missing", "zookeeper.jar");
    const r = await runCommand(process.execPath, tributaryArgv(["zookeeper-server-start", thisFile()]), {
      env: { ...process.env, TRIBUTARY_ZOOKEEPER_JAR: jar },
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `ZooKeeper is not installed: ${jar} not found (apt-get install zookeeper)\n`);
    assert.throws(() => findZooKeeper({ jar }), ZooKeeperNotInstalledError);
  });

  it("writes configs with the four-letter words and reads srvr", () => {
    const text = zooCfgText({ tickTime: 500, clientPort: 2181 });
    assert.match(text, /^4lw\.commands\.whitelist=srvr,/m);
    assert.match(text, /^admin\.enableServer=false$/m);
    assert.deepEqual(
      parseSrvr("Zookeeper version: 3.8.0\nZxid: 0x10000002a\nMode: follower\nNode count: 5\n"),
      {
        mode: "follower",
        zxid: 0x10000002an,
        version: "3.8.0",
      },
    );
    assert.equal(parseSrvr("This ZooKeeper instance is not currently serving requests\n"), undefined);
  });
});

/** An existing file to pass as the config (the install check comes first). */
function thisFile(): string {
  return new URL(import.meta.url).pathname;
}
