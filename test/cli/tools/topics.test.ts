// `tributary topics` end to end: the real executable against a real broker, output compared line for
// line with kafka-topics.sh's formats (TopicCommand), metadata cross-checked with kcat -L, and the
// error paths (unknown topic, bad options, bad values) giving one line and a non-zero exit status.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { describeResult, runCommand } from "../../support/broker-harness.js";
import { cliToolFixture, lines, ok, oneLineError, tributary } from "../../support/cli-tool-fixture.js";

const fx = cliToolFixture({ name: "tributary-topics-tool", admin: true });
const topics = fx.tool("topics");

describe("tributary topics", () => {
  test("--create then --describe prints TopicCommand's lines", async () => {
    assert.deepEqual(
      ok(
        await topics(
          "--create",
          "--topic",
          "orders",
          "--partitions",
          "4",
          "--replication-factor",
          "1",
          "--config",
          "retention.ms=1000000",
          "--config",
          "cleanup.policy = compact",
        ),
        "create",
      ),
      ["Created topic orders."],
    );
    const [desc] = await fx.admin.describeTopics(["orders"]);
    assert.deepEqual(ok(await topics("--describe", "--topic", "orders"), "describe"), [
      `Topic: orders\tTopicId: ${desc.topicId}\tPartitionCount: 4\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,retention.ms=1000000`,
      "\tTopic: orders\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0",
      "\tTopic: orders\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0",
      "\tTopic: orders\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0",
      "\tTopic: orders\tPartition: 3\tLeader: 0\tReplicas: 0\tIsr: 0",
    ]);
  });

  test("--describe --topic-id describes the topic with that id", async () => {
    const [desc] = await fx.admin.describeTopics(["orders"]);
    const byId = ok(await topics("--describe", "--topic-id", desc.topicId), "describe by id");
    assert.equal(byId.length, 5);
    assert.match(byId[0], new RegExp(`^Topic: orders\tTopicId: ${desc.topicId}\tPartitionCount: 4\t`));
    const unknown = await topics("--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAQ");
    assert.equal(
      oneLineError(unknown, "unknown id"),
      "Error while executing topic command : TopicId 'AAAAAAAAAAAAAAAAAAAAAQ' does not exist as expected",
    );
  });

  test("describe agrees with kcat -L (partitions, leaders, replicas, isrs)", async () => {
    const r = await runCommand("/usr/bin/kcat", ["-b", fx.broker.bootstrap, "-L", "-t", "orders"]);
    assert.equal(r.code, 0, describeResult("kcat -L", r));
    const kcat = lines(r.stdout)
      .map((l) => /^\s+partition (\d+), leader (-?\d+), replicas: ([\d,]*), isrs: ([\d,]*)/.exec(l))
      .filter((m) => m !== null)
      .map((m) => `\tTopic: orders\tPartition: ${m[1]}\tLeader: ${m[2]}\tReplicas: ${m[3]}\tIsr: ${m[4]}`);
    assert.match(r.stdout, /topic "orders" with 4 partitions:/);
    const ours = ok(await topics("--describe", "--topic", "orders"), "describe").slice(1);
    assert.deepEqual(ours, kcat);
  });

  test("--create with --replica-assignment, --if-not-exists, and the collision warning", async () => {
    assert.deepEqual(
      ok(await topics("--create", "--topic", "metrics_raw.v1", "--replica-assignment", "0,0,0"), "create"),
      [
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.",
        "Created topic metrics_raw.v1.",
      ],
    );
    const again = await topics("--create", "--topic", "orders", "--partitions", "1");
    assert.equal(
      oneLineError(again, "create existing"),
      "Error while executing topic command : Topic 'orders' already exists.",
    );
    assert.deepEqual(
      ok(await topics("--create", "--topic", "orders", "--if-not-exists"), "if-not-exists"),
      [],
    );
  });

  test("--list prints sorted names; --topic is a regular expression", async () => {
    assert.deepEqual(ok(await topics("--list"), "list"), ["metrics_raw.v1", "orders"]);
    assert.deepEqual(ok(await topics("--list", "--exclude-internal"), "list"), ["metrics_raw.v1", "orders"]);
    assert.deepEqual(ok(await topics("--list", "--topic", "ord.*"), "list regex"), ["orders"]);
    // Kafka's IncludeList: commas mean "or", spaces and surrounding quotes are dropped.
    assert.deepEqual(ok(await topics("--list", "--topic", " 'orders, metrics_raw.v1' "), "list a, b"), [
      "metrics_raw.v1",
      "orders",
    ]);
    assert.equal(
      oneLineError(await topics("--list", "--topic", "ord(ers"), "bad regex"),
      "Error while executing topic command : ord(ers is an invalid regex.",
    );
    assert.deepEqual(ok(await topics("--list", "--topic", "metrics_raw\\.v1,orders"), "list regex"), [
      "metrics_raw.v1",
      "orders",
    ]);
  });

  test("--alter --partitions grows a topic; shrinking is one error line", async () => {
    assert.deepEqual(
      ok(await topics("--alter", "--topic", "metrics_raw.v1", "--partitions", "5"), "alter"),
      [],
    );
    const d = ok(await topics("--describe", "--topic", "metrics_raw\\.v1"), "describe");
    assert.match(
      d[0],
      /^Topic: metrics_raw\.v1\tTopicId: [\w-]{22}\tPartitionCount: 5\tReplicationFactor: 1\tConfigs: $/,
    );
    assert.equal(d.length, 6);
    const withAssignment = await topics(
      "--alter",
      "--topic",
      "metrics_raw.v1",
      "--partitions",
      "6",
      "--replica-assignment",
      "0,0,0,0,0,0",
    );
    assert.deepEqual(ok(withAssignment, "alter with assignment"), []);
    const [grown] = await fx.admin.describeTopics(["metrics_raw.v1"]);
    assert.deepEqual(
      grown.partitions.map((p) => p.replicas),
      [[0], [0], [0], [0], [0], [0]],
    );
    const shrink = await topics("--alter", "--topic", "orders", "--partitions", "2");
    assert.match(oneLineError(shrink, "shrink"), /^Error while executing topic command : .*4 partitions.*2/);
  });

  test("report options and --topics-with-overrides filter what describe prints", async () => {
    assert.deepEqual(ok(await topics("--describe", "--under-replicated-partitions"), "urp"), []);
    assert.deepEqual(ok(await topics("--describe", "--unavailable-partitions"), "unavailable"), []);
    assert.deepEqual(
      ok(await topics("--describe", "--at-min-isr-partitions", "--topic", "orders"), "at-min-isr"),
      [
        "\tTopic: orders\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0",
        "\tTopic: orders\tPartition: 1\tLeader: 0\tReplicas: 0\tIsr: 0",
        "\tTopic: orders\tPartition: 2\tLeader: 0\tReplicas: 0\tIsr: 0",
        "\tTopic: orders\tPartition: 3\tLeader: 0\tReplicas: 0\tIsr: 0",
      ],
    );
    const over = ok(await topics("--describe", "--topics-with-overrides"), "overrides");
    assert.equal(over.length, 1);
    assert.match(over[0], /^Topic: orders\t.*\tConfigs: cleanup.policy=compact,retention.ms=1000000$/);
  });

  test("an unknown topic is one line and exit 1; --if-exists makes it a no-op", async () => {
    assert.equal(
      oneLineError(await topics("--describe", "--topic", "nope"), "describe nope"),
      "Error while executing topic command : Topic 'nope' does not exist as expected",
    );
    assert.equal(
      oneLineError(await topics("--delete", "--topic", "nope"), "delete nope"),
      "Error while executing topic command : Topic 'nope' does not exist as expected",
    );
    assert.deepEqual(ok(await topics("--describe", "--topic", "nope", "--if-exists"), "if-exists"), []);
  });

  test("--delete removes the topic", async () => {
    assert.deepEqual(ok(await topics("--delete", "--topic", "metrics_raw\\.v1"), "delete"), []);
    assert.deepEqual(ok(await topics("--list"), "list"), ["orders"]);
  });

  test("bad command lines: one line naming the problem, exit 1", async () => {
    const cases: Array<[string[], string]> = [
      [["--list", "--frobnicate"], "frobnicate is not a recognized option"],
      [
        ["--list", "--describe"],
        "Command must include exactly one action: --list, --describe, --create, --alter or --delete",
      ],
      [["--create", "--partitions", "3"], 'Missing required argument "[topic]"'],
      [
        ["--create", "--topic", "x", "--partitions", "three"],
        "Cannot parse argument 'three' of option partitions",
      ],
      [["--create", "--topic", "x", "--partitions", "0"], "The partitions must be greater than 0"],
      [
        ["--create", "--topic", "x", "--replication-factor", "0"],
        "The replication factor must be between 1 and 32767 inclusive",
      ],
      [
        ["--create", "--topic", "x", "--replica-assignment", "0:0"],
        "Partition replica lists may not contain duplicate entries: 0",
      ],
      [["--create", "--topic", "x", "--replica-assignment", "0,a"], 'For input string: "a"'],
      [
        ["--create", "--topic", "x", "--config", "retention.ms"],
        'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".',
      ],
      [
        ["--create", "--topic", "x", "--config", "no.such.config=1"],
        "Error while executing topic command : Unknown topic config name: no.such.config",
      ],
      [["--describe", "--config", "a=b"], 'Option "[config]" can\'t be used with option "[describe]"'],
      [["--alter", "--topic", "orders"], 'Missing required argument "[partitions]"'],
      [["--list", "--if-not-exists"], 'Option "[if-not-exists]" can\'t be used with option "[list]"'],
    ];
    for (const [args, expected] of cases) {
      assert.equal(oneLineError(await topics(...args), args.join(" ")), expected, args.join(" "));
    }
    assert.equal(
      oneLineError(await tributary("topics", "--list"), "no bootstrap"),
      "--bootstrap-server must be specified",
    );
    assert.equal(
      oneLineError(await tributary("topics", "--list", "--bootstrap-server"), "no value"),
      "Option bootstrap-server requires an argument",
    );
  });

  test("--help lists every option and exits 0; no arguments prints usage and exits 1", async () => {
    const help = ok(await tributary("topics", "--help"), "help");
    assert.equal(help[0], "This tool helps to create, delete, describe, or change a topic.");
    assert.match(help[1], /^Option {35}Description$/);
    for (const o of [
      "alter",
      "bootstrap-server <String: server to",
      "config <String: name=value>",
      "create",
      "delete",
      "describe",
      "if-exists",
      "if-not-exists",
      "list",
      "partitions <Integer: # of partitions>",
      "topic <String: topic>",
      "under-replicated-partitions",
      "unavailable-partitions",
    ])
      assert.ok(
        help.some((l) => l.startsWith(`--${o}`)),
        `--help lists --${o}`,
      );
    const none = await tributary("topics");
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^This tool helps to create, delete, describe, or change a topic\.\n/);
  });
});
