// How a tool is declared: one kind (read / update / destructive) and one world (GitHub or
// local files) from which every MCP hint is derived, a strict zod input and an output shape,
// and a short handler that calls the host. `defineTool` erases the generics so the server's
// tool list is a plain `Tool[]`. Expected failures (bad input, GitHub refusals, missing
// credentials) become `isError` results whose text names the problem and the fix; only bugs
// escape as exceptions. Every result passes through `bound` (budget.ts) on its way out.
import type { McpServer } from "@modelcontextprotocol/server";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/server";
import { z } from "zod";
import { setTimeout as sleep } from "node:timers/promises";
import type { Host } from "../host/api.js";
import { strictInput } from "../../schemas/nearest.js";
import { callLimitProblem } from "../../schemas/limits.js";
import { describeFailure } from "./failure.js";
import { bound, DEFAULT_BUDGET, type Budget } from "./budget.js";
import { Serial } from "../kit/serial.js";
import type { ToolListing } from "./listing.js";

export type ToolKind = "read" | "update" | "destructive";

/**
 * What the handler may use besides the host: progress for long calls, one notification per
 * step in order, counting up (a no-op when the client sent no progressToken).
 */
export interface ToolContext {
  step(message: string): void;
  /** Resolves once every step has been sent and has had time to be read before the result. */
  settled(): Promise<void>;
}

export interface ToolSpec<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  kind: ToolKind;
  /** "github" (the default): the tool talks to GitHub; "local": it reads only this machine's files. */
  world?: "github" | "local";
  /** Calling twice with the same arguments has no further effect. */
  idempotent?: boolean;
  /** tools/list's `_meta` for it (status links the board app); its results carry none. */
  meta?: Record<string, unknown>;
  input: I;
  output: O;
  handler(host: Host, args: z.output<z.ZodObject<I>>, context: ToolContext): Promise<z.infer<z.ZodObject<O>>>;
  /** The human rendering of the structured result (the `text` content): says what matters in it. */
  render(result: z.infer<z.ZodObject<O>>): string;
}

/** A defined tool with its types erased: what the server registers and the tests list. */
export interface Tool {
  readonly name: string;
  readonly kind: ToolKind;
  readonly annotations: ToolAnnotations;
  /** The strict input object (unknown keys refused with the nearest valid key). */
  readonly inputSchema: z.ZodObject;
  /** What tools/list says of it (listing.ts). */
  readonly listing: ToolListing;
  register(server: McpServer, host: Host, budget?: Budget): void;
}

export function annotationsFor(kind: ToolKind, idempotent = false, title?: string, world: "github" | "local" = "github"): ToolAnnotations {
  return {
    ...(title ? { title } : {}),
    readOnlyHint: kind === "read",
    destructiveHint: kind === "destructive",
    idempotentHint: kind === "read" ? true : idempotent,
    openWorldHint: world === "github",
  };
}

/** Tools that change nothing: the only ones a read-only server registers. */
export function isReadOnly(def: { kind: ToolKind }): boolean {
  return def.kind === "read";
}

export { strictInput };

type ProgressParams = { progressToken: string | number; progress: number; message: string };

/**
 * How long the result waits after the last step. The SDK's client (Claude Code's too) handles a
 * notification a microtask after reading it but a response at once, dropping the request's
 * progress token: a step read in the same chunk as the result then meets an unknown token, an
 * error that Claude Code 2.1 takes for a dropped connection. So no step closes the call (the
 * result says how it ended), and the result leaves the last step time to be read alone.
 */
const SETTLE_MS = 100;

function progressContext(token: string | number | undefined, send: (params: ProgressParams) => Promise<void>): ToolContext {
  let count = 0;
  let lastAt = 0;
  // Sent one after another: a client must see progress only increase.
  const sends = new Serial();
  let last: Promise<void> = Promise.resolve();
  return {
    step(message) {
      if (token === undefined) return;
      const params = { progressToken: token, progress: count++, message };
      last = sends.run(async () => {
        await send(params).catch(() => undefined);
        lastAt = Date.now();
      });
    },
    async settled() {
      await last;
      const wait = lastAt + SETTLE_MS - Date.now();
      if (wait > 0) await sleep(wait);
    },
  };
}

