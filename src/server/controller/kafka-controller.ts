// KafkaController: the cluster controller of ZooKeeper-mode Kafka, on any MetadataStore (the embedded store
// of a single broker, or ZooKeeper). Elected through /controller (ephemeral) and /controller_epoch; while
// active it keeps a ControllerContext loaded once at failover, follows /brokers/ids, /brokers/topics (and
// each topic's znode for new partitions), /admin/delete_topics and /controller, and turns every change
// into partition-state changes (PartitionStateMachine) and requests to brokers (LeaderAndIsr,
// UpdateMetadata, StopReplica through the ControllerChannelManager). Brokers learn leadership and
// metadata only from those requests. Every event runs on one queue (Kafka's ControllerEventManager).
// Handles ControlledShutdown (moves leadership off a broker that is stopping) and ZooKeeper session
// expiry (resign; after the new session: re-register the broker, re-elect).
// Owns the election, the watches, the event queue and the request entry points; what exists only while
// this broker is the controller (channel, batch, state machine, deletion, reassignments) is one
// ActiveController per term (active-controller.ts), undefined otherwise.

import { EventLoopSlices } from "../../common/event-loop-slices.js";
import { Logger } from "../../common/logger.js";
import { getOrCreate } from "../../common/maps.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { LeaderAndIsrResponse } from "../../protocol/generated/messages/LeaderAndIsrResponse.js";
import type { InterBrokerSecurity } from "../inter-broker-security.js";
import { ControllerMovedError, isStoreError, type KafkaZkClient } from "../metadata/kafka-zk-client.js";
import { ControllerZNode, ZkPaths } from "../metadata/zk-data.js";
import type { ControllerStatsRecorder } from "../metrics/replication-metrics.js";
import type { AlterPartitionItem, AlterPartitionResult } from "../replication/alter-partition-manager.js";
import { ActiveController, type ControlledShutdownResult } from "./active-controller.js";
import type { ControlPlaneReceiver } from "./controller-channel-manager.js";
import { ControllerContext, type TopicPartitionKey, tpKey } from "./controller-context.js";
import { ControllerEventManager } from "./controller-event-manager.js";
import type { ControllerEventName } from "./controller-state.js";
import type { ReassignmentRequest, ReassignmentResult, ReplicaAssignment } from "./partition-reassignment.js";
import type { ElectionType, ReplicaElectionResult } from "./replica-leader-election.js";

export interface KafkaControllerOptions {
  readonly brokerId: number;
  readonly time: Time;
  /** delete.topic.enable */
  readonly deleteTopicEnable: boolean;
  /** unclean.leader.election.enable (the broker's; a topic's override wins). */
  readonly uncleanLeaderElectionEnable: boolean;
  /** inter.broker.listener.name: where the controller connects to brokers. */
  readonly interBrokerListenerName: string;
  /** The TLS and SASL of that listener (inter-broker-security.ts). */
  readonly security?: InterBrokerSecurity;
  /** This broker's control-plane handlers, called in-process for requests to itself. */
  readonly localReceiver?: ControlPlaneReceiver;
  /** controller.socket.timeout.ms (Kafka: 30000). */
  readonly requestTimeoutMs?: number;
  /** Registers this broker again (after a session expiry, before re-election). */
  readonly registerBroker?: () => Promise<void>;
  /**
   * ControllerStats: leader elections and unclean ones (LeaderElectionRateAndTimeMs, …), each event's time
   * under its ControllerState, and the event queue's EventQueueTimeMs and EventQueueSize.
   */
  readonly stats?: ControllerStatsRecorder;
  /**
   * auto.leader.rebalance.enable with leader.imbalance.per.broker.percentage and
   * leader.imbalance.check.interval.seconds (ms here), run on `scheduler` while this broker is the controller.
   */
  readonly autoLeaderRebalance?: {
    readonly scheduler: Scheduler;
    readonly imbalancePerBrokerPercentage: number;
    readonly checkIntervalMs: number;
  };
  readonly logger?: Logger;
}

export class KafkaController {
  private readonly log: Logger;
  private readonly events: ControllerEventManager;
  readonly context = new ControllerContext();
  /** This broker's term as the controller: set while it is the active controller, else undefined. */
  private active: ActiveController | undefined;
  private _activeControllerId = -1;
  private readonly watchedTopics = new Set<string>();
  private stopped = false;

