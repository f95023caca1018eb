// What a worker is doing, read from its output as it streams, for status and the board: the tool
// an agent CLI's JSON stream says it runs (Claude Code's stream-json `tool_use`, Codex `exec
// --json`'s `item.started`, Gemini's stream-json `tool_use`), else the last line it printed (an
// event's words, not its envelope). The shapes are told apart by their fields, not by the
// engine's name: an adopted worker or a user's engine profile is read the same way.
import { oneLine, stripAnsi } from "../text/text.js";

/** The widest a stage or a last line is shown, in characters. */
export const STAGE_CHARS = 160;

/** A line longer than this is not parsed (a tool result carrying a whole file): its words are not worth the parse. */
const MAX_PARSED = 200_000;

/** What one line of output says. */
export interface LineReading {
  /** The tool the agent started ("Bash: npm test"), or null. */
  tool: string | null;
  /** Words a human can read (the line itself, or an event's text), or null (an event with none). */
  words: string | null;
  /** The tool it ran has finished (its result came): the stage is no longer that tool. */
  done: boolean;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);

/** The argument that says what a tool call does, by the names the CLIs give it. */
const ARG_KEYS = ["command", "file_path", "absolute_path", "notebook_path", "path", "dir_path", "pattern", "url", "query", "description", "prompt"];

function toolText(name: string, input: unknown): string {
  const arg = isObj(input) ? ARG_KEYS.map((k) => str(input[k])).find((v) => v !== null) : null;
  return arg ? `${name}: ${arg}` : name;
}

/** The last line of a tool's output that has words in it. */
function lastWords(text: unknown): string | null {
  if (Array.isArray(text)) return lastWords(text.map((c) => (isObj(c) ? (str(c.text) ?? "") : String(c))).join("\n"));
  const s = str(text);
  if (s === null) return null;
  const lines = s.split(/\r?\n/).filter((l) => l.trim() !== "");
  return lines.at(-1) ?? null;
}

/** Codex runs its commands through a shell (`bash -lc 'npm test'`): the command is what matters. */
function unwrapShell(command: unknown): string | null {
  if (Array.isArray(command)) {
    const argv = command.map(String);
    return argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0]!) && /^-l?c$/.test(argv[1]!) ? argv[2]! : argv.join(" ");
  }
  const c = str(command);
  if (c === null) return null;
  const m = /^(?:\/\S*\/)?(?:ba|z)?sh -l?c ('|")([\s\S]*)\1$/.exec(c.trim());
  return m ? m[2]! : c;
}

const reading = (tool: string | null, words: string | null, done = false): LineReading => ({ tool, words, done });

function claude(e: Obj): LineReading | null {
  const message = isObj(e.message) ? e.message : {};
  const content = Array.isArray(message.content) ? message.content.filter(isObj) : [];
  if (e.type === "assistant") {
    const tools = content.filter((c) => c.type === "tool_use" && typeof c.name === "string");
    const text = content
      .filter((c) => c.type === "text")
      .map((c) => str(c.text) ?? "")
      .join(" ");
    const tool = tools.at(-1);
    return reading(tool ? toolText(tool.name as string, tool.input) : null, str(text));
  }
  if (e.type === "user") {
    const result = content.find((c) => c.type === "tool_result");
    return result ? reading(null, lastWords(result.content), true) : null;
  }
  if (e.type === "system" && e.subtype === "init") return started(e);
  return null;
}

const started = (e: Obj): LineReading => reading(null, `session started${str(e.model) ? ` (model ${e.model as string})` : ""}`);

