// LinuxIoMetrics: Kafka's kafka.server:type=KafkaServer linux-disk-read-bytes / linux-disk-write-bytes
// (its LinuxIoMetricsCollector): the bytes this process caused to be read from and written to storage,
// `read_bytes` / `write_bytes` of /proc/self/io, as the JMX exporter names them:
// kafka_server_kafkaserver_linux_disk_{read,write}_bytes (gauges, as Kafka registers them). Page-cache
// hits are not disk reads, so a broker serving consumers from memory shows few read bytes. Absent where
// /proc/self/io cannot be read (not Linux), as Kafka leaves them out there.

import { readFileSync } from "node:fs";
import type { MetricFamily } from "../../common/metrics/exposition.js";

export function collectLinuxIoMetrics(): MetricFamily[] {
  let text: string;
  try {
    text = readFileSync("/proc/self/io", "utf8");
  } catch {
    return [];
  }
  const field = (name: string): number | undefined => {
    const m = new RegExp(`^${name}: (\\d+)$`, "m").exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const read = field("read_bytes");
  const write = field("write_bytes");
  if (read === undefined || write === undefined) return [];
  return [
    {
      name: "kafka_server_kafkaserver_linux_disk_read_bytes",
      help: "Bytes this process read from storage, /proc/self/io read_bytes (linux-disk-read-bytes)",
      type: "gauge",
      samples: [{ value: read }],
    },
    {
      name: "kafka_server_kafkaserver_linux_disk_write_bytes",
      help: "Bytes this process wrote to storage, /proc/self/io write_bytes (linux-disk-write-bytes)",
      type: "gauge",
      samples: [{ value: write }],
    },
  ];
}
