// `tributary console`'s configuration: clusters by alias from a properties file (EFAK's
// kafka.eagle.zk.cluster.alias key too) or a JSON file, flags on top, defaults; users with hashes and
// roles; and every bad input is
// one line on stderr with exit status 1, never a stack trace (run as a real `tributary console` process).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { usersFrom } from "../../src/console/auth/users.js";
import { buildConfig, ConfigError, loadConfigFile } from "../../src/console/console-config.js";
import { replicaSkew } from "../../src/console/views/cluster-views.js";
import { runCommand, tributaryArgv } from "../support/broker-harness.js";

const dir = mkdtempSync(join(tmpdir(), "console-cli-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("clusters by alias from a properties file, with EFAK's alias key and the defaults", () => {
  const file = join(dir, "console.properties");
  writeFileSync(
    file,
    [
      "kafka.eagle.zk.cluster.alias=prod,test",
      "prod.bootstrap.servers=k1:9092, k2:9093",
      "test.bootstrap.servers=127.0.0.1:19092",
      "console.sample.interval.ms=5000",
    ].join("\n"),
  );
  const c = buildConfig(loadConfigFile(file), dir);
  assert.deepEqual(c.clusters, [
    { alias: "prod", bootstrapServers: "k1:9092,k2:9093" },
    { alias: "test", bootstrapServers: "127.0.0.1:19092" },
  ]);
  assert.equal(c.host, "127.0.0.1");
  assert.equal(c.port, 8048);
  assert.equal(c.sampleIntervalMs, 5000);
  assert.equal(c.retentionDays, 7);
  assert.equal(c.historyUrl, `sqlite:${join(dir, "console-history.db")}`, "SQLite beside the config file");
});

test("a JSON config file and a jdbc:mysql URL", () => {
  const file = join(dir, "console.json");
  writeFileSync(
    file,
    JSON.stringify({
      "console.cluster.alias": "a",
      "a.bootstrap.servers": "h:1",
      "console.port": 0,
      "console.history.url": "jdbc:mysql://u:p@db:3306/efak",
    }),
  );
  const c = buildConfig(loadConfigFile(file), dir);
  assert.equal(c.port, 0);
  assert.equal(c.sampleIntervalMs, 5000, "the default: charts show something within seconds");
  assert.equal(c.historyUrl, "mysql://u:p@db:3306/efak");
});

test("bad settings name the key and what was expected", () => {
  const bad = (props: Record<string, string>, re: RegExp) =>
    assert.throws(
      () => buildConfig(props, dir),
      (e: Error) => e instanceof ConfigError && re.test(e.message),
    );
  bad({}, /^no cluster: /);
  bad({ "console.cluster.alias": "x" }, /^x\.bootstrap\.servers is missing/);
  bad(
    { "console.cluster.alias": "x", "x.bootstrap.servers": "h" },
    /^x\.bootstrap\.servers: 'h' is not host:port/,
  );
  bad({ "console.cluster.alias": "x,x", "x.bootstrap.servers": "h:1" }, /given twice/);
  bad(
    { "console.cluster.alias": "x", "x.bootstrap.servers": "h:1", "console.port": "80a" },
    /^console\.port: '80a' is not a whole number/,
  );
  bad(
    { "console.cluster.alias": "x", "x.bootstrap.servers": "h:1", "console.history.url": "mysql://h" },
    /^console\.history\.url: .* is not mysql:/,
  );
});

test("console users: a hash and a role each, checked", () => {
  const hash = "scrypt$16384$c2FsdA==$aGFzaA==";
  assert.deepEqual(usersFrom({ "console.user.ann.password": hash, "console.user.ann.role": "admin" }), [
    { name: "ann", role: "admin", passwordHash: hash },
  ]);
  assert.equal(usersFrom({ "console.user.bo.password": hash })[0].role, "read-only", "read-only by default");
  const bad = (props: Record<string, string>, re: RegExp) =>
    assert.throws(
      () => usersFrom(props),
      (e: Error) => e instanceof ConfigError && re.test(e.message),
    );
  bad({ "console.user.ann.password": "plain" }, /^console\.user\.ann\.password: expected a hash from/);
  bad({ "console.user.ann.role": "admin" }, /^console\.user\.ann\.password is missing/);
  bad(
    { "console.user.ann.password": hash, "console.user.ann.role": "root" },
    /'root' is neither admin nor read-only/,
  );
});

async function consoleRun(args: string[]) {
  return runCommand(process.execPath, tributaryArgv(["console", ...args]), { timeoutMs: 30_000 });
}

for (const [args, expected] of [
  [["--bootstrap-server", "nonsense"], /^--bootstrap-server: 'nonsense' is not host:port/],
  [["--cluster", "nonsense"], /^--cluster 'nonsense': expected alias=HOST1:PORT1/],
  [
    ["--bootstrap-server", "127.0.0.1:9092", "--port", "99999"],
    /^console\.port: '99999' is not a whole number from 0 to 65535/,
  ],
  [
    ["--bootstrap-server", "127.0.0.1:9092", "--history-url", "ftp://x"],
    /^console\.history\.url: 'ftp:\/\/x' is neither/,
  ],
  [
    ["--config", "/nonexistent/console.properties"],
    /^cannot read config file \/nonexistent\/console\.properties: ENOENT/,
  ],
  [["--bootstrap-server", "127.0.0.1:9092", "--colour"], /^colour is not a recognized option/],
  [["--hash-password"], /^--hash-password: give the password on stdin$/],
] as const) {
  test(`tributary console ${args.join(" ")}: one line, exit 1`, async () => {
    const r = await consoleRun([...args]);
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], expected);
  });
}

test("replica skew: the share of a topic's brokers holding more than an even spread over them", () => {
  assert.equal(replicaSkew([1, 2, 3, 1, 2, 3]), 0);
  assert.equal(replicaSkew([1, 1, 1, 2]), 50, "broker 1 holds 3 where 2 would be even");
  assert.equal(replicaSkew([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]), 0, "even over 3 brokers, a 4th holds none");
  assert.equal(replicaSkew([]), 0);
});
