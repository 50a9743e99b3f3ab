// Helpers for the replica manager and data-plane handler tests: a broker's storage and ReplicaManager in a
// temp dir on a MockTime/MockScheduler, partition states as the controller would hand them, record batches,
// a RequestContext, and encode/decode round trips of typed bodies at a version.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MockScheduler } from "../../../src/common/scheduler.js";
import { MockTime } from "../../../src/common/time.js";
import { API_BY_KEY } from "../../../src/protocol/generated/api-table.js";
import { defaultRequestHeader } from "../../../src/protocol/generated/messages/RequestHeader.js";
import { Reader } from "../../../src/protocol/primitives/reader.js";
import { Writer } from "../../../src/protocol/primitives/writer.js";
import { buildRecordBatch, type CompressionType } from "../../../src/protocol/records/index.js";
import { AuthHelper } from "../../../src/server/auth-helper.js";
import type { BrokerServices } from "../../../src/server/broker-services.js";
import type { HandlerRegistration } from "../../../src/server/handler.js";
import type { PartitionState } from "../../../src/server/metadata/partition-state.js";
import {
  ReplicaManager,
  type ReplicaManagerConfig,
} from "../../../src/server/replication/replica-manager.js";
import type { RequestContext } from "../../../src/server/request-context.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "../../../src/storage/log-config.js";
import { LogManager } from "../../../src/storage/log-manager.js";

export const BROKER_ID = 0;

export interface Broker {
  root: string;
  logDirs: string[];
  time: MockTime;
  scheduler: MockScheduler;
  logManager: LogManager;
  replicaManager: ReplicaManager;
  services: BrokerServices;
  /** Stops the replica manager and log manager (clean shutdown). */
  stop(): void;
  cleanup(): void;
}

export function tempRoot(prefix = "tributary-replication"): string {
  return mkdtempSync(join(tmpdir(), `${prefix}-`));
}

export function startBroker(
  opts: {
    root?: string;
    logConfig?: Partial<LogConfig>;
    rmConfig?: Partial<ReplicaManagerConfig>;
    time?: MockTime;
    logDirCount?: number;
  } = {},
): Broker {
  const root = opts.root ?? tempRoot();
  const logDirs = Array.from({ length: opts.logDirCount ?? 1 }, (_, i) => join(root, `logs${i}`));
  const time = opts.time ?? new MockTime();
  const scheduler = new MockScheduler(time);
  const logManager = new LogManager(
    {
      logDirs,
      brokerId: BROKER_ID,
      clusterId: "test-cluster",
      defaultLogConfig: { ...DEFAULT_LOG_CONFIG, ...opts.logConfig },
      retentionCheckIntervalMs: 300_000,
      recoveryPointCheckpointIntervalMs: 60_000,
      logStartOffsetCheckpointIntervalMs: 60_000,
      flushCheckIntervalMs: Number.MAX_SAFE_INTEGER,
      cleanerConfig: { enableCleaner: false },
    },
    time,
    scheduler,
  );
  logManager.startup();
  const replicaManager = new ReplicaManager(BROKER_ID, logManager, time, scheduler, {
    replicaHighWatermarkCheckpointIntervalMs: 5000,
    ...opts.rmConfig,
  });
  replicaManager.startup();
  const services = {
    brokerId: BROKER_ID,
    time,
    scheduler,
    logManager,
    replicaManager,
    auth: new AuthHelper(),
  } as unknown as BrokerServices;
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    replicaManager.shutdown();
    logManager.shutdown();
  };
  return {
    root,
    logDirs,
    time,
    scheduler,
    logManager,
    replicaManager,
    services,
    stop,
    cleanup: () => {
      stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A topic id (base64url of 16 bytes) derived from the name, stable across a test. */
export function topicIdOf(topic: string): string {
  const b = Buffer.alloc(16);
  b.write(topic.padEnd(16, "#").slice(0, 16), "latin1");
  b[0] |= 1;
  return b.toString("base64url");
}

export function leaderState(
  topic: string,
  partition: number,
  opts: { leaderEpoch?: number; leader?: number; isr?: number[]; replicas?: number[] } = {},
): PartitionState {
  const replicas = opts.replicas ?? [BROKER_ID];
  return {
    topic,
    topicId: topicIdOf(topic),
    partition,
    controllerEpoch: 1,
    leader: opts.leader ?? BROKER_ID,
    leaderEpoch: opts.leaderEpoch ?? 0,
    isr: opts.isr ?? replicas,
    replicas,
    zkVersion: 0,
  };
}

/** Makes this broker the leader of partitions 0..n-1 of each topic. */
export function createTopics(broker: Broker, topics: Record<string, number>, leaderEpoch = 0): void {
  const states: PartitionState[] = [];
  for (const [t, n] of Object.entries(topics))
    for (let p = 0; p < n; p++) states.push(leaderState(t, p, { leaderEpoch }));
  broker.replicaManager.becomeLeaderOrFollower(states);
}

/** A producer's batch (base offset 0, epoch -1) of `count` records. */
export function records(
  count: number,
  opts: { valueSize?: number; timestamp?: bigint; compression?: CompressionType; prefix?: string } = {},
): Buffer {
  const value = Buffer.alloc(opts.valueSize ?? 10, 0x61);
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({
      key: Buffer.from(`${opts.prefix ?? "k"}${i}`),
      value,
    })),
    timestamp: opts.timestamp ?? 1_700_000_000_000n,
    compression: opts.compression,
  });
}

export function requestContext(apiKey: number, apiVersion: number, clientId = "test-client"): RequestContext {
  const api = API_BY_KEY[apiKey];
  if (api === undefined) throw new Error(`no API ${apiKey}`);
  return {
    api,
    header: { ...defaultRequestHeader(), requestApiKey: apiKey, requestApiVersion: apiVersion, clientId },
    apiVersion,
    clientId,
    listenerName: "PLAINTEXT",
    securityProtocol: "PLAINTEXT",
    connectionId: "127.0.0.1:9092-127.0.0.1:50000-0",
    clientAddress: "127.0.0.1",
    principal: "User:ANONYMOUS",
    receivedNs: 0n,
  };
}

/** Encodes a body at `version` and decodes it back (proves the handler's output is encodable there). */
export function roundTrip<T>(
  write: (w: Writer, v: T, version: number) => void,
  read: (r: Reader, version: number) => T,
  value: T,
  version: number,
): T {
  const w = new Writer();
  write(w, value, version);
  return read(new Reader(w.toBuffer()), version);
}

export async function call<Req, Res>(
  reg: HandlerRegistration,
  version: number,
  request: Req,
  clientId?: string,
): Promise<Res> {
  return (await reg.handle(requestContext(reg.apiKey, version, clientId), request)) as Res;
}

/** Lets promise callbacks run (resolution of completed delayed operations). */
export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}
