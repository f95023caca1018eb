// How a tool is declared: one kind (read / update / destructive) from which every MCP hint
// is derived, zod input and output schemas, and a short handler that calls the host.
// Expected failures (bad input, GitHub refusals, missing credentials) become `isError`
// results whose text names the problem and the fix; only bugs escape as exceptions.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Host } from "../host/api.js";
import { describeFailure } from "./failure.js";

export type ToolKind = "read" | "update" | "destructive";

export interface ToolDefinition<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  kind: ToolKind;
  /** Calling twice with the same arguments has no further effect. */
  idempotent?: boolean;
  input: I;
  output: O;
  handler(host: Host, args: z.infer<z.ZodObject<I>>): Promise<z.infer<z.ZodObject<O>>>;
  /** A short human rendering of the structured result (the `text` content). */
  render(result: z.infer<z.ZodObject<O>>): string;
}

export function annotationsFor(kind: ToolKind, idempotent = false, title?: string): ToolAnnotations {
  return {
    ...(title ? { title } : {}),
    readOnlyHint: kind === "read",
    destructiveHint: kind === "destructive",
    idempotentHint: kind === "read" ? true : idempotent,
    // Every tool talks to GitHub, an open world outside this process.
    openWorldHint: true,
  };
}

/** Tools that change nothing: the only ones a read-only server registers. */
export function isReadOnly(def: { kind: ToolKind }): boolean {
  return def.kind === "read";
}

export function registerDefinedTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  server: McpServer,
  host: Host,
  def: ToolDefinition<I, O>,
): void {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: def.input,
      outputSchema: def.output,
      annotations: annotationsFor(def.kind, def.idempotent ?? false, def.title),
    },
    (async (args: z.infer<z.ZodObject<I>>): Promise<CallToolResult> => {
      try {
        const result = await def.handler(host, args);
        return {
          content: [{ type: "text", text: def.render(result) }],
          structuredContent: result as Record<string, unknown>,
        };
      } catch (error) {
        const failure = describeFailure(error);
        if (!failure) throw error;
        return { isError: true, content: [{ type: "text", text: failure }] };
      }
    }) as never,
  );
}
