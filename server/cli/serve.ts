// `afk-mcp` (or `afk-mcp serve`): the MCP server on stdio. From here on stdout carries only
// JSON-RPC; diagnostics go to stderr.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Command } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { createServer } from "../server.js";
import { UsageError } from "../gh/errors.js";
import { watchShutdown } from "../host/shutdown.js";

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

export const serveCommand: Command = {
  name: "serve",
  summary: "serve the MCP tools on stdio (the default with no command)",
  usage: `Usage: afk-mcp [serve] [--read-only]

Serves the MCP tools on stdio; an MCP client (Claude Code, Codex, the MCP inspector) starts
it with "npx afk-mcp". Every call goes to this machine's afk-mcp daemon, started on the first
call that needs it (see "afk-mcp daemon --help"); status and logs work without one. Credentials: GITHUB_TOKEN, else GH_TOKEN, else "gh auth token";
GITHUB_API_URL for GitHub Enterprise or the local forge.

Options:
  --read-only   register only the read-only tools (status, logs): a monitoring session`,
  options: { "read-only": { type: "boolean" } },
  async run(values) {
    // A thin client: the fleet lives in the per-machine daemon, so closing this session (or
    // killing it) touches no worker. What it started lapses once it stops renewing.
    timeScaleFromEnv(process.env);
    const host = new DaemonClient();
    const server = createServer(host, { readOnly: values["read-only"] === true });
    // stdout is the protocol: the operator's lines go to stderr.
    const shutdown = watchShutdown({
      say: (line) => process.stderr.write(`afk-mcp: ${line}\n`),
      abandon: async () => "this session holds no worker and no claim: the daemon does",
      stdin: process.stdin,
    });
    const transport = new StdioServerTransport();
    transport.onclose = () => shutdown.request("closed");
    await server.connect(transport);
    await shutdown.requested;
    // Only the renewals stop: the registrations this session made lapse after their TTL.
    await host.close();
    await server.close();
    shutdown.dispose();
    return 0;
  },
};
