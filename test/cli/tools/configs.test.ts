// `tributary configs` end to end: the real executable against a real broker; describe output compared
// with kafka-configs.sh's lines (ConfigCommand), alterations cross-checked with KafkaJS's
// describeConfigs (a third-party client), and bad input giving one line and exit status 1.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import kafkajs from "kafkajs";
import { describeResult } from "../../support/broker-harness.js";
import { cliToolFixture, ok, oneLineError, tributary } from "../../support/cli-tool-fixture.js";

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;

/** Non-default configs of a topic as KafkaJS's admin client reads them. */
async function kafkajsTopicOverrides(topic: string): Promise<Record<string, string>> {
  const kafka = new Kafka({
    clientId: "configs-test",
    brokers: [fx.broker.bootstrap],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const res = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    });
    const out: Record<string, string> = {};
    for (const e of res.resources[0].configEntries) if (!e.isDefault) out[e.configName] = e.configValue;
    return out;
  } finally {
    await admin.disconnect();
  }
}

const fx = cliToolFixture({
  name: "tributary-configs-tool",
  setup: async () => {
    const r = await tributary(
      "topics",
      "--bootstrap-server",
      fx.broker.bootstrap,
      "--create",
      "--topic",
      "cfg",
      "--partitions",
      "1",
      "--config",
      "retention.ms=1000000",
    );
    assert.equal(r.code, 0, describeResult("create topic", r));
  },
});
const configs = fx.tool("configs");

describe("tributary configs", () => {
  test("--describe of a topic prints its dynamic configs with synonyms", async () => {
    assert.deepEqual(
      ok(await configs("--describe", "--entity-type", "topics", "--entity-name", "cfg"), "describe"),
      [
        "Dynamic configs for topic cfg are:",
        "  retention.ms=1000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000000}",
      ],
    );
    const all = ok(await configs("--describe", "--topic", "cfg", "--all"), "describe --all");
    assert.equal(all[0], "All configs for topic cfg are:");
    assert.ok(
      all.includes(
        "  cleanup.policy=delete sensitive=false synonyms={DEFAULT_CONFIG:log.cleanup.policy=delete}",
      ),
      all.join("\n"),
    );
    assert.ok(all.length > 20, "every topic config is listed");
  });

  test("--alter --add-config / --delete-config change the topic (checked with KafkaJS)", async () => {
    assert.deepEqual(
      ok(
        await configs(
          "--alter",
          "--entity-type",
          "topics",
          "--entity-name",
          "cfg",
          "--add-config",
          "cleanup.policy=[compact,delete],segment.bytes = 1048576",
          "--delete-config",
          "retention.ms",
        ),
        "alter",
      ),
      ["Completed updating config for topic cfg."],
    );
    assert.deepEqual(await kafkajsTopicOverrides("cfg"), {
      "cleanup.policy": "compact,delete",
      "segment.bytes": "1048576",
    });
    const file = join(fx.broker.root, "add.properties");
    writeFileSync(file, "# from a file\nmax.message.bytes=2000000\n");
    assert.deepEqual(
      ok(await configs("--alter", "--topic", "cfg", "--add-config-file", file), "alter file"),
      ["Completed updating config for topic cfg."],
    );
    assert.equal((await kafkajsTopicOverrides("cfg"))["max.message.bytes"], "2000000");
  });

  test("broker configs: per broker and the cluster-wide default", async () => {
    assert.deepEqual(
      ok(
        await configs(
          "--alter",
          "--entity-type",
          "brokers",
          "--entity-default",
          "--add-config",
          "log.cleaner.threads=2",
        ),
        "alter default",
      ),
      ["Completed updating default config for brokers in the cluster."],
    );
    assert.deepEqual(
      ok(
        await configs("--alter", "--broker", "0", "--add-config", "log.cleaner.threads=3"),
        "alter broker 0",
      ),
      ["Completed updating config for broker 0."],
    );
    assert.deepEqual(ok(await configs("--describe", "--entity-type", "brokers"), "describe brokers"), [
      "Dynamic configs for broker 0 are:",
      "  log.cleaner.threads=3 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=3, DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2, DEFAULT_CONFIG:log.cleaner.threads=1}",
      "Default configs for brokers in the cluster are:",
      "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2}",
    ]);
  });

  test("errors: one line naming the problem, exit 1", async () => {
    const cases: Array<[string[], string | RegExp]> = [
      [
        ["--describe", "--entity-type", "topics", "--entity-name", "nope"],
        /^Error while executing config command with args '.*': Topic 'nope' does not exist$/,
      ],
      [
        ["--alter", "--topic", "cfg", "--delete-config", "retention.bytes"],
        "Invalid config(s): retention.bytes",
      ],
      [
        ["--alter", "--topic", "cfg", "--add-config", "retention.ms"],
        'requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".',
      ],
      [
        ["--alter", "--topic", "cfg", "--add-config", "retention.ms=soon"],
        /^Error while executing config command with args '.*': .*retention\.ms/,
      ],
      [
        ["--alter", "--topic", "cfg"],
        "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter",
      ],
      [
        ["--describe", "--entity-type", "ips"],
        "Invalid entity type ips, the entity type must be one of topics,clients,users,brokers,broker-loggers with the --bootstrap-server argument",
      ],
      [
        ["--alter", "--entity-type", "users", "--add-config", "producer_byte_rate=1"],
        "An entity-name or default entity must be specified with --alter of users, clients, brokers or ips",
      ],
      [
        ["--describe", "--broker", "zero"],
        "The entity name for brokers must be a valid integer broker id, but it is: zero",
      ],
      [
        ["--describe", "--alter", "--topic", "cfg"],
        "Command must include exactly one action: --describe, --alter",
      ],
      [["--describe"], "At least one entity type must be specified"],
      [["--describe", "--topic", "cfg", "--nope"], "nope is not a recognized option"],
    ];
    for (const [args, expected] of cases) {
      const line = oneLineError(await configs(...args), args.join(" "));
      if (typeof expected === "string") assert.equal(line, expected, args.join(" "));
      else assert.match(line, expected, args.join(" "));
    }
  });

  test("--help lists the options", async () => {
    const help = ok(await tributary("configs", "--help"), "help");
    for (const o of [
      "--add-config <String",
      "--all",
      "--alter",
      "--bootstrap-server <String: server to",
      "--delete-config",
      "--describe",
      "--entity-default",
      "--entity-name",
      "--entity-type",
    ])
      assert.ok(
        help.some((l) => l.startsWith(o)),
        `--help lists ${o}`,
      );
  });
});
