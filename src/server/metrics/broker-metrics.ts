// BrokerMetrics: every metric one broker exports on /metrics, under the names the Prometheus JMX
// exporter gives Kafka's MBeans with Strimzi's example rules (lowercased, `kafka_<domain>_<type>_<name>`,
// MBean tags as labels; see docs/metrics.md). Owns the MetricsRegistry and the meters the request paths
// mark (BrokerTopicStats, RequestMetrics), and the gauges computed on each scrape from the broker's parts:
// - kafka.server:type=ReplicaManager — PartitionCount, LeaderCount, UnderReplicatedPartitions,
//   OfflineReplicaCount, UnderMinIsrPartitionCount, AtMinIsrPartitionCount;
// - IsrShrinksPerSec / IsrExpandsPerSec, ReplicaFetcherManager MaxLag, and the controller's
//   ControllerStats LeaderElectionRateAndTimeMs / UncleanLeaderElectionsPerSec, its rate-and-time timer per
//   ControllerState and ControllerEventManager EventQueueTimeMs / EventQueueSize (replication-metrics.ts);
// - kafka.controller:type=KafkaController — ActiveControllerCount, OfflinePartitionsCount,
//   GlobalTopicCount, GlobalPartitionCount (non-zero on the active controller only, as Kafka);
// - kafka.cluster:type=Partition,topic=…,partition=… — UnderReplicated, InSyncReplicasCount,
//   UnderMinIsr, AtMinIsr, ReplicasCount, LastStableOffsetLag (partition-metrics.ts);
// - kafka.log:type=Log,topic=…,partition=… — Size, LogEndOffset, LogStartOffset, NumLogSegments, and
//   Tributary's QuarantinedBytes with LogManager QuarantinedPartitionCount (log-quarantine.ts);
// - kafka.server:type=socket-server-metrics,listener=…,networkProcessor=0 — connection-count (one event
//   loop: one "network processor");
// - kafka.server:type=LeaderReplication / FollowerReplication / AlterLogDirsReplication — byte-rate
//   (replication-quota-metrics.ts);
// - kafka.server:type=KafkaServer — BrokerState, linux-disk-read-bytes / linux-disk-write-bytes
//   (linux-io-metrics.ts);
// - NetworkProcessorAvgIdlePercent and RequestHandlerAvgIdlePercent: the event loop's idle fraction
//   (idle-metrics.ts);
// - process_* (process-metrics.ts);
// - nodejs_gc_* and nodejs_eventloop_lag_* (runtime-metrics.ts), while the endpoint serves them.
// The parts are read through getters: they may not exist yet (startup) or any more (shutdown).

import type { MetricFamily, Sample } from "../../common/metrics/exposition.js";
import { MetricsRegistry } from "../../common/metrics/metrics-registry.js";
import type { Scheduler } from "../../common/scheduler.js";
import type { Time } from "../../common/time.js";
import type { LogManager } from "../../storage/log-manager.js";
import type { MetadataCache } from "../metadata/metadata-cache.js";
import type { ReplicationQuotas } from "../quota/replication-quotas.js";
import type { ReplicaManager } from "../replication/replica-manager.js";
import { BrokerTopicStats } from "./broker-topic-stats.js";
import { IdleMetrics } from "./idle-metrics.js";
import { collectLinuxIoMetrics } from "./linux-io-metrics.js";
import { partitionGauges } from "./partition-metrics.js";
import { collectProcessMetrics } from "./process-metrics.js";
import { ReplicationMetrics } from "./replication-metrics.js";
import { replicationQuotaGauges } from "./replication-quota-metrics.js";
import { RequestMetrics } from "./request-metrics.js";
import { RuntimeMetrics } from "./runtime-metrics.js";

/** Kafka's BrokerState values (kafka.server:type=KafkaServer,name=BrokerState). */
export const BROKER_STATE = {
  NotRunning: 0,
  Starting: 1,
  RecoveringFromUncleanShutdown: 2,
  Running: 3,
  PendingControlledShutdown: 6,
  ShuttingDown: 7,
} as const;

export interface BrokerMetricsSources {
  readonly brokerState: () => number;
  readonly replicaManager: () => ReplicaManager | undefined;
  readonly logManager: () => LogManager | undefined;
  readonly metadata: () => MetadataCache | undefined;
  readonly isActiveController: () => boolean;
  /** Open connections per listener name. */
  readonly connectionsByListener: () => ReadonlyMap<string, number>;
  /** ReplicaFetcherManager's MaxLag (0 when absent: nothing followed). */
  readonly replicaFetcherMaxLag?: () => number;
  /** The socket server's request memory pool and the connections it closed or saw near the file limit. */
  readonly socketServer?: () => SocketServerStats | undefined;
  /** The replication throttles (byte-rate of LeaderReplication, FollowerReplication, AlterLogDirsReplication). */
  readonly replicationQuotas?: () => ReplicationQuotas | undefined;
}

export interface SocketServerStats {
  readonly memoryPoolAvailable: number;
  readonly memoryPoolUsed: number;
  readonly memoryPoolWaits: number;
  readonly receiveTimeouts: number;
  readonly nearFileLimit: number;
}

