#!/usr/bin/env node
// A scripted stand-in for a model API, on 127.0.0.1, so that a real Claude Code or Codex CLI can
// be driven through afk-mcp without a model login. It is not a model: whatever the prompt, it
// answers each turn of the conversation with the next step of one script, by calling tools the
// client itself offered (their names are read from the request; Claude Code 2.1.337 defers MCP
// tools, so the first turn loads them with ToolSearch `select:`):
//   1. project_start with a worker command that dies at once (the circuit breaker trips: a
//      supervisor error, pushed to the client as an MCP log notification);
//   2. after a pause for that, read the board resource afk://OWNER/NAME/board (Claude Code:
//      ReadMcpResourceTool; Codex: read_mcp_resource when offered, else the status tool);
//   3. project_stop {stop_workers: true};
//   4. a closing text.
// It speaks Anthropic's Messages API (POST /v1/messages, streamed or not) and OpenAI's Responses
// API (POST /v1/responses, streamed). Every request and reply is logged as one JSON line on
// stderr: the tools the client offered and what the script called.
//
// Usage: node scripts/scripted-model.mjs [--port 38600] [--repo afk/demo] [--pause 20]
// then: ANTHROPIC_BASE_URL=http://127.0.0.1:38600 ANTHROPIC_API_KEY=scripted claude -p ...
//   or: a Codex model provider with base_url = "http://127.0.0.1:38600/v1" (docs/client-sessions.md,
//   "Seen from the clients: the transcripts", has both runs).
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { port: { type: "string", default: "38600" }, repo: { type: "string", default: "afk/demo" }, pause: { type: "string", default: "20" } },
});
const REPO = values.repo;
const BOARD = `afk://${REPO}/board`;
const PAUSE_MS = Number(values.pause) * 1000;

const log = (record) => process.stderr.write(JSON.stringify({ at: new Date().toISOString(), ...record }) + "\n");

/**
 * Until its MCP servers have connected, Claude Code offers WaitForMcpServers and Codex offers
 * only its resource tools: the script waits with the one, or lists resources with the other.
 */
const WAIT = "WaitForMcpServers";
const LIST = "list_mcp_resources";
/** Claude Code 2.1.337 defers MCP tools: named one a line in a reminder, loaded by ToolSearch `select:`. */
const SEARCH = "ToolSearch";
const waiting = (name) => name === WAIT || name === LIST || name === SEARCH;

/** The deferred tools the script needs that a request names (Claude Code's reminder), unloaded yet. */
function deferred(messages, tools) {
  const lines = messages
    .filter((m) => m.role === "user")
    .flatMap((m) => (typeof m.content === "string" ? [m.content] : Array.isArray(m.content) ? m.content.map((c) => c.text) : []))
    .flatMap((text) => (typeof text === "string" ? text.split("\n").map((line) => line.trim()) : []));
  return [...new Set(lines.filter((line) => /^(mcp__afk__\w+|ReadMcpResourceTool)$/.test(line) && !tools.includes(line)))];
}

/** The step for a conversation that has already made `done` scripted calls, given the offered tools. */
function step(done, tools, api) {
  const find = (suffix) => tools.find((name) => name === suffix || name.endsWith(`__${suffix}`) || name.endsWith(`_${suffix}`));
  if (done < 3 && !find("project_start")) {
    if (tools.includes(WAIT)) return { tool: WAIT, input: {} };
    if (tools.includes(LIST)) return { tool: LIST, input: { server: "afk" }, pause: 2000 };
  }
  switch (done) {
    case 0:
      return {
        tool: find("project_start"),
        input: { repo: REPO, worker_command: "exit 3", target: 3, config: { circuit: { k: 3, fast_death_seconds: 600, window_seconds: 3600 } } },
      };
    case 1: {
      const reader = api === "anthropic" ? find("ReadMcpResourceTool") : find("read_mcp_resource");
      if (reader) return { tool: reader, input: { server: "afk", uri: BOARD }, pause: PAUSE_MS };
      return { tool: find("status"), input: { repo: REPO, scope: "worker" }, pause: PAUSE_MS };
    }
    case 2:
      return { tool: find("project_stop"), input: { repo: REPO, stop_workers: true } };
    default:
      return { text: `Scripted run over: started the fleet on ${REPO}, read ${BOARD}, stopped it.` };
  }
}

// ---- Anthropic Messages ---------------------------------------------------------------------