  constructor(
    private readonly zk: KafkaZkClient,
    private readonly options: KafkaControllerOptions,
  ) {
    this.log = (options.logger ?? new Logger("kafka.controller.KafkaController")).withContext(
      `Controller id=${options.brokerId}`,
    );
    this.events = new ControllerEventManager(
      (name, e) => this.onEventError(name, e),
      options.time,
      options.stats,
    );
  }

  /** An event failed: the queue goes on (Kafka's ControllerEventThread logs it and takes the next). */
  private onEventError(name: string, e: unknown): void {
    if (e instanceof ControllerMovedError) {
      this.log.warn(`${name}: ${e.message}; resigning`);
      void this.put("ControllerMoved", () => this.maybeResign());
      return;
    }
    if (isStoreError(e, "SessionExpired")) return;
    // ZooKeeper unreachable (a network partition, ZooKeeper paused): expected, said in one line; the
    // session's expiry or the reconnection decides what happens next.
    if (isStoreError(e, "ConnectionLoss")) {
      this.log.warn(`Event ${name} could not reach ZooKeeper: ${(e as Error).message}`);
      return;
    }
    this.log.error(`Error processing event ${name}: ${(e as Error)?.stack ?? e}`);
  }

  /** True while this broker is the controller. */
  get isActive(): boolean {
    return this.active !== undefined;
  }

  /** The controller epoch this broker was elected with (0 when it never was). */
  get epoch(): number {
    return this.context.epoch;
  }

  /** The controller's broker id as last seen at /controller (-1: none). */
  get activeControllerId(): number {
    return this._activeControllerId;
  }

  /** Starts the election; resolves once the first pass (and, if elected, the failover) is done. */
  async startup(): Promise<void> {
    this.zk.store.registerStateChangeHandler({
      name: "controller-state-change-handler",
      // The events waiting belong to the session that expired: dropped, Expire runs next (Kafka's clearAndPut).
      beforeInitializingSession: () =>
        this.events.clearAndPut("Expire", () => this.onControllerResignation()),
      afterInitializingSession: () =>
        this.put("RegisterBrokerAndReelect", async () => {
          await this.options.registerBroker?.();
          await this.elect();
        }),
    });
    await this.put("Startup", () => this.elect());
  }

  /** Resolves when every event queued so far has been processed. */
  idle(): Promise<void> {
    return this.events.idle();
  }

  /** Resolves when the events queued so far ran and their requests to this broker were applied. */
  async localRequestsSent(): Promise<void> {
    await this.idle();
    await this.active?.channel.drained(this.options.brokerId);
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    this.zk.store.unregisterStateChangeHandler("controller-state-change-handler");
    await this.events.close();
    this.onControllerResignationSync();
  }

  private put(name: ControllerEventName, fn: () => Promise<void>, detail?: string): Promise<void> {
    return this.events.put(name, fn, detail);
  }

  /**
   * A request's entry point: queues `process` as the event `name` and resolves with its answer, or with
   * `fallback()` when the event did not run (dropped by a session expiry, the controller stopped) or failed.
   */
  private ask<T>(name: ControllerEventName, fallback: () => T, process: () => Promise<T>): Promise<T> {
    return new Promise((resolve) => {
      void this.put(name, async () => resolve(await process())).then(() => resolve(fallback()));
    });
  }

  // ---- election ----

  private watchController = (): void => {
    void this.put("ControllerChange", () => this.onControllerChange());
  };

  private async onControllerChange(): Promise<void> {
    const n = await this.zk.store.get(ZkPaths.controller, this.watchController);
    const id = n ? ControllerZNode.decode(ZkPaths.controller, n.data) : -1;
    this._activeControllerId = id;
    if (id === this.options.brokerId && this.active !== undefined) return;
    await this.maybeResign();
    if (id === -1) await this.elect();
  }

  private async maybeResign(): Promise<void> {
    const was = this.active !== undefined;
    const id = await this.zk.getControllerId();
    this._activeControllerId = id;
    if (was && id !== this.options.brokerId) await this.onControllerResignation();
  }

