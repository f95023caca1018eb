// Real MCP clients against the built binary: Claude Code (`claude -p`, the pinned devDependency,
// 2.1.337) starts afk-mcp over stdio from --mcp-config, and a scripted double of the model API on
// 127.0.0.1 (server/demo/scripted-model.ts) has it call afk-mcp's tools. With
// MCP_PROTOCOL_NEGOTIATION=auto it speaks 2026-07-28 (server/discover, each request's `_meta`,
// never initialize); without it, 2025-11-25 (initialize). The server's side of the pipe is logged
// by a wrapper that tees both directions, which is what the revision is read from.
//
// No network, as in test/engines-real-cli.test.ts: a temporary HOME, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
// every proxy variable pointing at a loopback sentinel that counts connections (none allowed).
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { BASE_CONFIG, daemonWorld, teardown, type DaemonWorld } from "./support/daemon-fixtures.js";
import { tempDir } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { loopbackSentinel } from "./support/loopback-sentinel.js";
import { answerTo, envelopeRevisions, wireLoggedServer, type Wire } from "./support/wire-log.js";
import { startScriptedModel, type ScriptStep, type ScriptedModel } from "./support/scripted-model-api.js";

const pexec = promisify(execFile);
const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const MODEL = "claude-sonnet-4-5-20250929";
const REPO = "afk/demo";
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";

const worlds: DaemonWorld[] = [];
after(async () => {
  for (const world of worlds) await teardown(world);
});

/** Every proxy variable of claude points at the sentinel: a request beyond 127.0.0.1 would show there. */
const sentinel = await loopbackSentinel();

interface Run {
  code: number;
  stderr: string;
  model: ScriptedModel;
  /** What the client sent afk-mcp, and what afk-mcp answered. */
  wire: Wire;
}

/** Runs `claude -p` with afk-mcp (behind a wire-logging wrapper) as its one MCP server, the model scripted. */
async function runClaude(world: DaemonWorld, script: ScriptStep[], negotiation: string | null): Promise<Run> {
  const dir = await tempDir("afk-clients-");
  const home = join(dir, "home");
  await mkdir(home, { recursive: true });
  const server = await wireLoggedServer(dir);
  const config = join(dir, "mcp.json");
  await writeFile(config, JSON.stringify({ mcpServers: { afk: { type: "stdio", command: server.command, args: [], env: { ...world.env, HOME: home } } } }));
  const model = await startScriptedModel({ script });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: home,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "scripted-test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    ...sentinel.proxyEnv(),
    // A loaded machine starts afk-mcp slowly: the connection, and the discover probe timed from
    // it, must not give up on it (a timed-out probe falls back to 2025-11-25).
    MCP_TIMEOUT: "120000",
    MCP_CONNECT_TIMEOUT_MS: "60000",
    ...(negotiation === null ? {} : { MCP_PROTOCOL_NEGOTIATION: negotiation }),
  };
  const args = [
    "-p",
    `Run afk-mcp on ${REPO}.`,
    "--mcp-config",
    config,
    "--strict-mcp-config",
    "--allowedTools",
    "mcp__afk",
    "--model",
    MODEL,
    "--max-turns",
    "12",
  ];
  let code = 0;
  let stderr = "";
  try {
    const child = pexec(CLAUDE, args, { env, cwd: dir, timeout: 240_000 });
    // Nothing on stdin: the prompt is the argument (else claude waits 3 s for piped input).
    child.child.stdin?.end();
    ({ stderr } = await child);
  } catch (error) {
    const e = error as { code?: number; stderr?: string };
    code = typeof e.code === "number" ? e.code : 1;
    stderr = e.stderr ?? String(error);
  } finally {
    await model.close();
  }
  return { code, stderr, model, wire: await server.read() };
}

/** The tool result the model read on the turn after `tool`'s call: afk-mcp's answer, as Claude Code passes it on. */
function readAfter(run: Run, tool: string): string {
  const at = run.model.turns.findIndex((t) => t.reply === `mcp__afk__${tool}`);
  assert.ok(at >= 0, `the model never called ${tool}: ${run.model.turns.map((t) => t.reply).join(", ")}`);
  return run.model.turns[at + 1]?.read ?? "";
}

/** The JSON the model read after `tool`'s call (Claude Code appends a `<system-reminder>` of its own). */
const readJson = (run: Run, tool: string): unknown => JSON.parse(readAfter(run, tool).split("\n\n<system-reminder>")[0]!);

const explain = (run: Run): string =>
  `exit ${run.code}\nturns: ${run.model.turns.map((t) => t.reply).join(", ")}\nsent: ${run.wire.sent.map((m) => m.method ?? `answer ${String(m.id)}`).join(", ")}\n${run.stderr.slice(-2000)}`;

