// Public API of storage/ (the storage core): file names, LogConfig, the three indexes, LogSegment and its
// FileRecords, LogLoader, UnifiedLog and what its appends answer (LogAppendInfo). Other storage modules
// (checkpoints, leader epochs, retention, cleaner, log manager) are imported from their own files.

export * from "./abstract-index.js";
export * from "./file-records.js";
export * from "./log-append-info.js";
export * from "./log-config.js";
export * from "./log-file-names.js";
export * from "./log-loader.js";
export * from "./log-segment.js";
export * from "./offset-index.js";
export * from "./time-index.js";
export * from "./transaction-index.js";
export * from "./unified-log.js";
