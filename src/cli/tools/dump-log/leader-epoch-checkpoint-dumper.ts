// `dump-log` of a partition's leader-epoch-checkpoint (a Tributary addition: Kafka's tool cannot read it):
// "epoch: E startOffset: O" per entry, read by the broker's own LeaderEpochCheckpointFile so the tool and
// the broker agree on the format; a malformed file is the checkpoint reader's message (DumpError).

import { CheckpointFileError } from "../../../storage/checkpoint/checkpoint-file.js";
import { LeaderEpochCheckpointFile } from "../../../storage/leader-epoch/leader-epoch-checkpoint-file.js";
import { DumpError } from "./dump-errors.js";
import type { Output } from "./dump-output.js";

export const LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint";

export function dumpLeaderEpochCheckpoint(path: string, out: Output): void {
  let entries: ReturnType<LeaderEpochCheckpointFile["read"]>;
  try {
    entries = new LeaderEpochCheckpointFile(path).read();
  } catch (e) {
    if (e instanceof CheckpointFileError) throw new DumpError(e.message);
    throw e;
  }
  for (const e of entries) out.println(`epoch: ${e.epoch} startOffset: ${e.startOffset}`);
}
