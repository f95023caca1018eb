// `afk-mcp --http PORT`: the same MCP server over Streamable HTTP, for HTTP-only clients and
// the official conformance suite, in both revisions on one endpoint: a request that carries the
// 2026-07-28 envelope (its `_meta` protocol version) is served statelessly by the SDK's
// createMcpHandler, one server per request, with no session; everything else is 2025-11-25,
// sessionful as below. Loopback only; every request must carry the bearer token
// printed at start; the SDK's DNS-rebinding protection accepts only our own Host header. One
// McpServer per session, all over the one host (the SDK binds a server to one transport). A
// session its client left without a DELETE is closed once idle (no request, no open stream) for
// `sessionIdleMs`, so a server that runs for days does not keep every session it ever served.
// Every other path is the web dashboard (server/dashboard/), behind the same token and Host guard.
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, isInitializeRequest, isLegacyRequest, type EventStore, type JSONRPCMessage } from "@modelcontextprotocol/server";
import { NodeStreamableHTTPServerTransport as StreamableHTTPServerTransport, toNodeHandler, toWebRequest } from "@modelcontextprotocol/node";
import { createDashboard } from "./dashboard/serve.js";
import type { Host } from "./host/api.js";
import { createServer, type ServerOptions } from "./server.js";
import { boardUri } from "./tools/resources.js";

export interface HttpServing {
  /** The MCP endpoint (answering 404 when `mcp` is false). */
  url: string;
  /** The dashboard's page: open `dashboardUrl?token=…` once to log in. */
  dashboardUrl: string;
  token: string;
  /** The sessions open now. */
  sessionCount(): number;
  close(): Promise<void>;
}

export interface HttpOptions extends ServerOptions {
  token?: string;
  /** How long a session may go without a request or an open stream before it is closed (default 30 min). */
  sessionIdleMs?: number;
  /** Serve the MCP endpoint (default true); `afk-mcp dashboard` serves only the dashboard. */
  mcp?: boolean;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** Responses still open (an SSE stream a client listens on counts as activity). */
  open: number;
}

export async function serveHttp(host: Host, port: number, options: HttpOptions = {}): Promise<HttpServing> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const expected = Buffer.from(`Bearer ${token}`);
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sessions = new Map<string, Session>();
  let allowedHosts: string[] = [];
  const track = (session: Session, res: ServerResponse) => {
    session.lastSeen = Date.now();
    session.open += 1;
    res.once("close", () => {
      session.open -= 1;
      session.lastSeen = Date.now();
    });
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (session.open > 0 || now - session.lastSeen < idleMs) continue;
        sessions.delete(id);
        void session.transport.close().catch(() => undefined);
      }
    },
    Math.max(50, Math.min(60_000, Math.floor(idleMs / 4))),
  );
  sweep.unref();

  const authorized = (req: IncomingMessage): boolean => {
    const given = Buffer.from(req.headers.authorization ?? "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const refuse = (res: ServerResponse, status: number, message: string, challenge?: string) => {
    res.writeHead(status, { "content-type": "application/json", ...(challenge ? { "www-authenticate": challenge } : {}) });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  };

  // 2026-07-28: one server per request; the board's updates reach subscriptions/listen streams
  // through the handler's event bus (the legacy sessions get theirs from their own server).
  const modern = createMcpHandler(({ era }) => createServer(host, { ...options, era }), { legacy: "reject" });
  const modernNode = toNodeHandler(modern);
  // Subscribed to the host from the first such request on (a server that serves only 2025
  // sessions holds one host subscription per session, and none more).
  let unsubscribe: (() => void) | undefined;
  const serveModern = (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    unsubscribe ??= host.subscribe((event) => {
      if (event.kind === "board") modern.notify.resourceUpdated(boardUri(event.repo));
      else if (event.kind === "repos") modern.notify.resourcesChanged();
    });
    void host.listen?.().catch(() => undefined);
    return modernNode(req, res, body);
  };

  const dashboard = createDashboard(host, { token, allowedHosts: () => allowedHosts });
  const mcpOn = options.mcp !== false;
  const http = createHttpServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      // A client that takes the 401 for OAuth looks for its metadata and registration next: say there is none, and what to send.
      if (path.startsWith("/.well-known/oauth") || path === "/register") return refuse(res, 404, `afk-mcp uses no OAuth: ${TOKEN_FIX}`);
      if (path !== "/mcp") return dashboard.handle(req, res);
      if (!mcpOn) return refuse(res, 404, "not found: this server holds only the dashboard, at /");
      if (!authorized(req)) {
        const wrong = req.headers.authorization !== undefined;
        return refuse(res, 401, `${wrong ? "wrong" : "missing"} bearer token: ${TOKEN_FIX}`, bearerChallenge(wrong));
      }
      const id = req.headers["mcp-session-id"];
      if (typeof id !== "string" && req.method === "POST") {
        const body = await readJson(req);
        if (!(await isLegacyRequest(await toWebRequest(req, body), body))) {
          // 2026-07-28: no session to hold; the Host guard the legacy transport applies itself.
          if (!allowedHosts.includes(req.headers.host ?? "")) return refuse(res, 403, `Invalid Host header: ${req.headers.host ?? "(none)"}`);
          return serveModern(req, res, body);
        }
        return startSession(req, res, body);
      }
      const existing = typeof id === "string" ? sessions.get(id) : undefined;
      if (existing) {
        track(existing, res);
        return existing.transport.handleRequest(req, res);
      }
      // A session id we do not hold (closed, expired, or from before a restart): 404, which the
      // spec tells a client to answer with a new initialize.
      if (typeof id === "string") return refuse(res, 404, "session not found (closed or expired): start a new one with an initialize request");
      return refuse(res, 400, "no session: start with an initialize request, or send 2026-07-28 requests (with the _meta envelope) that need none");
    })().catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
    });
  });
  const startSession = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    if (!isInitializeRequest(body)) return refuse(res, 400, "no session: start with an initialize request");
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // A client whose SSE stream dropped resumes it with Last-Event-ID and misses nothing kept.
      eventStore: new BoundedEventStore(),
      enableDnsRebindingProtection: true,
      allowedHosts,
      onsessioninitialized: (sid) => {
        const session = { transport, lastSeen: Date.now(), open: 0 };
        sessions.set(sid, session);
        track(session, res);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const mcp = createServer(host, { ...options, era: "legacy" });
    await mcp.connect(transport);
    try {
      await transport.handleRequest(req, res, body);
    } finally {
      // An initialize the transport refused (a foreign Host header, a wrong Accept) made no
      // session: close its server, or it would keep its host subscription for ever.
      if (!transport.sessionId) await mcp.close();
    }
  };
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = [`127.0.0.1:${bound}`, `localhost:${bound}`];
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    dashboardUrl: `http://127.0.0.1:${bound}/`,
    token,
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      unsubscribe?.();
      dashboard.close();
      await modern.close();
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** What a client without the token (or with a wrong one) must do. */
const TOKEN_FIX =
  'send the header "Authorization: Bearer <token>", with the bearer token afk-mcp printed on stderr at start (or AFK_HTTP_TOKEN\'s value when set); e.g. claude mcp add --transport http afk <url> --header "Authorization: Bearer <token>"';

