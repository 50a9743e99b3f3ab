// Test-only helpers for the consumer-group tests: the group as the broker sees it (DescribeGroups with each
// member's assignment decoded by the generated ConsumerProtocolAssignment codec; committed offsets by an
// OffsetFetch), both over a WireClient socket; running the python group driver
// (test/support/clients/group_consumer.py) once or as a long-running member printing JSON lines; and
// producing known values to chosen partitions with KafkaJS.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { Consumer } from "@platformatic/kafka";
import kafkajs from "kafkajs";
import { Apis } from "../../../src/protocol/generated/api-table.js";
import { readConsumerProtocolAssignment } from "../../../src/protocol/generated/messages/ConsumerProtocolAssignment.js";
import { Reader } from "../../../src/protocol/primitives/reader.js";
import { BrokerHarness, describeResult, runCommand, withDeadline } from "../../support/broker-harness.js";
import { WireClient } from "../wire-client.js";

export const PYTHON = "/usr/bin/python3";
export const GROUP_DRIVER = resolve(process.cwd(), "test/support/clients/group_consumer.py");

/** Broker settings that keep group tests fast (no initial rebalance delay, short sessions allowed). */
export const GROUP_OVERRIDES = {
  "group.initial.rebalance.delay.ms": "0",
  "group.min.session.timeout.ms": "1000",
  "offsets.topic.num.partitions": "5",
  "num.partitions": "1",
};

export interface DescribedMember {
  readonly memberId: string;
  readonly clientId: string;
  /** Partitions of `topic` in the member's assignment, sorted. */
  readonly partitions: number[];
  /** The member's JoinGroup metadata for the chosen protocol (int16 version + subscription), as hex. */
  readonly metadata: string;
}

export interface DescribedGroup {
  readonly errorCode: number;
  readonly state: string;
  readonly protocolType: string;
  readonly protocol: string;
  readonly members: DescribedMember[];
}

/** Decodes a member's assignment (int16 version + ConsumerProtocolAssignment); [] when empty. */
export function assignedPartitions(assignment: Buffer, topic: string): number[] {
  if (assignment.length === 0) return [];
  const r = new Reader(assignment);
  const version = r.int16();
  const a = readConsumerProtocolAssignment(r, Math.min(version, 3));
  const out: number[] = [];
  for (const tp of a.assignedPartitions) {
    assert.equal(tp.topic, topic, "an assignment names only the subscribed topic");
    out.push(...tp.partitions);
  }
  return out.sort((x, y) => x - y);
}

/** DescribeGroups v4 for one group, with each member's partitions of `topic`. */
export async function describeGroup(
  broker: BrokerHarness,
  group: string,
  topic: string,
): Promise<DescribedGroup> {
  const c = await WireClient.connect(broker.port);
  try {
    const res = await c.request(Apis.DescribeGroups, 4, {
      groups: [group],
      includeAuthorizedOperations: false,
    });
    assert.equal(res.groups.length, 1);
    const g = res.groups[0];
    return {
      errorCode: g.errorCode,
      state: g.groupState,
      protocolType: g.protocolType,
      protocol: g.protocolData,
      members: g.members.map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        partitions: assignedPartitions(m.memberAssignment, topic),
        metadata: m.memberMetadata.toString("hex"),
      })),
    };
  } finally {
    c.close();
  }
}

/** OffsetFetch v5 (partition list given): committed offset per partition, -1 when none. */
export async function committedOffsets(
  broker: BrokerHarness,
  group: string,
  topic: string,
  partitions: number,
): Promise<Record<number, number>> {
  const c = await committedOffsetsOrRetry(broker, group, topic, partitions, false);
  return c as Record<number, number>;
}

/** committedOffsets, or undefined when the coordinator is not available yet (error 14 or 16). */
export async function committedOffsetsOrRetry(
  broker: BrokerHarness,
  group: string,
  topic: string,
  partitions: number,
  retriable = true,
): Promise<Record<number, number> | undefined> {
  const c = await WireClient.connect(broker.port);
  try {
    const res = await c.request(Apis.OffsetFetch, 5, {
      groupId: group,
      topics: [{ name: topic, partitionIndexes: Array.from({ length: partitions }, (_, i) => i) }],
      groups: [],
      requireStable: false,
    });
    // Before the first FindCoordinator creates __consumer_offsets, or while it loads, Kafka answers
    // NOT_COORDINATOR (16) / COORDINATOR_LOAD_IN_PROGRESS (14): a caller that polls may retry.
    if (retriable && (res.errorCode === 14 || res.errorCode === 16)) return undefined;
    assert.equal(res.errorCode, 0, `OffsetFetch ${group}: error ${res.errorCode}`);
    const out: Record<number, number> = {};
    for (const t of res.topics)
      for (const p of t.partitions) {
        assert.equal(
          p.errorCode,
          0,
          `OffsetFetch ${group} ${t.name}-${p.partitionIndex}: error ${p.errorCode}`,
        );
        out[p.partitionIndex] = Number(p.committedOffset);
      }
    return out;
  } finally {
    c.close();
  }
}

/** Runs the python group driver once; its single JSON line. */
export async function runDriver(
  broker: BrokerHarness,
  command: string,
  args: object,
  timeoutMs = 60_000,
  // biome-ignore lint/suspicious/noExplicitAny: the driver's JSON, asserted field by field
): Promise<any> {
  const r = await runCommand(PYTHON, [GROUP_DRIVER, broker.bootstrap, command, JSON.stringify(args)], {
    timeoutMs,
  });
  assert.equal(
    r.code,
    0,
    `${describeResult(`group_consumer.py ${command} ${JSON.stringify(args)}`, r)}\n${broker.output}`,
  );
  return JSON.parse(r.stdout);
}