  private async elect(): Promise<void> {
    if (this.stopped) return;
    const current = await this.zk.store.get(ZkPaths.controller, this.watchController);
    if (current) {
      const id = ControllerZNode.decode(ZkPaths.controller, current.data);
      this._activeControllerId = id;
      if (id !== this.options.brokerId || this.active !== undefined) {
        if (id !== this.options.brokerId)
          this.log.info(`Broker ${id} has been elected as the controller, so stopping the election process.`);
        return;
      }
      // Our own node from this session (re-election after a watch race): nothing to do.
    }
    const won = await this.zk.registerControllerAndIncrementControllerEpoch(
      this.options.brokerId,
      this.options.time.milliseconds(),
    );
    if (won === undefined) {
      const id = await this.zk.getControllerId();
      this._activeControllerId = id;
      await this.zk.store.exists(ZkPaths.controller, this.watchController);
      if (id !== -1)
        this.log.info(`Broker ${id} has been elected as the controller, so stopping the election process.`);
      return;
    }
    this.context.reset();
    this.context.epoch = won.epoch;
    this.context.epochZkVersion = won.epochZkVersion;
    const active = new ActiveController(
      this.context,
      this.zk,
      this.options,
      {
        onLeaderAndIsrResponse: this.onLeaderAndIsrResponseReceived,
        onStopReplicaResponse: (id, r) => this.active?.deletion.onStopReplicaResponse(id, r),
        enqueueDeletionEvent: (name, fn) =>
          void this.put(name, async () => {
            if (this.active === undefined) return;
            await fn();
            this.sendBatch();
          }),
        onTopicDeleted: (t) => this.watchedTopics.delete(t),
      },
      this.log,
    );
    this.active = active;
    this._activeControllerId = this.options.brokerId;
    await this.zk.store.exists(ZkPaths.controller, this.watchController);
    this.log.info(
      `${this.options.brokerId} successfully elected as the controller. Epoch incremented to ${won.epoch} and epoch zk version is now ${won.epochZkVersion}`,
    );
    await this.onControllerFailover(active);
  }

  private async onControllerFailover(active: ActiveController): Promise<void> {
    const ctx = this.context;
    const { channel, batch, psm } = active;
    this.watchedTopics.clear();
    // Brokers.
    const brokers = await this.zk.store.getChildren(ZkPaths.brokerIds, this.watchBrokers);
    void brokers;
    for (const [id, b] of await this.zk.getAllBrokersAndEpochs()) {
      ctx.liveBrokers.set(id, b);
      channel.addBroker(id, b.reg.endpoints);
    }
    // Topics, their assignments and partition states.
    await this.zk.store.getChildren(ZkPaths.topics, this.watchTopics);
    const assignments = await this.zk.getTopicAssignments();
    for (const [topic, a] of assignments) {
      ctx.topicIds.set(topic, a.topicId);
      ctx.assignments.set(topic, new Map([...a.partitions].map(([p, r]) => [p, [...r]])));
      // Reassignments in progress (adding/removing replicas in the topic znode) resume below.
      for (const p of a.partitions.keys()) {
        const adding = [...(a.addingReplicas.get(p) ?? [])];
        const removing = [...(a.removingReplicas.get(p) ?? [])];
        if (adding.length + removing.length > 0) ctx.reassigning.set(tpKey(topic, p), { adding, removing });
      }
      await this.watchTopic(topic);
    }
    const all = ctx.allPartitions();
    const states = await this.zk.getPartitionStates(all);
    const slices = new EventLoopSlices();
    for (const tp of all) {
      await slices.next();
      const k = tpKey(tp.topic, tp.partition);
      const s = states.get(k);
      if (s === undefined) ctx.partitionStates.set(k, "NewPartition");
      else {
        ctx.leadership.set(k, s);
        ctx.partitionStates.set(
          k,
          ctx.isLive(s.leaderAndIsr.leader) ? "OnlinePartition" : "OfflinePartition",
        );
      }
    }
    const queued = await this.zk.store.getChildren(ZkPaths.deleteTopics, this.watchDeletions);
    this.log.info(
      `Initialized controller context: ${ctx.liveBrokers.size} live brokers (${ctx.liveBrokerIds().join(",")}), ${assignments.size} topics, ${all.length} partitions`,
    );
    // Every broker learns the whole state; every replica its partitions' leadership.
    batch.addUpdateMetadataRequestForBrokers(ctx.liveBrokerIds());
    await batch.addLeaderAndIsrRequestForReplicasOn(ctx.liveBrokerIds());
    await psm.triggerOnlinePartitionStateChange();
    // Replicas on brokers that are not alive leave the ISRs (Kafka's replica state machine startup: OfflineReplica).
    const deadInIsr = new Map<number, TopicPartitionKey[]>();
    for (const tp of all) {
      if (ctx.topicsToBeDeleted.has(tp.topic)) continue;
      for (const r of ctx.leadership.get(tpKey(tp.topic, tp.partition))?.leaderAndIsr.isr ?? []) {
        if (ctx.isLive(r)) continue;
        const l = getOrCreate(deadInIsr, r, () => []);
        l.push(tp);
      }
    }
    for (const [id, parts] of deadInIsr) await psm.removeReplicaFromIsr(id, parts);
    this.sendBatch();
    // Kafka's initializePartitionReassignments: /admin/reassign_partitions first, then the API ones.
    const fromZk = await this.onZkPartitionReassignment();
    await active.reassignments.resume((tp) => !fromZk.has(tpKey(tp.topic, tp.partition)));
    this.sendBatch();
    await active.onTopicDeletion(queued);
    // Log dir events written while there was no controller (Kafka's LogDirEventNotificationHandler).
    await active.logDirEvents.processNotifications(this.watchLogDirEvents);
    this.sendBatch();
    // Kafka checks the leader imbalance 5 s after a failover, then every check interval.
    this.scheduleAutoLeaderRebalance(5000);
  }

