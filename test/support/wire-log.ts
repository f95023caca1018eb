// afk-mcp behind a wrapper that logs its stdio both ways: what a real client (Claude Code, the MCP
// inspector) sent it and what it answered, one JSON-RPC message a line. The server's side of the
// pipe, read by the tests to say which MCP revision a client spoke.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BIN } from "./paths.js";

export interface WireMessage {
  id?: number | string;
  method?: string;
  params?: { name?: string; protocolVersion?: string; _meta?: Record<string, unknown> };
  result?: { protocolVersion?: string; resultType?: string; content?: { type: string; text?: string }[]; structuredContent?: unknown; isError?: boolean };
}

export interface Wire {
  sent: WireMessage[];
  answered: WireMessage[];
}

export interface WireLoggedServer {
  /** The command a client starts as its stdio MCP server (no arguments). */
  command: string;
  read(): Promise<Wire>;
}

/** A wrapper in `dir` that runs the built binary with its stdin and stdout teed to two logs. */
export async function wireLoggedServer(dir: string): Promise<WireLoggedServer> {
  const [sentLog, answeredLog] = [join(dir, "sent.jsonl"), join(dir, "answered.jsonl")];
  const command = join(dir, "afk-mcp.sh");
  await writeFile(command, `#!/bin/sh\ntee -a '${sentLog}' | '${process.execPath}' '${BIN}' | tee -a '${answeredLog}'\n`, { mode: 0o755 });
  const lines = async (path: string): Promise<WireMessage[]> =>
    (await readFile(path, "utf8").catch(() => ""))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as WireMessage);
  return { command, read: async () => ({ sent: await lines(sentLog), answered: await lines(answeredLog) }) };
}

/** afk-mcp's answer to the client's tools/call of `tool`. */
export function answerTo(wire: Wire, tool: string): WireMessage {
  const call = wire.sent.find((m) => m.method === "tools/call" && m.params?.name === tool);
  assert.ok(call, `no tools/call ${tool} reached afk-mcp: ${wire.sent.map((m) => m.method).join(", ")}`);
  const answer = wire.answered.find((m) => m.id === call.id && m.result);
  assert.ok(answer, `afk-mcp did not answer tools/call ${tool}`);
  return answer;
}

/** The revision named by each request the client sent in the 2026-07-28 envelope. */
export const envelopeRevisions = (wire: Wire): unknown[] =>
  wire.sent.filter((m) => m.method !== undefined && m.params?._meta).map((m) => m.params?._meta?.["io.modelcontextprotocol/protocolVersion"]);
