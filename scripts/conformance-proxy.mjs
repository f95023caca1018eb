// Loopback proxy for the official MCP conformance suite (docs/mcp-conformance.md): the suite cannot send a bearer token, so this adds it and forwards.
// Usage: node scripts/conformance-proxy.mjs LISTEN_PORT AFK_HTTP_PORT TOKEN
// The Host header is rewritten to the server's own only when it names this proxy; any other Host
// (the suite's DNS-rebinding check sends a foreign one) is passed on unchanged for the server to judge.
import http from "node:http";
const [listen, target, token] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const own = new Set([`127.0.0.1:${listen}`, `localhost:${listen}`]);
http
  .createServer((req, res) => {
    const host = own.has(req.headers.host ?? "") ? `127.0.0.1:${target}` : req.headers.host;
    const up = http.request(
      { host: "127.0.0.1", port: target, path: req.url, method: req.method, headers: { ...req.headers, host, authorization: `Bearer ${token}` } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  })
  .listen(listen, "127.0.0.1");
