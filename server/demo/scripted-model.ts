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
 * One step: a shell command (the CLI's Bash / shell tool), a call of a tool the client offers, or
 * the closing text. A shell step with `when` reads its own output on the next turn, as a model
 * reads a tool's result: where the output matches, the conversation goes on with `then` instead of
 * the steps after it (a branch that already holds an attempt's commits needs no exploring, only
 * the fix). A tool step names its tool exactly or by the suffix after `__` ("project_start" is
 * Claude Code's `mcp__afk__project_start`, Codex's `project_start` in namespace `mcp__afk`).
 */
export type ScriptStep =
  { shell: string; when?: { match: string; then: readonly ScriptStep[] } } | { tool: string; input: Record<string, unknown> } | { text: string };

/**
 * The client's own tools a model calls before it can call an MCP server's: Claude Code defers MCP
 * tools behind ToolSearch (named in a reminder, loaded by `select:<name>`), and offers
 * WaitForMcpServers until its servers connect. They are not steps of the script.
 */
const TOOL_SEARCH = "ToolSearch";
const WAIT_FOR_SERVERS = "WaitForMcpServers";
const LOADERS = new Set([TOOL_SEARCH, WAIT_FOR_SERVERS]);

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
  /** The shell command or the tool called ("text": the turn answered with text). */
  reply: string;
  /** The text of the last tool result the request carried, as the model would read it. */
  read?: string;
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
    const calls = messages
      .flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? (m.content as { type: string; id?: string; name?: string }[]) : []))
      .filter((c) => c.type === "tool_use");
    const loaderIds = new Set(calls.filter((c) => LOADERS.has(c.name ?? "")).map((c) => c.id));
    const results = messages
      .flatMap((m) => (m.role === "user" && Array.isArray(m.content) ? (m.content as ToolResultBlock[]) : []))
      .filter((c) => c.type === "tool_result");
    const outputs = results.filter((c) => !loaderIds.has(c.tool_use_id)).map((c) => resultText(c.content));
    const last = results.at(-1);
    // Side requests (titles, summaries) offer no tools: a short text answers them.
    const step: ScriptStep = tools.length === 0 ? { text: "ok" } : stepFor(calls.length - loaderIds.size, model, outputs);
    const usage = options.usage ?? DEFAULT_USAGE;
    const id = String(++counter).padStart(4, "0");
    const call =
      "shell" in step
        ? { name: "Bash", input: { command: step.shell, description: "scripted step" } }
        : "tool" in step
          ? claudeCall(step, tools, messages)
          : null;
    const block = call ? { type: "tool_use", id: `toolu_${id}`, ...call } : { type: "text", text: "text" in step ? step.text : unoffered(step) };
    const reply = "shell" in step ? step.shell : (call?.name ?? "text");
    turns.push({ api: "anthropic", model, reply, ...(last ? { read: resultText(last.content) } : {}), usage, status: 200 });
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
    send("content_block_start", { index: 0, content_block: "input" in block ? { ...block, input: {} } : { type: "text", text: "" } });
    send("content_block_delta", {
      index: 0,
      delta: "input" in block ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) } : { type: "text_delta", text: block.text },
    });
    send("content_block_stop", { index: 0 });
    send("message_delta", {
      delta: { stop_reason: "input" in block ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send("message_stop", {});
    res.end();
  };

  const responses = (body: Record<string, unknown>, res: ServerResponse): void => {
    const model = String(body.model ?? "");
    // Codex offers an MCP server's tools in a namespace (mcp__afk): named here namespace__tool.
    const tools = ((body.tools as { type?: string; name?: string; tools?: { name?: string }[] }[] | undefined) ?? [])
      .flatMap((t) => (t.type === "namespace" ? (t.tools ?? []).map((n) => `${t.name}__${n.name}`) : [t.name ?? ""]))
      .filter(Boolean);
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
    const named = "tool" in step ? tools.find((name) => suffixMatch(name, step.tool)) : undefined;
    const call =
      "shell" in step
        ? { name: shellTool, arguments: JSON.stringify(args) }
        : "tool" in step && named
          ? { ...codexName(named), arguments: JSON.stringify(step.input) }
          : null;
    const text = "text" in step ? step.text : unoffered(step);
    const item = call
      ? { type: "function_call", id: `fc_${id}`, call_id: `call_${id}`, ...call, status: "completed" }
      : { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
    turns.push({ api: "openai", model, reply: "shell" in step ? step.shell : (named ?? "text"), usage, status: 200 });
    const send = (event: string, data: Record<string, unknown>) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    const response = { id: `resp_${id}`, object: "response", status: "in_progress", model, output: [] as unknown[] };
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    send("response.created", { response });
    send("response.output_item.added", { output_index: 0, item });
    if (!call) send("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: text });
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

type ToolResultBlock = { type: string; tool_use_id?: string; content?: unknown };

/** The closing text of a turn whose tool the client did not offer. */
const unoffered = (step: ScriptStep): string => `scripted model: no tool ${"tool" in step ? step.tool : "shell"} offered`;

/** Whether an offered tool's name is `wanted`, or ends with `__wanted` (an MCP server's tool). */
const suffixMatch = (name: string, wanted: string): boolean => name === wanted || name.endsWith(`__${wanted}`);

/** A Codex function call's name: an MCP tool (namespace__tool) names its namespace apart. */
function codexName(name: string): { name: string; namespace?: string } {
  const cut = name.startsWith("mcp__") ? name.lastIndexOf("__") : -1;
  return cut > 3 ? { namespace: name.slice(0, cut), name: name.slice(cut + 2) } : { name };
}

/**
 * Claude Code's call for a tool step: the tool when offered; else, when the request names it as
 * a deferred tool (one name a line in a reminder), ToolSearch to load it, or WaitForMcpServers
 * while the servers connect; else nothing (the turn says so in text and the conversation ends).
 */
function claudeCall(
  step: { tool: string; input: Record<string, unknown> },
  tools: readonly string[],
  messages: readonly { role: string; content: unknown }[],
): { name: string; input: Record<string, unknown> } | null {
  const offered = tools.find((name) => suffixMatch(name, step.tool));
  if (offered) return { name: offered, input: step.input };
  const lines = messages
    .filter((m) => m.role === "user")
    .flatMap((m) => (typeof m.content === "string" ? [m.content] : Array.isArray(m.content) ? (m.content as { text?: unknown }[]).map((c) => c.text) : []))
    .flatMap((text) => (typeof text === "string" ? text.split("\n") : []))
    .map((line) => line.trim());
  const deferred = lines.find((line) => /^[A-Za-z][\w-]*$/.test(line) && suffixMatch(line, step.tool));
  if (deferred && tools.includes(TOOL_SEARCH)) return { name: TOOL_SEARCH, input: { query: `select:${deferred}` } };
  if (tools.includes(WAIT_FOR_SERVERS)) return { name: WAIT_FOR_SERVERS, input: {} };
  return null;
}

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
