// Every message names a command its reader can run where they are: the host's advice names
// MCP tools, and the CLI words it for a terminal (server/cli/terminal-words.ts). These tests
// hold that: each suggestion parses as a real afk-mcp command with real flags, and no string
// in the server outside the MCP surface still names a tool once worded for a terminal.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { commands } from "../server/cli/commands.js";
import { forTerminal } from "../server/cli/terminal-words.js";
import ts from "typescript";
import { ROOT } from "./support/paths.js";

/** What only an MCP session reads: these may name tools as they are. */
const MCP_SURFACE = ["server.ts", "prompts.ts", "resources.ts"].map((f) => join("server", f));

/** What names a tool, a tool's argument list or a tool's parameter. */
const TOOL_WORDS = /\bproject_(?:start|stop|reset|resize)\b|\b(?:takeover|logs|status) \{|\bstop_workers\b|\bworker_command\b|\bconfirm: true\b/;

const ROWS: [string, string][] = [
  [
    "stopping: 2 released; 1 worker(s) still running: each claim is settled when its worker exits; project_stop {stop_workers: true} ends them now",
    "stopping: 2 released; 1 worker(s) still running: each claim is settled when its worker exits; afk-mcp stop --repo me/app --stop-workers ends them now",
  ],
  [
    "circuit breaker tripped after 3 fast worker deaths: fix the worker command, then project_reset",
    "circuit breaker tripped after 3 fast worker deaths: fix the worker command, then afk-mcp reset --repo me/app",
  ],
  [
    "already running on this host: use project_resize to change it, or project_stop first",
    "already running on this host: use afk-mcp resize --repo me/app to change it, or afk-mcp stop --repo me/app first",
  ],
  ["no project is running for me/app on this host: start one with project_start", "no project is running for me/app on this host: start one with afk-mcp run"],
  ["2 instance(s); take one with takeover {instance, confirm?}", "2 instance(s); take one with afk-mcp takeover --repo me/app --instance ID [--confirm]"],
  ["looks alive. Call again with confirm: true only if you know it is dead.", "looks alive. Call again with --confirm only if you know it is dead."],
  ['logs: `logs {lane: "supervisor", issue: 12}`', "logs: `afk-mcp logs --repo me/app --lane supervisor --issue 12`"],
  ['see its lane (logs {lane: "daemon"})', "see its lane (afk-mcp logs --lane daemon)"],
  ["worker command is empty: set worker_command in project_start", "worker command is empty: give --worker to afk-mcp run"],
  ["Call status {repo} first", "Call afk-mcp plan --repo me/app first"],
  ['more rows: status {detail: true, cursor: "40"}', "more rows: afk-mcp plan --repo me/app"],
];

describe("forTerminal", () => {
  it("words each tool the host names as the afk-mcp command that does the same", () => {
    for (const [mcp, terminal] of ROWS) assert.equal(forTerminal(mcp, { repo: "me/app" }), terminal);
    assert.equal(
      forTerminal("then project_reset"),
      "then afk-mcp reset",
      "without a known repo, the command's default (the current directory's origin) applies",
    );
    assert.equal(forTerminal("nothing to translate: 3 issues ready"), "nothing to translate: 3 issues ready");
  });

  it("suggests only commands that exist, with flags they accept", () => {
    const suggested = new Set<string>();
    for (const [mcp] of ROWS) {
      for (const m of forTerminal(mcp, { repo: "me/app" }).matchAll(/afk-mcp ([^`]*)/g)) {
        const words = m[1]!.split(/\s+/).map((w) => w.replace(/^\[(--[a-z-]+)\]$/, "$1").replace(/[.,;:]$/, ""));
        suggested.add(words.join(" "));
      }
    }
    assert.ok(suggested.size >= 7, [...suggested].join(" | "));
    for (const line of suggested) {
      const [name, ...rest] = line.split(" ");
      const command = commands.find((c) => c.name === name);
      assert.ok(command, `afk-mcp ${name} is suggested but is not a command`);
      // The rest of the sentence ("ends them now") is not arguments: parse the flags only.
      const flagsOnly = rest.slice(0, lastFlagValueIndex(rest, command.options) + 1);
      assert.doesNotThrow(() => parseArgs({ args: flagsOnly, options: command.options, strict: true, allowPositionals: false }), `afk-mcp ${line}`);
    }
  });
});

describe("the server's messages, worded for a terminal", () => {
  it("name no MCP tool outside the MCP surface (server/tools, server.ts, prompts.ts, resources.ts)", async () => {
    const offending: string[] = [];
    for (const file of await sources(join(ROOT, "server"))) {
      const rel = relative(ROOT, file);
      if (rel.startsWith(join("server", "tools")) || MCP_SURFACE.includes(rel)) continue;
      for (const { text, line } of await stringsIn(file)) {
        if (TOOL_WORDS.test(text) && TOOL_WORDS.test(forTerminal(text))) offending.push(`${rel}:${line}: ${forTerminal(text)}`);
      }
    }
    assert.deepEqual(offending, []);
  });

  it("the CLI's own texts (usage, errors) name no MCP tool at all: they are printed as written", async () => {
    const offending: string[] = [];
    for (const file of [join(ROOT, "server", "cli.ts"), ...(await sources(join(ROOT, "server", "cli")))]) {
      if (file.endsWith("terminal-words.ts")) continue;
      for (const { text, line } of await stringsIn(file)) if (TOOL_WORDS.test(text)) offending.push(`${relative(ROOT, file)}:${line}: ${text.slice(0, 200)}`);
    }
    assert.deepEqual(offending, []);
  });
});

/** Every string and template literal of a TypeScript file, with its line. */
async function stringsIn(file: string): Promise<{ text: string; line: number }[]> {
  const source = ts.createSourceFile(file, await readFile(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out: { text: string; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    const line = (): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push({ text: node.text, line: line() });
    // A template as it reads once filled in: each substitution stands in as "0".
    if (ts.isTemplateExpression(node)) out.push({ text: node.head.text + node.templateSpans.map((span) => `0${span.literal.text}`).join(""), line: line() });
    node.forEachChild(visit);
  };
  visit(source);
  return out;
}

/** The index of the last argument that is a flag or a string flag's value. */
function lastFlagValueIndex(args: string[], options: NonNullable<Parameters<typeof parseArgs>[0]>["options"]): number {
  let last = -1;
  for (let i = 0; i < args.length; i += 1) {
    const flag = /^--([a-z-]+)$/.exec(args[i]!)?.[1];
    if (!flag) break;
    last = i;
    if (options?.[flag]?.type === "string") {
      last = i + 1;
      i += 1;
    }
  }
  return last;
}

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(path)));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}
