// THE DEMO'S SCRIPTED MODEL (and the suite's): a scripted double of the MODEL API — not of the
// agent CLI, and not a model. `afk-mcp demo --engine claude|codex` and test/engines-real-cli.test.ts
// run the real `claude` and `codex` programs against it on 127.0.0.1 exactly as they would
// against Anthropic or OpenAI: their
// own tools edit the worktree, run the project's tests and commit. It is not a model: whatever
// the prompt, each turn of a conversation is answered with the next step of one script, by
// calling tools the client itself offered (read from the request). It speaks the Anthropic
// Messages API (POST /v1/messages, streamed as SSE) and the OpenAI Responses API (POST
// /v1/responses, streamed), bills every turn's usage at a fixed price table, and can answer a
// turn with the plan-limit 429 the real API returns. It listens on 127.0.0.1 only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One step: a shell command (the CLI's Bash / shell tool), or the closing text. A shell step with
 * `when` reads its own output on the next turn, as a model reads a tool's result: where the
 * output matches, the conversation goes on with `then` instead of the steps after it (a branch
 * that already holds an attempt's commits needs no exploring, only the fix).
 */
export type ScriptStep = { shell: string; when?: { match: string; then: readonly ScriptStep[] } } | { text: string };

export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
}

export interface ScriptedModelOptions {
  /** The steps of every conversation, in order; after the last, the closing text "done". */
  script: readonly ScriptStep[];
  /** Per requested model, a script of its own (the ladder's stronger model does what the first did not). */
  scriptFor?: Readonly<Record<string, readonly ScriptStep[]>>;
  /** The usage returned for each turn. */
  usage?: TurnUsage;
  /** USD per million tokens, by model id as requested: what the server bills. */
  prices?: Readonly<Record<string, { input: number; output: number }>>;
  /** Answer every Messages request with the plan-limit 429 (the usage limit of a subscription). */
  rateLimited?: { resetEpochSeconds: number } | null;
}

export interface ScriptedTurn {
  api: "anthropic" | "openai";
  model: string;
  reply: string;
  usage: TurnUsage | null;
  status: number;
}

