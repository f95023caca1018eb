// The HTTP front door. One request flows: control surface or git or REST; for REST:
// authenticate, match a route, spend rate limit, inject faults, refuse anonymous writes,
// run the handler, then add what GitHub adds to every answer (ETag and 304, rate-limit
// headers, request id, Link) and account for it.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { runTokenUser } from "./actions-runner.js";
import { recordPush } from "./activity.js";
import { handleControl } from "./control.js";
import type { ForgeEmulator } from "./core.js";
import { gitPathInfo, isReceivePack, serveGit } from "./git-http.js";
import { HttpError, DOCS_URL } from "./http-errors.js";
import { RequestMemo } from "./memo.js";
import { syncPulls } from "./pull-sync.js";
import { advanceQueues, kickQueues } from "./merge-queue.js";
import { pushRefusal } from "./push-policy.js";
import type { RefCommand } from "./pkt-line.js";
import { rateLimitHeaders } from "./ratelimit.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { isoNow, type UserRecord } from "./state.js";

export interface ResponseRecord {
  method: string;
  /** Decoded path without the query. */
  path: string;
  rawPath: string;
  status: number;
  body: unknown;
  /** Whose token made the request ("" when anonymous). */
  login: string;
  /** Whether it cost rate limit (a 304 or a /rate_limit read does not). */
  counted: boolean;
}

export type ResponseObserver = (r: ResponseRecord) => void;

const MAX_BODY = 25 * 1024 * 1024;

/** Writes a read-only collaborator may still make on a public repository: open issues and comment. */
const READ_ACCESS_WRITES = new Set(["POST /repos/{owner}/{repo}/issues", "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"]);

type Auth = { kind: "none" } | { kind: "user"; user: UserRecord } | { kind: "invalid" };

/** `token X`, `Bearer X`, or Basic with the token as password (or as user name). */
export function authenticate(forge: ForgeEmulator, header: string | undefined): Auth {
  if (!header) return { kind: "none" };
  const [scheme = "", ...rest] = header.trim().split(/\s+/);
  const value = rest.join(" ");
  let candidates: string[] = [];
  const s = scheme.toLowerCase();
  if (s === "token" || s === "bearer") {
    candidates = [value];
  } else if (s === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const i = decoded.indexOf(":");
    candidates = i < 0 ? [decoded] : [decoded.slice(i + 1), decoded.slice(0, i)];
  }
  for (const c of candidates) {
    // A workflow run's token (GITHUB_TOKEN) is valid while its run is in progress.
    const user = c ? (forge.state.userByToken(c) ?? runTokenUser(forge, c)) : undefined;
    if (user) return { kind: "user", user };
  }
  return { kind: "invalid" };
}

function requestId(): string {
  const h = randomBytes(10).toString("hex").toUpperCase();
  return `${h.slice(0, 4)}:${h.slice(4, 8)}:${h.slice(8, 14)}:${h.slice(14, 20)}:${Math.floor(Date.now() / 1000)
    .toString(16)
    .toUpperCase()}`;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, "Request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, "Problems parsing JSON");
  }
}

