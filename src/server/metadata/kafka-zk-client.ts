// KafkaZkClient: the znode reads and writes of the broker and the controller, as Kafka's KafkaZkClient
// (ZooKeeper mode) does them, on any MetadataStore. Owns: the top-level paths, /cluster/id (created once),
// the broker registration (ephemeral /brokers/ids/<id>; its czxid is the broker epoch), the controller
// election write (/controller + /controller_epoch in one multi) and the partition-state writes, each
// fenced by the controller epoch znode's version (Kafka's expectedControllerEpochZkVersion: a multi that
// checks /controller_epoch before it writes, so a controller that lost its epoch writes nothing).
// Log dir events (Kafka's LogDirEventNotification): a broker whose log dir fails (or, in Tributary, fills
// up or has space again) creates the persistent sequential `/log_dir_event_notification/log_dir_event_<seq>`
// holding {"version":1,"broker":<id>,"event":1}; the controller reads and deletes them.
// A restarted broker whose previous session still holds /brokers/ids/<id> (a crash, then a restart within
// zookeeper.session.timeout.ms) waits, bounded, for that registration to expire when it can tell it is its
// own (registration-session-file.ts), instead of exiting as Kafka does; another session's is refused.

import { Logger } from "../../common/logger.js";
import { mapConcurrent } from "../../common/map-concurrent.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { writeFencedBatches } from "./fenced-batches.js";
import { ensurePath, type MetadataStore, MetadataStoreError, type Op, type Stat } from "./metadata-store.js";
import { sessionIdHex } from "./registration-session-file.js";
import {
  BrokerIdZNode,
  type BrokerRegistration,
  ClusterIdZNode,
  ControllerEpochZNode,
  ControllerZNode,
  type LeaderAndIsr,
  PERSISTENT_ZK_PATHS,
  ReassignPartitionsZNode,
  randomUuid,
  type TopicAssignment,
  TopicPartitionStateZNode,
  TopicZNode,
  ZkPaths,
  type ZkReassignment,
} from "./zk-data.js";

/**
 * How registerBroker treats a /brokers/ids/<id> left by this broker's own previous session: the session
 * its last registration was made with (read back from its locked log dir), how long to wait for that
 * registration to expire, and where to record the session of each new attempt before it is made.
 */
export interface PreviousRegistration {
  /** The session of this broker's last registration, undefined when none is known. */
  readonly sessionId: bigint | undefined;
  /** The longest wait for that session's registration to go (ms). */
  readonly waitMs: number;
  /** Records the current session as the registration's, just before /brokers/ids/<id> is created. */
  readonly record: (sessionId: bigint) => void;
  readonly time: Time;
  readonly scheduler: Scheduler;
}

/** Same session id, whatever the sign the two sides were read with. */
function sameSession(a: bigint, b: bigint): boolean {
  return BigInt.asUintN(64, a) === BigInt.asUintN(64, b);
}

export function isStoreError(e: unknown, code: string): boolean {
  return e instanceof MetadataStoreError && e.code === code;
}

/** The controller epoch was changed by another controller: this one must resign. */
export class ControllerMovedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ControllerMovedException";
  }
}

/** A partition state with the version of its znode (for compare-and-set writes). */
export interface LeaderIsrAndZkVersion {
  readonly leaderAndIsr: LeaderAndIsr;
  readonly zkVersion: number;
}

/** How many writes the controller keeps in flight at once (Kafka pipelines its ZooKeeper requests). */
const MAX_IN_FLIGHT = 64;

/** The sequence-node prefix and the one event Kafka defines (LogDirFailure = 1). */
export const LOG_DIR_EVENT_PREFIX = "log_dir_event_";
export const LOG_DIR_FAILURE_EVENT = 1;

export class KafkaZkClient {
  private readonly log = new Logger("kafka.zk.KafkaZkClient");

  constructor(readonly store: MetadataStore) {}

