// tools/list as afk-mcp serves it. Each tool's JSON Schemas are made from its zod schemas as the
// SDK makes them (draft-07, inputs as accepted, outputs as produced), without what tells a client
// nothing: the ±(2^53-1) bounds zod writes on every integer that has no bound of its own, and a
// subschema written out twice in one schema (it becomes one `definitions` entry). The zod schemas still
// validate every call and every result; only the listing is shorter (docs/mcp-conformance.md has
// the figures).
import type { McpServer } from "@modelcontextprotocol/server";
import type { Tool as ToolDefinition, ToolAnnotations } from "@modelcontextprotocol/server";
import { z } from "zod";

/** What tools/list says of one tool. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  input: z.ZodObject;
  output: z.ZodObject;
  /** `_meta` as listed (a link to an MCP App's `ui://` resource). */
  meta?: Record<string, unknown>;
}

const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** One schema as JSON Schema, without the implicit integer bounds, repeats as definitions. */
export function listedSchema(schema: z.ZodObject, io: "input" | "output"): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    target: "draft-7",
    io,
    override: ({ jsonSchema }) => {
      if (jsonSchema.type !== "integer") return;
      if (jsonSchema.minimum === -SAFE_MAX) delete jsonSchema.minimum;
      if (jsonSchema.maximum === SAFE_MAX) delete jsonSchema.maximum;
    },
  }) as Record<string, unknown>;
}

export function toolDefinition(tool: ToolListing): ToolDefinition {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: listedSchema(tool.input, "input") as ToolDefinition["inputSchema"],
    outputSchema: listedSchema(tool.output, "output") as NonNullable<ToolDefinition["outputSchema"]>,
    annotations: tool.annotations,
    ...(tool.meta ? { _meta: tool.meta } : {}),
  };
}

/**
 * Answers tools/list with these definitions instead of the SDK's own rendering (its call
 * handler, which validates with the zod schemas, stays). Made once: the list never changes.
 */
export function serveToolList(server: McpServer, tools: readonly ToolListing[]): void {
  const listed = tools.map(toolDefinition);
  server.server.removeRequestHandler("tools/list");
  server.server.setRequestHandler("tools/list", () => ({ tools: listed }));
}
