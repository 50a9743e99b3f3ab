// `tributary console-producer` and `console-consumer` end to end: the real executable against a real
// broker, stdin lines in, DefaultMessageFormatter lines out (print.key/timestamp/offset/partition/
// headers, key.separator, line.separator), cross-checked with kcat both ways (kcat reads what
// console-producer wrote on murmur2 partitions; console-consumer reads what kcat wrote), every codec, and
// --group (committed offsets: a second run reads only the new records; the group is listed by
// consumer-groups while it reads), and the error paths: bad flags, missing key separator, --group with
// --partition, conflicting group ids / auto.offset.reset, unknown topic → one line, exit 1.

import assert from "node:assert/strict";
import { resolve } from "node:path";
import { before, describe, test } from "node:test";
import { parseArgs } from "../../../src/cli/args.js";
import { CONSOLE_PRODUCER_SPEC, consoleProducerOptions } from "../../../src/cli/tools/console-producer.js";
import { KafkaProducer } from "../../../src/client/producer/kafka-producer.js";
import {
  type CommandResult,
  describeResult,
  readWithKcat,
  runCommand,
} from "../../support/broker-harness.js";
import { cliToolFixture, oneLineError } from "../../support/cli-tool-fixture.js";
import { runTributary } from "../../support/tributary-cli.js";

const fx = cliToolFixture({
  name: "console-tools",
  overrides: { "num.partitions": "4", "group.initial.rebalance.delay.ms": "0" },
});

function tributary(args: string[], input = ""): Promise<CommandResult> {
  return runTributary(args, { timeoutMs: 30_000, input });
}

function produce(topic: string, input: string, ...extra: string[]): Promise<CommandResult> {
  return tributary(
    ["console-producer", "--bootstrap-server", fx.broker.bootstrap, "--topic", topic, ...extra],
    input,
  );
}

function consume(topic: string, ...extra: string[]): Promise<CommandResult> {
  return tributary([
    "console-consumer",
    "--bootstrap-server",
    fx.broker.bootstrap,
    "--topic",
    topic,
    ...extra,
  ]);
}

