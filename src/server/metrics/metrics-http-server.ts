// MetricsHttpServer: the Prometheus scrape endpoint, configured by `metrics.http.listener`
// (Tributary-specific; default: the first listener's host on port 9404, the JMX exporter's usual port — all
// interfaces for `PLAINTEXT://:9092`; "" disables it).
// `GET /metrics` (or HEAD) answers the text exposition format 0.0.4; any other path is 404 and any other
// method 405. Failing to bind is one ERROR line and the broker runs on without metrics. Once bound it logs
// "Metrics HTTP endpoint listening on http://host:port/metrics".

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Logger } from "../../common/logger.js";
import { CONTENT_TYPE } from "../../common/metrics/exposition.js";

export interface MetricsListener {
  readonly host: string;
  readonly port: number;
}

const LISTENER_RE = /^http:\/\/(\[[0-9a-fA-F:.]+\]|[0-9A-Za-z.-]+):(\d{1,5})\/?$/;

/**
 * Parses `metrics.http.listener`: "" → null (disabled), `http://host:port` → the listener. Returns a string
 * saying what was expected when the value is not one of those.
 */
export function parseMetricsListener(value: string): MetricsListener | null | string {
  const v = value.trim();
  if (v === "") return null;
  const m = LISTENER_RE.exec(v);
  const port = m === null ? Number.NaN : Number(m[2]);
  if (m === null || port > 65535) return "an http://host:port URL (port 0-65535), or empty to disable";
  const host = m[1].startsWith("[") ? m[1].slice(1, -1) : m[1];
  return { host, port };
}

export class MetricsHttpServer {
  private server: Server | undefined;
  private _port: number | undefined;
  private readonly logger = new Logger("tributary.metrics.MetricsHttpServer");

  constructor(
    private readonly listener: MetricsListener,
    private readonly scrape: () => string,
  ) {}

  /** The bound port, once started. */
  get port(): number | undefined {
    return this._port;
  }

  /** Binds; resolves true once listening, false (after one ERROR line) when binding failed. */
  start(): Promise<boolean> {
    const { host, port } = this.listener;
    return new Promise((resolve) => {
      const server = createServer((req, res) => this.handle(req, res));
      server.once("error", (e: NodeJS.ErrnoException) => {
        this.logger.error(
          `Metrics HTTP endpoint failed to bind to ${host}:${port}: ${e.code === "EADDRINUSE" ? "Address already in use" : e.message}; the broker runs without metrics`,
        );
        server.close();
        resolve(false);
      });
      server.listen({ host, port }, () => {
        server.removeAllListeners("error");
        server.on("error", (e) => this.logger.error(`Metrics HTTP endpoint error: ${e.message}`));
        const address = server.address();
        this._port = typeof address === "object" && address !== null ? address.port : port;
        this.server = server;
        const shown = host.includes(":") ? `[${host}]` : host;
        this.logger.info(`Metrics HTTP endpoint listening on http://${shown}:${this._port}/metrics`);
        resolve(true);
      });
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      res.end("Not Found: the metrics are at /metrics\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" });
      res.end("Method Not Allowed\n");
      return;
    }
    let body: string;
    try {
      body = this.scrape();
    } catch (e) {
      this.logger.error(`Cannot collect the metrics: ${(e as Error)?.stack ?? e}`);
      res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
      res.end("Internal Server Error\n");
      return;
    }
    res.writeHead(200, { "Content-Type": CONTENT_TYPE, "Content-Length": Buffer.byteLength(body) });
    res.end(req.method === "HEAD" ? undefined : body);
  }

  /** Stops listening and closes open scrape connections. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