/** One event a long-running member printed. */
export interface MemberEvent {
  readonly event: "assigned" | "revoked" | "commit" | "commit_failed" | "closed";
  readonly generation?: number | null;
  readonly member_id?: string | null;
  readonly partitions?: number[];
  readonly offsets?: Record<string, number>;
  readonly error?: string;
  /** Arrival order across all members of a test (set by the test's collector). */
  seq: number;
}

/** A python group member running in the background (`group_consumer.py member`). */
export class Member {
  readonly events: MemberEvent[] = [];
  stderr = "";
  private partial = "";
  private readonly child: ChildProcess;
  readonly exited: Promise<void>;
  static seq = 0;

  constructor(
    broker: BrokerHarness,
    readonly clientId: string,
    args: Record<string, unknown>,
  ) {
    this.child = spawn(
      PYTHON,
      [GROUP_DRIVER, broker.bootstrap, "member", JSON.stringify({ ...args, client_id: clientId })],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child.stdout?.setEncoding("utf8");
    this.child.stderr?.setEncoding("utf8");
    this.child.stdout?.on("data", (d: string) => {
      const lines = (this.partial + d).split("\n");
      this.partial = lines.pop() ?? "";
      for (const l of lines) if (l.trim() !== "") this.events.push({ ...JSON.parse(l), seq: Member.seq++ });
    });
    this.child.stderr?.on("data", (d: string) => {
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    this.exited = new Promise((res) => this.child.once("exit", () => res()));
    process.once("exit", () => this.child.kill("SIGKILL"));
  }

  /** The partitions of the last "assigned" event, or undefined before the first. */
  get assignment(): number[] | undefined {
    for (let i = this.events.length - 1; i >= 0; i--)
      if (this.events[i].event === "assigned") return this.events[i].partitions;
    return undefined;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `signal` and waits (bounded) for the exit. */
  async stop(signal: NodeJS.Signals = "SIGTERM", ms = 20_000): Promise<void> {
    if (this.running) this.child.kill(signal);
    await withDeadline(`${this.clientId} exit after ${signal}`, ms, this.exited).catch((e) => {
      this.child.kill("SIGKILL");
      throw e;
    });
  }

  describe(): string {
    return `--- ${this.clientId} events ---\n${this.events
      .map((e) => JSON.stringify(e))
      .join("\n")
      .slice(-4000)}\n--- ${this.clientId} stderr ---\n${this.stderr.slice(-4000)}`;
  }
}

/** A KafkaJS client for producing and administration in the tests. */
export function kafkaFor(broker: BrokerHarness, clientId: string): kafkajs.Kafka {
  return new kafkajs.Kafka({
    clientId,
    brokers: [broker.bootstrap],
    logLevel: kafkajs.logLevel.NOTHING,
    connectionTimeout: 3000,
    requestTimeout: 10_000,
    retry: { retries: 8, initialRetryTime: 100 },
  });
}

/**
 * A broker with GROUP_OVERRIDES, `topics` created by a KafkaJS admin (waiting for their leaders), and a
 * connected KafkaJS producer (no auto-creation); `setupClientId` is the KafkaJS client's id.
 */
export async function startGroupBroker(
  name: string,
  setupClientId: string,
  topics: ReadonlyArray<{ topic: string; numPartitions: number }>,
): Promise<{ broker: BrokerHarness; producer: kafkajs.Producer }> {
  const broker = await BrokerHarness.start({ name, overrides: GROUP_OVERRIDES });
  const kafka = kafkaFor(broker, setupClientId);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [...topics], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  return { broker, producer };
}

/** A @platformatic/kafka consumer in `groupId` with the classic protocol and short, test-friendly timings. */
export function platformaticClassicConsumer(
  broker: BrokerHarness,
  clientId: string,
  groupId: string,
): Consumer {
  return new Consumer({
    bootstrapBrokers: [broker.bootstrap],
    clientId,
    groupId,
    timeout: 10_000,
    retries: 5,
    retryDelay: 200,
    maxWaitTime: 100,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
  });
}

/** `${tag}-p${p}-${i}` for i in [0, perPartition), sent to partition p of `topic`, acks=all. */
export async function produceTo(
  producer: kafkajs.Producer,
  topic: string,
  partitions: number,
  perPartition: number,
  tag: string,
): Promise<void> {
  const messages = [];
  for (let p = 0; p < partitions; p++)
    for (let i = 0; i < perPartition; i++) messages.push({ partition: p, value: `${tag}-p${p}-${i}` });
  await withDeadline(`produce ${tag} to ${topic}`, 15_000, producer.send({ topic, acks: -1, messages }));
}

/** The values `produceTo` wrote for `tag`, sorted. */
export function expectedValues(partitions: number, perPartition: number, tag: string): string[] {
  const out: string[] = [];
  for (let p = 0; p < partitions; p++) for (let i = 0; i < perPartition; i++) out.push(`${tag}-p${p}-${i}`);
  return out.sort();
}

/** Closes a @platformatic/kafka client (leaving its group), forcing it when that does not finish in 10 s. */
export async function closeBounded(
  client: { close(force?: boolean): Promise<void> },
  what: string,
): Promise<void> {
  await withDeadline(`${what} close`, 10_000, client.close()).catch(async (e) => {
    await withDeadline(`${what} forced close`, 5000, client.close(true)).catch(() => undefined);
    throw e;
  });
}