  private async onControllerResignation(): Promise<void> {
    this.onControllerResignationSync();
  }

  private onControllerResignationSync(): void {
    const active = this.active;
    if (active !== undefined) this.log.info(`Resigned as the controller (epoch ${this.context.epoch})`);
    this.active = undefined;
    active?.resign();
    this.watchedTopics.clear();
    const epoch = this.context.epoch;
    this.context.reset();
    this.context.epoch = epoch;
  }

  private sendBatch(): void {
    this.active?.sendBatch();
  }

  // ---- brokers ----

  private watchBrokers = (): void => {
    void this.put("BrokerChange", () => this.onBrokerChange());
  };

  private async onBrokerChange(): Promise<void> {
    const active = this.active;
    if (active === undefined) return;
    const ctx = this.context;
    await this.zk.store.getChildren(ZkPaths.brokerIds, this.watchBrokers);
    const current = await this.zk.getAllBrokersAndEpochs();
    const newIds: number[] = [];
    const deadIds: number[] = [];
    const bounced: number[] = [];
    for (const [id, b] of current) {
      const known = ctx.liveBrokers.get(id);
      if (known === undefined) newIds.push(id);
      else if (known.epoch !== b.epoch) bounced.push(id);
    }
    for (const id of ctx.liveBrokers.keys()) if (!current.has(id)) deadIds.push(id);
    if (newIds.length + deadIds.length + bounced.length === 0) return;
    this.log.info(
      `Newly added brokers: ${newIds.join(",")}, deleted brokers: ${deadIds.join(",")}, bounced brokers: ${bounced.join(",")}, all live brokers: ${[...current.keys()].sort((a, b) => a - b).join(",")}`,
    );
    for (const id of [...deadIds, ...bounced]) {
      ctx.liveBrokers.delete(id);
      active.channel.removeBroker(id);
    }
    if (deadIds.length + bounced.length > 0) await active.onBrokerFailure([...deadIds, ...bounced]);
    for (const id of [...newIds, ...bounced]) {
      const b = current.get(id);
      if (b === undefined) continue;
      ctx.liveBrokers.set(id, b);
      active.channel.addBroker(id, b.reg.endpoints);
    }
    if (newIds.length + bounced.length > 0) await active.onBrokerStartup([...newIds, ...bounced]);
    this.sendBatch();
  }

  /** /log_dir_event_notification changed (Kafka's LogDirEventNotificationHandler). */
  private watchLogDirEvents = (): void => {
    void this.put("LogDirEventNotification", async () => {
      if (this.active === undefined) return;
      await this.active.logDirEvents.processNotifications(this.watchLogDirEvents);
      this.sendBatch();
    });
  };

  /** Kafka's LeaderAndIsrResponseReceived: replicas on offline (or full) log dirs, and back online. */
  private onLeaderAndIsrResponseReceived = (brokerId: number, r: LeaderAndIsrResponse): void => {
    void this.put("LeaderAndIsrResponseReceived", async () => {
      if (this.active === undefined) return;
      await this.active.logDirEvents.onLeaderAndIsrResponse(brokerId, r);
      this.sendBatch();
    });
  };

  // ---- topics ----