/**
 * What the SDK validates a call against: any object. The tool's strict schema is applied in the
 * handler instead, so that a refusal is bounded like every other answer: the SDK's own message
 * names every problem, and 20 selectors of 1,000 bad issue numbers made it 1.3 MB. tools/list is
 * served from the strict schema (listing.ts), so clients see no difference.
 */
const ANY_INPUT = z.looseObject({});

/** How many problems of one refused call are named; the rest are counted. */
export const INPUT_PROBLEMS_SHOWN = 10;

type Checked = { ok: true; value: unknown } | { ok: false; problem: string };

/** The arguments as the strict schema reads them, or the text that refuses them: the first problems, each at its path, and how many more. */
export function checkInput(tool: string, schema: z.ZodType, args: unknown): Checked {
  const prefix = `Input validation error: Invalid arguments for tool ${tool}`;
  // The whole call's limits first: a call too large to be useful costs no parse.
  const over = callLimitProblem(args);
  if (over) return { ok: false, problem: `${prefix}: ${over}` };
  let parsed: ReturnType<typeof schema.safeParse>;
  try {
    parsed = schema.safeParse(args ?? {});
  } catch (error) {
    // zod recurses per element: an input of hundreds of thousands of bad elements exhausts the stack.
    if (error instanceof RangeError) return { ok: false, problem: `${prefix}: the arguments are too large to check (${error.message}); send fewer elements` };
    throw error;
  }
  if (parsed.success) return { ok: true, value: parsed.data };
  const { issues } = parsed.error;
  const shown = issues.slice(0, INPUT_PROBLEMS_SHOWN).map((i) => (i.path.length > 0 ? `${i.message} at ${dotPath(i.path)}` : i.message));
  const more = issues.length - shown.length;
  return { ok: false, problem: `${prefix}: ${shown.join("\n")}${more > 0 ? `\n… and ${more} more problem(s), ${issues.length} in all` : ""}` };
}

/** "selectors[0].issues[3]", as the SDK wrote paths. */
function dotPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key, i) => (i === 0 ? String(key) : typeof key === "number" ? `${out}[${key}]` : `${out}.${String(key)}`), "");
}

export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(spec: ToolSpec<I, O>): Tool {
  const inputSchema = strictInput(spec.input);
  const annotations = annotationsFor(spec.kind, spec.idempotent ?? false, spec.title, spec.world);
  return {
    name: spec.name,
    kind: spec.kind,
    annotations,
    inputSchema,
    listing: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      annotations,
      input: inputSchema,
      output: z.object(spec.output),
      ...(spec.meta ? { meta: spec.meta } : {}),
    },
    register(server, host, budget = DEFAULT_BUDGET) {
      server.registerTool(
        spec.name,
        { title: spec.title, description: spec.description, inputSchema: ANY_INPUT, outputSchema: z.object(spec.output), annotations, _meta: spec.meta },
        async (raw, ctx): Promise<CallToolResult> => {
          const args = checkInput(spec.name, inputSchema, raw);
          if (!args.ok) return bound(null, () => args.problem, budget, true);
          const context = progressContext(ctx.mcpReq._meta?.progressToken, (params) => ctx.mcpReq.notify({ method: "notifications/progress", params }));
          try {
            const result = await spec.handler(host, args.value as z.output<z.ZodObject<I>>, context);
            return bound(result as Record<string, unknown>, (r) => spec.render(r as z.infer<z.ZodObject<O>>), budget);
          } catch (error) {
            const failure = describeFailure(error);
            if (!failure) throw error;
            return bound(null, () => failure, budget, true);
          }
        },
      );
    },
  };
}
