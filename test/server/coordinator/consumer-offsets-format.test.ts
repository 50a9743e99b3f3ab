// __consumer_offsets as tools that read it (Burrow, lag exporters) see it: a real broker, a kcat group
// consumer and a standalone commit over the wire, then the partition files read from disk with the test
// suite's independent segment parser and every key and value decoded by hand from Kafka's schema
// definitions (coordinator-records/OffsetCommitKey/Value, GroupMetadataKey/Value) — nothing from src/.
// Also the group errors of the issue on the wire: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
// REBALANCE_IN_PROGRESS, GROUP_ID_NOT_FOUND and NON_EMPTY_GROUP.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ErrorCode } from "../../../src/protocol/errors.js";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { parseLogSegment } from "../../storage/independent-segment-parser.js";
import { BrokerHarness, runCommand } from "../../support/broker-harness.js";
import { skipUnlessInstalled } from "../../support/required-tools.js";
import { WireClient } from "../wire-client.js";

const KCAT = "/usr/bin/kcat";

/** Kafka's primitive types, read by hand (https://kafka.apache.org/protocol#protocol_types). */
class SchemaReader {
  pos = 0;
  constructor(private readonly b: Buffer) {}
  int16(): number {
    const v = this.b.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    const v = this.b.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  int64(): bigint {
    const v = this.b.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }
  nullableString(): string | null {
    const n = this.int16();
    if (n < 0) return null;
    const s = this.b.toString("utf8", this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  string(): string {
    const s = this.nullableString();
    assert.notEqual(s, null, "a non-nullable string was null");
    return s as string;
  }
  bytes(): Buffer {
    const n = this.int32();
    const v = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  get done(): boolean {
    return this.pos === this.b.length;
  }
}

type ParsedRecord =
  | { kind: "offset"; group: string; topic: string; partition: number; value: ParsedOffset | null }
  | { kind: "group"; group: string; value: ParsedGroup | null };

interface ParsedOffset {
  version: number;
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: bigint;
}

interface ParsedGroup {
  version: number;
  protocolType: string;
  generation: number;
  protocol: string | null;
  leader: string | null;
  members: Array<{
    memberId: string;
    clientId: string;
    clientHost: string;
    sessionTimeout: number;
    assignment: Buffer;
  }>;
}

function parseRecord(key: Buffer, value: Buffer | null): ParsedRecord {
  const k = new SchemaReader(key);
  const keyVersion = k.int16();
  if (keyVersion === 0 || keyVersion === 1) {
    const rec = { kind: "offset" as const, group: k.string(), topic: k.string(), partition: k.int32() };
    assert.ok(k.done, "trailing bytes in an OffsetCommitKey");
    if (value === null) return { ...rec, value: null };
    const v = new SchemaReader(value);
    const version = v.int16();
    assert.ok(version >= 0 && version <= 3, `OffsetCommitValue version ${version}`);
    const offset = v.int64();
    const leaderEpoch = version >= 3 ? v.int32() : -1;
    const metadata = v.string();
    const commitTimestamp = v.int64();
    if (version === 1) v.int64(); // expireTimestamp
    assert.ok(v.done, "trailing bytes in an OffsetCommitValue");
    return { ...rec, value: { version, offset, leaderEpoch, metadata, commitTimestamp } };
  }
  assert.equal(keyVersion, 2, `unexpected key version ${keyVersion}`);
  const group = k.string();
  assert.ok(k.done);
  if (value === null) return { kind: "group", group, value: null };
  const v = new SchemaReader(value);
  const version = v.int16();
  assert.ok(version >= 0 && version <= 3, `GroupMetadataValue version ${version}`);
  const protocolType = v.string();
  const generation = v.int32();
  const protocol = v.nullableString();
  const leader = v.nullableString();
  if (version >= 2) v.int64(); // currentStateTimestamp
  const n = v.int32();
  const members: ParsedGroup["members"] = [];
  for (let i = 0; i < n; i++) {
    const memberId = v.string();
    if (version >= 3) v.nullableString(); // groupInstanceId
    const clientId = v.string();
    const clientHost = v.string();
    if (version >= 1) v.int32(); // rebalanceTimeout
    const sessionTimeout = v.int32();
    v.bytes(); // subscription
    const assignment = v.bytes();
    members.push({ memberId, clientId, clientHost, sessionTimeout, assignment });
  }
  assert.ok(v.done, "trailing bytes in a GroupMetadataValue");
  return { kind: "group", group, value: { version, protocolType, generation, protocol, leader, members } };
}

function readConsumerOffsets(logDir: string): ParsedRecord[] {
  const out: ParsedRecord[] = [];
  for (const dir of readdirSync(logDir)
    .filter((d) => d.startsWith("__consumer_offsets-"))
    .sort()) {
    for (const f of readdirSync(join(logDir, dir))
      .filter((x) => x.endsWith(".log"))
      .sort()) {
      const log = parseLogSegment(readFileSync(join(logDir, dir, f)));
      assert.equal(log.error, undefined, `${dir}/${f}: ${log.error}`);
      for (const b of log.batches) {
        assert.equal(b.crc, b.computedCrc, `${dir}/${f}: CRC`);
        for (const r of b.records ?? []) {
          assert.ok(r.key !== null, "a record without key in __consumer_offsets");
          out.push(parseRecord(r.key, r.value));
        }
      }
    }
  }
  return out;
}

describe("__consumer_offsets on disk and group errors on the wire", {
  skip: skipUnlessInstalled("kcat"),
}, () => {
  let broker: BrokerHarness;
  let client: WireClient;
  const bootstrap = (): string => `127.0.0.1:${broker.port}`;

  before(async () => {
    broker = await BrokerHarness.start({
      name: "tributary-offsets-format",
      overrides: { "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3" },
    });
    const produce = await runCommand(KCAT, ["-b", bootstrap(), "-P", "-t", "fmt", "-p", "0"], {
      input: "a\nb\nc\n",
    });
    assert.equal(produce.code, 0, produce.stderr);
    client = await WireClient.connect(broker.port);
  });

  after(async () => {
    client?.close();
    await broker?.close();
  });

  test("kcat's group and a standalone commit are in Kafka's record format", async () => {
    const r = await runCommand(
      KCAT,
      [
        "-b",
        bootstrap(),
        "-G",
        "fmt-group",
        "fmt",
        "-e",
        "-X",
        "auto.offset.reset=earliest",
        "-X",
        "enable.auto.commit=true",
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n"), ["a", "b", "c"]);
    const commit = await client.request(Apis.OffsetCommit, 8, {
      groupId: "fmt-standalone",
      generationIdOrMemberEpoch: -1,
      memberId: "",
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        {
          name: "fmt",
          partitions: [
            {
              partitionIndex: 0,
              committedOffset: 2n,
              committedLeaderEpoch: 0,
              commitTimestamp: -1n,
              committedMetadata: "hello",
            },
          ],
        },
      ],
    });
    assert.equal(commit.topics[0].partitions[0].errorCode, ErrorCode.NONE);
    await broker.stop("SIGTERM");

    const records = readConsumerOffsets(broker.logDir);
    const standalone = records.filter((x) => x.kind === "offset" && x.group === "fmt-standalone");
    assert.equal(standalone.length, 1);
    const s = standalone[0] as Extract<ParsedRecord, { kind: "offset" }>;
    assert.deepEqual(
      [s.topic, s.partition, s.value?.offset, s.value?.metadata, s.value?.leaderEpoch, s.value?.version],
      ["fmt", 0, 2n, "hello", 0, 3],
    );
    const kcatOffsets = records.filter((x) => x.kind === "offset" && x.group === "fmt-group") as Array<
      Extract<ParsedRecord, { kind: "offset" }>
    >;
    assert.ok(kcatOffsets.length > 0, "kcat committed nothing");
    assert.equal(kcatOffsets.at(-1)?.value?.offset, 3n, "kcat's last commit is the end of the partition");
    const groups = records.filter((x) => x.kind === "group" && x.group === "fmt-group") as Array<
      Extract<ParsedRecord, { kind: "group" }>
    >;
    const stable = groups.find((g) => g.value !== null && g.value.members.length === 1);
    assert.ok(stable?.value, "no group metadata record with kcat as member");
    assert.equal(stable.value.protocolType, "consumer");
    assert.equal(stable.value.generation, 1);
    assert.equal(stable.value.leader, stable.value.members[0].memberId);
    assert.match(stable.value.members[0].clientHost, /^\/127\.0\.0\.1$/);
    assert.ok(stable.value.members[0].assignment.length > 0, "the assignment is stored");
    // kcat left the group: the last record for it is the empty group of the next generation.
    const last = groups.at(-1)?.value;
    assert.equal(last?.members.length, 0);
    assert.equal(last?.protocol, null);
    // The broker reloads all of it.
    await broker.restart();
    client.close();
    client = await WireClient.connect(broker.port);
    const fetched = await client.request(Apis.OffsetFetch, 8, {
      groupId: "",
      topics: [],
      groups: [
        { groupId: "fmt-group", memberId: null, memberEpoch: -1, topics: null },
        { groupId: "fmt-standalone", memberId: null, memberEpoch: -1, topics: null },
      ],
      requireStable: false,
    });
    const offsets = fetched.groups.map((g) => [
      g.groupId,
      g.errorCode,
      g.topics.flatMap((t) => t.partitions.map((p) => p.committedOffset)),
    ]);
    assert.deepEqual(offsets, [
      ["fmt-group", 0, [3n]],
      ["fmt-standalone", 0, [2n]],
    ]);
  });

  test("UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND", async () => {
    const found = await client.request(Apis.FindCoordinator, 4, {
      key: "",
      keyType: 0,
      coordinatorKeys: ["err-group"],
    });
    assert.equal(found.coordinators[0].errorCode, ErrorCode.NONE);
    assert.equal(found.coordinators[0].port, broker.port);
    const join = (memberId: string) =>
      client.request(Apis.JoinGroup, 7, {
        groupId: "err-group",
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId,
        groupInstanceId: null,
        protocolType: "consumer",
        protocols: [{ name: "range", metadata: Buffer.from([0, 0, 0, 0, 0, 0, 255, 255, 255, 255]) }],
        reason: null,
      });
    const first = await join("");
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    const joined = await join(first.memberId);
    assert.equal(joined.errorCode, ErrorCode.NONE);
    assert.equal(joined.generationId, 1);
    const heartbeat = (memberId: string, generationId: number) =>
      client.request(Apis.Heartbeat, 4, {
        groupId: "err-group",
        generationId,
        memberId,
        groupInstanceId: null,
      });
    assert.equal((await heartbeat("nobody", 1)).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await heartbeat(joined.memberId, 7)).errorCode, ErrorCode.ILLEGAL_GENERATION);
    const sync = await client.request(Apis.SyncGroup, 5, {
      groupId: "err-group",
      generationId: 1,
      memberId: joined.memberId,
      groupInstanceId: null,
      protocolType: "consumer",
      protocolName: "range",
      assignments: [{ memberId: joined.memberId, assignment: Buffer.alloc(0) }],
    });
    assert.equal(sync.errorCode, ErrorCode.NONE);
    // A second member (on another connection: JoinGroup waits for the rebalance) starts a rebalance.
    const other = await WireClient.connect(broker.port);
    try {
      const second = await other.request(Apis.JoinGroup, 7, {
        groupId: "err-group",
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: "",
        groupInstanceId: null,
        protocolType: "consumer",
        protocols: [{ name: "range", metadata: Buffer.from([0, 0, 0, 0, 0, 0, 255, 255, 255, 255]) }],
        reason: null,
      });
      other.send(Apis.JoinGroup, 7, {
        groupId: "err-group",
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: second.memberId,
        groupInstanceId: null,
        protocolType: "consumer",
        protocols: [{ name: "range", metadata: Buffer.from([0, 0, 0, 0, 0, 0, 255, 255, 255, 255]) }],
        reason: null,
      });
      let hb = await heartbeat(joined.memberId, 1);
      for (let i = 0; i < 50 && hb.errorCode === ErrorCode.NONE; i++) {
        await new Promise((r) => setTimeout(r, 20));
        hb = await heartbeat(joined.memberId, 1);
      }
      assert.equal(hb.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
      const del = await client.request(Apis.DeleteGroups, 2, { groupsNames: ["err-group", "never-existed"] });
      assert.deepEqual(
        del.results.map((r) => [r.groupId, r.errorCode]),
        [
          ["err-group", ErrorCode.NON_EMPTY_GROUP],
          ["never-existed", ErrorCode.GROUP_ID_NOT_FOUND],
        ],
      );
      const described = await client.request(Apis.DescribeGroups, 5, {
        groups: ["err-group"],
        includeAuthorizedOperations: false,
      });
      assert.equal(described.groups[0].groupState, "PreparingRebalance");
      assert.equal(described.groups[0].members.length, 2);
      const listed = await client.request(Apis.ListGroups, 4, {
        statesFilter: ["preparingrebalance"],
        typesFilter: [],
      });
      assert.deepEqual(
        listed.groups.map((g) => [g.groupId, g.groupState]),
        [["err-group", "PreparingRebalance"]],
      );
    } finally {
      other.close();
    }
  });
});
