// The Node (V8) options every `tributary` process runs with: the counterpart of the JVM options Kafka's
// start scripts pass (kafka-server-start.sh's KAFKA_HEAP_OPTS="-Xmx1G -Xms1G").
//
// --initial-old-space-size: V8 starts a full (mark-compact) GC when the old generation plus the
// ArrayBuffer memory allocated since the last one nears a limit that it derives from the live heap; with
// Tributary's small heap (~12 MiB) that limit is a few tens of MiB, and every byte read from a socket is
// a new ArrayBuffer, so at 150 MB/s of produce traffic a broker ran a 4–12 ms full GC every 100–150 ms.
// A 256 MiB floor under the limit leaves the freeing of those buffers to the cheap young-generation GCs.
// It reserves nothing: the heap still grows only as it is used.
//
// bin/tributary.js's first line carries these options (a test checks that the two agree); whatever
// starts the CLI through `node` itself (tests, benchmarks) passes them explicitly.

export const TRIBUTARY_NODE_OPTIONS: readonly string[] = ["--initial-old-space-size=256"];
