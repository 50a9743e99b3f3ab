// Public API of protocol/records: Kafka record batches (magic 2) as bytes with a parsed header, records,
// compression codecs, control records, legacy magic 0/1 message sets, and whole-batch build/decode helpers.

export * from "./compression.js";
export * from "./control-record.js";
export * from "./corrupt-record-error.js";
export * from "./legacy-message-set.js";
export * from "./memory-records.js";
export * from "./record.js";
export * from "./record-batch.js";
export * from "./record-batch-iterator.js";
export * from "./xxhash32.js";
