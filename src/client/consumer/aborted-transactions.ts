// AbortedTransactionFilter: which fetched batches a consumer drops (Kafka's CompletedFetch
// nextFetchedRecord / abortedProducerIds logic). Control batches (transaction markers) are never
// returned. With isolation.level=read_committed the Fetch response lists the aborted transactions
// (producer id, first offset) in the fetched range: a transactional batch of a producer whose aborted
// transaction started at or before the batch is dropped, until that producer's ABORT marker is passed.

import type { AbortedTransaction } from "../../protocol/generated/messages/FetchResponse.js";
import { ControlRecordType, readControlRecordKey } from "../../protocol/records/control-record.js";
import type { RecordBatchHeader } from "../../protocol/records/record-batch.js";

export class AbortedTransactionFilter {
  private readonly aborted: AbortedTransaction[];
  private readonly abortedProducers = new Set<bigint>();

  constructor(
    aborted: readonly AbortedTransaction[] | null,
    private readonly readCommitted: boolean,
  ) {
    this.aborted =
      readCommitted && aborted
        ? [...aborted].sort((a, b) =>
            a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0,
          )
        : [];
  }

  /**
   * True when the batch's records are not returned. `firstKey` is the key of the batch's first record
   * (a control batch's key says COMMIT or ABORT).
   */
  skip(header: RecordBatchHeader, firstKey: Buffer | null | undefined): boolean {
    if (!this.readCommitted || header.magic < 2) return header.isControl;
    const lastOffset = header.baseOffset + BigInt(header.lastOffsetDelta);
    while (this.aborted.length > 0 && this.aborted[0].firstOffset <= lastOffset) {
      this.abortedProducers.add(this.aborted.shift()!.producerId);
    }
    if (header.isControl) {
      if (firstKey !== undefined && firstKey !== null) {
        const key = readControlRecordKey(firstKey);
        if (key.type === ControlRecordType.Abort) this.abortedProducers.delete(header.producerId);
      }
      return true;
    }
    return header.isTransactional && this.abortedProducers.has(header.producerId);
  }
}
