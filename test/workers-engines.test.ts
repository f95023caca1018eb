// Engine profiles (server/workers/engines.ts): the command line each builds, config overrides,
// refusals that name the key and the fix; the start's check of the binary with the real claude
// and codex programs of the devDependencies; and the spend read from each CLI's real output
// (lines captured from Claude Code 2.1.197 and Codex 0.171 driven by the scripted model API).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { DEFAULT_CONFIG, FleetConfigSchema } from "../schemas/config.js";
import { BUILTIN_ENGINES, EngineError, engineCommand, engineProfile } from "../server/agent/engines.js";
import { checkEngine } from "../server/agent/engine-probe.js";
import { SpendReader, usdText } from "../server/agent/spend.js";
import { engineForStart } from "../server/host/engine-start.js";
import { SpendLedger, budgetFacts, sumText } from "../server/fleet/spend-ledger.js";
import { decide, failureAction } from "../server/state/decide.js";
import { BirthGuard } from "../server/fleet/birth-guard.js";
import { detectQuota } from "../server/agent/quota.js";

const BIN = resolve(process.cwd(), "node_modules/.bin");
const config = (extra: Record<string, unknown> = {}) => FleetConfigSchema.parse(extra);

describe("engine profiles build the command line", () => {
  const rows: Array<{ name: string; engine: string; run: { model?: string; budgetUsd?: number }; cmd: string }> = [
    {
      name: "claude with a model and a per-attempt budget",
      engine: "claude",
      run: { model: "claude-sonnet-4-5-20250929", budgetUsd: 2.5 },
      cmd: "'claude' '-p' '--output-format' 'stream-json' '--verbose' '--permission-mode' 'acceptEdits' '--allowedTools' 'Bash' 'Edit' 'Write' 'Read' 'Glob' 'Grep' '--max-turns' '200' '--model' 'claude-sonnet-4-5-20250929' '--max-budget-usd' '2.5'",
    },
    {
      name: "codex: no budget flag, the prompt on stdin",
      engine: "codex",
      run: { model: "gpt-5", budgetUsd: 1 },
      cmd: "'codex' 'exec' '--json' '--skip-git-repo-check' '--sandbox' 'danger-full-access' '--model' 'gpt-5' '-'",
    },
    {
      name: "gemini trusts the new worktree",
      engine: "gemini",
      run: {},
      cmd: "GEMINI_CLI_TRUST_WORKSPACE='true' 'gemini' '--output-format' 'stream-json' '--approval-mode' 'yolo'",
    },
  ];
  for (const row of rows) {
    it(row.name, () => assert.equal(engineCommand(engineProfile(DEFAULT_CONFIG, row.engine), row.run), row.cmd));
  }

  it("no profile runs claude in bypass mode (refused as root) or leaves the codex sandbox read-only on .git", () => {
    assert.ok(!BUILTIN_ENGINES.claude!.args.some((a) => /bypass|dangerously/.test(a)));
    assert.ok(BUILTIN_ENGINES.claude!.loginShell && BUILTIN_ENGINES.codex!.loginShell && !BUILTIN_ENGINES.command!.loginShell);
  });

  it("config overrides a built-in and defines new engines like one", () => {
    const cfg = config({
      engines: {
        claude: { binary: "/opt/claude/bin/claude", default_model: "opus" },
        cheap: { like: "codex", binary: "codex", args: ["exec", "--json"] },
        mine: { command: "sh ./agent.sh" },
      },
    });
    assert.match(engineCommand(engineProfile(cfg, "claude")), /^'\/opt\/claude\/bin\/claude' '-p' /);
    assert.equal(engineProfile(cfg, "claude").defaultModel, "opus");
    assert.equal(engineCommand(engineProfile(cfg, "cheap"), { model: "gpt-5-mini" }), "'codex' 'exec' '--json' '--model' 'gpt-5-mini' '-'");
    assert.equal(engineProfile(cfg, "cheap").usage, "codex-json");
    assert.equal(engineCommand(engineProfile(cfg, "mine")), "sh ./agent.sh");
  });

  it("refuses an unknown engine, a model that is not a model id, and a model for a CLI without the flag", () => {
    assert.throws(
      () => engineProfile(DEFAULT_CONFIG, "cluade"),
      (e: unknown) => e instanceof EngineError && /unknown engine "cluade": use one of claude, codex, command, gemini/.test(e.message),
    );
    assert.throws(
      () => engineCommand(engineProfile(DEFAULT_CONFIG, "claude"), { model: "--dangerously-skip-permissions" }),
      /model: "--dangerously-skip-permissions" is not a model id/,
    );
    assert.throws(
      () => engineCommand(engineProfile(config({ engines: { x: { like: "claude", binary: "x", model_flag: null } } }), "x"), { model: "m" }),
      /engine x takes no model flag/,
    );
  });

  it("refuses budgets that are not positive numbers, naming the key", () => {
    for (const key of ["usd_per_day", "usd_per_issue", "usd_per_attempt"]) {
      for (const bad of [0, -1, "5", Number.POSITIVE_INFINITY]) {
        const r = FleetConfigSchema.safeParse({ budget: { [key]: bad } });
        assert.equal(r.success, false, `${key}: ${String(bad)}`);
        assert.deepEqual(r.error!.issues[0]!.path, ["budget", key]);
      }
    }
  });
});