function asObject(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function errorReply(err: unknown): Reply {
  if (err instanceof HttpError) return { status: err.status, body: err.body(), headers: err.headers };
  console.error(`local forge: handler failed: ${(err as Error)?.stack ?? String(err)}`);
  return { status: 500, body: { message: "Server Error", documentation_url: DOCS_URL, status: "500" } };
}

function safeDecodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function createRequestHandler(forge: ForgeEmulator, router: Router, onResponse?: ResponseObserver): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(forge, router, req, res, onResponse).catch((err: unknown) => {
      console.error(`local forge: request failed: ${(err as Error)?.stack ?? String(err)}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end();
    });
  };
}

async function handle(forge: ForgeEmulator, router: Router, req: IncomingMessage, res: ServerResponse, onResponse?: ResponseObserver): Promise<void> {
  const method = (req.method ?? "GET").toUpperCase();
  const url = new URL(req.url ?? "/", "http://forge.invalid");
  const rawPath = url.pathname;
  const requestBase = `http://${req.headers.host ?? new URL(forge.urls.api).host}`;
  res.setHeader("x-github-request-id", requestId());

  if (rawPath === "/_forge" || rawPath.startsWith("/_forge/")) {
    let reply: Reply;
    try {
      reply = await handleControl(forge, method, rawPath, asObject(parseJson(await readBody(req))));
    } catch (err) {
      reply = errorReply(err);
    }
    send(res, reply.status, reply.headers ?? {}, reply.body);
    return;
  }

  const auth = authenticate(forge, req.headers.authorization);
  const pathInfo = gitPathInfo(rawPath, forge.urls);
  if (pathInfo !== null) {
    const needsAuth = isReceivePack(pathInfo, url.searchParams);
    if (auth.kind === "invalid" || (needsAuth && auth.kind !== "user")) {
      req.resume();
      res.writeHead(401, { "www-authenticate": 'Basic realm="afk-forge"', "content-type": "text/plain" });
      res.end(auth.kind === "invalid" ? "Bad credentials\n" : "Authentication required to push\n");
      return;
    }
    if (needsAuth && auth.kind === "user" && !forge.canPush(auth.user)) {
      // GitHub answers a push without write access with 403 and this text, which git prints.
      req.resume();
      res.writeHead(403, { "content-type": "text/plain" });
      res.end(`Permission to ${forge.urls.fullName}.git denied to ${auth.user.login}.\n`);
      return;
    }
    const pushUser = auth.kind === "user" ? auth.user : null;
    const pusher = pushUser?.login ?? null;
    // The commands of a push git was let to receive; those that landed go to GET /activity.
    let commands: RefCommand[] = [];
    // The exchange itself is a POST; the GET of info/refs only advertises refs.
    if (method === "POST") forge.accounting.recordGit(needsAuth ? "receive-pack" : "upload-pack");
    await serveGit({
      req,
      res,
      projectRoot: forge.dir,
      pathInfo,
      queryString: url.search.slice(1),
      remoteUser: pusher,
      screenPush: pushUser
        ? (cmds) => {
            const refusal = pushRefusal(forge, pushUser, cmds.commands);
            if (!refusal) commands = cmds.commands;
            return refusal;
          }
        : undefined,
      afterPush: () =>
        forge.writeLock.run(async () => {
          await recordPush(forge, pushUser, commands);
          forge.state.data.pushedAt = isoNow();
          forge.state.changed();
          await syncPulls(forge, pusher ?? forge.urls.owner);
          await advanceQueues(forge);
        }),
    });
    return;
  }

  const user = auth.kind === "user" ? auth.user : null;
  const budgetKey = user?.login ?? "";
  const match = router.match(method === "HEAD" ? "GET" : method, rawPath);
  const routeKey = match ? match.key : `${method} (unmatched)`;
  let answer: Answer;
  let spend = routeKey !== "GET /rate_limit";
  try {
    if (auth.kind === "invalid") throw new HttpError(401, "Bad credentials");
    if (!match) throw new HttpError(404, "Not Found");
    const { owner, repo } = match.params;
    if (owner !== undefined && (owner.toLowerCase() !== forge.urls.owner.toLowerCase() || repo?.toLowerCase() !== forge.urls.name.toLowerCase())) {
      throw new HttpError(404, "Not Found");
    }
    const budget = forge.rateLimits.peek(budgetKey);
    if (spend && budget.remaining === 0) {
      spend = false;
      throw new HttpError(
        403,
        user
          ? `API rate limit exceeded for user ID ${user.id}.`
          : "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit.)",
      );
    }
    await forge.faults.apply(routeKey, rawPath);
    const writes = method !== "GET" && method !== "HEAD";
    if (writes && !user) throw new HttpError(401, "Requires authentication");
    if (writes && user && owner !== undefined && !forge.canPush(user) && !READ_ACCESS_WRITES.has(routeKey)) {
      throw new HttpError(403, "Resource not accessible by personal access token");
    }
    const cacheKey = !writes && match.route.stateOnly ? `${requestBase}${req.url ?? ""}` : null;
    const revision = forge.state.revision;
    const cached = cacheKey === null ? undefined : forge.responses.get(revision, cacheKey);
    if (cached) {
      answer = { status: 200, ...cached };
    } else {
      const raw = writes ? parseJson(await readBody(req)) : {};
      const ctx: RequestContext = {
        forge,
        method,
        params: match.params,
        query: url.searchParams,
        body: asObject(raw),
        rawBody: raw,
        user,
        requestBase,
        rawPath,
        memo: new RequestMemo(forge.git),
      };
      answer = finish(await match.route.handler(ctx), method);
      // A check concluding, a ref moving, a PR closing: the merge queues may move on.
      if (writes && answer.status < 400) await kickQueues(forge);
      if (cacheKey !== null && answer.status === 200 && answer.etag) {
        forge.responses.set(revision, cacheKey, { body: answer.body, text: answer.text ?? "", etag: answer.etag, headers: answer.headers });
      }
    }
  } catch (err) {
    answer = finish(errorReply(err), method);
  }
  if (!req.readableEnded) req.resume();

  const headers: Record<string, string> = {
    ...answer.headers,
    "x-github-api-version-selected": "2022-11-28",
    "x-github-media-type": "github.v3; format=json",
    ...(user?.scopes ? { "x-oauth-scopes": user.scopes.join(", ") } : {}),
  };
  let status = answer.status;
  let body = answer.body;
  let text: string | undefined = answer.text;
  if (answer.etag) {
    headers.etag = answer.etag;
    headers["cache-control"] = user ? "private, max-age=60, s-maxage=60" : "public, max-age=60, s-maxage=60";
    headers.vary = "Accept, Authorization, Cookie, X-GitHub-OTP";
    if (etagMatches(req.headers["if-none-match"], answer.etag)) {
      status = 304;
      body = undefined;
      text = undefined;
      // A conditional hit costs no rate limit: that is the point of sending If-None-Match.
      spend = false;
    }
  }
  const budget = spend ? forge.rateLimits.spend(budgetKey) : forge.rateLimits.peek(budgetKey);
  Object.assign(headers, rateLimitHeaders(budget));
  forge.accounting.record(routeKey, status, spend, method !== "GET" && method !== "HEAD", user?.login ?? "");
  send(res, status, headers, body === undefined ? undefined : text, method === "HEAD");
  onResponse?.({ method, path: safeDecodePath(rawPath), rawPath, status, body: body === undefined ? null : body, login: user?.login ?? "", counted: spend });
}

/** A reply serialised once: its JSON text and, for a successful GET, the ETag of that text. */
interface Answer {
  status: number;
  body: unknown;
  text: string | undefined;
  etag: string | undefined;
  headers: Record<string, string>;
}

function finish(reply: Reply, method: string): Answer {
  const text = reply.body === undefined ? undefined : JSON.stringify(reply.body);
  const etag =
    (method === "GET" || method === "HEAD") && reply.status === 200
      ? `W/"${createHash("sha1")
          .update(text ?? "")
          .digest("hex")}"`
      : undefined;
  return { status: reply.status, body: reply.body, text, etag, headers: reply.headers ?? {} };
}

function etagMatches(header: string | string[] | undefined, etag: string): boolean {
  if (!header) return false;
  const list = (Array.isArray(header) ? header.join(",") : header).split(",").map((s) => s.trim());
  const bare = etag.replace(/^W\//, "");
  return list.some((t) => t === "*" || t === etag || t.replace(/^W\//, "") === bare);
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown, headOnly = false): void {
  const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  if (text !== undefined && status !== 204 && status !== 304) {
    headers["content-type"] ??= "application/json; charset=utf-8";
    headers["content-length"] = String(Buffer.byteLength(text));
  }
  res.writeHead(status, headers);
  res.end(headOnly || status === 204 || status === 304 ? undefined : text);
}