function socketServerGauges(s: SocketServerStats | undefined): MetricFamily[] {
  if (s === undefined) return [];
  const counter = (name: string, help: string, value: number): MetricFamily => ({
    name,
    help,
    type: "counter",
    samples: [{ value }],
  });
  return [
    gauge(
      "kafka_network_socketserver_memorypoolavailable",
      "Bytes left in the request memory pool (queued.max.request.bytes) (MemoryPoolAvailable)",
      [{ value: s.memoryPoolAvailable }],
    ),
    gauge(
      "kafka_network_socketserver_memorypoolused",
      "Bytes of requests being received or waiting (MemoryPoolUsed)",
      [{ value: s.memoryPoolUsed }],
    ),
    counter(
      "tributary_socketserver_memory_pool_waits_total",
      "Times a connection stopped reading until the request memory pool had room",
      s.memoryPoolWaits,
    ),
    counter(
      "tributary_socketserver_receive_timeouts_total",
      "Connections closed because a request did not arrive within socket.request.receive.timeout.ms",
      s.receiveTimeouts,
    ),
    counter(
      "tributary_socketserver_near_open_file_limit_total",
      "Connections accepted within 64 of the process's open-file limit (beyond it the OS refuses silently)",
      s.nearFileLimit,
    ),
  ];
}

function gauge(name: string, help: string, samples: readonly Sample[]): MetricFamily {
  return { name, help, type: "gauge", samples };
}

export class BrokerMetrics {
  readonly registry: MetricsRegistry;
  readonly brokerTopicStats: BrokerTopicStats;
  readonly requestMetrics: RequestMetrics;
  /** ISR change meters (marked by AlterPartitionManager) and the controller's election stats. */
  readonly replication: ReplicationMetrics;
  /** GC and event-loop delay; started by whoever serves the metrics (it runs a 10 ms timer). */
  readonly runtime = new RuntimeMetrics();
  private readonly idle = new IdleMetrics();

  constructor(readonly time: Time) {
    this.registry = new MetricsRegistry(time);
    this.brokerTopicStats = new BrokerTopicStats(this.registry);
    this.requestMetrics = new RequestMetrics(this.registry);
    this.replication = new ReplicationMetrics(this.registry);
  }

  /** Registers the scrape-time gauges over the broker's parts. */
  bind(sources: BrokerMetricsSources): void {
    const r = this.registry;
    r.register(() => [
      gauge("kafka_server_kafkaserver_brokerstate", "The broker's state (3 = RUNNING) (BrokerState)", [
        { value: sources.brokerState() },
      ]),
    ]);
    r.register(() => this.brokerTopicStats.collect());
    r.register(() => this.requestMetrics.collect());
    r.register(() => replicaManagerGauges(sources.replicaManager()));
    r.register(() => partitionGauges(sources.replicaManager()));
    r.register(() => controllerGauges(sources.isActiveController(), sources.metadata()));
    r.register(() => this.replication.collect(sources.replicaFetcherMaxLag?.() ?? 0));
    r.register(() => logGauges(sources.logManager()));
    r.register(() => [
      gauge(
        "kafka_server_socket_server_metrics_connection_count",
        "Open client connections per listener (socket-server-metrics connection-count)",
        [...sources.connectionsByListener()].map(([listener, n]) => ({
          labels: { listener, networkProcessor: "0" },
          value: n,
        })),
      ),
    ]);
    r.register(() => socketServerGauges(sources.socketServer?.()));
    r.register(() => replicationQuotaGauges(sources.replicationQuotas?.()));
    r.register(() => this.idle.collect());
    r.register(() => collectLinuxIoMetrics());
    r.register(() => collectProcessMetrics(this.time));
    r.register(() => this.runtime.collect());
  }

  start(scheduler: Scheduler): void {
    this.registry.start(scheduler);
  }

  stop(): void {
    this.registry.stop();
    this.runtime.stop();
  }

  scrape(): string {
    return this.registry.scrape();
  }
}

function replicaManagerGauges(rm: ReplicaManager | undefined): MetricFamily[] {
  let partitions = 0;
  let leaders = 0;
  let underReplicated = 0;
  let offline = 0;
  let underMinIsr = 0;
  let atMinIsr = 0;
  if (rm !== undefined) {
    for (const p of rm.allPartitions()) {
      partitions++;
      if (p.log === undefined) offline++;
      if (!p.isLeader) continue;
      leaders++;
      const isr = p.isr.length;
      if (isr < p.assignment.length) underReplicated++;
      const min = p.minIsr();
      if (isr < min) underMinIsr++;
      else if (isr === min) atMinIsr++;
    }
  }
  const g = (name: string, help: string, value: number) =>
    gauge(`kafka_server_replicamanager_${name}`, help, [{ value }]);
  return [
    g("partitioncount", "Partitions hosted by this broker (PartitionCount)", partitions),
    g("leadercount", "Partitions this broker leads (LeaderCount)", leaders),
    g(
      "underreplicatedpartitions",
      "Led partitions whose ISR is smaller than their replica set (UnderReplicatedPartitions)",
      underReplicated,
    ),
    g("offlinereplicacount", "Hosted partitions without a usable log (OfflineReplicaCount)", offline),
    g(
      "underminisrpartitioncount",
      "Led partitions whose ISR is below min.insync.replicas (UnderMinIsrPartitionCount)",
      underMinIsr,
    ),
    g(
      "atminisrpartitioncount",
      "Led partitions whose ISR is exactly min.insync.replicas (AtMinIsrPartitionCount)",
      atMinIsr,
    ),
  ];
}