export interface ScriptedModel {
  url: string;
  turns: ScriptedTurn[];
  /** Requests other than a model turn (Claude Code's HEAD / probe, unknown paths). */
  other: string[];
  /** What the server billed: the sum over turns of usage × price of the requested model. */
  billedUsd(): number;
  billedTokens(): TurnUsage;
  set(options: Partial<ScriptedModelOptions>): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE: TurnUsage = { input_tokens: 1_000, output_tokens: 100 };

export async function startScriptedModel(initial: ScriptedModelOptions): Promise<ScriptedModel> {
  let options: ScriptedModelOptions = { ...initial };
  const turns: ScriptedTurn[] = [];
  const other: string[] = [];
  let counter = 0;

  const stepFor = (done: number, model: string, outputs: readonly string[]): ScriptStep =>
    nextStep(options.scriptFor?.[model] ?? options.script, done, outputs);

  const anthropic = (body: Record<string, unknown>, res: ServerResponse): void => {
    const model = String(body.model ?? "");
    if (options.rateLimited) {
      const reset = options.rateLimited.resetEpochSeconds;
      turns.push({ api: "anthropic", model, reply: "429", usage: null, status: 429 });
      res.writeHead(429, {
        "content-type": "application/json",
        "retry-after": String(Math.max(1, reset - Math.floor(Date.now() / 1000))),
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": String(reset),
        "anthropic-ratelimit-unified-5h-status": "rejected",
        "anthropic-ratelimit-unified-5h-reset": String(reset),
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
      });
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "rate_limit_error", message: "This request would exceed your account's rate limit. Please try again later." },
        }),
      );
      return;
    }
    const tools = ((body.tools as { name: string }[] | undefined) ?? []).map((t) => t.name);
    const messages = (body.messages as { role: string; content: unknown }[] | undefined) ?? [];
    const done = messages
      .flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? (m.content as { type: string }[]) : []))
      .filter((c) => c.type === "tool_use").length;
    const outputs = messages
      .flatMap((m) => (m.role === "user" && Array.isArray(m.content) ? (m.content as ToolResultBlock[]) : []))
      .filter((c) => c.type === "tool_result")
      .map((c) => resultText(c.content));
    // Side requests (titles, summaries) offer no tools: a short text answers them.
    const step: ScriptStep = tools.length === 0 ? { text: "ok" } : stepFor(done, model, outputs);
    const usage = options.usage ?? DEFAULT_USAGE;
    const id = String(++counter).padStart(4, "0");
    const block =
      "shell" in step
        ? { type: "tool_use", id: `toolu_${id}`, name: "Bash", input: { command: step.shell, description: "scripted step" } }
        : { type: "text", text: step.text };
    turns.push({ api: "anthropic", model, reply: "shell" in step ? step.shell : "text", usage, status: 200 });
    const send = (event: string, data: Record<string, unknown>) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    send("message_start", {
      message: {
        id: `msg_${id}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 0 },
      },
    });
    send("content_block_start", { index: 0, content_block: block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" } });
    send("content_block_delta", {
      index: 0,
      delta: block.type === "tool_use" ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) } : { type: "text_delta", text: block.text },
    });
    send("content_block_stop", { index: 0 });
    send("message_delta", {
      delta: { stop_reason: block.type === "tool_use" ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send("message_stop", {});
    res.end();
  };

  const responses = (body: Record<string, unknown>, res: ServerResponse): void => {
    const model = String(body.model ?? "");
    const tools = ((body.tools as { type?: string; name?: string }[] | undefined) ?? []).map((t) => t.name ?? "").filter(Boolean);
    const input = Array.isArray(body.input) ? (body.input as { type: string }[]) : [];
    const done = input.filter((item) => item.type === "function_call" || item.type === "local_shell_call" || item.type === "custom_tool_call").length;
    const outputs = (input as { type: string; output?: unknown }[])
      .filter((item) => item.type === "function_call_output" || item.type === "local_shell_call_output" || item.type === "custom_tool_call_output")
      .map((item) => resultText(item.output));
    const step = stepFor(done, model, outputs);
    const usage = options.usage ?? DEFAULT_USAGE;
    const id = String(++counter).padStart(4, "0");
    const shellTool = tools.find((n) => n === "shell" || n === "exec_command" || n === "shell_command") ?? "shell";
    const line = "shell" in step ? step.shell : "";
    const args = shellTool === "exec_command" ? { cmd: line } : shellTool === "shell_command" ? { command: line } : { command: ["bash", "-lc", line] };
    const item =
      "shell" in step
        ? { type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, name: shellTool, arguments: JSON.stringify(args), status: "completed" }
        : { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: step.text, annotations: [] }] };
    turns.push({ api: "openai", model, reply: "shell" in step ? step.shell : "text", usage, status: 200 });
    const send = (event: string, data: Record<string, unknown>) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    const response = { id: `resp_${id}`, object: "response", status: "in_progress", model, output: [] as unknown[] };
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    send("response.created", { response });
    send("response.output_item.added", { output_index: 0, item });
    if (!("shell" in step)) send("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: step.text });
    send("response.output_item.done", { output_index: 0, item });
    const wireUsage = {
      input_tokens: usage.input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input_tokens + usage.output_tokens,
    };
    send("response.completed", { response: { ...response, status: "completed", output: [item], usage: wireUsage } });
    res.end();
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0] ?? "";
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) : {};
      } catch {
        // not JSON: answered as an unknown route
      }
      if (req.method === "POST" && path.endsWith("/v1/messages")) return anthropic(body, res);
      if (req.method === "POST" && path.endsWith("/responses")) return responses(body, res);
      other.push(`${req.method} ${path}`);
      if (req.method === "HEAD" || req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(req.method === "GET" ? "{}" : undefined);
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `scripted model: no ${req.method} ${path}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const billed = (): TurnUsage =>
    turns.reduce(
      (sum, t) => (t.usage ? { input_tokens: sum.input_tokens + t.usage.input_tokens, output_tokens: sum.output_tokens + t.usage.output_tokens } : sum),
      { input_tokens: 0, output_tokens: 0 },
    );
  return {
    url: `http://127.0.0.1:${port}`,
    turns,
    other,
    billedTokens: billed,
    billedUsd: () =>
      turns.reduce((sum, t) => {
        const price = options.prices?.[t.model];
        if (!t.usage || !price) return sum;
        return sum + (t.usage.input_tokens * price.input + t.usage.output_tokens * price.output) / 1e6;
      }, 0),
    set: (change) => {
      options = { ...options, ...change };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type ToolResultBlock = { type: string; content?: unknown };

/** A tool result's text: a string, or the text blocks of a content array (Anthropic), or its JSON. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((c) => (c && typeof c === "object" && typeof (c as { text?: unknown }).text === "string" ? (c as { text: string }).text : ""))
      .join("\n");
  return content === undefined ? "" : JSON.stringify(content);
}

/** The step after `done` tool calls whose outputs were `outputs`, following each `when` that matched. */
export function nextStep(script: readonly ScriptStep[], done: number, outputs: readonly string[]): ScriptStep {
  let steps = script;
  let at = 0;
  for (let k = 0; k < done; k++) {
    const step = steps[at];
    if (step && "shell" in step && step.when && new RegExp(step.when.match, "m").test(outputs[k] ?? "")) {
      steps = step.when.then;
      at = 0;
    } else at++;
  }
  return steps[at] ?? { text: "done" };
}
