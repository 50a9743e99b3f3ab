// A small HTTP router over node:http: routes are GET or POST and a path pattern with `:name` segments
// (each segment URL-decoded); a handler returns a value sent as JSON, or writes the response itself and
// returns undefined. HttpError becomes its status with a JSON {error}; any other error a 500 with one
// line, never a stack trace. readJson() reads a POST's JSON body (application/json only, at most 1 MiB).

import type { IncomingMessage, ServerResponse } from "node:http";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  params: Record<string, string>,
  query: URLSearchParams,
) => unknown | Promise<unknown>;

interface Route {
  readonly method: string;
  readonly parts: readonly string[];
  readonly handler: Handler;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(text);
}

export class Router {
  private readonly routes: Route[] = [];

  get(path: string, handler: Handler): this {
    this.routes.push({ method: "GET", parts: path.split("/").filter((p) => p !== ""), handler });
    return this;
  }

  post(path: string, handler: Handler): this {
    this.routes.push({ method: "POST", parts: path.split("/").filter((p) => p !== ""), handler });
    return this;
  }

  private match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
    const segs = path.split("/").filter((p) => p !== "");
    for (const route of this.routes) {
      if (route.method !== method && !(method === "HEAD" && route.method === "GET")) continue;
      const last = route.parts[route.parts.length - 1];
      const rest = last === "*";
      if (rest ? segs.length < route.parts.length - 1 : segs.length !== route.parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < route.parts.length && ok; i++) {
        const p = route.parts[i];
        if (p === "*") params["*"] = segs.slice(i).join("/");
        else if (p.startsWith(":")) {
          try {
            params[p.slice(1)] = decodeURIComponent(segs[i]);
          } catch {
            ok = false;
          }
        } else ok = p === segs[i];
      }
      if (ok) return { route, params };
    }
    return undefined;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://console.invalid");
    const found = this.match(req.method ?? "GET", url.pathname);
    try {
      if (!found) throw new HttpError(404, `no such page: ${url.pathname}`);
      // Every POST carries JSON: a cross-site form cannot send that without a CORS preflight.
      if (req.method === "POST" && !(req.headers["content-type"] ?? "").startsWith("application/json"))
        throw new HttpError(415, "expected content-type: application/json");
      const body = await found.route.handler(req, res, found.params, url.searchParams);
      if (body !== undefined && !res.headersSent) sendJson(res, 200, body);
    } catch (e) {
      if (res.headersSent) {
        res.end();
        return;
      }
      const status = e instanceof HttpError ? e.status : 500;
      sendJson(res, status, { error: (e as Error).message.split("\n")[0] });
    }
  }
}

const MAX_BODY = 1024 * 1024;

/**
 * The JSON body of a POST. Only `application/json` is taken: a browser cannot send that cross-site
 * without a CORS preflight (which this server never allows), so a form on another site cannot act.
 */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  if (!(req.headers["content-type"] ?? "").startsWith("application/json"))
    throw new HttpError(415, "expected content-type: application/json");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, "request body larger than 1 MiB");
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
  } catch {
    throw new HttpError(400, "the request body is not valid JSON");
  }
}
