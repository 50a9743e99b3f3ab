// ControllerState: what the controller is doing while it runs an event (Kafka's kafka.controller.
// ControllerState), and which state each of the controller's events runs in (the `state` of Kafka's
// ControllerEvent classes). Owns the states in Kafka's order, each state's ControllerStats rate-and-time
// metric name, and the table of Tributary's controller events — every event put on the controller's queue
// is one of these names, so the event queue can time it under its state.
// States no Tributary event runs in (their timers stay at zero, as on a Kafka cluster where nothing
// triggers them): ControllerShutdown (the queue is closed without an event), UncleanLeaderElectionEnable
// and TopicUncleanLeaderElectionEnable (the setting is read at each election instead), UpdateFeatures, and
// UpdateMetadataResponseReceived and Idle (no timer in Kafka either).

/** Kafka's ControllerState values, in Kafka's order (ControllerState.values). */
export const CONTROLLER_STATES = [
  "Idle",
  "ControllerChange",
  "BrokerChange",
  "TopicChange",
  "TopicDeletion",
  "AlterPartitionReassignment",
  "AutoLeaderBalance",
  "ManualLeaderBalance",
  "ControlledShutdown",
  "IsrChange",
  "LeaderAndIsrResponseReceived",
  "LogDirChange",
  "ControllerShutdown",
  "UncleanLeaderElectionEnable",
  "TopicUncleanLeaderElectionEnable",
  "ListPartitionReassignment",
  "UpdateMetadataResponseReceived",
  "UpdateFeatures",
] as const;

export type ControllerState = (typeof CONTROLLER_STATES)[number];

/**
 * The name of a state's ControllerStats timer (Kafka's rateAndTimeMetricName): `<State>RateAndTimeMs`, but
 * AlterPartitionReassignment's is PartitionReassignmentRateAndTimeMs (Kafka kept the older name), and none
 * for Idle and UpdateMetadataResponseReceived. BrokerChange's is LeaderElectionRateAndTimeMs in Kafka; here
 * that name already counts the rounds of leader elections whatever triggered them (docs/metrics.md), so
 * BrokerChange events are timed as BrokerChangeRateAndTimeMs.
 */
export function rateAndTimeMetricName(state: ControllerState): string | undefined {
  switch (state) {
    case "Idle":
    case "UpdateMetadataResponseReceived":
      return undefined;
    case "AlterPartitionReassignment":
      return "PartitionReassignmentRateAndTimeMs";
    default:
      return `${state}RateAndTimeMs`;
  }
}

/** Each controller event (Kafka's ControllerEvent names) and the state it runs in. */
export const CONTROLLER_EVENT_STATES = {
  Startup: "ControllerChange",
  ControllerChange: "ControllerChange",
  /** A ZooKeeper write found another controller (Kafka resigns within the failing event). */
  ControllerMoved: "ControllerChange",
  Expire: "ControllerChange",
  RegisterBrokerAndReelect: "ControllerChange",
  BrokerChange: "BrokerChange",
  TopicChange: "TopicChange",
  PartitionModifications: "TopicChange",
  TopicDeletion: "TopicDeletion",
  TopicDeletionStopReplicaResponseReceived: "TopicDeletion",
  ZkPartitionReassignment: "AlterPartitionReassignment",
  ApiPartitionReassignment: "AlterPartitionReassignment",
  PartitionReassignmentIsrChange: "AlterPartitionReassignment",
  ListPartitionReassignments: "ListPartitionReassignment",
  AutoPreferredReplicaLeaderElection: "AutoLeaderBalance",
  ReplicaLeaderElection: "ManualLeaderBalance",
  ControlledShutdown: "ControlledShutdown",
  AlterPartitionReceived: "IsrChange",
  LeaderAndIsrResponseReceived: "LeaderAndIsrResponseReceived",
  LogDirEventNotification: "LogDirChange",
} as const satisfies Record<string, ControllerState>;

export type ControllerEventName = keyof typeof CONTROLLER_EVENT_STATES;