function codexItem(kind: string, item: Obj): LineReading | null {
  const type = str(item.type) ?? str(item.item_type) ?? "";
  if (kind === "item.started") {
    if (type === "command_execution") return reading(`Shell: ${unwrapShell(item.command) ?? "a command"}`, null);
    if (type === "file_change") {
      const paths = (Array.isArray(item.changes) ? item.changes : []).filter(isObj).map((c) => str(c.path));
      return reading(`Edit: ${paths.filter((p) => p !== null).join(", ") || "files"}`, null);
    }
    if (type === "mcp_tool_call") return reading(toolText(`${str(item.server) ?? "mcp"}.${str(item.tool) ?? "tool"}`, item.arguments), null);
    if (type === "web_search") return reading(toolText("WebSearch", item), null);
    return null;
  }
  if (kind !== "item.completed") return null;
  if (type === "command_execution")
    return reading(null, lastWords(item.aggregated_output) ?? (typeof item.exit_code === "number" ? `exit ${item.exit_code}` : null), true);
  if (type === "file_change" || type === "mcp_tool_call" || type === "web_search") return reading(null, null, true);
  if (type === "agent_message" || type === "reasoning" || type === "assistant_message") return reading(null, str(item.text));
  if (type === "error") return reading(null, str(item.message));
  return null;
}

function codex(e: Obj): LineReading | null {
  const type = e.type as string;
  if (type.startsWith("item.")) return isObj(e.item) ? codexItem(type, e.item) : null;
  if (type === "turn.failed") return failed(e);
  return null;
}

/** An error event (Codex's turn.failed and error, Gemini's error): its message. */
const failed = (e: Obj): LineReading => reading(null, str(e.message) ?? (isObj(e.error) ? str(e.error.message) : null) ?? `${e.type as string}`);

function gemini(e: Obj): LineReading | null {
  if (e.type === "tool_use") return reading(toolText(str(e.tool_name) ?? "tool", e.parameters), null);
  if (e.type === "tool_result") {
    const error = isObj(e.error) ? str(e.error.message) : null;
    return reading(null, error ?? lastWords(e.output) ?? str(e.status), true);
  }
  if (e.type === "message") return e.role === "assistant" ? reading(null, str(e.content)) : null;
  if (e.type === "init") return started(e);
  return null;
}

/**
 * What one line of a worker's output says. A line that is not a JSON object is words as it is;
 * an event of a known stream gives its tool or its words (null: one with neither, such as a
 * turn's start); a JSON object of no stream we know is words as printed.
 */
export function readLine(line: string): LineReading | null {
  const t = line.trim();
  if (t === "") return null;
  if (!t.startsWith("{")) return reading(null, line);
  if (t.length > MAX_PARSED) return reading(null, null);
  let event: unknown;
  try {
    event = JSON.parse(t);
  } catch {
    return reading(null, line);
  }
  if (!isObj(event) || typeof event.type !== "string") return reading(null, line);
  const type = event.type;
  // The run's end (Claude Code's and Gemini's result) and an error event read alike in every stream.
  if (type === "result") return reading(null, lastWords(event.result) ?? `finished (${str(event.subtype) ?? str(event.status) ?? "no result"})`, true);
  if (type === "error") return failed(event);
  if (type === "assistant" || type === "user" || type === "system") return claude(event);
  if (type.startsWith("item.") || type.startsWith("turn.") || type.startsWith("thread.")) return codex(event);
  if (type === "tool_use" || type === "tool_result" || type === "message" || type === "init") return gemini(event);
  return null;
}

/** Text fit for one bounded line: terminal escapes and control characters gone, whitespace folded, cut. */
function bounded(text: string): string {
  return oneLine(stripAnsi(text.length > STAGE_CHARS * 8 ? text.slice(0, STAGE_CHARS * 8) : text), STAGE_CHARS);
}

/** What a worker is doing, as its output says: fed every line, asked at any time. */
export class StageReader {
  private tool: string | null = null;
  private said: string | null = null;

  push(line: string): void {
    const r = readLine(line);
    if (r === null) return;
    if (r.tool !== null) this.tool = bounded(r.tool);
    else if (r.done) this.tool = null;
    const words = r.words ?? r.tool;
    if (words !== null && words.trim() !== "") this.said = bounded(words);
  }

  /**
   * The stage (the tool it runs, else its last line) and its last line, each one line of at most
   * STAGE_CHARS, through `redact` (the fleet's tokens and the credential shapes we know).
   */
  facts(redact: (text: string) => string): { stage: string | null; last_line: string | null } {
    const last = this.said === null ? null : redact(this.said);
    return { stage: this.tool === null ? last : redact(this.tool), last_line: last };
  }
}
