// tools/call whose `arguments` is not an object (an array, a string, null) is a protocol error,
// answered as JSON-RPC says: -32602 "Invalid params" with one line naming what was sent. The SDK
// validates the request inside the tools/call handler it wraps and answers its own longer message,
// so the check goes in front of that: the server's handler for tools/call is wrapped once more,
// checked here first.
import { ProtocolError, ProtocolErrorCode, type McpServer } from "@modelcontextprotocol/server";

type Handler = (request: { params?: { name?: unknown; arguments?: unknown } }, ctx: unknown) => Promise<unknown>;

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
 * Call before the first registerTool: the SDK wraps every handler it installs through its
 * `_wrapHandler` hook (for tools/call: validating the call and its result); this puts the
 * arguments check in front of that wrapper, for that one method.
 */
export function guardToolArguments(server: McpServer): void {
  const inner = server.server as unknown as { _wrapHandler(method: string, handler: Handler): Handler };
  const wrap = inner._wrapHandler.bind(inner);
  inner._wrapHandler = (method, handler) => {
    const wrapped = wrap(method, handler);
    if (method !== "tools/call") return wrapped;
    return async (request, ctx) => {
      const problem = argumentsProblem(String(request.params?.name), request.params?.arguments);
      if (problem) throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem);
      return wrapped(request, ctx);
    };
  };
}
