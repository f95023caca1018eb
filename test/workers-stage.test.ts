// What a worker is doing, read from its output (server/agent/stage.ts): one row per line shape of
// the engines' streams (Claude Code stream-json, Codex exec --json, Gemini stream-json) and of
// plain output, then the reader over a run's lines: the tool while it runs, else the last words,
// bounded, stripped and redacted.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readLine, StageReader, STAGE_CHARS, type LineReading } from "../server/agent/stage.js";
import { redactText } from "../server/text/redact.js";

const j = (value: unknown): string => JSON.stringify(value);
const claudeTool = (name: string, input: unknown, text?: string) =>
  j({
    type: "assistant",
    message: { model: "claude-x", content: [...(text ? [{ type: "text", text }] : []), { type: "tool_use", id: "toolu_1", name, input }] },
  });

describe("one line of a worker's output", () => {
  const rows: { name: string; line: string; want: LineReading | null }[] = [
    { name: "plain output is words as printed", line: "stage: compiling widgets", want: { tool: null, words: "stage: compiling widgets", done: false } },
    { name: "a blank line says nothing", line: "   ", want: null },
    { name: "text that only looks like JSON is words", line: "{ not json", want: { tool: null, words: "{ not json", done: false } },
    {
      name: "a JSON log line of no stream we know is words",
      line: '{"level":"info","msg":"hi"}',
      want: { tool: null, words: '{"level":"info","msg":"hi"}', done: false },
    },
    // Claude Code stream-json
    {
      name: "claude: a Bash tool call is the command it runs",
      line: claudeTool("Bash", { command: "npm test", description: "Run the tests" }),
      want: { tool: "Bash: npm test", words: null, done: false },
    },
    {
      name: "claude: an Edit names its file, with the text said before it",
      line: claudeTool("Edit", { file_path: "src/a.ts", old_string: "x", new_string: "y" }, "Fixing the parser"),
      want: { tool: "Edit: src/a.ts", words: "Fixing the parser", done: false },
    },
    {
      name: "claude: a tool without an argument we know is its name",
      line: claudeTool("TodoWrite", { todos: [] }),
      want: { tool: "TodoWrite", words: null, done: false },
    },
    {
      name: "claude: model text is words",
      line: j({ type: "assistant", message: { content: [{ type: "text", text: "All tests pass." }] } }),
      want: { tool: null, words: "All tests pass.", done: false },
    },
    {
      name: "claude: a tool result ends the tool, its last line is the words",
      line: j({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok 1\nok 2\n# pass 2\n\n" }] } }),
      want: { tool: null, words: "# pass 2", done: true },
    },
    {
      name: "claude: a tool result given as blocks",
      line: j({ type: "user", message: { content: [{ type: "tool_result", content: [{ type: "text", text: "line a\nline b" }] }] } }),
      want: { tool: null, words: "line b", done: true },
    },
    {
      name: "claude: the init event says the session started",
      line: j({ type: "system", subtype: "init", model: "claude-x", tools: [] }),
      want: { tool: null, words: "session started (model claude-x)", done: false },
    },
    {
      name: "claude: the result line is the run's last words",
      line: j({ type: "result", subtype: "success", result: "Done: fixed #3", total_cost_usd: 0.01 }),
      want: { tool: null, words: "Done: fixed #3", done: true },
    },
    { name: "claude: a partial-message event says nothing", line: j({ type: "stream_event", event: { type: "content_block_delta" } }), want: null },
    // Codex exec --json
    {
      name: "codex: a command started is the command, out of its shell",
      line: j({ type: "item.started", item: { id: "item_1", type: "command_execution", command: "bash -lc 'npm test'", status: "in_progress" } }),
      want: { tool: "Shell: npm test", words: null, done: false },
    },
    {
      name: "codex: an older item_type and an argv command",
      line: j({ type: "item.started", item: { id: "i", item_type: "command_execution", command: ["/bin/bash", "-lc", "make"] } }),
      want: { tool: "Shell: make", words: null, done: false },
    },
    {
      name: "codex: a command completed ends it, with its output's last line",
      line: j({ type: "item.completed", item: { type: "command_execution", command: "ls", aggregated_output: "a\nb\n", exit_code: 0 } }),
      want: { tool: null, words: "b", done: true },
    },
    {
      name: "codex: a silent command completed says its exit code",
      line: j({ type: "item.completed", item: { type: "command_execution", aggregated_output: "", exit_code: 2 } }),
      want: { tool: null, words: "exit 2", done: true },
    },
    {
      name: "codex: a file change names the files",
      line: j({
        type: "item.started",
        item: {
          type: "file_change",
          changes: [
            { path: "a.ts", kind: "update" },
            { path: "b.ts", kind: "add" },
          ],
        },
      }),
      want: { tool: "Edit: a.ts, b.ts", words: null, done: false },
    },
    {
      name: "codex: an MCP tool call",
      line: j({ type: "item.started", item: { type: "mcp_tool_call", server: "gh", tool: "search", arguments: { query: "flaky" } } }),
      want: { tool: "gh.search: flaky", words: null, done: false },
    },
    {
      name: "codex: the agent's message is words",
      line: j({ type: "item.completed", item: { type: "agent_message", text: "Pushed the fix." } }),
      want: { tool: null, words: "Pushed the fix.", done: false },
    },
    { name: "codex: a turn's start says nothing", line: j({ type: "turn.started" }), want: null },
    {
      name: "codex: usage says nothing",
      line: j({ type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } }),
      want: null,
    },
    {
      name: "codex: a failed turn says its error",
      line: j({ type: "turn.failed", error: { message: "stream disconnected" } }),
      want: { tool: null, words: "stream disconnected", done: false },
    },
    {
      name: "codex: an error event says its message",
      line: j({ type: "error", message: "Reconnecting... 2/5" }),
      want: { tool: null, words: "Reconnecting... 2/5", done: false },
    },
    // Gemini stream-json
    {
      name: "gemini: a shell tool call",
      line: j({ type: "tool_use", tool_name: "run_shell_command", tool_id: "t1", parameters: { command: "npm run build" } }),
      want: { tool: "run_shell_command: npm run build", words: null, done: false },
    },
    {
      name: "gemini: a tool result ends it",
      line: j({ type: "tool_result", tool_id: "t1", status: "success", output: "built in 2s" }),
      want: { tool: null, words: "built in 2s", done: true },
    },
    {
      name: "gemini: the assistant's message is words, the user's nothing",
      line: j({ type: "message", role: "assistant", content: "Looking at the parser", delta: true }),
      want: { tool: null, words: "Looking at the parser", done: false },
    },
    { name: "gemini: the user's message says nothing", line: j({ type: "message", role: "user", content: "the brief" }), want: null },
    {
      name: "gemini: the result ends the run",
      line: j({ type: "result", status: "success", stats: { input_tokens: 1 } }),
      want: { tool: null, words: "finished (success)", done: true },
    },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(readLine(row.line), row.want));
});

describe("what a worker is doing, over its lines", () => {
  const push = (lines: readonly string[]): StageReader => {
    const reader = new StageReader();
    for (const line of lines) reader.push(line);
    return reader;
  };
  const plain = (t: string) => t;
  const rows: { name: string; lines: string[]; want: { stage: string | null; last_line: string | null } }[] = [
    { name: "nothing printed: nothing known", lines: [], want: { stage: null, last_line: null } },
    {
      name: "plain output: the last line is the stage",
      lines: ["cloning", "stage: compiling widgets", ""],
      want: { stage: "stage: compiling widgets", last_line: "stage: compiling widgets" },
    },
    {
      name: "a tool running is the stage; its call is the last line until more comes",
      lines: [j({ type: "system", subtype: "init", model: "m" }), claudeTool("Bash", { command: "npm test" })],
      want: { stage: "Bash: npm test", last_line: "Bash: npm test" },
    },
    {
      name: "a tool's output lines do not replace the stage while it runs",
      lines: [claudeTool("Bash", { command: "npm test" }, "Running the tests"), "stderr noise from a hook"],
      want: { stage: "Bash: npm test", last_line: "stderr noise from a hook" },
    },
    {
      name: "once the tool's result came, the stage is the last line again",
      lines: [claudeTool("Bash", { command: "npm test" }), j({ type: "user", message: { content: [{ type: "tool_result", content: "# fail 1" }] } })],
      want: { stage: "# fail 1", last_line: "# fail 1" },
    },
    {
      name: "events with no words keep what was said before",
      lines: ["building", j({ type: "turn.started" }), j({ type: "stream_event" })],
      want: { stage: "building", last_line: "building" },
    },
    {
      name: "terminal escapes and control characters are gone, whitespace folded",
      lines: ["\u001b[32mok\u001b[0m\tall\u0007 done  "],
      want: { stage: "ok all done", last_line: "ok all done" },
    },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(push(row.lines).facts(plain), row.want));

  it("a long line is cut to one bounded line", () => {
    const facts = push(["x".repeat(10_000)]).facts(plain);
    assert.equal([...facts.last_line!].length, STAGE_CHARS);
    assert.ok(facts.last_line!.endsWith("…"));
  });

  it("a token in a command or a line is redacted, by shape and by the fleet's own secret", () => {
    const secret = "s3cr3t-fleet-token";
    const redact = (t: string) => redactText(t, [secret]);
    const tool = push([claudeTool("Bash", { command: "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz' https://x" })]).facts(redact);
    assert.doesNotMatch(tool.stage!, /abcdefghijklmnop/);
    assert.match(tool.stage!, /^Bash: curl -H 'Authorization: Bearer \[redacted\]' https:\/\/x$/);
    const said = push([`pushing with ghp_${"a".repeat(36)} and ${secret}`]).facts(redact);
    assert.equal(said.last_line, "pushing with [redacted] and [redacted]");
  });
});
