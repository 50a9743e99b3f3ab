// Reads each broker's Prometheus /metrics (Tributary's Kafka-named metrics, docs/metrics.md) during a
// sample: the all-topics counters of messages in, bytes in and bytes out
// (kafka_server_brokertopicmetrics_{messagesin,bytesin,bytesout}_total without a topic label) and
// requests answered (kafka_network_requestmetrics_requests_total summed). Rates come from two samples.
// A broker whose endpoint cannot be read is reported with its error; 5 s at most per broker.

export interface BrokerCounters {
  readonly brokerId: number;
  readonly messagesIn: number | null;
  readonly bytesIn: number | null;
  readonly bytesOut: number | null;
  readonly requests: number | null;
  readonly error?: string;
}

const ALL_TOPICS: Record<string, "messagesIn" | "bytesIn" | "bytesOut"> = {
  kafka_server_brokertopicmetrics_messagesin_total: "messagesIn",
  kafka_server_brokertopicmetrics_bytesin_total: "bytesIn",
  kafka_server_brokertopicmetrics_bytesout_total: "bytesOut",
};
const REQUESTS = "kafka_network_requestmetrics_requests_total";

/** The counters of one /metrics text. */
export function parseCounters(text: string): Omit<BrokerCounters, "brokerId"> {
  const out = {
    messagesIn: null as number | null,
    bytesIn: null as number | null,
    bytesOut: null as number | null,
    requests: null as number | null,
  };
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const [, name, labels, raw] = m;
    const value = Number(raw);
    if (!Number.isFinite(value)) continue;
    const field = ALL_TOPICS[name];
    if (field && (labels === undefined || !/\btopic="/.test(labels))) out[field] = value;
    else if (name === REQUESTS) out.requests = (out.requests ?? 0) + value;
  }
  return out;
}

export async function readBrokerCounters(brokerId: number, url: string): Promise<BrokerCounters> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok)
      return {
        brokerId,
        messagesIn: null,
        bytesIn: null,
        bytesOut: null,
        requests: null,
        error: `HTTP ${res.status}`,
      };
    return { brokerId, ...parseCounters(await res.text()) };
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause;
    return {
      brokerId,
      messagesIn: null,
      bytesIn: null,
      bytesOut: null,
      requests: null,
      error: cause?.message ?? (e as Error).message,
    };
  }
}