function anthropicTurn(body) {
  const tools = (body.tools ?? []).map((t) => t.name);
  const messages = body.messages ?? [];
  const done = messages
    .flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : []))
    .filter((c) => c.type === "tool_use" && !waiting(c.name)).length;
  // Side requests (titles, summaries, quota probes) offer no tools: a short text answers them.
  const searched = messages.some((m) => m.role === "assistant" && Array.isArray(m.content) && m.content.some((c) => c.name === SEARCH));
  const load = tools.includes(SEARCH) && !searched ? deferred(messages, tools) : [];
  const next =
    tools.length === 0 ? { text: "ok" } : load.length > 0 ? { tool: SEARCH, input: { query: `select:${load.join(",")}` } } : step(done, tools, "anthropic");
  log({
    api: "anthropic",
    offered: tools.filter((n) => n.startsWith("mcp__") || /Mcp/.test(n)),
    done,
    reply: next.tool ?? "text",
    input: next.input ?? next.text,
  });
  return next;
}

function anthropicMessage(next, id) {
  const block = next.tool ? { type: "tool_use", id: `toolu_${id}`, name: next.tool, input: next.input } : { type: "text", text: next.text };
  return {
    id: `msg_${id}`,
    type: "message",
    role: "assistant",
    model: "scripted",
    content: [block],
    stop_reason: next.tool ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

function anthropicStream(res, message) {
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const block = message.content[0];
  send("message_start", { message: { ...message, content: [], stop_reason: null } });
  if (block.type === "tool_use") {
    send("content_block_start", { index: 0, content_block: { ...block, input: {} } });
    send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
  } else {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: block.text } });
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 1 } });
  send("message_stop", {});
  res.end();
}

// ---- OpenAI Responses -----------------------------------------------------------------------

function responsesTurn(body) {
  // Codex offers an MCP server's tools inside a namespace (mcp__afk), named here namespace__tool.
  const tools = (body.tools ?? [])
    .flatMap((t) => (t.type === "namespace" ? (t.tools ?? []).map((n) => `${t.name}__${n.name}`) : [t.name ?? t.function?.name]))
    .filter(Boolean);
  const input = Array.isArray(body.input) ? body.input : [];
  const done = input.filter((item) => item.type === "function_call" && !waiting(item.name)).length;
  const next = step(done, tools, "openai");
  log({
    api: "openai",
    offered: tools.filter((n) => /mcp|afk|status|project_|logs|takeover/.test(n)),
    done,
    reply: next.tool ?? "text",
    input: next.input ?? next.text,
  });
  return next;
}

function responsesStream(res, next, id) {
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const response = { id: `resp_${id}`, object: "response", status: "in_progress", model: "scripted", output: [] };
  send("response.created", { response });
  const [namespace, name] = next.tool?.startsWith("mcp__")
    ? [next.tool.slice(0, next.tool.lastIndexOf("__")), next.tool.slice(next.tool.lastIndexOf("__") + 2)]
    : [undefined, next.tool];
  const item = next.tool
    ? {
        type: "function_call",
        id: `fc_${id}`,
        call_id: `call_${id}`,
        name,
        ...(namespace ? { namespace } : {}),
        arguments: JSON.stringify(next.input),
        status: "completed",
      }
    : { type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: next.text, annotations: [] }] };
  send("response.output_item.added", { output_index: 0, item });
  if (!next.tool) send("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: next.text });
  send("response.output_item.done", { output_index: 0, item });
  const usage = {
    input_tokens: 1,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 1,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 2,
  };
  send("response.completed", { response: { ...response, status: "completed", output: [item], usage } });
  res.end();
}

// ---- the server -----------------------------------------------------------------------------

let counter = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const path = (req.url ?? "").split("?")[0];
    let body = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    } catch {
      // not JSON: answered below as an unknown route
    }
    const id = String(++counter).padStart(4, "0");
    if (req.method === "POST" && path.endsWith("/v1/messages")) {
      const next = anthropicTurn(body);
      if (next.pause) await new Promise((r) => setTimeout(r, next.pause));
      const message = anthropicMessage(next, id);
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        return anthropicStream(res, message);
      }
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(message));
    }
    if (req.method === "POST" && path.endsWith("/responses")) {
      const next = responsesTurn(body);
      if (next.pause) await new Promise((r) => setTimeout(r, next.pause));
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      return responsesStream(res, next, id);
    }
    log({ unknown: `${req.method} ${req.url}` });
    res.writeHead(404, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        type: "error",
        error: { type: "not_found_error", message: `the scripted model serves POST /v1/messages and /v1/responses, not ${req.method} ${path}` },
      }),
    );
  });
});
server.listen(Number(values.port), "127.0.0.1", () => log({ listening: `http://127.0.0.1:${values.port}`, repo: REPO }));
