// ReplicationMetrics: the meters and the timer of replication and the controller, as the JMX exporter
// names Kafka's MBeans (see docs/metrics.md):
// - kafka.server:type=ReplicaManager,name=IsrShrinksPerSec / IsrExpandsPerSec →
//   kafka_server_replicamanager_isrshrinks_total / …_isrexpands_total: marked on the leader when the
//   controller accepted an ISR change its AlterPartitionManager sent (Kafka marks them in Partition's
//   handleAlterPartitionUpdate);
// - kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec →
//   kafka_controller_controllerstats_uncleanleaderelections_total: on the controller, one per partition
//   given a leader from outside its ISR;
// - kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs (a Yammer timer: the exporter
//   reads its percentiles and Count) → kafka_controller_controllerstats_leaderelectionrateandtimems
//   {quantile} (gauge), …_count and Tributary's …_sum (counters): on the controller, one per round of
//   leader elections that gave at least one partition a new leader (a dead leader's partitions, a
//   controlled shutdown, a preferred election), with the milliseconds the round took (electing and
//   writing the partition state znodes);
// - kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica →
//   kafka_server_replicafetchermanager_maxlag{clientId="Replica"} (gauge, read on each scrape): the
//   largest lag over the partitions this broker follows, leader's high watermark minus the follower's log
//   end offset as of the last fetch response.

import type { MetricFamily } from "../../common/metrics/exposition.js";
import { type Histogram, YAMMER_QUANTILES } from "../../common/metrics/histogram.js";
import type { Meter } from "../../common/metrics/meter.js";
import type { MetricsRegistry } from "../../common/metrics/metrics-registry.js";

/** Quantile label values as the exporter derives them from Yammer's NNthPercentile attributes. */
const QUANTILE_LABELS = ["0.50", "0.75", "0.95", "0.98", "0.99", "0.999"];

/** What the controller reports (PartitionStateMachine). */
export interface ControllerStatsRecorder {
  /** A round of leader elections wrote new leaders; it took `ms`. */
  leaderElection(ms: number): void;
  /** A partition was given a leader from outside its ISR. */
  uncleanLeaderElection(): void;
}

/** What the leader's AlterPartitionManager reports: the controller accepted an ISR change. */
export interface IsrChangeRecorder {
  isrShrink(): void;
  isrExpand(): void;
}

export class ReplicationMetrics implements ControllerStatsRecorder, IsrChangeRecorder {
  private readonly isrShrinks: Meter;
  private readonly isrExpands: Meter;
  private readonly uncleanLeaderElections: Meter;
  private readonly leaderElectionMs: Histogram;

  constructor(registry: MetricsRegistry) {
    this.isrShrinks = registry.newMeter();
    this.isrExpands = registry.newMeter();
    this.uncleanLeaderElections = registry.newMeter();
    this.leaderElectionMs = registry.newHistogram();
  }

  isrShrink(): void {
    this.isrShrinks.mark();
  }

  isrExpand(): void {
    this.isrExpands.mark();
  }

  leaderElection(ms: number): void {
    this.leaderElectionMs.update(ms);
  }

  uncleanLeaderElection(): void {
    this.uncleanLeaderElections.mark();
  }

  /** The families; `maxLag` is the fetchers' MaxLag now (0 when this broker follows nothing). */
  collect(maxLag: number): MetricFamily[] {
    const h = this.leaderElectionMs;
    const values = h.quantiles(YAMMER_QUANTILES);
    const election = "kafka_controller_controllerstats_leaderelectionrateandtimems";
    const electionHelp =
      "Rounds of leader elections on the controller and their time (LeaderElectionRateAndTimeMs)";
    return [
      {
        name: "kafka_server_replicamanager_isrshrinks_total",
        help: "ISR shrinks of led partitions accepted by the controller (IsrShrinksPerSec)",
        type: "counter",
        samples: [{ value: this.isrShrinks.count }],
      },
      {
        name: "kafka_server_replicamanager_isrexpands_total",
        help: "ISR expansions of led partitions accepted by the controller (IsrExpandsPerSec)",
        type: "counter",
        samples: [{ value: this.isrExpands.count }],
      },
      {
        name: "kafka_server_replicafetchermanager_maxlag",
        help: "Largest lag, in offsets, of the partitions this broker follows (ReplicaFetcherManager MaxLag)",
        type: "gauge",
        samples: [{ labels: { clientId: "Replica" }, value: maxLag }],
      },
      {
        name: "kafka_controller_controllerstats_uncleanleaderelections_total",
        help: "Partitions given a leader from outside their ISR by this controller (UncleanLeaderElectionsPerSec)",
        type: "counter",
        samples: [{ value: this.uncleanLeaderElections.count }],
      },
      {
        name: election,
        help: `${electionHelp}, ms by percentile`,
        type: "gauge",
        samples: values.map((value, i) => ({ labels: { quantile: QUANTILE_LABELS[i] }, value })),
      },
      {
        name: `${election}_count`,
        help: `${electionHelp}: rounds recorded`,
        type: "counter",
        samples: [{ value: h.count }],
      },
      {
        name: `${election}_sum`,
        help: `${electionHelp}: sum of the times, ms`,
        type: "counter",
        samples: [{ value: h.sum }],
      },
    ];
  }
}
