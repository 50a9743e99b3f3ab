// Test-only: a one-broker metadata stack on a temporary directory — EmbeddedMetadataStore, KafkaController,
// MetadataCache and TopicAdmin wired as the broker server wires them — plus helpers to restart it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogLevel } from "../../../src/common/logger.js";
import { SystemScheduler } from "../../../src/common/scheduler.js";
import { MockTime } from "../../../src/common/time.js";
import { ErrorCode } from "../../../src/protocol/errors.js";
import type { LeaderAndIsrRequest } from "../../../src/protocol/generated/messages/LeaderAndIsrRequest.js";
import type { StopReplicaRequest } from "../../../src/protocol/generated/messages/StopReplicaRequest.js";
import type { UpdateMetadataRequest } from "../../../src/protocol/generated/messages/UpdateMetadataRequest.js";
import type { ControlPlaneReceiver } from "../../../src/server/controller/controller-channel-manager.js";
import { KafkaController } from "../../../src/server/controller/kafka-controller.js";
import { EmbeddedMetadataStore } from "../../../src/server/metadata/embedded-metadata-store.js";
import { KafkaZkClient } from "../../../src/server/metadata/kafka-zk-client.js";
import { MetadataCache, type MetadataDelta } from "../../../src/server/metadata/metadata-cache.js";
import { TopicAdmin, type TopicAdminOptions } from "../../../src/server/metadata/topic-admin.js";

setLogLevel("WARN");

export function tempDir(name = "meta"): string {
  return mkdtempSync(join(tmpdir(), `tributary-${name}-`));
}

export interface StackOptions {
  readonly brokerId?: number;
  readonly rack?: string | null;
  readonly deleteTopicEnable?: boolean;
  readonly autoCreateTopicsEnable?: boolean;
  readonly numPartitions?: number;
  readonly defaultReplicationFactor?: number;
  readonly staticConfig?: Record<string, string>;
  readonly port?: number;
}

export class MetadataStack {
  readonly deltas: MetadataDelta[] = [];
  /** LeaderAndIsr and StopReplica requests the controller sent to this (replica-manager-less) broker. */
  leaderAndIsrRequests: LeaderAndIsrRequest[] = [];
  stopReplicaRequests: StopReplicaRequest[] = [];
  /** Every control-plane request the broker received, in arrival order. */
  readonly received: Array<
    | { kind: "LeaderAndIsr"; request: LeaderAndIsrRequest }
    | { kind: "UpdateMetadata"; request: UpdateMetadataRequest }
  > = [];
  clusterId = "";
  private constructor(
    readonly dir: string,
    readonly time: MockTime,
    readonly scheduler: SystemScheduler,
    readonly store: EmbeddedMetadataStore,
    readonly controller: KafkaController,
    readonly cache: MetadataCache,
    readonly admin: TopicAdmin,
    readonly options: StackOptions,
  ) {}

  static async start(dir: string, options: StackOptions = {}, time = new MockTime()): Promise<MetadataStack> {
    const brokerId = options.brokerId ?? 0;
    const scheduler = new SystemScheduler();
    const store = await EmbeddedMetadataStore.open(dir, time);
    const cache = new MetadataCache(store, { brokerId });
    const adminOptions: TopicAdminOptions = {
      brokerId,
      time,
      scheduler,
      numPartitions: options.numPartitions ?? 1,
      defaultReplicationFactor: options.defaultReplicationFactor ?? 1,
      autoCreateTopicsEnable: options.autoCreateTopicsEnable ?? true,
      deleteTopicEnable: options.deleteTopicEnable ?? true,
      staticConfig: options.staticConfig ?? {},
      random: () => 0,
    };
    const admin = new TopicAdmin(store, cache, adminOptions);
    const zk = new KafkaZkClient(store);
    await zk.createTopLevelPaths();
    const clusterId = await zk.getOrCreateClusterId();
    const leaderAndIsrRequests: LeaderAndIsrRequest[] = [];
    let stack: MetadataStack | undefined;
    const stopReplicaRequests: StopReplicaRequest[] = [];
    // The broker side of the controller's requests, without a replica manager: metadata to the cache.
    const receiver: ControlPlaneReceiver = {
      leaderAndIsr: async (r) => {
        leaderAndIsrRequests.push(r);
        stack?.received.push({ kind: "LeaderAndIsr", request: r });
        return { errorCode: ErrorCode.NONE, partitionErrors: [], topics: [] };
      },
      updateMetadata: async (r) => {
        stack?.received.push({ kind: "UpdateMetadata", request: r });
        await cache.updateMetadata(r);
        return { errorCode: ErrorCode.NONE };
      },
      stopReplica: async (r) => {
        stopReplicaRequests.push(r);
        return { errorCode: ErrorCode.NONE, partitionErrors: [] };
      },
    };
    const controller = new KafkaController(zk, {
      brokerId,
      time,
      deleteTopicEnable: options.deleteTopicEnable ?? true,
      uncleanLeaderElectionEnable: false,
      interBrokerListenerName: "PLAINTEXT",
      localReceiver: receiver,
    });
    stack = new MetadataStack(dir, time, scheduler, store, controller, cache, admin, options);
    stack.clusterId = clusterId;
    cache.onChange((d) => stack.deltas.push(d));
    await cache.start();
    await zk.registerBroker({
      id: brokerId,
      endpoints: [
        {
          listenerName: "PLAINTEXT",
          securityProtocol: "PLAINTEXT",
          host: "localhost",
          port: options.port ?? 9092,
        },
      ],
      rack: options.rack ?? null,
      jmxPort: -1,
      timestampMs: time.milliseconds(),
      features: {},
    });
    await controller.startup();
    await stack.settle();
    stack.leaderAndIsrRequests = leaderAndIsrRequests;
    stack.stopReplicaRequests = stopReplicaRequests;
    return stack;
  }

  /** Lets the controller and the cache process every pending event. */
  async settle(): Promise<void> {
    for (let i = 0; i < 10; i++) {
      await new Promise<void>((r) => setImmediate(r));
      await this.controller.localRequestsSent();
      await this.cache.idle();
    }
  }

  async stop(): Promise<void> {
    await this.controller.shutdown();
    this.cache.close();
    await this.store.close();
    this.scheduler.shutdown();
  }

  async restart(): Promise<MetadataStack> {
    await this.stop();
    return MetadataStack.start(this.dir, this.options, this.time);
  }
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
