// TransactionState: the states of a transactional id at its coordinator (Kafka's TransactionState), with
// the byte each is stored as in __transaction_state (TransactionLogValue.TransactionStatus), and the
// states each may be entered from. The names are Kafka's stateName, as Describe/ListTransactions report them.

export type TransactionState =
  | "Empty"
  | "Ongoing"
  | "PrepareCommit"
  | "PrepareAbort"
  | "CompleteCommit"
  | "CompleteAbort"
  | "Dead"
  | "PrepareEpochFence";

const BY_ID: readonly TransactionState[] = [
  "Empty",
  "Ongoing",
  "PrepareCommit",
  "PrepareAbort",
  "CompleteCommit",
  "CompleteAbort",
  "Dead",
  "PrepareEpochFence",
];

export function transactionStateId(state: TransactionState): number {
  return BY_ID.indexOf(state);
}

export function transactionStateFromId(id: number): TransactionState {
  const s = BY_ID[id];
  if (s === undefined) throw new RangeError(`unknown transaction status ${id}`);
  return s;
}

/** Kafka's TransactionState.validPreviousStates. */
const VALID_PREVIOUS: Record<TransactionState, readonly TransactionState[]> = {
  Empty: ["Empty", "CompleteCommit", "CompleteAbort"],
  Ongoing: ["Ongoing", "Empty", "CompleteCommit", "CompleteAbort"],
  PrepareCommit: ["Ongoing"],
  PrepareAbort: ["Ongoing", "PrepareEpochFence"],
  CompleteCommit: ["PrepareCommit"],
  CompleteAbort: ["PrepareAbort"],
  Dead: ["Empty", "CompleteAbort", "CompleteCommit"],
  PrepareEpochFence: ["Ongoing"],
};

export function isValidTransition(from: TransactionState, to: TransactionState): boolean {
  return VALID_PREVIOUS[to].includes(from);
}

/** States whose transactional id may expire (Kafka's TransactionState.isExpirationAllowed). */
export function isExpirationAllowed(state: TransactionState): boolean {
  return state === "Empty" || state === "CompleteCommit" || state === "CompleteAbort";
}