describe("Claude Code 2.1.337 (claude -p) with afk-mcp on stdio, the model scripted", () => {
  it("MCP_PROTOCOL_NEGOTIATION=auto: it speaks 2026-07-28 and calls status, project_start and project_stop; their results reach the model", async () => {
    const world = await daemonWorld(["Task 1"], "commit");
    worlds.push(world);
    const start = { repo: REPO, worker_command: `sh ${world.worker}`, target: 1, config: BASE_CONFIG };
    const run = await runClaude(
      world,
      [
        { tool: "status", input: { repo: REPO } },
        { tool: "project_start", input: start },
        { tool: "project_stop", input: { repo: REPO, stop_workers: true } },
        { text: "scripted run over" },
      ],
      "auto",
    );
    assert.equal(run.code, 0, explain(run));
    // The script's calls, each MCP tool loaded through ToolSearch first (2.1.337 defers MCP tools).
    const calls = run.model.turns.map((t) => t.reply).filter((r) => r !== "text");
    assert.deepEqual(
      calls.filter((r) => r.startsWith("mcp__")),
      ["mcp__afk__status", "mcp__afk__project_start", "mcp__afk__project_stop"],
      explain(run),
    );

    // The server's side: the new revision's discovery, no handshake, every call in its envelope.
    const methods = run.wire.sent.map((m) => m.method).filter(Boolean);
    assert.equal(methods[0], "server/discover", explain(run));
    assert.ok(!methods.includes("initialize"), explain(run));
    assert.deepEqual([...new Set(envelopeRevisions(run.wire))], [MODERN], "every request names 2026-07-28 in its _meta");
    const toolCalls = run.wire.sent.filter((m) => m.method === "tools/call");
    assert.deepEqual(
      toolCalls.map((m) => m.params?.name),
      ["status", "project_start", "project_stop"],
    );
    for (const m of toolCalls) {
      assert.equal(m.params?._meta?.["io.modelcontextprotocol/protocolVersion"], MODERN, JSON.stringify(m.params?._meta));
      assert.equal((m.params?._meta?.["io.modelcontextprotocol/clientInfo"] as { name?: string } | undefined)?.name, "claude-code");
    }
    for (const tool of ["status", "project_start", "project_stop"]) {
      const answer = answerTo(run.wire, tool);
      assert.equal(answer.result?.resultType, "complete", `${tool}: ${JSON.stringify(answer.result).slice(0, 400)}`);
      assert.notEqual(answer.result?.isError, true, `${tool}: ${JSON.stringify(answer.result).slice(0, 800)}`);
    }

    // What afk-mcp answered is what the model read on its next turn.
    const status = answerTo(run.wire, "status").result!;
    assert.ok(status.structuredContent, "status has structured content");
    // Claude Code hands the model a tool's structured content (JSON), not its text.
    assert.deepEqual(readJson(run, "status"), status.structuredContent);
    assert.deepEqual(readJson(run, "project_stop"), answerTo(run.wire, "project_stop").result!.structuredContent);
    // A real start: the daemon registered the fleet with the script's worker.
    const started = readJson(run, "project_start") as { registration: { repo: string; target: number; worker_command: string } };
    assert.deepEqual(
      { repo: started.registration.repo, target: started.registration.target, worker_command: started.registration.worker_command },
      { repo: REPO, target: 1, worker_command: start.worker_command },
    );
  });

  it("MCP_PROTOCOL_NEGOTIATION=legacy: it speaks 2025-11-25 (initialize) and calls status", async () => {
    const world = await daemonWorld(["Task 1"], "commit");
    worlds.push(world);
    const run = await runClaude(world, [{ tool: "status", input: { repo: REPO } }, { text: "scripted run over" }], "legacy");
    assert.equal(run.code, 0, explain(run));
    const initialize = run.wire.sent[0];
    assert.equal(initialize?.method, "initialize", explain(run));
    assert.ok(!run.wire.sent.some((m) => m.method === "server/discover"), explain(run));
    assert.equal(run.wire.answered.find((m) => m.id === initialize.id)?.result?.protocolVersion, LEGACY);
    const status = answerTo(run.wire, "status").result!;
    assert.equal(status.resultType, undefined, "no resultType in 2025-11-25");
    assert.match(readAfter(run, "status"), /afk\/demo/);
  });

  it("with no MCP_PROTOCOL_NEGOTIATION it negotiates too: 2.1.337's default for stdio servers is auto", async () => {
    const world = await daemonWorld(["Task 1"], "commit");
    worlds.push(world);
    const run = await runClaude(world, [{ tool: "status", input: { repo: REPO } }, { text: "scripted run over" }], null);
    assert.equal(run.code, 0, explain(run));
    assert.equal(run.wire.sent[0]?.method, "server/discover", explain(run));
    assert.ok(!run.wire.sent.some((m) => m.method === "initialize"), explain(run));
    assert.equal(answerTo(run.wire, "status").result?.resultType, "complete");
    assert.match(readAfter(run, "status"), /afk\/demo/);
  });
});
