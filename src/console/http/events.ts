// The Server-Sent Events stream (/api/events): one `sample` event each time the collector finishes a
// cluster's sample, so open pages refetch what they show without a reload; a comment line every 15 s
// keeps proxies from closing an idle stream.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Collector } from "../collector/collector.js";

export function streamEvents(collector: Collector, req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  res.write("retry: 2000\n\n");
  const onSample = (e: { cluster: string; ts: number; samples: number }): void => {
    res.write(`event: sample\ndata: ${JSON.stringify(e)}\n\n`);
  };
  collector.on("sample", onSample);
  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  const stop = (): void => {
    clearInterval(keepAlive);
    collector.off("sample", onSample);
  };
  req.on("close", stop);
  res.on("error", stop);
}
