// Child process for test/storage/crash-recovery.test.ts: opens a partition log (recovering it as after an
// unclean shutdown) and appends batches as fast as it can until it is killed. After every append it writes
// "ack <firstOffset> <lastOffset>" to stdout, after every flush "flushed <recoveryPoint>", synchronously, so
// a line seen by the parent means the call returned. Each record's key is its expected offset.
//
// usage: node storage-crash-writer.js <dir> <recoveryPoint> <logStartOffset> <seed>

import { writeSync } from "node:fs";
import { SystemTime } from "../../src/common/time.js";
import { buildRecordBatch } from "../../src/protocol/records/index.js";
import { LeaderEpochFileCache } from "../../src/storage/leader-epoch/leader-epoch-file-cache.js";
import { DEFAULT_LOG_CONFIG, type LogConfig } from "../../src/storage/log-config.js";
import { UnifiedLog } from "../../src/storage/unified-log.js";
import { Random } from "./random.js";

export const CRASH_TEST_CONFIG: LogConfig = {
  ...DEFAULT_LOG_CONFIG,
  segmentBytes: 128 * 1024,
  segmentIndexBytes: 800,
  indexIntervalBytes: 1024,
};

function main(): void {
  const [dir, rp, start, seedArg] = process.argv.slice(2);
  const rnd = new Random(Number(seedArg));
  const clock = new SystemTime();
  const cache = LeaderEpochFileCache.load(dir);
  const log = UnifiedLog.open(dir, CRASH_TEST_CONFIG, {
    time: new SystemTime(),
    recoveryPoint: BigInt(rp),
    logStartOffset: BigInt(start),
    hadCleanShutdown: false,
    leaderEpochCache: cache,
  });
  const epoch = (cache.latestEpoch() ?? 0) + 1;
  writeSync(1, `ready ${log.logEndOffset}\n`);
  let appends = 0;
  const value = rnd.bytes(4096);
  for (;;) {
    const first = log.logEndOffset;
    const n = rnd.int(1, 20);
    const records = Array.from({ length: n }, (_, i) => ({
      key: Buffer.from(String(first + BigInt(i))),
      value: value.subarray(0, rnd.int(0, 400)),
    }));
    const b = buildRecordBatch({ records, timestamp: BigInt(clock.milliseconds()) });
    const info = log.appendAsLeader(b, epoch);
    writeSync(1, `ack ${info.firstOffset} ${info.lastOffset}\n`);
    if (++appends % 50 === 0) {
      log.flush();
      writeSync(1, `flushed ${log.recoveryPoint}\n`);
    }
  }
}

if (process.argv[1]?.endsWith("storage-crash-writer.js")) main();
