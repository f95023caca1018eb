// createServer(host): builds the MCP server around a host; the binary only picks the
// transport. A read-only server registers no tool that changes anything.
import { McpServer } from "@modelcontextprotocol/server";
import type { Host } from "./host/api.js";
import { isReadOnly, type Tool } from "./tools/define.js";
import { statusTool } from "./tools/status.js";
import { takeoverTool } from "./tools/takeover.js";
import { projectStartTool } from "./tools/project-start.js";
import { projectResizeTool } from "./tools/project-resize.js";
import { projectStopTool } from "./tools/project-stop.js";
import { projectResetTool } from "./tools/project-reset.js";
import { logsTool } from "./tools/logs.js";
import { version } from "./version.js";
import { BOARD_APP_URI, registerResources } from "./tools/resources.js";
import { boardApp } from "./dashboard/app.js";
import { registerPrompts } from "./tools/prompts.js";
import { serveToolList } from "./tools/listing.js";
import { guardToolArguments } from "./tools/call-params.js";

export const TOOLS: readonly Tool[] = [projectStartTool, projectResizeTool, projectStopTool, projectResetTool, statusTool, logsTool, takeoverTool];

export interface ServerOptions {
  /** Register only the read-only tools (a monitoring session). */
  readOnly?: boolean;
  /**
   * The revision this instance serves (the SDK's serving entries say, per connection on stdio
   * and per request over HTTP): "legacy" is 2025-11-25 with its handshake, "modern" 2026-07-28.
   */
  era?: "legacy" | "modern";
}

export function createServer(host: Host, options: ServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: "afk-mcp", version },
    {
      // Logging is declared here: the SDK answers logging/setLevel only for a server built with it.
      capabilities: { logging: {} },
      instructions:
        "afk-mcp runs an unattended fleet of coding agents over a GitHub repository's issue backlog. " +
        "Call status {repo} first: it shows the dry-run plan and any failed precondition with its fix. " +
        "A running fleet's board is the resource afk://{owner}/{name}/board (subscribe for updates); supervisor warnings arrive as log messages (2025-11-25) and in the logs tool.",
    },
  );
  guardToolArguments(server);
  const tools = TOOLS.filter((tool) => !options.readOnly || isReadOnly(tool));
  for (const tool of tools) tool.register(server, host);
  serveToolList(
    server,
    tools.map((tool) => tool.listing),
  );
  registerResources(server, host, options.era ?? "legacy");
  // The board as an MCP App, which status and the board resource link (server/dashboard/app.ts).
  const app = boardApp(host, BOARD_APP_URI, version);
  server.registerResource("board-app", BOARD_APP_URI, app.metadata, app.read);
  registerPrompts(server, host);
  return server;
}