describe("console-producer", () => {
  test("parse.key with the default tab separator: kcat finds each key on its murmur2 partition", async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `user-${i}`);
    const r = await produce(
      "cp-keys",
      keys.map((k) => `${k}\tvalue of ${k}`).join("\n"),
      "--property",
      "parse.key=true",
    );
    assert.equal(r.code, 0, describeResult("console-producer", r));
    assert.equal(r.stderr, "");
    const kin = await runCommand(
      "/usr/bin/kcat",
      ["-b", fx.broker.bootstrap, "-P", "-t", "cp-keys-kcat", "-K:", "-X", "partitioner=murmur2_random"],
      { input: keys.map((k) => `${k}:x`).join("\n") },
    );
    assert.equal(kin.code, 0, describeResult("kcat -P", kin));
    const expected = new Map(
      (await readWithKcat(fx.broker.bootstrap, "cp-keys-kcat")).map((m) => [m.key, m.partition]),
    );
    const got = await readWithKcat(fx.broker.bootstrap, "cp-keys");
    assert.equal(got.length, 20);
    for (const m of got) {
      assert.equal(m.value, `value of ${m.key}`);
      assert.equal(m.partition, expected.get(m.key), m.key);
    }
  });

  test("key.separator, parse.headers, null.marker, --compression-codec for every codec", async () => {
    for (const codec of ["none", "gzip", "snappy", "lz4", "zstd"]) {
      const topic = `cp-${codec}`;
      const r = await produce(
        topic,
        "h1:a,h2:b\tk1::v1\n\tk2::NULL\n",
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=::",
        "--property",
        "parse.headers=true",
        "--property",
        "null.marker=NULL",
        "--compression-codec",
        codec,
        "--producer-property",
        "linger.ms=0",
      );
      assert.equal(r.code, 0, describeResult("console-producer", r));
      const got = await readWithKcat(fx.broker.bootstrap, topic);
      const byKey = new Map(got.map((m) => [m.key, m]));
      assert.equal(byKey.get("k1")?.value, "v1");
      assert.equal(byKey.get("k1")?.headers, "h1=a,h2=b");
      assert.equal(byKey.get("k2")?.value, "", "null value (kcat prints nothing)");
    }
    // Without a value --compression-codec means gzip.
    const r = await produce("cp-gzip-default", "x\n", "--compression-codec");
    assert.equal(r.code, 0, describeResult("console-producer --compression-codec", r));
  });

  test("--request-required-acks 0 and --sync still deliver every line in order", async () => {
    for (const [topic, extra] of [
      ["cp-acks0", ["--request-required-acks", "0"]],
      ["cp-sync", ["--sync"]],
    ] as const) {
      const lines = Array.from({ length: 50 }, (_, i) => `line ${i}`);
      const r = await produce(
        topic,
        `${lines.join("\n")}\n`,
        ...extra,
        "--producer-property",
        "partitioner.ignore.keys=true",
      );
      assert.equal(r.code, 0, describeResult("console-producer", r));
      const got = await readWithKcat(fx.broker.bootstrap, topic);
      assert.deepEqual(got.map((m) => m.value).sort(), [...lines].sort());
    }
  });

  test("Kafka's producer tuning flags map to their producer configs, with Kafka's defaults", async () => {
    const parse = (...argv: string[]) =>
      consoleProducerOptions(
        parseArgs(CONSOLE_PRODUCER_SPEC, ["--bootstrap-server", "b:9092", "--topic", "t", ...argv]),
      ).producerProps;
    const defaults = parse();
    assert.deepEqual(
      [
        "request.timeout.ms",
        "retries",
        "retry.backoff.ms",
        "send.buffer.bytes",
        "buffer.memory",
        "batch.size",
        "metadata.max.age.ms",
        "max.block.ms",
        "linger.ms",
      ].map((k) => defaults[k]),
      ["1500", "3", "100", "102400", "33554432", "16384", "300000", "60000", "1000"],
    );
    const set = parse(
      ...["--request-timeout-ms", "5000", "--message-send-max-retries", "7", "--retry-backoff-ms", "250"],
      ...["--metadata-expiry-ms", "9000", "--max-block-ms", "4000", "--max-memory-bytes", "1048576"],
      ...["--max-partition-memory-bytes", "32768", "--socket-buffer-size", "65536"],
      ...["--producer-property", "retries=9"],
    );
    assert.equal(set["request.timeout.ms"], "5000");
    assert.equal(set.retries, "7", "an explicit flag wins over --producer-property");
    assert.equal(set["retry.backoff.ms"], "250");
    assert.equal(set["metadata.max.age.ms"], "9000");
    assert.equal(set["max.block.ms"], "4000");
    assert.equal(set["buffer.memory"], "1048576");
    assert.equal(set["batch.size"], "32768");
    assert.equal(set["send.buffer.bytes"], "65536");
    assert.equal(parse("--producer-property", "retries=9").retries, "9", "a default does not override");
    // And the tool runs with all of them.
    const r = await produce(
      "cp-flags",
      "a\nb\n",
      ...["--request-timeout-ms", "5000", "--message-send-max-retries", "7", "--max-block-ms", "4000"],
      ...[
        "--max-partition-memory-bytes",
        "32768",
        "--max-memory-bytes",
        "1048576",
        "--socket-buffer-size",
        "65536",
      ],
    );
    assert.equal(r.code, 0, describeResult("console-producer with tuning flags", r));
    const got = await readWithKcat(fx.broker.bootstrap, "cp-flags");
    assert.deepEqual(got.map((m) => m.value).sort(), ["a", "b"]);
    // --line-reader names Kafka's LineMessageReader; --reader-config is a file of reader properties.
    const { writeFileSync, mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const readerFile = resolve(mkdtempSync(resolve(tmpdir(), "reader-config-")), "reader.properties");
    writeFileSync(readerFile, "parse.key=true\nkey.separator=:\n");
    const keyed = await produce(
      "cp-reader",
      "k1:v1\n",
      ...["--line-reader", "org.apache.kafka.tools.LineMessageReader", "--reader-config", readerFile],
    );
    assert.equal(keyed.code, 0, describeResult("console-producer --reader-config", keyed));
    const read = await readWithKcat(fx.broker.bootstrap, "cp-reader");
    assert.deepEqual(
      read.map((m) => [m.key, m.value]),
      [["k1", "v1"]],
    );
    assert.match(
      oneLineError(
        await produce("cp-reader", "x\n", "--line-reader", "com.example.Reader"),
        "unknown reader",
      ),
      /^--line-reader: unknown class 'com\.example\.Reader' \(expected one of org\.apache\.kafka\.tools\.LineMessageReader, /,
    );
  });

  test("--producer.config file, overridden by --producer-property", async () => {
    const { writeFileSync, mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(resolve(tmpdir(), "cp-config-"));
    const file = resolve(dir, "producer.properties");
    writeFileSync(file, "# comment\ncompression.type=brotli\nlinger.ms = 0\n");
    const bad = await produce("cp-config", "a\n", "--producer.config", file);
    assert.match(
      oneLineError(bad, "bad compression in config file"),
      /Invalid value brotli for configuration compression.type/,
    );
    const good = await produce(
      "cp-config",
      "a\n",
      "--producer.config",
      file,
      "--producer-property",
      "compression.type=lz4",
    );
    assert.equal(good.code, 0, describeResult("console-producer", good));
  });

  test("errors: one line, exit 1", async () => {
    assert.equal(
      oneLineError(
        await produce("cp-err", "no separator here\n", "--property", "parse.key=true"),
        "no key separator",
      ),
      "No key separator found on line number 1: 'no separator here'",
    );
    assert.equal(
      oneLineError(await tributary(["console-producer", "--topic", "t"]), "missing bootstrap"),
      'Missing required argument "[bootstrap-server]"',
    );
    assert.equal(
      oneLineError(await produce("t", "", "--bogus"), "bad flag"),
      "bogus is not a recognized option",
    );
    assert.match(
      oneLineError(await produce("t", "", "--request-required-acks", "7"), "bad acks"),
      /Invalid value 7 for configuration acks/,
    );
    assert.match(
      oneLineError(await produce("t", "", "--batch-size", "big"), "bad int"),
      /Cannot parse argument 'big' of option batch-size/,
    );
    // An invalid topic name fails the send at once (Kafka's InvalidTopicException), not after max.block.ms.
    const started = Date.now();
    assert.equal(
      oneLineError(await produce("bad topic!", "x\n"), "invalid topic"),
      "ERROR Error when sending message to topic bad topic! with key: null, value: 1 bytes with error: Invalid topics: [bad topic!]",
    );
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
    const help = await tributary(["console-producer", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--bootstrap-server <String: server to/);
  });
});

describe("console-consumer", () => {
  before(async () => {
    // kcat writes the records the consumer tests read: partition 0, keys, a header on the first.
    const r = await runCommand(
      "/usr/bin/kcat",
      ["-b", fx.broker.bootstrap, "-P", "-t", "cc", "-p", "0", "-K:", "-H", "hk=hv", "-z", "snappy"],
      { input: "k1:v1\nk2:v2\nk3:v3\n" },
    );
    assert.equal(r.code, 0, describeResult("kcat -P", r));
  });

  test("--from-beginning --max-messages with every print.* property: DefaultMessageFormatter's line", async () => {
    const r = await consume(
      "cc",
      "--from-beginning",
      "--max-messages",
      "3",
      "--property",
      "print.key=true",
      "--property",
      "print.timestamp=true",
      "--property",
      "print.offset=true",
      "--property",
      "print.partition=true",
      "--property",
      "print.headers=true",
    );
    assert.equal(r.code, 0, describeResult("console-consumer", r));
    assert.equal(r.stderr, "Processed a total of 3 messages\n");
    const lines = r.stdout.replace(/\n$/, "").split("\n");
    assert.equal(lines.length, 3);
    for (const [i, line] of lines.entries()) {
      assert.match(
        line,
        new RegExp(`^CreateTime:\\d{13}\\tPartition:0\\tOffset:${i}\\thk:hv\\tk${i + 1}\\tv${i + 1}$`),
        line,
      );
    }
    // print.delivery (a share group's count: never there for a consumer group) and print.epoch (Kafka's
    // ConsoleConsumer drops the leader epoch before formatting, so it is never there either).
    const epochs = await consume(
      "cc",
      ...["--from-beginning", "--max-messages", "2", "--property", "print.offset=true"],
      ...["--property", "print.delivery=true", "--property", "print.epoch=true"],
    );
    assert.equal(
      epochs.stdout,
      "Offset:0\tDelivery:NOT_PRESENT\tEpoch:NOT_PRESENT\tv1\nOffset:1\tDelivery:NOT_PRESENT\tEpoch:NOT_PRESENT\tv2\n",
    );
  });

  test("--key-deserializer / --value-deserializer (Kafka's classes); a bad record ends the run or, with --skip-message-on-error, is skipped", async () => {
    const long = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(n);
      return b;
    };
    const p = new KafkaProducer({ "bootstrap.servers": fx.broker.bootstrap, "linger.ms": "0" });
    for (const [key, value] of [
      ["hello", long(42n)],
      ["world", long(-7n)],
      ["bad", Buffer.from("xyz")],
      ["after", long(1n)],
    ] as const) {
      await p.send({ topic: "cc-longs", partition: 0, key, value });
    }
    await p.close();
    const serde = "org.apache.kafka.common.serialization.";
    const longs = [
      "--from-beginning",
      "--property",
      "print.key=true",
      "--value-deserializer",
      `${serde}LongDeserializer`,
    ];
    const two = await consume(
      "cc-longs",
      ...longs,
      "--key-deserializer",
      `${serde}StringDeserializer`,
      "--max-messages",
      "2",
    );
    assert.equal(two.code, 0, describeResult("console-consumer", two));
    assert.equal(two.stdout, "hello\t42\nworld\t-7\n");
    // The 3-byte value: Kafka's SerializationException ends the run after the records before it.
    const stopped = await consume("cc-longs", ...longs, "--timeout-ms", "3000");
    assert.equal(stopped.code, 1, describeResult("console-consumer", stopped));
    assert.equal(stopped.stdout, "hello\t42\nworld\t-7\n");
    assert.equal(
      stopped.stderr,
      "Processed a total of 3 messages\nERROR Unknown error when running consumer: org.apache.kafka.common.errors.SerializationException: Size of data received by LongDeserializer is not 8\n",
    );
    const skipped = await consume("cc-longs", ...longs, "--skip-message-on-error", "--max-messages", "4");
    assert.equal(skipped.code, 0, describeResult("console-consumer", skipped));
    assert.equal(skipped.stdout, "hello\t42\nworld\t-7\nafter\t1\n");
    assert.match(
      skipped.stderr,
      /^ERROR Error processing message, skipping this message: org\.apache\.kafka\.common\.errors\.SerializationException: Size of data received by LongDeserializer is not 8\nProcessed a total of 4 messages\n$/,
    );
    // The formatter property names the deserializer too; an unknown class is one line.
    const viaProperty = await consume(
      "cc-longs",
      ...[
        "--from-beginning",
        "--max-messages",
        "1",
        "--property",
        `value.deserializer=${serde}LongDeserializer`,
      ],
    );
    assert.equal(viaProperty.stdout, "42\n");
    // As Kafka's formatterArgs(): a --property value wins over the flag.
    const propertyWins = await consume(
      "cc-longs",
      ...["--from-beginning", "--max-messages", "1", "--value-deserializer", "com.example.Nope"],
      ...["--property", `value.deserializer=${serde}LongDeserializer`],
    );
    assert.equal(propertyWins.stdout, "42\n");
    // The Kafka Streams quickstart's command: --formatter with the formatter's properties.
    const quickstart = await consume(
      "cc-longs",
      ...["--from-beginning", "--max-messages", "2", "--formatter", "kafka.tools.DefaultMessageFormatter"],
      ...["--property", "print.key=true", "--property", "print.value=true"],
      ...["--property", `key.deserializer=${serde}StringDeserializer`],
      ...["--property", `value.deserializer=${serde}LongDeserializer`],
    );
    assert.equal(quickstart.code, 0, describeResult("console-consumer --formatter", quickstart));
    assert.equal(quickstart.stdout, "hello\t42\nworld\t-7\n");
    // --formatter-config: the same properties from a file, which --property overrides.
    const { writeFileSync, mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(resolve(tmpdir(), "formatter-config-"));
    const file = resolve(dir, "formatter.properties");
    writeFileSync(file, `print.key=true\nkey.separator=:\nvalue.deserializer=${serde}LongDeserializer\n`);
    const fromFile = await consume(
      "cc-longs",
      ...[
        "--from-beginning",
        "--max-messages",
        "1",
        "--formatter-config",
        file,
        "--property",
        "key.separator==",
      ],
    );
    assert.equal(fromFile.stdout, "hello=42\n");
    // NoOpMessageFormatter reads and counts, and prints nothing.
    const noop = await consume(
      "cc-longs",
      ...[
        "--from-beginning",
        "--max-messages",
        "2",
        "--formatter",
        "org.apache.kafka.tools.consumer.NoOpMessageFormatter",
      ],
    );
    assert.equal(noop.code, 0, describeResult("console-consumer NoOp", noop));
    assert.equal(noop.stdout, "");
    assert.match(noop.stderr, /Processed a total of 2 messages\n$/);
    assert.match(
      oneLineError(await consume("cc-longs", "--formatter", "com.example.Formatter"), "unknown formatter"),
      /^--formatter: unknown class 'com\.example\.Formatter' \(expected one of org\.apache\.kafka\.tools\.consumer\.DefaultMessageFormatter, /,
    );
    assert.match(
      oneLineError(await consume("cc-longs", "--value-deserializer", "com.example.Nope"), "unknown class"),
      /^--value-deserializer: unknown class 'com\.example\.Nope' \(expected one of org\.apache\.kafka\.common\.serialization\.StringDeserializer, /,
    );
  });

  test("plain values; key.separator and line.separator; NO_HEADERS and null keys", async () => {
    const plain = await consume("cc", "--from-beginning", "--max-messages", "3");
    assert.equal(plain.stdout, "v1\nv2\nv3\n");
    // --max-messages 0 is a limit too (Kafka's: only -1 means none): nothing is printed.
    const none = await consume("cc", "--from-beginning", "--max-messages", "0");
    assert.equal(none.stdout, "");
    assert.match(none.stderr, /Processed a total of 0 messages/);
    const sep = await consume(
      "cc",
      "--from-beginning",
      "--max-messages",
      "2",
      "--property",
      "print.key=true",
      "--property",
      "key.separator=|",
      "--property",
      "line.separator=;",
    );
    assert.equal(sep.stdout, "k1|v1;k2|v2;");
    await produce("cc-nulls", "just a value\n");
    const nulls = await consume(
      "cc-nulls",
      "--from-beginning",
      "--max-messages",
      "1",
      "--property",
      "print.key=true",
      "--property",
      "print.headers=true",
    );
    assert.equal(nulls.stdout, "NO_HEADERS\tnull\tjust a value\n");
  });

  test("--partition with --offset n / earliest / latest, and --timeout-ms", async () => {
    const two = await consume("cc", "--partition", "0", "--offset", "1", "--timeout-ms", "1500");
    assert.equal(two.code, 0, describeResult("console-consumer", two));
    assert.equal(two.stdout, "v2\nv3\n");
    assert.match(two.stderr, /TimeoutException\nProcessed a total of 2 messages\n$/);
    const earliest = await consume("cc", "--partition", "0", "--offset", "earliest", "--max-messages", "1");
    assert.equal(earliest.stdout, "v1\n");
    const latest = await consume("cc", "--partition", "0", "--offset", "latest", "--timeout-ms", "800");
    assert.equal(latest.stdout, "");
    assert.match(latest.stderr, /Processed a total of 0 messages/);
  });

  test("reads every codec kcat writes", async () => {
    for (const codec of ["gzip", "snappy", "lz4", "zstd"]) {
      const w = await runCommand(
        "/usr/bin/kcat",
        ["-b", fx.broker.bootstrap, "-P", "-t", `cc-${codec}`, "-p", "1", "-z", codec],
        {
          input: "a\nb\nc\n",
        },
      );
      assert.equal(w.code, 0, describeResult("kcat -P", w));
      const r = await consume(`cc-${codec}`, "--from-beginning", "--max-messages", "3");
      assert.equal(r.stdout, "a\nb\nc\n", codec);
    }
  });

  test("--isolation-level read_committed reads non-transactional records", async () => {
    const r = await consume(
      "cc",
      "--from-beginning",
      "--max-messages",
      "3",
      "--isolation-level",
      "read_committed",
    );
    assert.equal(r.stdout, "v1\nv2\nv3\n");
  });

  test("--group: reads, commits on exit, and a second run reads only the new records", async () => {
    await produce("cc-group", "a\nb\nc\n");
    const first = await consume("cc-group", "--group", "cg1", "--from-beginning", "--max-messages", "3");
    assert.equal(first.code, 0, describeResult("console-consumer --group", first));
    assert.deepEqual(first.stdout.split("\n").filter(Boolean).sort(), ["a", "b", "c"]);
    assert.match(first.stderr, /Processed a total of 3 messages\n$/);
    await produce("cc-group", "d\ne\n");
    // Committed offsets win over --from-beginning (auto.offset.reset only applies without them).
    const second = await consume("cc-group", "--group", "cg1", "--from-beginning", "--timeout-ms", "3000");
    assert.equal(second.code, 0, describeResult("console-consumer --group, second run", second));
    assert.deepEqual(second.stdout.split("\n").filter(Boolean).sort(), ["d", "e"]);
    assert.match(second.stderr, /Processed a total of 2 messages\n$/);
    const describe = await tributary([
      "consumer-groups",
      "--bootstrap-server",
      fx.broker.bootstrap,
      "--describe",
      "--group",
      "cg1",
    ]);
    assert.equal(describe.code, 0, describeResult("consumer-groups --describe", describe));
    const lags = describe.stdout
      .split("\n")
      .filter((l) => l.startsWith("cg1 "))
      .map((l) => l.split(/\s+/).slice(1, 6));
    assert.equal(lags.length, 4, describe.stdout);
    const total = (i: number) => lags.reduce((n, l) => n + (l[i] === "-" ? 0 : Number(l[i])), 0);
    assert.equal(total(2), 5, "CURRENT-OFFSET sums to every record read");
    assert.equal(total(4), 0, "no LAG");
    // Without --group: a fresh random group, so --from-beginning reads everything again, and commits
    // nothing (enable.auto.commit=false).
    const fresh = await consume("cc-group", "--from-beginning", "--max-messages", "5");
    assert.deepEqual(fresh.stdout.split("\n").filter(Boolean).sort(), ["a", "b", "c", "d", "e"]);
  });

  test("--include: a pattern subscription over every topic whose whole name matches", async () => {
    for (const topic of ["inc-one", "inc-two", "xinc-one"]) {
      const r = await produce(topic, `${topic}-value\n`);
      assert.equal(r.code, 0, describeResult("console-producer", r));
    }
    const r = await tributary([
      ...["console-consumer", "--bootstrap-server", fx.broker.bootstrap, "--include", "inc-.*"],
      ...["--from-beginning", "--timeout-ms", "4000"],
    ]);
    assert.equal(r.code, 0, describeResult("console-consumer --include", r));
    assert.deepEqual(r.stdout.split("\n").filter(Boolean).sort(), ["inc-one-value", "inc-two-value"]);
    assert.match(r.stderr, /Processed a total of 2 messages\n$/);
  });

  test("--group with --max-messages commits only what it printed: the next run goes on from there", async () => {
    const created = await tributary([
      ...["topics", "--bootstrap-server", fx.broker.bootstrap, "--create", "--topic", "cc-steps"],
      ...["--partitions", "1"],
    ]);
    assert.equal(created.code, 0, describeResult("topics --create", created));
    await produce("cc-steps", "s0\ns1\ns2\ns3\n");
    // Each run polls all four records but prints one; Kafka seeks the rest back before committing.
    for (const expected of ["s0\n", "s1\n", "s2\n"]) {
      const r = await consume("cc-steps", "--group", "cg-steps", "--from-beginning", "--max-messages", "1");
      assert.equal(r.code, 0, describeResult("console-consumer --group --max-messages 1", r));
      assert.equal(r.stdout, expected);
    }
  });

  test("errors: one line, exit 1", async () => {
    assert.equal(
      oneLineError(await consume("cc", "--group", "g1", "--partition", "0"), "--group with --partition"),
      "Options group and partition cannot be specified together.",
    );
    assert.equal(
      oneLineError(
        await consume("cc", "--group", "g1", "--consumer-property", "group.id=g2"),
        "two group ids",
      ),
      "The group ids provided in different places (directly using '--group', via '--consumer-property', or via '--consumer.config') do not match. Detected group ids: 'g1', 'g2'",
    );
    assert.equal(
      oneLineError(
        await consume("cc", "--from-beginning", "--consumer-property", "auto.offset.reset=latest"),
        "conflicting reset",
      ),
      "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please remove one option",
    );
    assert.equal(
      oneLineError(await consume("cc", "--offset", "3"), "offset without partition"),
      "The partition is required when offset is specified.",
    );
    assert.equal(
      oneLineError(await consume("cc", "--include", "c.*"), "--topic and --include"),
      "Exactly one of include/topic is required.",
    );
    assert.equal(
      oneLineError(await consume("cc", "--partition", "0", "--offset", "1", "--from-beginning"), "both"),
      "Options from-beginning and offset cannot be specified together.",
    );
    assert.match(
      oneLineError(await consume("cc", "--partition", "0", "--offset", "-5"), "bad offset"),
      /The provided offset value is incorrect/,
    );
    assert.match(
      oneLineError(await consume("cc", "--isolation-level", "dirty"), "bad isolation"),
      /isolation.level/,
    );
    assert.equal(oneLineError(await consume("cc", "--nope"), "bad flag"), "nope is not a recognized option");
    assert.equal(
      oneLineError(await consume("no-such-topic", "--timeout-ms", "500"), "unknown topic"),
      "Topic 'no-such-topic' does not exist",
    );
    assert.match(
      oneLineError(await consume("cc", "--partition", "9"), "bad partition"),
      /Partition 9 of topic cc does not exist/,
    );
  });
});