function controllerGauges(active: boolean, metadata: MetadataCache | undefined): MetricFamily[] {
  let offline = 0;
  let topics = 0;
  let partitions = 0;
  if (active && metadata !== undefined) {
    for (const s of metadata.allPartitionStates()) {
      partitions++;
      if (s.leader < 0 || !metadata.isBrokerAlive(s.leader)) offline++;
    }
    topics = metadata.topicNames().length;
  }
  const g = (name: string, help: string, value: number) =>
    gauge(`kafka_controller_kafkacontroller_${name}`, help, [{ value }]);
  return [
    g(
      "activecontrollercount",
      "1 when this broker is the active controller (ActiveControllerCount)",
      active ? 1 : 0,
    ),
    g(
      "offlinepartitionscount",
      "Partitions without a live leader; reported by the active controller (OfflinePartitionsCount)",
      offline,
    ),
    g(
      "globaltopiccount",
      "Topics in the cluster; reported by the active controller (GlobalTopicCount)",
      topics,
    ),
    g(
      "globalpartitioncount",
      "Partitions in the cluster; reported by the active controller (GlobalPartitionCount)",
      partitions,
    ),
  ];
}

function logGauges(lm: LogManager | undefined): MetricFamily[] {
  const size: Sample[] = [];
  const end: Sample[] = [];
  const start: Sample[] = [];
  const segments: Sample[] = [];
  const quarantined: Sample[] = [];
  let quarantinedPartitions = 0;
  if (lm !== undefined) {
    const logs = lm
      .allLogs()
      .sort((a, b) =>
        a.tp.topic === b.tp.topic ? a.tp.partition - b.tp.partition : a.tp.topic < b.tp.topic ? -1 : 1,
      );
    for (const { tp, log } of logs) {
      const labels = { topic: tp.topic, partition: String(tp.partition) };
      size.push({ labels, value: log.size });
      end.push({ labels, value: Number(log.logEndOffset) });
      start.push({ labels, value: Number(log.logStartOffset) });
      segments.push({ labels, value: log.numberOfSegments });
      // Only partitions holding a quarantine (log-quarantine.ts) get a series.
      const q = log.loadReport.unrestoredQuarantineBytes;
      if (q > 0) {
        quarantined.push({ labels, value: q });
        quarantinedPartitions++;
      }
    }
  }
  return [
    gauge("kafka_log_log_size", "Bytes of the partition's log segments on disk (Size)", size),
    gauge("kafka_log_log_logendoffset", "The offset of the next record appended (LogEndOffset)", end),
    gauge("kafka_log_log_logstartoffset", "The first offset still in the log (LogStartOffset)", start),
    gauge("kafka_log_log_numlogsegments", "Segments of the partition's log (NumLogSegments)", segments),
    gauge(
      "kafka_log_log_quarantinedbytes",
      "Bytes recovery moved to the partition's quarantine instead of deleting them, not restored yet (Tributary)",
      quarantined,
    ),
    gauge(
      "kafka_log_logmanager_quarantinedpartitioncount",
      "Partitions whose log dir holds a quarantine not restored yet (Tributary; tributary log-recover --list)",
      [{ value: quarantinedPartitions }],
    ),
    ...logDirGauges(lm),
  ];
}

/**
 * Kafka's LogManager gauges OfflineLogDirectoryCount and LogDirectoryOffline{logDirectory}. A full dir
 * (writes refused until space is freed) counts as offline there, as Kafka takes a full dir offline;
 * LogDirectoryFull{logDirectory} tells the two apart.
 */
function logDirGauges(lm: LogManager | undefined): MetricFamily[] {
  if (lm === undefined) return [];
  const offline: Sample[] = [];
  const full: Sample[] = [];
  let count = 0;
  for (const dir of lm.config.logDirs) {
    const isFull = lm.isLogDirFull(dir);
    const isOffline = lm.offlineLogDirs().has(dir) || isFull;
    if (isOffline) count++;
    offline.push({ labels: { logDirectory: dir }, value: isOffline ? 1 : 0 });
    full.push({ labels: { logDirectory: dir }, value: isFull ? 1 : 0 });
  }
  return [
    gauge(
      "kafka_log_logmanager_offlinelogdirectorycount",
      "Log dirs offline or full (OfflineLogDirectoryCount)",
      [{ value: count }],
    ),
    gauge(
      "kafka_log_logmanager_logdirectoryoffline",
      "1 when the log dir is offline or full (LogDirectoryOffline)",
      offline,
    ),
    gauge(
      "kafka_log_logmanager_logdirectoryfull",
      "1 when the log dir is out of space: appends refused, reads and deletions served (Tributary)",
      full,
    ),
  ];
}
