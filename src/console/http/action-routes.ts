// The console's write side: login/logout/me, the audit log, and every action (topics: create, delete,
// add partitions, configs, test message; groups: reset offsets with dry-run, delete). Each action needs
// a logged-in admin (401 without a login, 403 for a read-only user or when no users are configured) and
// is written to the audit log with its outcome, whether it worked or not (dry-runs too).

import type { IncomingMessage } from "node:http";
import { deleteGroup, resetOffsets } from "../actions/group-actions.js";
import { asBody, type Body, str } from "../actions/inputs.js";
import { sendTestMessage } from "../actions/message-actions.js";
import {
  addPartitions,
  alterTopicConfigs,
  createTopic,
  deleteTopic,
  topicConfigs,
} from "../actions/topic-actions.js";
import { clearedCookie, type Sessions, sessionCookie } from "../auth/sessions.js";
import type { ConsoleUser } from "../auth/users.js";
import type { ClusterState, Collector } from "../collector/collector.js";
import { HttpError, type Router, readJson, sendJson } from "./router.js";

type Action = (c: ClusterState, params: Record<string, string>, body: Body) => Promise<unknown>;

export function addActionRoutes(router: Router, collector: Collector, sessions: Sessions): Router {
  const history = collector.history;
  const cluster = (alias: string): ClusterState => {
    const c = collector.clusters.get(alias);
    if (!c) throw new HttpError(404, `no cluster with alias '${alias}'`);
    return c;
  };
  const admin = (req: IncomingMessage): ConsoleUser => {
    const user = sessions.userOf(req);
    if (!sessions.enabled)
      throw new HttpError(
        403,
        "actions need a login: no console users are configured; add console.user.<name>.password=<hash from `tributary console --hash-password`> and .role=admin, restart, and log in (docs/console.md)",
      );
    if (!user) throw new HttpError(401, "log in as an admin to act");
    if (user.role !== "admin") throw new HttpError(403, `user '${user.name}' is read-only`);
    return user;
  };
  const act =
    (name: string, target: (p: Record<string, string>, b: Body) => string, run: Action) =>
    async (req: IncomingMessage, _res: unknown, params: Record<string, string>) => {
      const user = admin(req);
      const c = cluster(params.c);
      const body = asBody(await readJson(req));
      const entry = {
        ts: Date.now(),
        user: user.name,
        cluster: c.config.alias,
        action: name,
        details: JSON.stringify(body),
      };
      let what = "";
      try {
        what = target(params, body);
        const result = await run(c, params, body);
        await history.audit({
          ...entry,
          target: what,
          outcome: body.dryRun === true ? "ok (dry run)" : "ok",
        });
        return result;
      } catch (e) {
        await history.audit({
          ...entry,
          target: what,
          outcome: `error: ${(e as Error).message.split("\n")[0]}`,
        });
        throw e;
      }
    };
  const topicTarget = (p: Record<string, string>) => `topic ${p.t}`;
  const groupTarget = (p: Record<string, string>) => `group ${p.g}`;
  const existingTopic = async (c: ClusterState, topic: string): Promise<void> => {
    const [t] = await c.admin.describeTopics([topic]);
    if (t.error) throw new HttpError(404, `topic '${topic}': ${t.error.message}`);
  };

  return router
    .get("/api/me", (req) => {
      const user = sessions.userOf(req);
      return { usersConfigured: sessions.enabled, user: user?.name ?? null, role: user?.role ?? null };
    })
    .post("/api/login", async (req, res) => {
      const body = asBody(await readJson(req));
      const name = str(body, "user");
      const session = await sessions.login(name, str(body, "password"));
      await history.audit({
        ts: Date.now(),
        user: name,
        cluster: "",
        action: "login",
        target: `user ${name}`,
        details: "{}",
        outcome: session ? "ok" : "error: wrong user name or password",
      });
      if (!session) throw new HttpError(401, "wrong user name or password");
      res.setHeader("set-cookie", sessionCookie(session.token));
      sendJson(res, 200, { user: session.user.name, role: session.user.role });
      return undefined;
    })
    .post("/api/logout", (req, res) => {
      sessions.logout(req);
      res.setHeader("set-cookie", clearedCookie());
      sendJson(res, 200, { user: null });
      return undefined;
    })
    .get("/api/audit", (req) => {
      if (sessions.enabled && !sessions.userOf(req)) throw new HttpError(401, "log in to see the audit log");
      return history.auditLog(500);
    })
    .get("/api/clusters/:c/topics/:t/configs", (_q, _r, p) => topicConfigs(cluster(p.c).admin, p.t))
    .post(
      "/api/clusters/:c/topics",
      act(
        "create-topic",
        (_p, b) => `topic ${String(b.name)}`,
        (c, _p, b) => createTopic(c.admin, b),
      ),
    )
    .post(
      "/api/clusters/:c/topics/:t/delete",
      act("delete-topic", topicTarget, (c, p) => deleteTopic(c.admin, p.t)),
    )
    .post(
      "/api/clusters/:c/topics/:t/partitions",
      act("add-partitions", topicTarget, (c, p, b) => addPartitions(c.admin, p.t, b)),
    )
    .post(
      "/api/clusters/:c/topics/:t/configs",
      act("alter-configs", topicTarget, (c, p, b) => alterTopicConfigs(c.admin, p.t, b)),
    )
    .post(
      "/api/clusters/:c/topics/:t/messages",
      act("send-message", topicTarget, async (c, p, b) => {
        await existingTopic(c, p.t);
        return sendTestMessage(c.config.bootstrapServers, p.t, b);
      }),
    )
    .post(
      "/api/clusters/:c/groups/:g/reset-offsets",
      act("reset-offsets", groupTarget, (c, p, b) => resetOffsets(c.admin, p.g, b)),
    )
    .post(
      "/api/clusters/:c/groups/:g/delete",
      act("delete-group", groupTarget, (c, p) => deleteGroup(c.admin, p.g)),
    );
}
