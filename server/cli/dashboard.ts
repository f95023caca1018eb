// `afk-mcp dashboard`: the web dashboard alone (no MCP endpoint), over this machine's daemon, on
// 127.0.0.1 with a bearer token; the token link it prints logs a browser in once (a cookie).
import type { Command } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { UsageError } from "../gh/errors.js";
import { watchShutdown } from "../host/shutdown.js";
import { serveHttp } from "../http.js";

export const dashboardCommand: Command = {
  name: "dashboard",
  summary: "serve the live web dashboard (fleets, workers, timelines, report, ledger) on 127.0.0.1",
  usage: `Usage: afk-mcp dashboard [--port PORT]

Serves a live web page of this machine's fleets: each one's state (running, paused and why),
its workers in flight, the newest issues' timelines as a chart, the final report as of now and
the ledger (filter with ?issue=N, ?event=KIND, ?repo=OWNER/NAME for a repository no fleet runs).
It updates itself when a board changes. Loopback only; open the token link printed at start
(stderr) once: it sets a cookie. "afk-mcp --http PORT" serves the same page at / beside /mcp.

Options:
  --port PORT   the port (default 0: any free one); the token is AFK_HTTP_TOKEN's value when set`,
  options: { port: { type: "string" } },
  async run(values) {
    const text = typeof values.port === "string" ? values.port : "0";
    const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
    if (!(port >= 0 && port <= 65535)) throw new UsageError(`--port: expected a port number (0-65535; 0 picks a free one), got ${JSON.stringify(text)}`);
    const host = new DaemonClient();
    const token = process.env.AFK_HTTP_TOKEN || undefined;
    const serving = await serveHttp(host, port, { mcp: false, ...(token ? { token } : {}) });
    const shutdown = watchShutdown({
      say: (line) => process.stderr.write(`afk-mcp: ${line}\n`),
      abandon: async () => "the dashboard holds no worker and no claim: the daemon does",
      stopping: "the dashboard stops; the daemon's fleets run on",
    });
    process.stderr.write(`afk-mcp: dashboard at ${serving.dashboardUrl}?token=${serving.token} (127.0.0.1 only)\n`);
    await shutdown.requested;
    await serving.close();
    await host.close();
    shutdown.dispose();
    return 0;
  },
};
