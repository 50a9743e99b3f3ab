// `tributary consumer-groups` end to end: the real executable against a real broker with real group
// members (kcat -G in the background, a KafkaJS consumer): --list (+ --state), --describe offsets /
// members / state with Kafka's exact columns and lag values, --reset-offsets plans, --execute (a kcat
// consumer in the group then resumes at the new offsets), --export / --from-file, --delete
// (NON_EMPTY_GROUP while kcat is a member, success after), --delete-offsets, and one-line errors.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import kafkajs from "kafkajs";
import { GroupAdmin, tpKey } from "../../../src/client/admin/group-admin.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { ErrorCode } from "../../../src/protocol/generated/errors.js";
import { writeConsumerProtocolSubscription } from "../../../src/protocol/generated/messages/ConsumerProtocolSubscription.js";
import { Writer } from "../../../src/protocol/primitives/writer.js";
import {
  type BackgroundCommand,
  type CommandResult,
  describeResult,
  runCommand,
  startCommand,
  waitFor,
} from "../../support/broker-harness.js";
import {
  cliToolFixture,
  lines,
  ok as okLines,
  oneLineError,
  tributary,
} from "../../support/cli-tool-fixture.js";

const KCAT = "/usr/bin/kcat";
const TOPIC = "orders";
/** Records produced to each partition of TOPIC before the tests. */
const INITIAL = [5, 3, 4];

let groups: GroupAdmin;
let kafka: kafkajs.Kafka;
let producer: kafkajs.Producer;

/** Java's `%-Ns`, joined by spaces; the last column unpadded. */
function cols(values: readonly string[], widths: readonly number[]): string {
  return values.map((v, i) => (i < widths.length ? v.padEnd(widths[i]) : v)).join(" ");
}

/** The columns of consumer-groups --describe's offsets table. */
const OFFSETS_COLUMNS = [
  "GROUP",
  "TOPIC",
  "PARTITION",
  "CURRENT-OFFSET",
  "LOG-END-OFFSET",
  "LAG",
  "CONSUMER-ID",
  "HOST",
  "CLIENT-ID",
];
const OFFSETS_HEADER = cols(OFFSETS_COLUMNS, [15, 15, 10, 15, 15, 15, 15, 15]);

async function produce(partition: number, count: number, tag: string): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => ({ partition, value: `${tag}-${i}` }));
  await producer.send({ topic: TOPIC, acks: -1, messages });
}

async function committed(group: string): Promise<number[]> {
  const c = await groups.listConsumerGroupOffsets(group);
  return INITIAL.map((_, p) => Number(c.get(tpKey(TOPIC, p))?.offset ?? -1n));
}

/** A kcat group member (balanced consumer) committing every 100 ms. */
function kcatMember(group: string): BackgroundCommand {
  return startCommand(KCAT, [
    "-b",
    fx.broker.bootstrap,
    "-G",
    group,
    "-q",
    "-f",
    "%p:%o\\n",
    "-X",
    "auto.commit.interval.ms=100",
    "-X",
    "auto.offset.reset=earliest",
    TOPIC,
  ]);
}