/**
 * The 401's WWW-Authenticate (RFC 6750): a Bearer challenge that names the token, and no
 * resource_metadata, since there is no OAuth server to discover. `invalid_token` only for a
 * token that was sent and is wrong (a request with none gets no error code, as the RFC says).
 */
export function bearerChallenge(wrong: boolean): string {
  const description = "afk-mcp takes the bearer token it printed at start (or AFK_HTTP_TOKEN): send Authorization: Bearer <token>; it uses no OAuth";
  return `Bearer realm="afk-mcp"${wrong ? ', error="invalid_token"' : ""}, error_description="${description}"`;
}

/** How much of its streams a session keeps for replay: the newest events, up to this many bytes. */
const REPLAY_BYTES = 4 * 1024 * 1024;

/**
 * SSE resumability for one session: every message sent on its streams is kept (the newest, up to
 * REPLAY_BYTES), so a client that reconnects with Last-Event-ID gets what it missed since that
 * event. An event no longer kept is refused as unknown (400), and the client starts afresh.
 */
export class BoundedEventStore implements EventStore {
  private readonly events: { id: string; stream: string; message: JSONRPCMessage; bytes: number }[] = [];
  private bytes = 0;
  private next = 0;

  constructor(private readonly maxBytes = REPLAY_BYTES) {}

  storeEvent(stream: string, message: JSONRPCMessage): Promise<string> {
    const id = `${stream}_${++this.next}`;
    const bytes = JSON.stringify(message).length + id.length;
    this.events.push({ id, stream, message, bytes });
    this.bytes += bytes;
    while (this.bytes > this.maxBytes && this.events.length > 1) this.bytes -= this.events.shift()!.bytes;
    return Promise.resolve(id);
  }

  getStreamIdForEventId(id: string): Promise<string | undefined> {
    return Promise.resolve(this.events.find((e) => e.id === id)?.stream);
  }

  async replayEventsAfter(lastId: string, { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.events.findIndex((e) => e.id === lastId);
    if (at < 0) throw new Error(`event ${lastId} is no longer kept: open a new stream`);
    const { stream } = this.events[at]!;
    for (const e of this.events.slice(at + 1)) if (e.stream === stream) await send(e.id, e.message);
    return stream;
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 4 * 1024 * 1024) throw new Error("request body over 4 MB");
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return null;
  }
}
