// TopicDeletionManager: deletes the topics queued at /admin/delete_topics (Kafka's TopicDeletionManager).
// A topic is deleted in Kafka's steps: every broker is told its partitions' leader is -2 (UpdateMetadata,
// so clients stop seeing it), every replica gets StopReplica with deletePartition, and once every replica
// has answered, the topic's znodes, its config and its deletion marker go in one multi. A replica on a
// dead broker makes the topic wait (ineligible) until that broker is back, as in Kafka.

import type { Logger } from "../../common/logger.js";
import { ErrorCode } from "../../protocol/errors.js";
import type { StopReplicaResponse } from "../../protocol/generated/messages/StopReplicaResponse.js";
import { isStoreError, type KafkaZkClient } from "../metadata/kafka-zk-client.js";
import type { Op } from "../metadata/metadata-store.js";
import { ZkPaths } from "../metadata/zk-data.js";
import type { ControllerContext } from "./controller-context.js";
import type { ControllerBrokerRequestBatch } from "./controller-request-batch.js";
import type { ControllerEventName } from "./controller-state.js";

export class TopicDeletionManager {
  /** topic → "brokerId" replicas that have not confirmed the deletion yet. */
  private readonly pending = new Map<string, Set<number>>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly zk: KafkaZkClient,
    private readonly batch: ControllerBrokerRequestBatch,
    /** Queues an event on the controller's queue (responses arrive outside it). */
    private readonly enqueue: (name: ControllerEventName, fn: () => Promise<void>) => void,
    private readonly onTopicDeleted: (topic: string) => void,
    private readonly log: Logger,
  ) {}

  reset(): void {
    this.pending.clear();
  }

  /** Marks topics for deletion and starts on those whose replicas are all alive. */
  async enqueueTopicsForDeletion(topics: readonly string[]): Promise<void> {
    for (const t of topics) this.ctx.topicsToBeDeleted.add(t);
    await this.resumeDeletions();
  }

  /** Kafka's resumeDeletions: starts every queued topic not yet started whose replicas are all alive. */
  async resumeDeletions(): Promise<void> {
    for (const topic of [...this.ctx.topicsToBeDeleted]) {
      if (this.pending.has(topic)) continue;
      const parts = this.ctx.partitionsOfTopic(topic);
      const replicas = new Set<number>();
      for (const tp of parts) for (const r of this.ctx.replicasFor(tp.topic, tp.partition)) replicas.add(r);
      const dead = [...replicas].filter((r) => !this.ctx.isLive(r));
      if (dead.length > 0) {
        this.log.info(
          `Deletion of topic ${topic} waits for brokers ${dead.join(",")} (replicas on them must be deleted)`,
        );
        continue;
      }
      this.log.info(`Topic deletion callback for ${topic}`);
      if (replicas.size === 0) {
        await this.completeDeletion(topic);
        continue;
      }
      this.pending.set(topic, new Set(replicas));
      // Clients stop seeing the topic: its partitions' leader is -2 everywhere.
      this.batch.addUpdateMetadataRequestForBrokers(this.ctx.liveBrokerIds(), parts);
      for (const tp of parts)
        this.batch.addStopReplicaRequestForBrokers(this.ctx.replicasFor(tp.topic, tp.partition), tp, true);
    }
  }

  /** A broker answered StopReplica: replicas it deleted count towards their topics' completion. */
  onStopReplicaResponse(brokerId: number, r: StopReplicaResponse): void {
    this.enqueue("TopicDeletionStopReplicaResponseReceived", async () => {
      const ok = r.errorCode === ErrorCode.NONE;
      const failedTopics = new Set(
        r.partitionErrors.filter((e) => e.errorCode !== ErrorCode.NONE).map((e) => e.topicName),
      );
      for (const [topic, waiting] of this.pending) {
        if (!waiting.has(brokerId)) continue;
        if (!ok || failedTopics.has(topic)) {
          this.log.warn(
            `Broker ${brokerId} failed to delete replicas of ${topic}; retrying when it restarts`,
          );
          continue;
        }
        waiting.delete(brokerId);
        if (waiting.size === 0) await this.completeDeletion(topic);
      }
    });
  }

  /** A broker died: deletions waiting for it wait until it is back. */
  onBrokerFailure(brokerIds: readonly number[]): void {
    for (const [topic, waiting] of this.pending) {
      if (brokerIds.some((b) => waiting.has(b))) this.pending.delete(topic);
    }
  }

  private async completeDeletion(topic: string): Promise<void> {
    this.pending.delete(topic);
    await this.deleteTopicZNodes(topic);
    this.ctx.removeTopic(topic);
    this.onTopicDeleted(topic);
    this.log.info(`Deletion of topic ${topic} successfully completed`);
  }

  /** The topic's znodes, its config and its deletion marker, in one multi (nobody sees half of it). */
  private async deleteTopicZNodes(topic: string): Promise<void> {
    const store = this.zk.store;
    for (let attempt = 0; attempt < 3; attempt++) {
      const ops: Op[] = [];
      const collect = async (path: string): Promise<void> => {
        let children: string[];
        try {
          children = await store.getChildren(path);
        } catch (e) {
          if (isStoreError(e, "NoNode")) return;
          throw e;
        }
        for (const c of children) await collect(`${path}/${c}`);
        ops.push({ type: "delete", path });
      };
      await collect(ZkPaths.topic(topic));
      if (await store.exists(ZkPaths.configTopic(topic)))
        ops.push({ type: "delete", path: ZkPaths.configTopic(topic) });
      if (await store.exists(ZkPaths.deleteTopic(topic)))
        ops.push({ type: "delete", path: ZkPaths.deleteTopic(topic) });
      try {
        if (ops.length > 0) await this.zk.fencedMulti(this.ctx.epochZkVersion, ops);
        return;
      } catch (e) {
        if (!isStoreError(e, "NoNode") && !isStoreError(e, "NotEmpty")) throw e;
      }
    }
  }
}
