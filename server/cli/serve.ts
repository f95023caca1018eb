// `afk-mcp` (or `afk-mcp serve`): the MCP server on stdio. From here on stdout carries only
// JSON-RPC; diagnostics go to stderr.
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import type { Command } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { createServer } from "../server.js";
import { UsageError } from "../gh/errors.js";
import { watchShutdown } from "../host/shutdown.js";
import { serveHttp } from "../http.js";

/**
 * AFK_TIME_SCALE (0 < x <= 1) shortens the loop's pacing and thresholds: for tests and
 * demos on a local forge, never for a real fleet.
 */
export function timeScaleFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.AFK_TIME_SCALE;
  if (raw === undefined || raw === "") return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1) throw new UsageError(`AFK_TIME_SCALE must be a number in (0, 1], got ${JSON.stringify(raw)}`);
  return scale;
}

/**
 * What a closing MCP server does: it holds no fleet (the daemon does), so nothing drains; it
 * stops renewing, and what it started lapses after its TTL unless another session renews it.
 */
const SESSION_STOPPING =
  "this session stops renewing its registrations; the daemon's fleets and workers run on, and a registration no other session renews lapses after registration.ttl_seconds and drains";

export const serveCommand: Command = {
  name: "serve",
  summary: "serve the MCP tools on stdio (the default with no command)",
  usage: `Usage: afk-mcp [serve] [--read-only] [--http PORT]

Serves the MCP tools on stdio; an MCP client (Claude Code, Codex, the MCP inspector) starts
it with "npx afk-mcp". Every call goes to this machine's afk-mcp daemon, started on the first
call that needs it (see "afk-mcp daemon --help"); status and logs work without one. Credentials: GITHUB_TOKEN, else GH_TOKEN, else "gh auth token";
GITHUB_API_URL for GitHub Enterprise or the local forge.

Options:
  --read-only   register only the read-only tools (status, logs): a monitoring session
  --http PORT   serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio (0: any
                free port); every request needs the bearer token printed at start (stderr),
                or AFK_HTTP_TOKEN's value when set; the web dashboard is at / (see
                "afk-mcp dashboard --help")`,
  options: { "read-only": { type: "boolean" }, http: { type: "string" } },
  async run(values) {
    if (values.http !== undefined) return serveOverHttp(String(values.http), values["read-only"] === true);
    // A thin client: the fleet lives in the per-machine daemon, so closing this session (or
    // killing it) touches no worker. What it started lapses once it stops renewing.
    timeScaleFromEnv(process.env);
    const host = new DaemonClient();
    const readOnly = values["read-only"] === true;
    // stdout is the protocol: the operator's lines go to stderr.
    const say = (line: string) => void process.stderr.write(`afk-mcp: ${line}\n`);
    const shutdown = watchShutdown({
      say,
      abandon: async () => "this session holds no worker and no claim: the daemon does",
      stopping: SESSION_STOPPING,
      stdin: process.stdin,
    });
    // Both revisions on the one pipe: the SDK's serveStdio reads the opening message (initialize
    // for 2025-11-25, server/discover or a request with the _meta envelope for 2026-07-28) and
    // pins one server from this factory to the connection.
    const transport = new StdioServerTransport();
    whenClosed(transport, () => shutdown.request("closed"));
    const serving = serveStdio(
      ({ era }) => {
        // A 2026 client makes no resources/subscribe call that would reach the daemon: reach it
        // now (never starting one), so the board's updates reach subscriptions/listen.
        if (era === "modern") void host.listen?.().catch(() => undefined);
        return createServer(host, { readOnly, era });
      },
      { transport, onerror: (error) => say(`protocol: ${error.message}`) },
    );
    await shutdown.requested;
    // Only the renewals stop: the registrations this session made lapse after their TTL. The
    // daemon connection closes with them, so a call still under way there is abandoned (the
    // daemon finishes it or not, as for a session killed), and the session opens no other.
    await host.close();
    await serving.close();
    shutdown.dispose();
    abandonStragglers(say);
    return 0;
  },
};

/** Calls `then` when the transport closes, whoever (the SDK's serving entry) set its onclose. */
function whenClosed(transport: StdioServerTransport, then: () => void): void {
  let own: (() => void) | undefined;
  Object.defineProperty(transport, "onclose", {
    configurable: true,
    get: () => () => {
      own?.();
      then();
    },
    set: (handler: (() => void) | undefined) => (own = handler),
  });
}

/**
 * How long a closed stdio session waits for what it cannot cancel to end by itself (a GitHub
 * request or a git call of a read made with no daemon) before it exits anyway.
 */
const STRAGGLER_GRACE_MS = 1_000;

/** The last step of a closed session: exit once nothing is left, or after the grace, saying what was abandoned. */
function abandonStragglers(say: (line: string) => void): void {
  const timer = setTimeout(() => {
    say(
      `exiting: ${
        process
          .getActiveResourcesInfo()
          .filter((r) => r !== "Timeout")
          .join(", ") || "nothing"
      } still open ${STRAGGLER_GRACE_MS} ms after the client went away; calls under way were abandoned`,
    );
    process.exit(0);
  }, STRAGGLER_GRACE_MS);
  timer.unref();
}

async function serveOverHttp(portText: string, readOnly: boolean): Promise<number> {
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--http: expected a port number (0-65535; 0 picks a free one), got ${JSON.stringify(portText)}`);
  timeScaleFromEnv(process.env);
  const host = new DaemonClient();
  const token = process.env.AFK_HTTP_TOKEN || undefined;
  const serving = await serveHttp(host, port, { readOnly, ...(token ? { token } : {}) });
  const shutdown = watchShutdown({
    say: (line) => process.stderr.write(`afk-mcp: ${line}\n`),
    abandon: async () => "this server holds no worker and no claim: the daemon does",
    stopping: SESSION_STOPPING,
  });
  process.stderr.write(
    `afk-mcp: MCP over Streamable HTTP at ${serving.url} (127.0.0.1 only)\nafk-mcp: bearer token: ${serving.token}\nafk-mcp: dashboard: ${serving.dashboardUrl}?token=${serving.token}\n`,
  );
  await shutdown.requested;
  await serving.close();
  await host.close();
  shutdown.dispose();
  return 0;
}