  /** Kafka's propagateLogDirEvent: a log dir event notification for the controller; answers its path. */
  async propagateLogDirEvent(brokerId: number): Promise<string> {
    const data = Buffer.from(JSON.stringify({ version: 1, broker: brokerId, event: LOG_DIR_FAILURE_EVENT }));
    await ensurePath(this.store, ZkPaths.logDirEventNotification);
    return this.store.create(`${ZkPaths.logDirEventNotification}/${LOG_DIR_EVENT_PREFIX}`, data, {
      sequential: true,
    });
  }

  /**
   * The pending log dir event notifications (child names, oldest first), with a watch on the children,
   * and the brokers they name (an unreadable or vanished one is skipped).
   */
  async getLogDirEventNotifications(watcher?: () => void): Promise<{ names: string[]; brokerIds: number[] }> {
    const names = (await this.store.getChildren(ZkPaths.logDirEventNotification, watcher))
      .filter((n) => n.startsWith(LOG_DIR_EVENT_PREFIX))
      .sort();
    const brokerIds: number[] = [];
    for (const n of names) {
      const node = await this.store.get(`${ZkPaths.logDirEventNotification}/${n}`);
      if (node === undefined) continue;
      try {
        const d = JSON.parse(node.data.toString("utf8")) as { broker?: unknown; event?: unknown };
        if (Number.isInteger(d.broker) && d.event === LOG_DIR_FAILURE_EVENT)
          brokerIds.push(d.broker as number);
      } catch {
        this.log.warn(`Ignoring the unreadable log dir event notification ${n}`);
      }
    }
    return { names, brokerIds };
  }

  /** Deletes handled log dir event notifications (already gone is fine). */
  async deleteLogDirEventNotifications(names: readonly string[]): Promise<void> {
    for (const n of names) {
      try {
        await this.store.delete(`${ZkPaths.logDirEventNotification}/${n}`);
      } catch (e) {
        if (!isStoreError(e, "NoNode")) throw e;
      }
    }
  }

  /** Kafka's createTopLevelPaths. */
  async createTopLevelPaths(): Promise<void> {
    for (const p of PERSISTENT_ZK_PATHS) await ensurePath(this.store, p);
  }

  /** The cluster id at /cluster/id, created with `preferred` (or a new random id) when absent. */
  async getOrCreateClusterId(preferred?: string): Promise<string> {
    const existing = await this.store.get(ZkPaths.clusterId);
    if (existing) return ClusterIdZNode.decode(ZkPaths.clusterId, existing.data);
    await ensurePath(this.store, "/cluster");
    try {
      const id = preferred ?? randomUuid();
      await this.store.create(ZkPaths.clusterId, ClusterIdZNode.encode(id));
      return id;
    } catch (e) {
      if (!isStoreError(e, "NodeExists")) throw e;
      const again = await this.store.get(ZkPaths.clusterId);
      return ClusterIdZNode.decode(ZkPaths.clusterId, again!.data);
    }
  }

