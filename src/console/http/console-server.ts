// The console's HTTP server (node:http): the page shell and bundle, the JSON API the pages and the
// tests share, the Server-Sent Events stream, and /metrics. Routes:
//   GET /                                   page shell (the front end routes by #hash)
//   GET /static/app.js | app.css            the esbuild bundle
//   GET /api/clusters                       aliases, bootstrap servers, sample counts, last error, what the
//                                           last sample took (ms, Fetch requests for lag in seconds)
//   GET /api/clusters/:c/overview           brokers, controller, counts
//   GET /api/clusters/:c/broker-metrics     brokers' metric counters: latest, and the last hour's samples,
//                                           with the ids of the brokers registered now
//   GET /api/clusters/:c/zookeeper?path=/x   a znode (children, data, stat), read-only
//   GET /api/clusters/:c/topics             topics;   /topics/:t  one topic's partitions and size history
//   GET /api/clusters/:c/topics/:t/messages ?partition=&offset=|timestamp=&limit=  the message browser
//   GET /api/clusters/:c/groups             groups;   /groups/:g  one group, its lag history and trend
//                                           (?topic=&partition= : that partition's lag history)
//   GET /api/events                         SSE: `sample` after each collector sample
//   GET /api/alerts                         alert rules, the alerts firing now, the alert history
//   GET /metrics                            Prometheus text, kafka_exporter names
// and (action-routes.ts) login, the audit log and the actions, each for a logged-in admin.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AlertManager } from "../alerts/alert-manager.js";
import type { Sessions } from "../auth/sessions.js";
import type { Collector } from "../collector/collector.js";
import { renderMetrics } from "../metrics/prometheus.js";
import { overview, topicDetail, topicList } from "../views/cluster-views.js";
import { groupDetail, groupList } from "../views/group-views.js";
import { browseMessages, browseRequest } from "../views/message-views.js";
import { ZooKeeperBrowser } from "../zookeeper/zk-browser.js";
import { addActionRoutes } from "./action-routes.js";
import { streamEvents } from "./events.js";
import { HttpError, Router } from "./router.js";
import { sendAsset, sendIndex } from "./static-files.js";

const HOUR_MS = 3_600_000;

export function buildRouter(collector: Collector, sessions: Sessions, alerts: AlertManager): Router {
  const cluster = (alias: string) => {
    const c = collector.clusters.get(alias);
    if (!c) throw new HttpError(404, `no cluster with alias '${alias}'`);
    return c;
  };
  const zk = new Map<string, ZooKeeperBrowser>();
  for (const c of collector.clusters.values())
    if (c.config.zookeeperConnect) zk.set(c.config.alias, new ZooKeeperBrowser(c.config.zookeeperConnect));
  collector.once("close", () => {
    for (const b of zk.values()) b.close();
  });
  const router = new Router()
    .get("/", (_q, res) => sendIndex(res))
    .get("/static/:name", (_q, res, p) => sendAsset(res, p.name))
    .get("/api/clusters", () =>
      [...collector.clusters.values()].map((c) => ({
        alias: c.config.alias,
        bootstrapServers: c.config.bootstrapServers,
        samples: c.samples,
        lastSampleTs: c.latest?.ts ?? null,
        lastError: c.lastError ?? null,
        lastSample: c.latest ? { tookMs: c.latest.tookMs, timestampReads: c.latest.timestampReads } : null,
        zookeeper: c.config.zookeeperConnect ?? null,
      })),
    )
    .get("/api/clusters/:c/zookeeper", (_q, _r, p, query) => {
      cluster(p.c);
      const browser = zk.get(p.c);
      if (!browser) throw new HttpError(400, `cluster '${p.c}' has no ${p.c}.zookeeper.connect`);
      return browser.node(query.get("path") ?? "/");
    })
    .get("/api/clusters/:c/overview", (_q, _r, p) => overview(cluster(p.c).admin))
    .get("/api/clusters/:c/broker-metrics", async (_q, _r, p) => {
      const c = cluster(p.c);
      return {
        configured: Boolean(c.config.metricsPort || c.config.metricsUrls),
        // The brokers registered at the last sample: a broker that has left gets no row.
        brokerIds: c.latest?.brokerIds ?? [],
        latest: c.latest?.brokerCounters ?? [],
        points: await collector.history.brokerSamples(p.c, Date.now() - HOUR_MS),
      };
    })
    .get("/api/clusters/:c/topics", (_q, _r, p) => topicList(cluster(p.c).admin))
    .get("/api/clusters/:c/topics/:t", async (_q, _r, p) => ({
      ...(await topicDetail(cluster(p.c).admin, p.t)),
      history: await collector.history.topicSizes(p.c, p.t, Date.now() - HOUR_MS),
    }))
    .get("/api/clusters/:c/topics/:t/messages", (_q, _r, p, query) =>
      browseMessages(cluster(p.c).admin, browseRequest(p.t, query)),
    )
    .get("/api/clusters/:c/groups", (_q, _r, p) => groupList(cluster(p.c)))
    .get("/api/clusters/:c/groups/:g", (_q, _r, p, query) => {
      const hours = Number(query.get("hours") ?? "1");
      if (!(hours > 0 && hours <= 24 * 3650)) throw new HttpError(400, "hours: expected a positive number");
      const topic = query.get("topic");
      const partition = query.get("partition");
      if ((topic === null) !== (partition === null) || (partition !== null && !/^\d+$/.test(partition)))
        throw new HttpError(
          400,
          "topic and partition: give both (a partition number), or neither for the total",
        );
      const series = topic !== null ? { topic, partition: Number(partition) } : undefined;
      return groupDetail(cluster(p.c), collector.history, p.g, Date.now() - hours * HOUR_MS, series);
    })
    .get("/api/events", (req, res) => streamEvents(collector, req, res))
    .get("/api/alerts", async () => ({
      rules: alerts.rules.map((r) => ({
        name: r.name,
        type: r.type,
        threshold: r.threshold,
        group: r.group?.source.slice(4, -2) ?? null,
        cluster: r.cluster ?? null,
        // The webhook's origin only: its path may hold a token.
        webhook: r.webhook ? new URL(r.webhook).origin : null,
      })),
      active: alerts.activeAlerts(),
      events: await collector.history.alertEvents(200),
    }))
    .get("/metrics", (_q, res) => {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(renderMetrics(collector.clusters.values()));
    });
  return addActionRoutes(router, collector, sessions);
}

export async function listen(router: Router, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => void router.handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

export function urlOf(server: Server): string {
  const a = server.address() as AddressInfo;
  const host = a.family === "IPv6" ? `[${a.address}]` : a.address;
  return `http://${host}:${a.port}`;
}
