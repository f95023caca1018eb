// The dashboard's HTTP side: `/` (the page), `/fragment` (its live part), `/events` (server-sent
// events, one `change` per board change the host pushes). The same guards as the MCP endpoint:
// only our own Host header (DNS rebinding), and the bearer token, given once as a link
// `/?token=…` that sets an HttpOnly SameSite=Strict cookie and redirects, or as a header.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Host } from "../host/api.js";
import { DashboardCache, type LedgerFilter } from "./data.js";
import { fragment, page } from "./html.js";

export const COOKIE = "afk_dashboard";
/** Past this, a page is refused with a hint to narrow it (the limits in data.ts keep it far below). */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;
const MAX_STREAMS = 32;

export interface DashboardOptions {
  token: string;
  /** The Host headers we answer (`127.0.0.1:PORT`, `localhost:PORT`), known once the server listens. */
  allowedHosts: () => readonly string[];
  /** How long cached data may serve before a fresh read, board change or not (default 5 s). */
  maxAgeMs?: number;
}

export interface Dashboard {
  /** Answers a request for any path but the MCP endpoint. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  streams(): number;
  close(): void;
}

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

function cookieOf(req: IncomingMessage): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === COOKIE) return rest.join("=");
  }
  return null;
}

export function parseFilter(query: URLSearchParams): LedgerFilter | string {
  const repo = query.get("repo")?.trim() || null;
  const issueText = query.get("issue")?.trim() || null;
  const event = query.get("event")?.trim() || null;
  if (repo !== null && !/^[\w.-]{1,100}\/[\w.-]{1,100}$/.test(repo)) return "repo: expected owner/name";
  if (issueText !== null && !/^[1-9]\d{0,9}$/.test(issueText)) return "issue: expected an issue number";
  if (event !== null && !/^[a-z_]{1,30}$/.test(event)) return "event: expected an event kind such as landing or dispatch";
  return { repo, issue: issueText === null ? null : Number(issueText), event };
}

export function createDashboard(host: Host, options: DashboardOptions): Dashboard {
  // The cookie holds a value derived from the token, not the token itself.
  const session = createHash("sha256").update(`afk-dashboard:${options.token}`).digest("base64url");
  const bearer = `Bearer ${options.token}`;
  const cache = new DashboardCache(host, options.maxAgeMs);
  const streams = new Set<ServerResponse>();
  // The host is listened to only while a page listens (an open /events stream): a dashboard
  // nobody watches holds no subscription, and then serves no cached data (it could not tell it stale).
  let unsubscribe: (() => void) | null = null;
  const watch = () => {
    if (unsubscribe) return;
    unsubscribe = host.subscribe((event) => {
      if (!cache.invalidate(event)) return;
      const line = `event: change\ndata: ${JSON.stringify({ kind: event.kind, repo: "repo" in event ? event.repo : null })}\n\n`;
      for (const res of streams) res.write(line);
    });
    void host.listen?.().catch(() => undefined);
  };
  const unwatch = () => {
    if (streams.size > 0 || !unsubscribe) return;
    unsubscribe();
    unsubscribe = null;
    cache.clear();
  };
  const keepAlive = setInterval(() => {
    for (const res of streams) res.write(": keep-alive\n\n");
  }, 25_000);
  keepAlive.unref();

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      ...headers,
    });
    res.end(body);
  };
  const refuse = (res: ServerResponse, status: number, message: string) =>
    send(
      res,
      status,
      `<!doctype html><meta charset="utf-8"><title>afk-mcp dashboard</title><p>${message}</p>`,
      status === 401 ? { "www-authenticate": 'Bearer realm="afk-mcp"' } : {},
    );

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!options.allowedHosts().includes(req.headers.host ?? ""))
      return refuse(res, 403, "forbidden: this dashboard answers only on 127.0.0.1 and localhost (a foreign Host header)");
    if (req.method !== "GET" && req.method !== "HEAD") return refuse(res, 405, "method not allowed");
    const url = new URL(req.url ?? "/", "http://x");
    const link = url.searchParams.get("token");
    if (url.pathname === "/" && link !== null) {
      if (!same(link, options.token)) return refuse(res, 401, "wrong token: open the link afk-mcp printed at start");
      url.searchParams.delete("token");
      const rest = url.searchParams.toString();
      res.writeHead(303, {
        location: `/${rest ? `?${rest}` : ""}`,
        "set-cookie": `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      });
      res.end();
      return;
    }
    const cookie = cookieOf(req);
    if (!(cookie !== null && same(cookie, session)) && !same(req.headers.authorization ?? "", bearer)) {
      return refuse(res, 401, "unauthorized: open the token link afk-mcp printed at start (/?token=…), or send Authorization: Bearer &lt;token&gt;");
    }
    const filter = parseFilter(url.searchParams);
    if (typeof filter === "string") return refuse(res, 400, filter);
    if (url.pathname === "/events") {
      if (req.method !== "GET") return refuse(res, 405, "method not allowed: /events is a GET stream");
      if (streams.size >= MAX_STREAMS) return refuse(res, 503, "too many open dashboards");
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" });
      res.write("retry: 2000\n\n");
      streams.add(res);
      watch();
      res.once("close", () => {
        streams.delete(res);
        unwatch();
      });
      return;
    }
    if (url.pathname !== "/" && url.pathname !== "/fragment") return refuse(res, 404, "not found: the dashboard is at /");
    const data = unsubscribe ? await cache.get(filter) : await cache.read(filter);
    const nonce = randomBytes(16).toString("base64");
    const body = url.pathname === "/" ? page(data, filter, nonce) : fragment(data, filter);
    if (Buffer.byteLength(body) > MAX_PAGE_BYTES) return refuse(res, 503, "this page would be too large: narrow it with ?repo=owner/name or ?issue=N");
    send(res, 200, body, {
      "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src-elem 'nonce-${nonce}'; style-src-attr 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    });
  };

  return {
    handle(req, res) {
      serve(req, res).catch((error: unknown) => {
        if (!res.headersSent) refuse(res, 500, `dashboard: ${error instanceof Error ? error.message.replace(/[&<>"']/g, "") : "internal error"}`);
        else res.end();
      });
    },
    streams: () => streams.size,
    close() {
      clearInterval(keepAlive);
      for (const res of streams) res.end();
      streams.clear();
      unwatch();
    },
  };
}
