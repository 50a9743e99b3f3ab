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
// - kafka.controller:type=ControllerStats,name=<State>RateAndTimeMs, one Yammer timer per ControllerState
//   (controller-state.ts names them) → kafka_controller_controllerstats_<state>rateandtimems{quantile},
//   …_count and …_sum as above: on every broker (each runs the controller's event queue), one per event
//   run in that state, with the milliseconds it ran;
// - kafka.controller:type=ControllerEventManager,name=EventQueueTimeMs (a histogram) →
//   kafka_controller_controllereventmanager_eventqueuetimems{quantile}, …_count and …_sum: the ms each
//   event waited in the queue; and EventQueueSize → kafka_controller_controllereventmanager_eventqueuesize
//   (gauge, read on each scrape): the events waiting;
// - kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica →
//   kafka_server_replicafetchermanager_maxlag{clientId="Replica"} (gauge, read on each scrape): the
//   largest lag over the partitions this broker follows, leader's high watermark minus the follower's log
//   end offset as of the last fetch response.

import type { MetricFamily } from "../../common/metrics/exposition.js";
import { type Histogram, YAMMER_QUANTILES } from "../../common/metrics/histogram.js";
import type { Meter } from "../../common/metrics/meter.js";
import type { MetricsRegistry } from "../../common/metrics/metrics-registry.js";
import {
  CONTROLLER_STATES,
  type ControllerState,
  rateAndTimeMetricName,
} from "../controller/controller-state.js";

/** Quantile label values as the exporter derives them from Yammer's NNthPercentile attributes. */
const QUANTILE_LABELS = ["0.50", "0.75", "0.95", "0.98", "0.99", "0.999"];

/** What the controller's event queue reports (ControllerEventManager). */
export interface ControllerEventRecorder {
  /** An event waited `ms` in the queue before it ran. */
  eventQueueTime(ms: number): void;
  /** An event that runs in `state` ran for `ms`. */
  eventProcessed(state: ControllerState, ms: number): void;
  /** The events waiting in the queue, read on each scrape. */
  eventQueueSize(size: () => number): void;
}

/** What the controller reports (PartitionStateMachine, and its event queue). */
export interface ControllerStatsRecorder extends ControllerEventRecorder {
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

/** A Yammer timer (or histogram) in ms as the exporter gives it: percentiles, Count, and Tributary's Sum. */
function timerFamilies(name: string, help: string, counted: string, h: Histogram): MetricFamily[] {
  const values = h.quantiles(YAMMER_QUANTILES);
  return [
    {
      name,
      help: `${help}, ms by percentile`,
      type: "gauge",
      samples: values.map((value, i) => ({ labels: { quantile: QUANTILE_LABELS[i] }, value })),
    },
    { name: `${name}_count`, help: `${help}: ${counted}`, type: "counter", samples: [{ value: h.count }] },
    {
      name: `${name}_sum`,
      help: `${help}: sum of the times, ms`,
      type: "counter",
      samples: [{ value: h.sum }],
    },
  ];
}

export class ReplicationMetrics implements ControllerStatsRecorder, IsrChangeRecorder {
  private readonly isrShrinks: Meter;
  private readonly isrExpands: Meter;
  private readonly uncleanLeaderElections: Meter;
  private readonly leaderElectionMs: Histogram;
  /** ControllerStats' rate-and-time timer of each state that has one, by its metric name. */
  private readonly stateTimeMs = new Map<ControllerState, { metric: string; ms: Histogram }>();
  private readonly eventQueueTimeMs: Histogram;
  private eventQueueSizeNow: () => number = () => 0;

  constructor(registry: MetricsRegistry) {
    this.isrShrinks = registry.newMeter();
    this.isrExpands = registry.newMeter();
    this.uncleanLeaderElections = registry.newMeter();
    this.leaderElectionMs = registry.newHistogram();
    for (const state of CONTROLLER_STATES) {
      const metric = rateAndTimeMetricName(state);
      if (metric !== undefined) this.stateTimeMs.set(state, { metric, ms: registry.newHistogram() });
    }
    this.eventQueueTimeMs = registry.newHistogram();
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

  eventQueueTime(ms: number): void {
    this.eventQueueTimeMs.update(ms);
  }

  eventProcessed(state: ControllerState, ms: number): void {
    this.stateTimeMs.get(state)?.ms.update(ms);
  }

  eventQueueSize(size: () => number): void {
    this.eventQueueSizeNow = size;
  }

  /** The families; `maxLag` is the fetchers' MaxLag now (0 when this broker follows nothing). */
  collect(maxLag: number): MetricFamily[] {
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
      ...timerFamilies(
        "kafka_controller_controllerstats_leaderelectionrateandtimems",
        "Rounds of leader elections on the controller and their time (LeaderElectionRateAndTimeMs)",
        "rounds recorded",
        this.leaderElectionMs,
      ),
      ...[...this.stateTimeMs].flatMap(([state, { metric, ms }]) =>
        timerFamilies(
          `kafka_controller_controllerstats_${metric.toLowerCase()}`,
          `Controller events of state ${state} and their time (${metric})`,
          "events recorded",
          ms,
        ),
      ),
      ...timerFamilies(
        "kafka_controller_controllereventmanager_eventqueuetimems",
        "Time controller events waited in the queue (ControllerEventManager EventQueueTimeMs)",
        "events recorded",
        this.eventQueueTimeMs,
      ),
      {
        name: "kafka_controller_controllereventmanager_eventqueuesize",
        help: "Controller events waiting in the queue (ControllerEventManager EventQueueSize)",
        type: "gauge",
        samples: [{ value: this.eventQueueSizeNow() }],
      },
    ];
  }
}