const fx = cliToolFixture({
  name: "tributary-consumer-groups-tool",
  overrides: {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "5",
  },
  admin: true,
  teardown: async () => {
    await producer?.disconnect();
  },
  setup: async () => {
    groups = new GroupAdmin(fx.admin.cluster, { timeoutMs: 10_000 });
    await fx.createTopics([{ name: TOPIC, partitions: 3 }]);
    kafka = new kafkajs.Kafka({
      clientId: "cg-test",
      brokers: [fx.broker.bootstrap],
      logLevel: kafkajs.logLevel.NOTHING,
      retry: { retries: 8, initialRetryTime: 100 },
    });
    producer = kafka.producer({ createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
    await producer.connect();
    for (let p = 0; p < INITIAL.length; p++) await produce(p, INITIAL[p], `init-p${p}`);
  },
});
const cg = fx.tool("consumer-groups");

/** Exit 0 (stderr may carry warnings); returns the stdout lines. */
function ok(r: CommandResult, what: string): string[] {
  return okLines(r, what, { anyStderr: true });
}

describe("consumer-groups with a live kcat member", () => {
  let member: BackgroundCommand | undefined;
  let memberId = "";

  before(async () => {
    member = kcatMember("gk");
    await waitFor("kcat joined gk and committed everything", 30_000, async () => {
      const [g] = await groups.describeGroups(["gk"]);
      if (g.state !== "Stable" || g.members.length !== 1) return undefined;
      const c = await committed("gk");
      if (c.join() !== INITIAL.join()) return undefined;
      memberId = g.members[0].memberId;
      return true;
    });
  });

  after(async () => {
    await member?.stop();
  });

  test("--describe prints Kafka's offsets table with the member's partitions and lag 0", async () => {
    const out = ok(await cg("--describe", "--group", "gk"), "describe gk");
    const widths = [15, 15, 10, 15, 15, 15, Math.max(15, memberId.length), 15];
    assert.deepEqual(out, [
      "",
      cols(OFFSETS_COLUMNS, widths),
      ...INITIAL.map((n, p) =>
        cols(["gk", TOPIC, String(p), String(n), String(n), "0", memberId, "/127.0.0.1", "rdkafka"], widths),
      ),
    ]);
    assert.match(memberId, /^rdkafka-[0-9a-f-]{36}$/);
  });

  test("--list, --list --state and --list --type show the group, its state and its type", async () => {
    assert.ok(ok(await cg("--list"), "list").includes("gk"));
    const state = ok(await cg("--list", "--state"), "list --state");
    assert.equal(state[0], `${"GROUP".padEnd(25)} ${"STATE".padEnd(20)}`);
    assert.ok(state.includes(`${"gk".padEnd(25)} ${"Stable".padEnd(20)}`), state.join("\n"));
    const stable = ok(await cg("--list", "--state", "stable"), "list --state stable");
    assert.ok(stable.includes(`${"gk".padEnd(25)} ${"Stable".padEnd(20)}`));
    const empty = ok(await cg("--list", "--state", "Empty"), "list --state Empty");
    assert.ok(!empty.some((l) => l.startsWith("gk ")), empty.join("\n"));
    assert.match(
      oneLineError(await cg("--list", "--state", "bogus"), "bad state"),
      /^Invalid state list 'bogus'\. Valid states are: /,
    );
    // --type (Kafka 3.8+): a TYPE column (kcat's group is a classic one), filtered by type.
    const typed = ok(await cg("--list", "--type"), "list --type");
    assert.equal(typed[0], `${"GROUP".padEnd(25)} ${"TYPE".padEnd(20)}`);
    assert.ok(typed.includes(`${"gk".padEnd(25)} ${"Classic".padEnd(20)}`), typed.join("\n"));
    const both = ok(await cg("--list", "--type", "classic", "--state"), "list --type classic --state");
    assert.equal(both[0], `${"GROUP".padEnd(25)} ${"TYPE".padEnd(20)} ${"STATE".padEnd(20)}`);
    assert.ok(
      both.includes(`${"gk".padEnd(25)} ${"Classic".padEnd(20)} ${"Stable".padEnd(20)}`),
      both.join("\n"),
    );
    const consumerType = ok(await cg("--list", "--type", "consumer"), "list --type consumer");
    assert.deepEqual(consumerType, [`${"GROUP".padEnd(25)} ${"TYPE".padEnd(20)}`], "no KIP-848 groups here");
    assert.equal(
      oneLineError(await cg("--list", "--type", "bogus"), "bad type"),
      "Invalid types list 'bogus'. Valid types are: Consumer, Classic, Share",
    );
  });

  test("--members (and --verbose) and --state describe the member and the group", async () => {
    const idWidth = Math.max(15, memberId.length);
    const members = ok(await cg("--describe", "--group", "gk", "--members"), "members");
    assert.deepEqual(members, [
      "",
      `${cols(["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"], [15, idWidth, 15, 15, 15])} `,
      `${cols(["gk", memberId, "/127.0.0.1", "rdkafka", "3"], [15, idWidth, 15, 15, 15])} `,
    ]);
    const verbose = ok(await cg("--describe", "--group", "gk", "--members", "--verbose"), "members verbose");
    assert.equal(
      verbose[2],
      `${cols(["gk", memberId, "/127.0.0.1", "rdkafka", "3"], [15, idWidth, 15, 15, 15])} ${cols(["-", `${TOPIC}:0,1,2`, "-", "-"], [15, 20, 15, 20])}`,
    );
    const state = ok(await cg("--describe", "--group", "gk", "--state"), "state");
    const coordinator = `127.0.0.1:${fx.broker.port}  (0)`;
    assert.deepEqual(state, [
      "",
      cols(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"], [15, 25, 20, 20]),
      cols(["gk", coordinator, "range", "Stable", "1"], [15, 25, 20, 20]),
    ]);
  });

  test("--delete, --reset-offsets and --delete-offsets refuse an active group in Kafka's words", async () => {
    const del = await cg("--delete", "--group", "gk");
    assert.equal(del.code, 1, describeResult("delete", del));
    assert.deepEqual(lines(del.stdout), [
      "",
      "Error: Deletion of some consumer groups failed:",
      "* Group 'gk' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
    ]);
    const reset = await cg("--reset-offsets", "--group", "gk", "--all-topics", "--to-earliest", "--execute");
    assert.equal(reset.code, 1, describeResult("reset active", reset));
    assert.ok(
      lines(reset.stdout).includes(
        "Error: Assignments can only be reset if the group 'gk' is inactive, but the current state is Stable.",
      ),
    );
    assert.deepEqual(await committed("gk"), INITIAL, "nothing was reset");
    const delOffsets = await cg("--delete-offsets", "--group", "gk", "--topic", `${TOPIC}:1`);
    assert.equal(delOffsets.code, 1, describeResult("delete-offsets active", delOffsets));
    assert.deepEqual(lines(delOffsets.stdout), [
      "",
      "Error: Encountered some partition-level error, see the follow-up details.",
      "",
      cols(["TOPIC", "PARTITION", "STATUS"], [15, 10, 15]),
      cols(
        [
          TOPIC,
          "1",
          "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.",
        ],
        [15, 10],
      ),
    ]);
  });

  test("after the member leaves: 'no active members' on stderr, rows without consumer, real lag", async () => {
    await member?.stop();
    member = undefined;
    await waitFor("gk is Empty", 20_000, async () => {
      const [g] = await groups.describeGroups(["gk"]);
      return g.state === "Empty" ? true : undefined;
    });
    await produce(1, 3, "more-p1");
    const r = await cg("--describe", "--group", "gk");
    assert.equal(r.code, 0, describeResult("describe empty gk", r));
    assert.equal(r.stderr, "\nConsumer group 'gk' has no active members.\n");
    assert.deepEqual(lines(r.stdout), [
      "",
      OFFSETS_HEADER,
      cols(["gk", TOPIC, "0", "5", "5", "0", "-", "-", "-"], [15, 15, 10, 15, 15, 15, 15, 15]),
      cols(["gk", TOPIC, "1", "3", "6", "3", "-", "-", "-"], [15, 15, 10, 15, 15, 15, 15, 15]),
      cols(["gk", TOPIC, "2", "4", "4", "0", "-", "-", "-"], [15, 15, 10, 15, 15, 15, 15, 15]),
    ]);
  });
});

describe("consumer-groups --reset-offsets on an inactive group", () => {
  const plan = (rows: Array<[number, number]>, group = "gk") => [
    "",
    cols(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], [15, 15, 10]),
    ...rows.map(([p, o]) => cols([group, TOPIC, String(p), String(o)], [15, 15, 10])),
  ];

  test("dry-run plans for every scenario leave the committed offsets alone", async () => {
    const before = await committed("gk");
    assert.deepEqual(before, [5, 3, 4]);
    const earliest = ok(
      await cg("--reset-offsets", "--group", "gk", "--topic", `${TOPIC}:0,1`, "--to-earliest", "--dry-run"),
      "to-earliest",
    );
    assert.deepEqual(
      earliest,
      plan([
        [0, 0],
        [1, 0],
      ]),
    );
    assert.deepEqual(
      ok(await cg("--reset-offsets", "--group", "gk", "--all-topics", "--to-latest", "--dry-run"), "latest"),
      plan([
        [0, 5],
        [1, 6],
        [2, 4],
      ]),
    );
    assert.deepEqual(
      ok(
        await cg("--reset-offsets", "--group", "gk", "--topic", TOPIC, "--shift-by", "-2", "--dry-run"),
        "shift",
      ),
      plan([
        [0, 3],
        [1, 1],
        [2, 2],
      ]),
    );
    assert.deepEqual(
      ok(
        await cg("--reset-offsets", "--group", "gk", "--all-topics", "--to-current", "--dry-run"),
        "current",
      ),
      plan([
        [0, 5],
        [1, 3],
        [2, 4],
      ]),
    );
    assert.deepEqual(
      ok(
        await cg(
          "--reset-offsets",
          "--group",
          "gk",
          "--all-topics",
          "--to-datetime",
          "2000-01-01T00:00:00.000+01:00",
          "--dry-run",
        ),
        "datetime",
      ),
      plan([
        [0, 0],
        [1, 0],
        [2, 0],
      ]),
    );
    assert.deepEqual(
      ok(
        await cg("--reset-offsets", "--group", "gk", "--all-topics", "--by-duration", "P1D", "--dry-run"),
        "duration",
      ),
      plan([
        [0, 0],
        [1, 0],
        [2, 0],
      ]),
    );
    // A future datetime has no record at or after it: every partition falls back to its log end.
    const future = ok(
      await cg(
        "--reset-offsets",
        "--group",
        "gk",
        "--topic",
        `${TOPIC}:2`,
        "--to-datetime",
        "2999-01-01T00:00:00.000",
        "--dry-run",
      ),
      "future datetime",
    );
    assert.deepEqual(future, [
      "",
      `Warn: Partition 2 from topic ${TOPIC} is empty. Falling back to latest known offset.`,
      ...plan([[2, 4]]),
    ]);
    // Offsets outside the log are moved to its end (with Kafka's warning).
    const high = await cg(
      "--reset-offsets",
      "--group",
      "gk",
      "--topic",
      `${TOPIC}:0`,
      "--to-offset",
      "99",
      "--dry-run",
    );
    assert.deepEqual(ok(high, "to-offset 99"), plan([[0, 5]]));
    assert.match(
      high.stderr,
      /New offset \(99\) is higher than latest offset for topic partition orders-0\. Value will be set to 5\./,
    );
    // Without --dry-run or --execute the plan is printed with Kafka's warning.
    const noMode = await cg("--reset-offsets", "--group", "gk", "--topic", `${TOPIC}:0`, "--to-offset", "1");
    assert.deepEqual(ok(noMode, "no mode"), plan([[0, 1]]));
    assert.match(noMode.stderr, /^WARN: No action will be performed as the --execute option is missing\./);
    assert.deepEqual(await committed("gk"), before);
  });

  test("--execute commits the plan and a kcat consumer in the group resumes there", async () => {
    ok(
      await cg("--reset-offsets", "--group", "gk", "--topic", `${TOPIC}:0`, "--to-offset", "2", "--execute"),
      "execute to-offset",
    );
    ok(
      await cg("--reset-offsets", "--group", "gk", "--topic", `${TOPIC}:2`, "--to-earliest", "--execute"),
      "execute to-earliest",
    );
    assert.deepEqual(await committed("gk"), [2, 3, 0]);
    // kcat joins gk, reads from the committed offsets to the end (-e) and exits.
    const r = await runCommand(
      KCAT,
      [
        "-b",
        fx.broker.bootstrap,
        "-G",
        "gk",
        "-q",
        "-e",
        "-f",
        "%p:%o\\n",
        "-X",
        "enable.auto.commit=false",
        TOPIC,
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 0, describeResult("kcat -G gk -e", r));
    const read = lines(r.stdout).sort();
    assert.deepEqual(read, ["0:2", "0:3", "0:4", "1:3", "1:4", "1:5", "2:0", "2:1", "2:2", "2:3"].sort());
  });

  test("--export writes CSV that --from-file --execute applies", async () => {
    await waitFor("kcat left gk", 20_000, async () => {
      const [g] = await groups.describeGroups(["gk"]);
      return g.state === "Empty" ? true : undefined;
    });
    ok(
      await cg("--reset-offsets", "--group", "gk", "--all-topics", "--to-offset", "1", "--execute"),
      "execute to-offset 1",
    );
    assert.deepEqual(await committed("gk"), [1, 1, 1]);
    const exported = await cg(
      "--reset-offsets",
      "--group",
      "gk",
      "--all-topics",
      "--shift-by",
      "1",
      "--dry-run",
      "--export",
    );
    assert.equal(
      exported.stdout,
      `${TOPIC},0,2\n${TOPIC},1,2\n${TOPIC},2,2\n\n`,
      describeResult("export", exported),
    );
    const file = join(fx.broker.root, "plan.csv");
    writeFileSync(file, exported.stdout);
    assert.deepEqual(
      ok(await cg("--reset-offsets", "--group", "gk", "--from-file", file, "--execute"), "from-file"),
      plan([
        [0, 2],
        [1, 2],
        [2, 2],
      ]),
    );
    assert.deepEqual(await committed("gk"), [2, 2, 2]);
    // The group-column format names the group on each line.
    writeFileSync(file, `gk,${TOPIC},1,4\n`);
    assert.deepEqual(
      ok(
        await cg("--reset-offsets", "--group", "gk", "--from-file", file, "--execute"),
        "from-file with group",
      ),
      plan([[1, 4]]),
    );
    assert.deepEqual(await committed("gk"), [2, 4, 2]);
  });
});

describe("consumer-groups with a KafkaJS member, --delete-offsets and --delete", () => {
  test("a KafkaJS consumer is described with its client id; offsets and the group are deleted after", async () => {
    const consumer = kafka.consumer({ groupId: "gjs", sessionTimeout: 6000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    let seen = 0;
    await consumer.run({
      autoCommitInterval: 100,
      eachMessage: async () => {
        seen++;
      },
    });
    try {
      await waitFor("KafkaJS consumed and committed all", 30_000, async () => {
        const [g] = await groups.describeGroups(["gjs"]);
        const c = await committed("gjs");
        return g.state === "Stable" && c.join() === "5,6,4" ? true : undefined;
      });
      assert.ok(seen >= 15);
      const r = await cg("--describe", "--group", "gjs", "--members");
      const rows = ok(r, "members gjs");
      assert.equal(rows.length, 3);
      assert.match(rows[2], /^gjs {13}cg-test-[0-9a-f-]+ +\/127\.0\.0\.1 +cg-test +3 +$/);
    } finally {
      await consumer.disconnect();
    }
    await waitFor("gjs is Empty", 20_000, async () => {
      const [g] = await groups.describeGroups(["gjs"]);
      return g.state === "Empty" ? true : undefined;
    });
    const del = ok(
      await cg("--delete-offsets", "--group", "gjs", "--topic", `${TOPIC}:0,2`),
      "delete-offsets",
    );
    assert.deepEqual(del, [
      "Request succeeded for deleting offsets from group gjs.",
      "",
      cols(["TOPIC", "PARTITION", "STATUS"], [15, 10, 15]),
      cols([TOPIC, "0", "Successful"], [15, 10, 15]),
      cols([TOPIC, "2", "Successful"], [15, 10, 15]),
    ]);
    assert.deepEqual(await committed("gjs"), [-1, 6, -1]);
    assert.deepEqual(ok(await cg("--delete", "--group", "gjs"), "delete gjs"), [
      "Deletion of requested consumer groups ('gjs') was successful.",
    ]);
    const gone = await cg("--describe", "--group", "gjs");
    assert.equal(gone.code, 1, describeResult("describe deleted", gone));
    assert.deepEqual(lines(gone.stdout), ["", "Error: Consumer group 'gjs' does not exist."]);
    const again = await cg("--delete", "--group", "gjs");
    assert.equal(again.code, 1);
    assert.deepEqual(lines(again.stdout), [
      "",
      "Error: Deletion of some consumer groups failed:",
      "* Group 'gjs' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
    ]);
    assert.ok(!ok(await cg("--list"), "list after delete").includes("gjs"));
  });
});

describe("consumer-groups bad input", () => {
  const reset = ["--reset-offsets", "--group", "gk", "--all-topics", "--dry-run"];
  const prefix = "Error: Executing consumer group command failed due to ";

  test("--help lists the options; bad values and combinations give one line and exit 1", async () => {
    const help = await tributary("consumer-groups", "--help");
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^This tool helps to list all consumer groups, describe a consumer group/);
    assert.match(help.stdout, /--reset-offsets/);
    assert.equal(
      oneLineError(await cg(...reset, "--to-datetime", "2020-13-45T00:00:00.000"), "bad datetime"),
      `${prefix}java.text.ParseException: Unparseable date: "2020-13-45T00:00:00.000" (--to-datetime expects YYYY-MM-DDTHH:mm:SS.sss with an optional timezone (Z, +hh, +hhmm or +hh:mm))`,
    );
    assert.match(
      oneLineError(await cg(...reset, "--to-datetime", "yesterday"), "datetime without T"),
      /It does not contain a 'T' according to ISO8601 format\. Timestamp: yesterday/,
    );
    assert.equal(
      oneLineError(await cg(...reset, "--to-offset", "ten"), "bad offset"),
      "Cannot parse argument 'ten' of option to-offset",
    );
    assert.equal(
      oneLineError(await cg(...reset, "--by-duration", "1 hour"), "bad duration"),
      `${prefix}Text cannot be parsed to a Duration: '1 hour' (--by-duration expects PnDTnHnMnS, e.g. P1DT2H or PT30M)`,
    );
    const file = join(fx.broker.root, "bad.csv");
    writeFileSync(file, `${TOPIC},0,1\n${TOPIC},1\n`);
    assert.equal(
      oneLineError(await cg("--reset-offsets", "--group", "gk", "--from-file", file, "--dry-run"), "bad csv"),
      `${prefix}Invalid CSV line 2 of ${file}: '${TOPIC},1' (expected topic,partition,offset)`,
    );
    assert.equal(
      oneLineError(await cg("--describe"), "missing group"),
      "Option [describe] takes one of these options: [group], [all-groups]",
    );
    assert.equal(
      oneLineError(await cg("--reset-offsets", "--all-topics", "--to-earliest"), "reset missing group"),
      "Option [reset-offsets] takes one of these options: [group], [all-groups]",
    );
    assert.equal(
      oneLineError(await cg("--list", "--describe", "--group", "gk"), "two actions"),
      "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets, --validate-regex",
    );
    assert.equal(
      oneLineError(
        await cg("--reset-offsets", "--group", "gk", "--all-topics", "--to-earliest", "--to-latest"),
        "two scenarios",
      ),
      'Option "[to-earliest]" can\'t be used with option "[to-latest]"',
    );
    assert.equal(
      oneLineError(await cg("--reset-offsets", "--group", "gk", "--to-earliest"), "no scope"),
      "One of the reset scopes should be defined: --all-topics, --topic.",
    );
    assert.equal(
      oneLineError(
        await cg("--reset-offsets", "--group", "gk", "--topic", `${TOPIC}:x`, "--to-earliest", "--dry-run"),
        "bad partition",
      ),
      `Invalid partition 'x' specified in topic arg '${TOPIC}:x''`,
    );
    assert.equal(
      oneLineError(
        await cg("--reset-offsets", "--group", "gk", "--topic", `${TOPIC}:7`, "--to-earliest", "--dry-run"),
        "no such partition",
      ),
      `${prefix}The partitions "${TOPIC}-7" do not exist`,
    );
    assert.equal(
      oneLineError(await tributary("consumer-groups", "--list"), "no bootstrap"),
      'Missing required argument "[bootstrap-server]"',
    );
  });
});

describe("consumer-groups while a group rebalances and after a broker restart", () => {
  test("a member that joined but never synced leaves the group rebalancing: Kafka's warning on stderr", async () => {
    const w = new Writer();
    w.int16(0);
    writeConsumerProtocolSubscription(
      w,
      { topics: [TOPIC], userData: null, ownedPartitions: [], generationId: -1, rackId: null },
      0,
    );
    const conn = await fx.admin.cluster.connectionTo(
      (await groups.cluster.findCoordinator("gr", "group")).nodeId,
    );
    const join = (memberId: string) =>
      conn.send(Apis.JoinGroup, conn.versionFor(Apis.JoinGroup), {
        groupId: "gr",
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId,
        groupInstanceId: null,
        protocolType: "consumer",
        protocols: [{ name: "range", metadata: w.toBuffer() }],
        reason: null,
      });
    let res = await join("");
    if (res.errorCode === ErrorCode.MEMBER_ID_REQUIRED) res = await join(res.memberId);
    assert.equal(res.errorCode, ErrorCode.NONE);
    // No SyncGroup: the group waits in CompletingRebalance.
    const [g] = await groups.describeGroups(["gr"]);
    assert.equal(g.state, "CompletingRebalance");
    const r = await cg("--describe", "--group", "gr");
    assert.equal(r.code, 0, describeResult("describe rebalancing", r));
    assert.equal(r.stderr, "\nWarning: Consumer group 'gr' is rebalancing.\n");
    assert.equal(r.stdout, "");
    // Only a Stable group reports its chosen protocol (Kafka's GroupSummary): "-" here.
    const state = ok(await cg("--describe", "--group", "gr", "--state"), "state of gr");
    assert.match(state[2], /^gr +127\.0\.0\.1:\d+ {2}\(0\) +- +CompletingRebalance +1$/);
  });

  test("--describe --all-groups --state covers every consumer group, each with its state note", async () => {
    const r = await cg("--describe", "--all-groups", "--state");
    assert.equal(r.code, 0, describeResult("all groups state", r));
    const out = lines(r.stdout);
    assert.equal(out.filter((l) => l.startsWith("GROUP ")).length, 2, r.stdout);
    assert.ok(
      out.some((l) => /^gk +127\.0\.0\.1:\d+ {2}\(0\) +- +Empty +0$/.test(l)),
      r.stdout,
    );
    assert.ok(
      out.some((l) => /^gr +127\.0\.0\.1:\d+ {2}\(0\) +- +CompletingRebalance +1$/.test(l)),
      r.stdout,
    );
    assert.equal(
      r.stderr,
      "\nConsumer group 'gk' has no active members.\n\nWarning: Consumer group 'gr' is rebalancing.\n",
    );
  });

  test("right after a restart the committed offsets are described (coordinator load retried)", async () => {
    await fx.broker.restart();
    const r = await cg("--describe", "--group", "gk");
    assert.equal(r.code, 0, describeResult("describe after restart", r));
    const w = [15, 15, 10, 15, 15, 15, 15, 15];
    assert.deepEqual(lines(r.stdout), [
      "",
      OFFSETS_HEADER,
      cols(["gk", TOPIC, "0", "2", "5", "3", "-", "-", "-"], w),
      cols(["gk", TOPIC, "1", "4", "6", "2", "-", "-", "-"], w),
      cols(["gk", TOPIC, "2", "2", "4", "2", "-", "-", "-"], w),
    ]);
  });
});