  private watchTopics = (): void => {
    void this.put("TopicChange", () => this.onTopicChange());
  };

  private async watchTopic(topic: string): Promise<void> {
    if (this.watchedTopics.has(topic)) return;
    this.watchedTopics.add(topic);
    await this.zk.store.exists(ZkPaths.topic(topic), () => {
      this.watchedTopics.delete(topic);
      void this.put("PartitionModifications", () => this.onPartitionModification(topic), topic);
    });
  }

  private async onTopicChange(): Promise<void> {
    const active = this.active;
    if (active === undefined) return;
    const ctx = this.context;
    const names = await this.zk.store.getChildren(ZkPaths.topics, this.watchTopics);
    const present = new Set(names);
    const added = names.filter((t) => !ctx.assignments.has(t));
    for (const t of ctx.allTopics()) if (!present.has(t)) ctx.removeTopic(t);
    if (added.length === 0) return;
    this.log.info(`New topics: [${added.join(",")}]`);
    const created: TopicPartitionKey[] = [];
    for (const topic of added) {
      // The watch before the read: partitions added in between (CreatePartitions reads the store, so it
      // can follow CreateTopics at once) are then either read here or announced by the watch.
      await this.watchTopic(topic);
      const a = await this.zk.getTopicAssignment(topic);
      if (!a) continue;
      ctx.topicIds.set(topic, a.topicId);
      ctx.assignments.set(topic, new Map([...a.partitions].map(([p, r]) => [p, [...r]])));
      created.push(...ctx.partitionsOfTopic(topic));
    }
    await active.onNewPartitionCreation(created);
  }

  private async onPartitionModification(topic: string): Promise<void> {
    const active = this.active;
    if (active === undefined) return;
    const ctx = this.context;
    await this.watchTopic(topic);
    const a = await this.zk.getTopicAssignment(topic);
    const cur = ctx.assignments.get(topic);
    if (!a || cur === undefined || ctx.topicsToBeDeleted.has(topic)) return;
    const added: TopicPartitionKey[] = [];
    for (const [p, replicas] of a.partitions) {
      if (!cur.has(p)) {
        cur.set(p, [...replicas]);
        added.push({ topic, partition: p });
      }
    }
    if (added.length === 0) return;
    this.log.info(`New partitions to be added ${added.map((tp) => tpKey(tp.topic, tp.partition)).join(",")}`);
    await active.onNewPartitionCreation(added);
  }

  // ---- deletion ----

  private watchDeletions = (): void => {
    void this.put("TopicDeletion", async () => {
      if (this.active === undefined) return;
      const queued = await this.zk.store.getChildren(ZkPaths.deleteTopics, this.watchDeletions);
      await this.active?.onTopicDeletion(queued);
    });
  };

  // ---- ISR changes from leaders ----

  /**
   * Kafka's processAlterPartition (ZooKeeper mode): a leader's new ISR from its current registration (exact
   * broker epoch, else STALE_BROKER_EPOCH), accepted when its leader epoch and partition epoch (the state
   * znode's version) are current and every new member is alive; written with the same leader epoch
   * (compare-and-set), then every broker gets UpdateMetadata. A change already applied (same leader, leader
   * epoch and ISR) is answered with the current state even when the partition epoch sent is older: the
   * leader's retry of a request whose answer it lost. Epochs newer than this controller's answer
   * NOT_CONTROLLER (a newer controller made them).
   */
  alterPartition(
    brokerId: number,
    brokerEpoch: bigint,
    items: AlterPartitionItem[],
  ): Promise<AlterPartitionResult[]> {
    const fail = (code: number): AlterPartitionResult[] =>
      items.map((i) => ({ ...i, errorCode: code, leaderEpoch: -1, isr: [], partitionEpoch: -1 }));
    return this.ask(
      "AlterPartitionReceived",
      () => fail(ErrorCode.NOT_CONTROLLER),
      async () => {
        if (this.active === undefined) return fail(ErrorCode.NOT_CONTROLLER);
        const { results, reassigning } = await this.active.processAlterPartition(
          brokerId,
          brokerEpoch,
          items,
          fail,
        );
        // A grown ISR may complete a reassignment: after this answer (Kafka's maybeCompleteReassignment).
        if (reassigning.length > 0)
          void this.put("PartitionReassignmentIsrChange", async () => {
            if (this.active === undefined) return;
            for (const tp of reassigning) await this.active.reassignments.maybeComplete(tp);
            this.sendBatch();
          });
        return results;
      },
    );
  }

