// tools/call whose `arguments` is not an object (an array, a string, null) is a protocol error,
// answered as JSON-RPC says: -32602 "Invalid params" with one line naming what was sent. The SDK
// parses the request before any handler runs and answers a zod failure as -32603 with the raw
// issue list, so the check goes in front of its parse: the server's own tools/call handler is
// installed through a request schema whose `arguments` accepts anything, checked here first.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestParamsSchema, CallToolRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * tools/call as parsed before any handler: `arguments` of any type, refused here, from inside the
 * parse, with an McpError (zod lets an exception thrown by a transform through, and the SDK answers
 * an error that carries a code with that code).
 */
const GUARDED_CALL = CallToolRequestSchema.extend({
  params: CallToolRequestParamsSchema.extend({ arguments: z.unknown().optional() }).transform((params) => {
    const problem = argumentsProblem(String(params.name), params.arguments);
    if (problem) throw new McpError(ErrorCode.InvalidParams, problem);
    return params;
  }),
});

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length} element(s)`;
  return `a ${typeof value}`;
}

/** Why `args` cannot be a tool's arguments, or null when it can (an object, or absent). */
export function argumentsProblem(tool: string, args: unknown): string | null {
  if (args === undefined || (typeof args === "object" && args !== null && !Array.isArray(args))) return null;
  return `Invalid params: tools/call ${tool}: "arguments" must be an object of named arguments (e.g. {"repo": "owner/name"}), got ${kindOf(args)}`;
}

/**
 * Call before the first registerTool: the SDK installs its tools/call handler then, through
 * setRequestHandler, which this gives the guarded request schema for that one method (the SDK's
 * own validation of the call and of its result still wraps the handler).
 */
export function guardToolArguments(server: McpServer): void {
  const inner = server.server;
  const install = inner.setRequestHandler.bind(inner);
  inner.setRequestHandler = ((schema: unknown, handler: unknown) =>
    install((schema === CallToolRequestSchema ? GUARDED_CALL : schema) as never, handler as never)) as typeof inner.setRequestHandler;
}
