// PartitionLeaderElectionAlgorithms: how the controller picks a partition's leader (Kafka's
// PartitionLeaderElectionAlgorithms and Election). Pure functions over the assignment, the ISR and the
// set of live brokers: the first replica in assignment order that qualifies wins, so leadership is
// predictable and returns to the preferred (first) replica when it can.

/** Offline partition: first live ISR member; with unclean election, else the first live replica. */
export function offlinePartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  isLive: (id: number) => boolean,
  uncleanLeaderElectionEnabled: boolean,
): { leader: number; unclean: boolean } | undefined {
  const clean = assignment.find((id) => isLive(id) && isr.includes(id));
  if (clean !== undefined) return { leader: clean, unclean: false };
  if (!uncleanLeaderElectionEnabled) return undefined;
  const unclean = assignment.find((id) => isLive(id));
  return unclean === undefined ? undefined : { leader: unclean, unclean: true };
}

/** Controlled shutdown: first live ISR member that is not shutting down. */
export function controlledShutdownPartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  isLive: (id: number) => boolean,
  shuttingDown: ReadonlySet<number>,
): number | undefined {
  return assignment.find((id) => isLive(id) && isr.includes(id) && !shuttingDown.has(id));
}

/** Preferred replica: the first replica, when it is live and in the ISR. */
export function preferredReplicaPartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  isLive: (id: number) => boolean,
): number | undefined {
  const preferred = assignment[0];
  return preferred !== undefined && isLive(preferred) && isr.includes(preferred) ? preferred : undefined;
}

/** Reassignment: the first replica of the target assignment that is live and in the ISR. */
export function reassignPartitionLeaderElection(
  targetReplicas: readonly number[],
  isr: readonly number[],
  isLive: (id: number) => boolean,
): number | undefined {
  return targetReplicas.find((id) => isLive(id) && isr.includes(id));
}
