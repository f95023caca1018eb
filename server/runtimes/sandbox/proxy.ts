// The sandbox's only way out, run by the launcher outside the sandbox: an HTTP proxy on a Unix
// socket (bound into the sandbox, where socat serves it on 127.0.0.1) that lets through CONNECT
// tunnels and plain-HTTP requests to allowed hosts only, and one raw forwarder per allowed
// loopback port (the sandbox's own 127.0.0.1 is not the host's). A refused request gets 403 and
// a line on stderr (the worker lane), so a blocked worker says why.
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { connect, createServer as createNetServer, type Server as NetServer, type Socket } from "node:net";
import { hostAllowed, type HostRule } from "./hosts.js";

export interface ProxyEvents {
  refused(host: string, port: number): void;
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  if (!match) return null;
  return { host: match[1]!.replace(/^\[|\]$/g, ""), port: match[2] === undefined ? defaultPort : Number(match[2]) };
}

/** Serves the allowlist proxy on `socketPath`. */
export function startProxy(socketPath: string, rules: readonly HostRule[], events: ProxyEvents): Promise<Server> {
  const server = createHttpServer((req: IncomingMessage, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("afk-mcp sandbox: only absolute http:// URLs are proxied\n");
      return;
    }
    const port = url.port === "" ? 80 : Number(url.port);
    if (url.protocol !== "http:" || !hostAllowed(rules, url.hostname, port)) {
      events.refused(url.hostname, port);
      res.writeHead(403).end(`afk-mcp sandbox: ${url.hostname}:${port} is not in the allowlist (sandbox.allow_hosts)\n`);
      return;
    }
    const upstream = httpRequest(
      { host: url.hostname.replace(/^\[|\]$/g, ""), port, method: req.method, path: `${url.pathname}${url.search}`, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = splitHostPort(req.url ?? "", 443);
    if (!target || !hostAllowed(rules, target.host, target.port)) {
      events.refused(target?.host ?? String(req.url), target?.port ?? 0);
      client.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    const upstream = connect(target.port, target.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n"));
    client.on("error", () => upstream.destroy());
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  return listen(server, socketPath);
}

/** Forwards every connection on `socketPath` to 127.0.0.1:`port` on the host. */
export function startForward(socketPath: string, port: number): Promise<NetServer> {
  const server = createNetServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.pipe(client);
    client.pipe(upstream);
  });
  return listen(server, socketPath);
}

function listen<S extends NetServer>(server: S, socketPath: string): Promise<S> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