  /**
   * Registers the broker (ephemeral /brokers/ids/<id>) and returns its epoch, the znode's czxid. A node
   * left by this same session (a retried create) counts as ours. A node of `previous.sessionId` (this
   * broker's own last registration, its process gone) is waited for, up to `previous.waitMs`, until
   * ZooKeeper expires that session and deletes it; any other session's node — or that one still there
   * after the wait, a session something keeps renewing — is refused in one line, as Kafka refuses it.
   */
  async registerBroker(reg: BrokerRegistration, previous?: PreviousRegistration): Promise<bigint> {
    const path = ZkPaths.brokerId(reg.id);
    const prior = previous?.sessionId;
    const startNs = previous?.time.nanoseconds() ?? 0n;
    const waitedMs = (): number => Number((previous!.time.nanoseconds() - startNs) / 1_000_000n);
    let waiting = false;
    for (;;) {
      const st = await this.store.exists(path);
      if (st !== undefined) {
        if (sameSession(st.ephemeralOwner, this.store.sessionId)) break;
        const ownPrevious =
          previous !== undefined && prior !== undefined && sameSession(st.ephemeralOwner, prior);
        if (!ownPrevious || waitedMs() >= previous.waitMs) {
          throw new Error(
            waiting
              ? `broker.id ${reg.id} is still registered at ${path} by the previous session ${sessionIdHex(st.ephemeralOwner)} after ${waitedMs()} ms: a process keeps that session alive (another broker uses this id)`
              : `broker.id ${reg.id} is already registered at ${path} by another session (another broker uses this id)`,
          );
        }
        if (!waiting) {
          waiting = true;
          this.log.info(
            `waiting up to ${previous.waitMs} ms for the registration of broker.id ${reg.id} by the previous session ${sessionIdHex(st.ephemeralOwner)} to expire`,
          );
        }
        await this.awaitDeletion(path, previous.waitMs - waitedMs(), previous.scheduler);
        continue;
      }
      previous?.record(this.store.sessionId);
      try {
        await this.store.create(path, BrokerIdZNode.encode(reg), { ephemeral: true });
        break;
      } catch (e) {
        if (!isStoreError(e, "NodeExists")) throw e;
        // Created meanwhile: the owner decides (the loop looks again).
      }
    }
    if (waiting)
      this.log.info(
        `The registration of broker.id ${reg.id} by the previous session expired after ${waitedMs()} ms`,
      );
    const st = (await this.store.exists(path)) as Stat;
    this.log.info(
      `Registered broker ${reg.id} at path ${path} with addresses: ${reg.endpoints
        .map((e) => `${e.listenerName}://${e.host}:${e.port}`)
        .join(",")}, czxid (broker epoch): ${st.czxid}`,
    );
    return st.czxid;
  }

  /** Resolves when `path` is deleted (a watch) or after `ms` (at least a few ms), whichever is first. */
  private async awaitDeletion(path: string, ms: number, scheduler: Scheduler): Promise<void> {
    let done: () => void = () => {};
    const over = new Promise<void>((resolve) => {
      done = resolve;
    });
    const timer = scheduler.schedule("broker-registration-wait", () => done(), Math.max(10, ms));
    try {
      const st = await this.store.exists(path, () => done());
      if (st === undefined) return;
      await over;
    } finally {
      timer.cancel();
    }
  }

  /** Kafka's generateBrokerSequenceId: the new data version of /brokers/seqid (created when missing). */
  async generateBrokerSequenceId(): Promise<number> {
    const path = "/brokers/seqid";
    await ensurePath(this.store, path);
    const stat = await this.store.set(path, Buffer.alloc(0));
    return stat.version;
  }

  /** Alive brokers with their registrations and epochs (czxid), by id. */
  async getAllBrokersAndEpochs(): Promise<Map<number, { reg: BrokerRegistration; epoch: bigint }>> {
    const out = new Map<number, { reg: BrokerRegistration; epoch: bigint }>();
    for (const name of await this.store.getChildren(ZkPaths.brokerIds)) {
      const id = Number(name);
      if (!Number.isInteger(id)) continue;
      const n = await this.store.get(ZkPaths.brokerId(id));
      if (!n) continue;
      out.set(id, { reg: BrokerIdZNode.decode(ZkPaths.brokerId(id), id, n.data), epoch: n.stat.czxid });
    }
    return out;
  }

  /** The controller's broker id, -1 when none. */
  async getControllerId(): Promise<number> {
    const n = await this.store.get(ZkPaths.controller);
    return n ? ControllerZNode.decode(ZkPaths.controller, n.data) : -1;
  }

  /**
   * Tries to become the controller: creates /controller (ephemeral) and bumps /controller_epoch in one
   * multi. Returns the new epoch and the epoch znode's version, or undefined when someone else won.
   */
  async registerControllerAndIncrementControllerEpoch(
    brokerId: number,
    timestampMs: number,
  ): Promise<{ epoch: number; epochZkVersion: number } | undefined> {
    try {
      await this.store.create(ZkPaths.controllerEpoch, ControllerEpochZNode.encode(0));
    } catch (e) {
      if (!isStoreError(e, "NodeExists")) throw e;
    }
    const epochNode = await this.store.get(ZkPaths.controllerEpoch);
    if (!epochNode) return undefined;
    const epoch = ControllerEpochZNode.decode(ZkPaths.controllerEpoch, epochNode.data) + 1;
    try {
      const results = await this.store.multi([
        {
          type: "create",
          path: ZkPaths.controller,
          data: ControllerZNode.encode(brokerId, timestampMs),
          options: { ephemeral: true },
        },
        {
          type: "set",
          path: ZkPaths.controllerEpoch,
          data: ControllerEpochZNode.encode(epoch),
          version: epochNode.stat.version,
        },
      ]);
      const set = results[1];
      const epochZkVersion = set.type === "set" ? set.stat.version : epochNode.stat.version + 1;
      return { epoch, epochZkVersion };
    } catch (e) {
      if (isStoreError(e, "NodeExists") || isStoreError(e, "BadVersion")) return undefined;
      throw e;
    }
  }

  /** Every topic's assignment, by name. */
  async getTopicAssignments(): Promise<Map<string, TopicAssignment>> {
    const out = new Map<string, TopicAssignment>();
    const names = await this.store.getChildren(ZkPaths.topics);
    const nodes = await mapConcurrent(names, MAX_IN_FLIGHT, (t) => this.store.get(ZkPaths.topic(t)));
    names.forEach((t, i) => {
      const n = nodes[i];
      if (n) out.set(t, TopicZNode.decode(ZkPaths.topic(t), n.data));
    });
    return out;
  }

  async getTopicAssignment(topic: string): Promise<TopicAssignment | undefined> {
    const n = await this.store.get(ZkPaths.topic(topic));
    return n ? TopicZNode.decode(ZkPaths.topic(topic), n.data) : undefined;
  }

  /**
   * Writes a topic's whole assignment (replicas, adding_replicas, removing_replicas), fenced by the
   * controller epoch (Kafka's setTopicAssignmentRaw).
   */
  async setTopicAssignment(
    topic: string,
    assignment: TopicAssignment,
    epochZkVersion: number,
  ): Promise<void> {
    await this.fencedMulti(epochZkVersion, [
      { type: "set", path: ZkPaths.topic(topic), data: TopicZNode.encode(assignment), version: -1 },
    ]);
  }

  /** The reassignments waiting in /admin/reassign_partitions (none when the znode is absent). */
  async getPartitionReassignment(): Promise<ZkReassignment[]> {
    const n = await this.store.get(ZkPaths.reassignPartitions);
    return n ? ReassignPartitionsZNode.decode(ZkPaths.reassignPartitions, n.data) : [];
  }

  /** Rewrites /admin/reassign_partitions with what is left, or deletes it when nothing is (fenced). */
  async setOrDeletePartitionReassignment(
    rs: readonly ZkReassignment[],
    epochZkVersion: number,
  ): Promise<void> {
    const path = ZkPaths.reassignPartitions;
    try {
      if (rs.length === 0) await this.fencedMulti(epochZkVersion, [{ type: "delete", path, version: -1 }]);
      else
        await this.fencedMulti(epochZkVersion, [
          { type: "set", path, data: ReassignPartitionsZNode.encode(rs), version: -1 },
        ]);
    } catch (e) {
      if (!isStoreError(e, "NoNode")) throw e;
    }
  }

  /** The state znodes of these partitions (absent ones are left out). */
  async getPartitionStates(
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<Map<string, LeaderIsrAndZkVersion>> {
    // Each answer is decoded as it arrives (not all at the end, in one turn of the event loop).
    const states = await mapConcurrent(partitions, MAX_IN_FLIGHT, async (tp) => {
      const path = ZkPaths.partitionState(tp.topic, tp.partition);
      const n = await this.store.get(path);
      return n && { leaderAndIsr: TopicPartitionStateZNode.decode(path, n.data), zkVersion: n.stat.version };
    });
    const out = new Map<string, LeaderIsrAndZkVersion>();
    partitions.forEach((tp, i) => {
      const s = states[i];
      if (s) out.set(`${tp.topic}-${tp.partition}`, s);
    });
    return out;
  }

  /**
   * Creates the state znodes of new partitions (and their parents), fenced by the controller epoch, many
   * partitions per multi (fenced-batches.ts). Returns, per partition, the znode version (0) or the error
   * code name (NodeExists: an earlier controller created it).
   */
  async createTopicPartitionStates(
    states: ReadonlyArray<{ topic: string; partition: number; leaderAndIsr: LeaderAndIsr }>,
    epochZkVersion: number,
  ): Promise<Map<string, number | string>> {
    const out = new Map<string, number | string>();
    await mapConcurrent([...new Set(states.map((s) => s.topic))], MAX_IN_FLIGHT, (t) =>
      this.ensureFenced(ZkPaths.partitions(t), epochZkVersion),
    );
    const stateOp = (s: (typeof states)[number]): Op => ({
      type: "create",
      path: ZkPaths.partitionState(s.topic, s.partition),
      data: TopicPartitionStateZNode.encode(s.leaderAndIsr),
    });
    const outcomes = await writeFencedBatches(
      states,
      (s) => [
        { type: "create", path: ZkPaths.partition(s.topic, s.partition), data: Buffer.alloc(0) },
        stateOp(s),
      ],
      (ops) => this.fencedMulti(epochZkVersion, ops),
      async (s) => {
        // On its own: the partition znode may exist already (an earlier controller's half-done creation).
        await this.ensureFenced(ZkPaths.partition(s.topic, s.partition), epochZkVersion);
        return (await this.fencedMulti(epochZkVersion, [stateOp(s)])).slice(1);
      },
    );
    states.forEach((s, i) => {
      const o = outcomes[i];
      out.set(`${s.topic}-${s.partition}`, "error" in o ? o.error.code : 0);
    });
    return out;
  }

  /**
   * Compare-and-set writes of partition states (Kafka's updateLeaderAndIsr), many partitions per multi
   * (fenced-batches.ts). Returns the new znode version of each written partition; partitions whose version
   * moved on (BadVersion) or that failed otherwise are reported in `failed` with the error code name.
   */
  async updateLeaderAndIsr(
    updates: ReadonlyArray<{
      topic: string;
      partition: number;
      leaderAndIsr: LeaderAndIsr;
      zkVersion: number;
    }>,
    epochZkVersion: number,
  ): Promise<{ written: Map<string, number>; failed: Map<string, string> }> {
    const written = new Map<string, number>();
    const failed = new Map<string, string>();
    const setOp = (u: (typeof updates)[number]): Op => ({
      type: "set",
      path: ZkPaths.partitionState(u.topic, u.partition),
      data: TopicPartitionStateZNode.encode(u.leaderAndIsr),
      version: u.zkVersion,
    });
    const outcomes = await writeFencedBatches(
      updates,
      (u) => [setOp(u)],
      (ops) => this.fencedMulti(epochZkVersion, ops),
      async (u) => (await this.fencedMulti(epochZkVersion, [setOp(u)])).slice(1),
    );
    updates.forEach((u, i) => {
      const key = `${u.topic}-${u.partition}`;
      const o = outcomes[i];
      if ("error" in o) failed.set(key, o.error.code);
      else written.set(key, o.results[0]?.type === "set" ? o.results[0].stat.version : u.zkVersion + 1);
    });
    return { written, failed };
  }

  /** Runs `ops` after a check that /controller_epoch still has `epochZkVersion`. */
  async fencedMulti(epochZkVersion: number, ops: readonly Op[]) {
    try {
      return await this.store.multi([
        { type: "check", path: ZkPaths.controllerEpoch, version: epochZkVersion },
        ...ops,
      ]);
    } catch (e) {
      if (e instanceof MetadataStoreError && e.path === ZkPaths.controllerEpoch) {
        throw new ControllerMovedError(
          `Controller epoch zkVersion check fails. Expected zkVersion = ${epochZkVersion}`,
        );
      }
      throw e;
    }
  }

  private async ensureFenced(path: string, epochZkVersion: number): Promise<void> {
    if (await this.store.exists(path)) return;
    try {
      await this.fencedMulti(epochZkVersion, [{ type: "create", path, data: Buffer.alloc(0) }]);
    } catch (e) {
      if (!isStoreError(e, "NodeExists")) throw e;
    }
  }
}