describe("the start's engine check", () => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", SHELL: "/bin/sh" };

  it("finds the real claude and codex in a login shell and reads their versions", async () => {
    const claude = await checkEngine(
      { ...engineProfile(DEFAULT_CONFIG, "claude"), binary: join(BIN, "claude") },
      { ...env, ANTHROPIC_BASE_URL: "http://127.0.0.1:1" },
    );
    assert.match(claude.version, /^2\.\d+\.\d+ \(Claude Code\)$/);
    assert.deepEqual(claude.provider, ["ANTHROPIC_BASE_URL=http://127.0.0.1:1"]);
    const codex = await checkEngine({ ...engineProfile(DEFAULT_CONFIG, "codex"), binary: join(BIN, "codex") }, env);
    assert.match(codex.version, /^codex-cli \d+\.\d+\.\d+$/);
  });

  it("refuses a binary that does not resolve, with the fix", async () => {
    await assert.rejects(
      checkEngine({ ...engineProfile(DEFAULT_CONFIG, "gemini"), binary: "afk-no-such-agent" }, env),
      /engines\.gemini\.binary: "afk-no-such-agent" is not found on the workers' PATH .*npm i -g @google\/gemini-cli\) or set engines\.gemini\.binary/,
    );
  });

  it("refuses engine beside worker_command, a model without an engine, and a model missing from a non-empty price table", async () => {
    await assert.rejects(engineForStart({ engine: "claude", worker_command: "true" }, DEFAULT_CONFIG, env), /pass engine or worker_command, not both/);
    await assert.rejects(engineForStart({ model: "gpt-5", worker_command: "true" }, DEFAULT_CONFIG, env), /model: the "command" engine .* takes no model/);
    await assert.rejects(engineForStart({ engine: "nope" }, DEFAULT_CONFIG, env), /project_start refused: engine: unknown engine "nope"/);
    const priced = config({ prices: { "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10 } }, engines: { codex: { binary: join(BIN, "codex") } } });
    await assert.rejects(engineForStart({ engine: "codex", model: "gpt-9" }, priced, env), /prices: no price for model "gpt-9" .* add prices\.gpt-9/);
    const ok = await engineForStart({ engine: "codex", model: "gpt-5" }, priced, env);
    assert.equal(ok.engine?.name, "codex");
    assert.match(ok.step!, /^engine codex \(model gpt-5\): .*codex, version codex-cli/);
    const opaque = await engineForStart({ worker_command: "sh agent.sh" }, DEFAULT_CONFIG, env);
    assert.deepEqual(
      { ...opaque, programs: opaque.programs.map((p) => [p.what, p.named]) },
      {
        command: "sh agent.sh",
        engine: null,
        engines: {},
        step: null,
        programs: [["the worker command's program", "sh"]],
      },
    );
    assert.match(opaque.programs[0]!.path, /\/sh$/);
    // The engine's binary, with the PATH of the shell that found it: the runtime looks for it there.
    assert.deepEqual(
      ok.programs.map((p) => [p.what, p.path, p.pathVar !== ""]),
      [["engine codex's binary", join(BIN, "codex"), true]],
    );
  });
});

describe("routes refused at start, each with the key and the fix", () => {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", SHELL: "/bin/sh" };
  const engines = { claude: { binary: join(BIN, "claude") }, codex: { binary: join(BIN, "codex") } };
  const rows: Array<{ name: string; input: { engine?: string; model?: string; worker_command?: string }; config: Record<string, unknown>; refused: RegExp }> = [
    {
      name: "a selector naming an unknown engine",
      input: { engine: "claude" },
      config: { engines, selectors: [{ label: "docs", engine: "cluade" }] },
      refused: /project_start refused: selectors\.0\.engine: unknown engine "cluade": use one of claude, codex, command, gemini, or define it under "engines"/,
    },
    {
      name: "a selector's model that is not a model id",
      input: { engine: "claude" },
      config: { engines, selectors: [{ label: "docs", model: "-rf" }] },
      refused: /project_start refused: selectors\.0\.model: "-rf" is not a model id/,
    },
    {
      name: "a ladder rung naming an engine whose binary is missing",
      input: { engine: "claude" },
      config: { engines: { ...engines, gemini: { binary: "afk-no-such-agent" } }, routing: { ladder: [{ engine: "gemini" }] } },
      refused: /engines\.gemini\.binary: "afk-no-such-agent" is not found on the workers' PATH/,
    },
    {
      name: "a selector routing to an opaque command",
      input: { engine: "claude" },
      config: { engines: { ...engines, mine: { command: "sh agent.sh" } }, selectors: [{ label: "docs", engine: "mine" }] },
      refused: /selectors\.0\.engine: mine is an opaque command: a route names an agent CLI engine/,
    },
    {
      name: "a price table missing the model a selector routes to",
      input: { engine: "claude" },
      config: { engines, prices: { "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10 } }, selectors: [{ label: "docs", engine: "codex", model: "gpt-9" }] },
      refused: /selectors\.0\.model: no price for model "gpt-9" .* add prices\.gpt-9/,
    },
    {
      name: "a price table missing a configured engine's default model",
      input: { engine: "claude" },
      config: {
        engines: { ...engines, codex: { binary: join(BIN, "codex"), default_model: "o3" } },
        prices: { "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10 } },
      },
      refused: /engines\.codex\.default_model: no price for model "o3"/,
    },
    {
      name: "a selector's route on an opaque worker_command start",
      input: { worker_command: "sh agent.sh" },
      config: { selectors: [{ label: "docs", engine: "codex" }] },
      refused: /project_start refused: selectors\.0: a selector's engine and model route an engine start; start with engine/,
    },
    {
      name: "a ladder on an opaque worker_command start",
      input: { worker_command: "sh agent.sh" },
      config: { routing: { ladder: [{ model: "x" }] } },
      refused: /project_start refused: routing\.ladder: the ladder routes an engine start/,
    },
  ];
  for (const row of rows) it(row.name, async () => assert.rejects(engineForStart(row.input, config(row.config), env), row.refused));

  it("verifies every engine a route or the config names, and says so in the step", async () => {
    const ok = await engineForStart(
      { engine: "claude", model: "claude-sonnet-4-5" },
      config({ engines, selectors: [{ label: "docs", engine: "codex", model: "gpt-5" }, { label: "ready-for-agent" }] }),
      env,
    );
    assert.deepEqual(Object.keys(ok.engines).sort(), ["claude", "codex"]);
    assert.match(ok.step!, /; routes selector 1: codex gpt-5; also verified: codex \(codex-cli \d+\.\d+\.\d+\)$/);
  });

  it("a selector's engine is a config key: not an engine name is refused by the schema, naming the key", () => {
    const r = FleetConfigSchema.safeParse({ selectors: [{ label: "docs", engine: "Claude Code" }] });
    assert.equal(r.success, false);
    assert.deepEqual(r.error!.issues[0]!.path, ["selectors", 0, "engine"]);
  });
});

describe("spend read from the CLIs' output", () => {
  it("claude: the result line's total_cost_usd and usage (captured from 2.1.197)", () => {
    const reader = new SpendReader("claude", "claude-json", null, {});
    reader.push('{"type":"system","subtype":"init","model":"claude-sonnet-4-5-20250929","claude_code_version":"2.1.197"}');
    reader.push(
      '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done","total_cost_usd":0.009000000000000001,"usage":{"input_tokens":2000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":200},"modelUsage":{"claude-sonnet-4-5-20250929":{"inputTokens":2000,"outputTokens":200,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.009000000000000001,"contextWindow":200000,"maxOutputTokens":32000}}}',
    );
    assert.deepEqual(reader.spend(), {
      engine: "claude",
      model: "claude-sonnet-4-5-20250929",
      input_tokens: 2000,
      cached_input_tokens: 0,
      output_tokens: 200,
      usd: 0.009000000000000001,
      source: "cli",
    });
  });

  it("claude stopped by --max-budget-usd: the run's totals come from modelUsage, not the last turn's usage", () => {
    const reader = new SpendReader("claude", "claude-json", "claude-sonnet-4-5-20250929", {});
    reader.push(
      '{"type":"result","subtype":"error_max_budget_usd","is_error":true,"num_turns":2,"total_cost_usd":0.009000000000000001,"usage":{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":100},"modelUsage":{"claude-sonnet-4-5-20250929":{"inputTokens":2000,"outputTokens":200,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.009000000000000001}}}',
    );
    assert.deepEqual([reader.spend().input_tokens, reader.spend().output_tokens, reader.spend().usd], [2000, 200, 0.009000000000000001]);
  });

  it("codex: turn.completed usage summed over turns, priced with the table (captured from 0.171)", () => {
    const reader = new SpendReader("codex", "codex-json", "gpt-5", { "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10, cached_input_per_mtok: 0.125 } });
    reader.push('{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"{\\"type\\":\\"turn.completed\\"}"}}');
    reader.push(
      '{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":1000,"cache_write_input_tokens":0,"output_tokens":200,"reasoning_output_tokens":0}}',
    );
    reader.push('{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100}}');
    const spend = reader.spend();
    assert.deepEqual(
      { ...spend, usd: Math.round(spend.usd! * 1e9) / 1e9 },
      {
        engine: "codex",
        model: "gpt-5",
        input_tokens: 3000,
        cached_input_tokens: 1000,
        output_tokens: 300,
        usd: (2000 * 1.25 + 1000 * 0.125 + 300 * 10) / 1e6,
        source: "prices",
      },
    );
  });

  it("unknown is unknown, never 0: no price, no usage, an opaque command", () => {
    const unpriced = new SpendReader("codex", "codex-json", "gpt-5", {});
    unpriced.push('{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":1}}');
    assert.equal(unpriced.spend().usd, null);
    assert.equal(unpriced.spend().input_tokens, 10);
    const silent = new SpendReader("claude", "claude-json", null, {});
    silent.push("not json");
    assert.deepEqual([silent.spend().usd, silent.spend().input_tokens, silent.spend().source], [null, null, "unknown"]);
    assert.equal(usdText(null), "unknown");
  });
});

describe("the spend ledger and the budgets as inputs of decide", () => {
  const at = new Date("2026-12-03T15:00:00Z");
  const spend = (usd: number | null) => ({
    engine: "claude",
    model: "m",
    input_tokens: 10,
    cached_input_tokens: 0,
    output_tokens: 1,
    usd,
    source: usd === null ? ("unknown" as const) : ("cli" as const),
  });

  it("sums per issue and per UTC day, counting unknown attempts apart", () => {
    const ledger = new SpendLedger();
    ledger.record(7, spend(0.5), at);
    ledger.record(7, spend(null), at);
    ledger.record(8, spend(1), new Date("2026-12-02T23:59:59Z"));
    assert.deepEqual(ledger.day(at), { usd: 0.5, attempts: 2, unknown_attempts: 1, input_tokens: 20, output_tokens: 2 });
    assert.equal(sumText(ledger.issue(7)), "$0.5000 over 2 attempts (1 of unknown cost: at least this), 20 input and 2 output tokens");
    assert.equal(sumText(ledger.issue(9)), "nothing spent");
    const facts = budgetFacts({ usd_per_day: 0.5, usd_per_issue: 0.75 }, ledger, at);
    assert.match(
      facts.dayHold!,
      /^budget\.usd_per_day reached: \$0\.5000 spent today \(UTC 2026-12-03\) of \$0\.5000; births resume at 2026-12-04T00:00:00\.000Z$/,
    );
    assert.deepEqual([...facts.issuesOver.keys()], [8]);
    assert.equal(budgetFacts({ usd_per_day: null, usd_per_issue: null }, ledger, at).dayHold, null);
  });

  it("a reached day budget holds births in decide, and says which budget", () => {
    const set = {
      mine: [],
      frontier: { dispatch: [{ number: 1, title: "t", attempt: 0 }], excluded: [] },
      stale: [],
      peerLive: [],
      orphans: [],
    } as unknown as Parameters<typeof decide>[0]["set"];
    const base = { set, local: new Map(), target: 2, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 600 };
    assert.equal(decide(base).actions.filter((a) => a.kind === "dispatch").length, 1);
    const held = decide({ ...base, budget: { dayHold: "budget.usd_per_day reached", issuesOver: new Map() } });
    assert.equal(held.actions.filter((a) => a.kind === "dispatch").length, 0);
    assert.equal(held.birthsHeld, "budget.usd_per_day reached");
  });

  it("an issue past its budget is escalated with its spend instead of retried", () => {
    const claim = { issue: 5, sha: "abc", pr: null, attempt: 0 };
    const evidence = { kind: "no_result" as const, why: "no commits" };
    const input = { retry: 2, birthsPaused: false, stopping: false };
    assert.equal(failureAction(claim, input, evidence).kind, "retry");
    const over = failureAction(
      claim,
      { ...input, budget: { dayHold: null, issuesOver: new Map([[5, "$2.0000 over 2 attempts (budget.usd_per_issue $1.0000)"]]) } },
      evidence,
    );
    assert.deepEqual(
      [over.kind, over.kind === "escalate" ? over.why : ""],
      ["escalate", "over its budget: $2.0000 over 2 attempts (budget.usd_per_issue $1.0000)"],
    );
  });
});

describe("failover: a usage limit pauses its engine only", () => {
  it("pauses the fleet only once no engine of the failover set is healthy", () => {
    const now = new Date("2026-12-03T15:00:00Z");
    const events: string[] = [];
    const guard = new BirthGuard(
      DEFAULT_CONFIG.circuit,
      1,
      () => now,
      (_level, event) => events.push(event),
      (lines) => [...lines],
    );
    guard.failoverAmong(["claude", "codex"]);
    const limit = detectQuota(
      "You've hit your session limit · resets 4:19pm (UTC)",
      { quotaPatterns: DEFAULT_CONFIG.worker.quota_patterns, authPatterns: DEFAULT_CONFIG.worker.auth_patterns },
      now,
    )!;
    guard.onQuota(1, limit, "claude");
    assert.equal(guard.paused(false), null, "codex is healthy: births go on");
    assert.match(guard.enginePaused("claude")!.reason, /^engine claude: usage limit reached/);
    assert.equal(guard.enginePaused("claude")!.until!.toISOString(), "2026-12-03T16:20:00.000Z", "the reset time plus a minute");
    guard.onQuota(2, limit, "codex");
    assert.ok(guard.paused(false), "no engine healthy: births pause as with one engine");
    // An opaque command (no engine), or a single engine, pauses the fleet as before.
    const single = new BirthGuard(
      DEFAULT_CONFIG.circuit,
      1,
      () => now,
      () => undefined,
      (lines) => [...lines],
    );
    single.onQuota(1, limit, "claude");
    assert.ok(single.paused(false));
    assert.deepEqual(events, ["engine_paused", "engine_paused", "quota"]);
  });
});
