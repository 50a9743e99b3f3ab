// CorruptRecordError: the one error type for bad record data (record batches, records, legacy message
// sets, compressed streams). It is a ProtocolDecodeError, so code that catches decode failures catches it
// too, and it carries the Kafka error code a broker answers with: CORRUPT_MESSAGE for a failed CRC, a bad
// size or an undecodable compressed stream (Kafka's CorruptRecordException), INVALID_RECORD for a record
// whose fields do not follow the format (Kafka's InvalidRecordException).

import { ErrorCode } from "../generated/errors.js";
import { ProtocolDecodeError } from "../primitives/errors.js";

export type CorruptRecordErrorName = "CORRUPT_MESSAGE" | "INVALID_RECORD" | "UNSUPPORTED_COMPRESSION_TYPE";

export class CorruptRecordError extends ProtocolDecodeError {
  /** Kafka error code for this failure (ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD, ...). */
  readonly errorCode: number;
  readonly errorName: CorruptRecordErrorName;

  constructor(message: string, errorName: CorruptRecordErrorName = "CORRUPT_MESSAGE") {
    super(message);
    this.errorName = errorName;
    this.errorCode = ErrorCode[errorName];
  }
}
