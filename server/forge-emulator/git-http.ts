// Git's smart HTTP protocol at `/<owner>/<name>.git`, served by `git http-backend` as a CGI
// program: the request body streams into it, its CGI headers become the response headers.
// Clone and fetch are anonymous; push needs a token. After a push completes, and before the
// response ends, the forge brings pull requests up to date, so that when `git push` returns,
// the REST API already shows the new heads and any merges.
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parsePushCommands, refusalReport, type PushCommands } from "./pkt-line.js";
import type { ForgeUrls } from "./render.js";

const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?(\/(?:info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/[0-9a-zA-Z/._-]+))$/;

/** The CGI PATH_INFO for a git request to this forge's repository, or null for other paths. */
export function gitPathInfo(rawPath: string, urls: ForgeUrls): string | null {
  const m = GIT_PATH.exec(rawPath);
  if (!m) return null;
  if (m[1]!.toLowerCase() !== urls.owner.toLowerCase() || m[2]!.toLowerCase() !== urls.name.toLowerCase()) return null;
  return `/${urls.name}.git${m[3]}`;
}

export function isReceivePack(pathInfo: string, query: URLSearchParams): boolean {
  return pathInfo.endsWith("/git-receive-pack") || (pathInfo.endsWith("/info/refs") && query.get("service") === "git-receive-pack");
}

export interface GitRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** Directory holding `<name>.git`. */
  projectRoot: string;
  pathInfo: string;
  queryString: string;
  /** The authenticated pusher, if any. */
  remoteUser: string | null;
  /** Runs after a receive-pack finished and before the response ends. */
  afterPush: () => Promise<void>;
  /** Decides on a push from its command list before git sees it; a refusal changes nothing. */
  screenPush?: (cmds: PushCommands) => { reasons: Map<string, string>; message: string } | null;
}

interface PushPrefix {
  /** The bytes read so far, to be replayed to the backend. */
  buffered: Buffer;
  cmds: PushCommands | null;
  ended: boolean;
}

/** Reads a receive-pack body up to the end of its command list, then pauses it. */
function readPushCommands(req: IncomingMessage): Promise<PushPrefix> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const finish = (cmds: PushCommands | null, ended: boolean): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", reject);
      req.pause();
      resolve({ buffered: buf, cmds, ended });
    };
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      let cmds: PushCommands | null;
      try {
        cmds = parsePushCommands(buf);
      } catch {
        // Not ours to judge: let git answer the malformed request.
        finish(null, false);
        return;
      }
      if (cmds) finish(cmds, false);
    };
    const onEnd = (): void => finish(null, true);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", reject);
  });
}

export async function serveGit(g: GitRequest): Promise<void> {
  const { req, res } = g;
  const receive = isReceivePack(g.pathInfo, new URLSearchParams(g.queryString)) && req.method === "POST";
  let prefix: PushPrefix | null = null;
  // A gzip-encoded push cannot be screened cheaply; git never compresses push requests.
  if (receive && g.screenPush && !req.headers["content-encoding"]) {
    prefix = await readPushCommands(req);
    const refusal = prefix.cmds ? g.screenPush(prefix.cmds) : null;
    if (refusal && prefix.cmds) {
      req.resume();
      res.writeHead(200, { "content-type": "application/x-git-receive-pack-result", "cache-control": "no-cache" });
      res.end(refusalReport(prefix.cmds, refusal.reasons, refusal.message));
      return;
    }
  }
  return runBackend(g, receive, prefix);
}

function runBackend(g: GitRequest, receive: boolean, prefix: PushPrefix | null): Promise<void> {
  const { req, res } = g;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    LC_ALL: "C",
    GIT_PROJECT_ROOT: g.projectRoot,
    GIT_HTTP_EXPORT_ALL: "1",
    PATH_INFO: g.pathInfo,
    REQUEST_METHOD: req.method ?? "GET",
    QUERY_STRING: g.queryString,
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    SERVER_PROTOCOL: "HTTP/1.1",
    GATEWAY_INTERFACE: "CGI/1.1",
  };
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
  // http-backend inflates gzip request bodies itself when told about them.
  if (req.headers["content-encoding"]) env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
  const proto = req.headers["git-protocol"];
  if (typeof proto === "string") env.HTTP_GIT_PROTOCOL = proto;
  if (g.remoteUser) env.REMOTE_USER = g.remoteUser;

  return new Promise((resolve) => {
    const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.on("error", () => {
      // The backend may stop reading early (e.g. on a bad request): not our failure.
    });
    if (prefix) child.stdin.write(prefix.buffered);
    if (prefix?.ended) child.stdin.end();
    else req.pipe(child.stdin);

    let head = Buffer.alloc(0);
    let headersSent = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersSent) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const split = findHeaderEnd(head);
      if (!split) return;
      const { status, headers } = parseCgiHeaders(head.subarray(0, split.at).toString("latin1"));
      res.writeHead(status, headers);
      headersSent = true;
      const rest = head.subarray(split.at + split.length);
      if (rest.length > 0) res.write(rest);
    });

    let finished = false;
    const finish = async (code: number | null): Promise<void> => {
      if (finished) return;
      finished = true;
      if (receive) {
        try {
          await g.afterPush();
        } catch (err) {
          console.error(`local forge: bookkeeping after push failed: ${(err as Error).message}`);
        }
      }
      if (!headersSent) {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(`git http-backend failed (exit ${code}): ${stderr.trim()}\n`);
      } else {
        res.end();
      }
      resolve();
    };
    child.on("error", (err) => {
      stderr += err.message;
      void finish(null);
    });
    child.on("close", (code) => void finish(code));
  });
}

function findHeaderEnd(buf: Buffer): { at: number; length: number } | null {
  const crlf = buf.indexOf("\r\n\r\n");
  const lf = buf.indexOf("\n\n");
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return null;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i <= 0) continue;
    const key = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (key.toLowerCase() === "status") status = Number.parseInt(value, 10) || 200;
    else headers[key] = value;
  }
  return { status, headers };
}