  // ---- replica leader elections (ElectLeaders, auto.leader.rebalance.enable) ----

  /**
   * ElectLeaders (KIP-460) on the controller: the given partitions, or every partition when undefined (then
   * only those that needed an election are answered, as Kafka's KafkaApis filters ELECTION_NOT_NEEDED).
   * Resolves after the new leaderships are written and sent; "NOT_CONTROLLER" when this broker is not.
   */
  electLeaders(
    partitions: readonly TopicPartitionKey[] | undefined,
    type: ElectionType,
  ): Promise<ReplicaElectionResult[] | "NOT_CONTROLLER"> {
    return this.ask(
      "ReplicaLeaderElection",
      () => "NOT_CONTROLLER" as const,
      async () => {
        if (this.active === undefined) return "NOT_CONTROLLER";
        return this.active.electLeaders(partitions, type);
      },
    );
  }

  private scheduleAutoLeaderRebalance(delayMs: number): void {
    const auto = this.options.autoLeaderRebalance;
    const active = this.active;
    if (auto === undefined || active === undefined) return;
    active.autoRebalanceTask?.cancel();
    active.autoRebalanceTask = auto.scheduler.schedule(
      "auto-leader-rebalance-task",
      () => {
        void this.put("AutoPreferredReplicaLeaderElection", async () => {
          if (this.active === undefined) return;
          try {
            await this.active.autoLeaderRebalance(auto.imbalancePerBrokerPercentage);
          } finally {
            this.scheduleAutoLeaderRebalance(auto.checkIntervalMs);
          }
        });
      },
      delayMs,
    );
  }

  // ---- partition reassignment (KIP-455, /admin/reassign_partitions) ----

  /** AlterPartitionReassignments on the controller; a null replica list cancels. */
  alterPartitionReassignments(
    requests: readonly ReassignmentRequest[],
  ): Promise<ReassignmentResult[] | "NOT_CONTROLLER"> {
    return this.ask(
      "ApiPartitionReassignment",
      () => "NOT_CONTROLLER" as const,
      async () => {
        if (this.active === undefined) return "NOT_CONTROLLER";
        const results = await this.active.reassignments.alter(requests);
        this.sendBatch();
        return results;
      },
    );
  }

  /** ListPartitionReassignments on the controller: the given partitions (or all) being reassigned. */
  listPartitionReassignments(
    partitions: readonly TopicPartitionKey[] | undefined,
  ): Promise<Array<TopicPartitionKey & { assignment: ReplicaAssignment }> | "NOT_CONTROLLER"> {
    return this.ask(
      "ListPartitionReassignments",
      () => "NOT_CONTROLLER" as const,
      async () => {
        if (this.active === undefined) return "NOT_CONTROLLER";
        return this.active.reassignments.list(partitions);
      },
    );
  }

  /** Watches /admin/reassign_partitions for its creation (Kafka's PartitionReassignmentHandler). */
  private watchReassignPartitions = (e: { type: string }): void => {
    void this.put("ZkPartitionReassignment", async () => {
      if (this.active === undefined) return;
      if (e.type === "NodeCreated") await this.onZkPartitionReassignment();
      else await this.zk.store.exists(ZkPaths.reassignPartitions, this.watchReassignPartitions);
      this.sendBatch();
    });
  };

  /** Starts the reassignments written to /admin/reassign_partitions; returns the partitions started. */
  private async onZkPartitionReassignment(): Promise<Set<string>> {
    const active = this.active;
    if (active === undefined) return new Set();
    const exists = await this.zk.store.exists(ZkPaths.reassignPartitions, this.watchReassignPartitions);
    if (exists === undefined) return new Set();
    return active.reassignments.processZkReassignment();
  }

  // ---- controlled shutdown ----

  /** Kafka's doControlledShutdown: moves leadership off `brokerId`; answers the partitions it still leads. */
  controlledShutdown(brokerId: number, brokerEpoch: bigint): Promise<ControlledShutdownResult> {
    return this.ask(
      "ControlledShutdown",
      () => ({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, remainingPartitions: [] }),
      async () =>
        this.active === undefined
          ? { errorCode: ErrorCode.NOT_CONTROLLER, remainingPartitions: [] }
          : this.active.controlledShutdown(brokerId, brokerEpoch),
    );
  }
}
