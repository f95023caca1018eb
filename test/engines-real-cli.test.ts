// The real agent CLIs as workers: `claude` (@anthropic-ai/claude-code) and `codex` (@openai/codex)
// from this package's devDependencies, started by the fleet through its production spawn path
// from their engine profiles (`project_start {engine}`), driven by a scripted test double of the
// MODEL API on 127.0.0.1 (test/support/scripted-model-api.ts). Their own tools edit the worktree,
// run the project's tests and commit; the fleet gates and lands. Also: spend recorded equals
// what the scripted server billed (and survives a restart); the real claude's answer to a
// plan-limit 429 is a quota pause (no breaker trip, no attempt spent), or, with codex beside it,
// a failover to codex; the day budget stops births; the ladder's stronger model is what the
// server sees on attempt 2.
//
// No network: a temporary HOME (no user login is read), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
// and every proxy variable pointing at a loopback sentinel that counts connections (none allowed),
// so anything but 127.0.0.1 fails and is seen.
// Not as root via IS_SANDBOX: the claude profile's flags (acceptEdits + allowed tools) work as root.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { api, cloneRepo, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues } from "./support/fleet-fixtures.js";
import { startScriptedModel, type ScriptedModel } from "./support/scripted-model-api.js";
import { writeCodexConfig as writeDemoCodexConfig } from "../server/demo/engine.js";
import { waitFor } from "./support/wait.js";
import { loopbackSentinel } from "./support/loopback-sentinel.js";
import type { FleetHost } from "../server/host/host.js";

const cleanups = cleanupsAfterFile();
const BIN = resolve(process.cwd(), "node_modules/.bin");
const CLAUDE_MODEL = "claude-sonnet-4-5-20250929";
const CODEX_MODEL = "gpt-5";
/** What the scripted server bills, USD per million tokens (claude's own table has the same for this model). */
const PRICES = { [CLAUDE_MODEL]: { input: 3, output: 15 }, [CODEX_MODEL]: { input: 1.25, output: 10 } };

/** The project's tests: every work file says whose work it is. Committed on the base; also the local gate. */
const TEST_SH = ["#!/bin/sh", 'for f in work-*.txt; do grep -q "work for" "$f" || { echo "bad $f"; exit 1; }; done', 'echo "tests pass"', ""].join("\n");

/** What the scripted model has the CLI do, with the CLI's own shell tool: edit, test, commit. */
const SCRIPT = [
  { shell: 'echo "work for $AFK_ISSUE" > "work-$AFK_ISSUE.txt"' },
  { shell: "sh test.sh" },
  {
    shell:
      'git add -A && git -c user.name=agent -c user.email=agent@example.com -c commit.gpgsign=false commit -qm "work for #$AFK_ISSUE" && git log --oneline -1',
  },
];

async function project(): Promise<{ forge: TestForge; dir: string; home: string }> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  const clone = await cloneRepo(forge);
  await writeFile(join(clone, "test.sh"), TEST_SH);
  await git(clone, "add", "test.sh");
  await git(clone, "commit", "-qm", "the project's tests");
  await git(clone, "push", "-q", "origin", "HEAD");
  const dir = await tempDir("afk-engines-");
  const home = join(dir, "home");
  await mkdir(home, { recursive: true });
  return { forge, dir, home };
}

/** Every proxy variable of the CLIs points at the sentinel: a request beyond 127.0.0.1 would show there. */
const sentinel = await loopbackSentinel();

/** The environment of the CLIs: loopback only, no user config. */
function cliEnv(model: ScriptedModel, home: string): Record<string, string> {
  return {
    HOME: home,
    // Claude Code's scratch files ($TMPDIR/claude-<uid>) stay in the test's own temp dir.
    TMPDIR: home,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "scripted-test-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    OPENAI_API_KEY: "scripted-test-key",
    CODEX_HOME: join(home, ".codex"),
    ...sentinel.proxyEnv(),
  };
}

const PASS = [
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_API_KEY",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  "DISABLE_AUTOUPDATER",
  "OPENAI_API_KEY",
  "CODEX_HOME",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
];

function baseConfig(engines: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    gate: { ci: "local", local_command: "sh test.sh" },
    landing: { strategy: "push" },
    pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
    worker: { env_passthrough: PASS },
    engines,
    ...extra,
  };
}

type Issue = { state: string; labels: Array<{ name: string }> };
const issueOf = async (forge: TestForge, n: number): Promise<Issue> => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as Issue;

async function supervisorText(host: FleetHost, forge: TestForge): Promise<string> {
  const records = (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 300 })).records as Array<{ event?: unknown; msg?: unknown }>;
  return records.map((r) => `${String(r.event)}: ${String(r.msg)}`).join("\n");
}

async function spendRecords(
  host: FleetHost,
  forge: TestForge,
): Promise<Array<{ usd: number | null; input_tokens: number | null; output_tokens: number | null; source: string; model: string | null }>> {
  const records = (await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 2000 })).records as Array<{ event?: unknown; data?: unknown }>;
  return records
    .filter((r) => r.event === "spend")
    .map((r) => r.data as { usd: number | null; input_tokens: number | null; output_tokens: number | null; source: string; model: string | null });
}

describe("real agent CLIs as engines, against a scripted model API on loopback", () => {
  it("claude lands an issue; spend recorded equals what the server billed; the day budget then stops births", async () => {
    const { forge, dir, home } = await project();
    const model = await startScriptedModel({ script: SCRIPT, prices: PRICES });
    cleanups.push(() => model.close());
    const [first, second] = (await readyIssues(forge, ["First task", "Second task"])) as [number, number];
    const host = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    const steps: string[] = [];
    // One attempt costs $0.018 here (4 turns of 1,000 in and 100 out at $3 and $15 per million): a $0.005 day budget is reached by the first.
    await host.start(
      {
        repo: forge.repo,
        engine: "claude",
        model: CLAUDE_MODEL,
        target: 1,
        auto_merge: true,
        config: baseConfig({ claude: { binary: join(BIN, "claude") } }, { budget: { usd_per_day: 0.005 } }),
      },
      (step) => steps.push(step),
    );
    assert.ok(
      steps.some((s) =>
        /^engine claude \(model claude-sonnet-4-5-20250929\): .*claude, version 2\.\d+\.\d+ \(Claude Code\), custom provider ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+/.test(
          s,
        ),
      ),
      steps.join("\n"),
    );

    await waitFor(`#${first} landed and closed`, async () => (await issueOf(forge, first)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 500,
      explain: () => supervisorText(host, forge),
    });
    const status = await waitFor(
      "births held by the day budget",
      async () => {
        const s = await host.status({ repo: forge.repo, scope: "worker" });
        return s.births?.paused && /budget\.usd_per_day/.test(s.births.reason ?? "") ? s : false;
      },
      { deadlineMs: 60_000, intervalMs: 250, explain: () => supervisorText(host, forge) },
    );
    assert.match(status.births!.reason!, /budget\.usd_per_day reached: \$0\.01\d+ spent today \(UTC \d{4}-\d\d-\d\d\) of \$0\.0050/);
    assert.match(status.births!.until!, /T00:00:00\.000Z$/, "a day budget resets at the next UTC midnight");

    const spends = await spendRecords(host, forge);
    assert.equal(spends.length, 1, "one attempt, one spend record");
    assert.equal(spends[0]!.source, "cli");
    assert.equal(spends[0]!.model, CLAUDE_MODEL);
    assert.deepEqual(
      { input: spends[0]!.input_tokens, output: spends[0]!.output_tokens },
      { input: model.billedTokens().input_tokens, output: model.billedTokens().output_tokens },
    );
    assert.ok(Math.abs(spends[0]!.usd! - model.billedUsd()) < 1e-9, `recorded ${spends[0]!.usd} vs billed ${model.billedUsd()}`);
    assert.ok(
      model.turns.every((t) => t.model === CLAUDE_MODEL),
      "the model flag reached the server",
    );
    assert.equal(status.spend!.today.attempts, 1);
    assert.equal(status.spend!.budget, "$0.0050 a day (UTC)", "status names the budget in force");
    assert.ok(Math.abs(status.spend!.today.usd - model.billedUsd()) < 1e-9);
    assert.deepEqual(
      status.spend!.issues.map((i) => i.issue),
      [first],
    );
    // The second issue was never started: nothing killed, no attempt spent.
    assert.equal((await issueOf(forge, second)).state, "open");
    assert.ok(!(await supervisorText(host, forge)).includes(`#${second}: worker started`));

    // A restart on the same state directory keeps what was spent: the day budget still holds.
    await host.stop({ repo: forge.repo, stop_workers: true });
    const again = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    await again.start({
      repo: forge.repo,
      engine: "claude",
      model: CLAUDE_MODEL,
      target: 1,
      auto_merge: true,
      config: baseConfig({ claude: { binary: join(BIN, "claude") } }, { budget: { usd_per_day: 0.005 } }),
    });
    const restarted = await waitFor(
      "the restarted fleet's first tick",
      async () => {
        const s = await again.status({ repo: forge.repo, scope: "worker" });
        return s.last_tick ? s : false;
      },
      { deadlineMs: 60_000, intervalMs: 250 },
    );
    assert.equal(restarted.spend!.today.attempts, 1);
    assert.ok(Math.abs(restarted.spend!.today.usd - model.billedUsd()) < 1e-9);
    assert.match(restarted.births!.reason ?? "", /budget\.usd_per_day reached/);
    assert.equal(restarted.workers.length, 0, "no worker was born after the restart");
  });

  it("claude lands an issue under the sandbox runtime: the scripted model on 127.0.0.1 is reached through the sandbox's forwarder", async () => {
    const { forge, dir, home } = await project();
    const model = await startScriptedModel({ script: SCRIPT, prices: PRICES });
    cleanups.push(() => model.close());
    const [n] = (await readyIssues(forge, ["Sandboxed task"])) as [number];
    const host = fleetHost(forge, dir, cleanups, { ...cliEnv(model, home), AFK_RUNTIME: "sandbox" });
    const steps: string[] = [];
    await host.start(
      { repo: forge.repo, engine: "claude", model: CLAUDE_MODEL, target: 1, auto_merge: true, config: baseConfig({ claude: { binary: join(BIN, "claude") } }) },
      (step) => steps.push(step),
    );
    assert.ok(
      steps.some((s) => s.startsWith("runtime sandbox (bubblewrap")),
      steps.join("\n"),
    );
    await waitFor(`#${n} landed and closed`, async () => (await issueOf(forge, n)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 500,
      explain: () => supervisorText(host, forge),
    });
    const lines = ((await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 2000 })).records as Array<{ msg?: unknown }>).map((r) => String(r.msg));
    assert.ok(
      lines.some((l) => l.startsWith("afk-mcp sandbox: bubblewrap;") && l.includes(model.url.replace("http://", ""))),
      "the worker ran sandboxed, its base URL's host allowed",
    );
    assert.equal((await git(forge.bareRepo, "show", `main:work-${n}.txt`)).stdout.trim(), `work for ${n}`);
    assert.ok(model.turns.length >= 3, "the CLI reached the scripted model from inside the sandbox");
  });

  it("the real claude's answer to a plan-limit 429 pauses births as a usage limit: no breaker trip, no attempt spent", async () => {
    const { forge, dir, home } = await project();
    const model = await startScriptedModel({ script: SCRIPT, prices: PRICES, rateLimited: { resetEpochSeconds: Math.floor(Date.now() / 1000) + 3 * 3600 } });
    cleanups.push(() => model.close());
    const [n] = (await readyIssues(forge, ["Limited task"])) as [number];
    const host = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    await host.start({
      repo: forge.repo,
      engine: "claude",
      model: CLAUDE_MODEL,
      target: 1,
      auto_merge: true,
      config: baseConfig({ claude: { binary: join(BIN, "claude") } }, { circuit: { k: 1 } }),
    });
    const status = await waitFor(
      "births paused by the usage limit",
      async () => {
        const s = await host.status({ repo: forge.repo, scope: "worker" });
        return s.births?.paused ? s : false;
      },
      { deadlineMs: 2 * 60_000, intervalMs: 250, explain: () => supervisorText(host, forge) },
    );
    assert.match(status.births!.reason!, /usage limit reached \(.*API Error: Request rejected \(429\)/);
    const text = await supervisorText(host, forge);
    assert.ok(!/breaker/i.test(text), text);
    assert.ok(model.turns.length >= 1 && model.turns.every((t) => t.status === 429));
    const labels = (await issueOf(forge, n)).labels.map((l) => l.name);
    assert.ok(!labels.includes("runner-error"), labels.join(","));
    // The pause comes from its output while it runs; the spend record once it has exited.
    const spends = await waitFor(
      "the spend record",
      async () => {
        const s = await spendRecords(host, forge);
        return s.length > 0 ? s : false;
      },
      { deadlineMs: 60_000, intervalMs: 250 },
    );
    assert.equal(spends.length, 1);
    assert.equal(spends[0]!.usd, 0, "claude reports $0 for a rejected request: it billed nothing");
    assert.equal(model.billedUsd(), 0);
  });

  it("codex lands an issue; its tokens × the price table equal what the server billed", async () => {
    const { forge, dir, home } = await project();
    const model = await startScriptedModel({ script: SCRIPT, prices: PRICES });
    cleanups.push(() => model.close());
    await writeCodexConfig(home, model);
    const [n] = (await readyIssues(forge, ["Codex task"])) as [number];
    const host = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    const steps: string[] = [];
    await host.start(
      {
        repo: forge.repo,
        engine: "codex",
        model: CODEX_MODEL,
        target: 1,
        auto_merge: true,
        config: baseConfig(
          { codex: { binary: join(BIN, "codex") } },
          { prices: { [CODEX_MODEL]: { input_per_mtok: PRICES[CODEX_MODEL].input, output_per_mtok: PRICES[CODEX_MODEL].output } } },
        ),
      },
      (step) => steps.push(step),
    );
    assert.ok(
      steps.some((s) => /^engine codex \(model gpt-5\): .*codex, version codex-cli \d+\.\d+\.\d+/.test(s)),
      steps.join("\n"),
    );
    await waitFor(`#${n} landed and closed`, async () => (await issueOf(forge, n)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 500,
      explain: () => supervisorText(host, forge),
    });
    const spends = await waitFor(
      "the spend record",
      async () => {
        const s = await spendRecords(host, forge);
        return s.length > 0 ? s : false;
      },
      { deadlineMs: 30_000, intervalMs: 250 },
    );
    assert.equal(spends.length, 1);
    assert.equal(spends[0]!.source, "prices");
    assert.deepEqual(
      { input: spends[0]!.input_tokens, output: spends[0]!.output_tokens },
      { input: model.billedTokens().input_tokens, output: model.billedTokens().output_tokens },
    );
    assert.ok(Math.abs(spends[0]!.usd! - model.billedUsd()) < 1e-9, `recorded ${spends[0]!.usd} vs billed ${model.billedUsd()}`);
    assert.ok(model.turns.every((t) => t.api === "openai" && t.model === CODEX_MODEL));
    // The ledger's final report counts the same spend.
    const report = await waitFor(
      "the report's spend",
      async () => {
        const r = await host.report({ repo: forge.repo });
        return r.totals.spend !== "unknown" ? r : false;
      },
      { deadlineMs: 30_000, intervalMs: 250 },
    );
    const total = report.totals.spend as { usd?: number; tokens?: { input?: number; output?: number } };
    assert.ok(Math.abs((total.usd ?? -1) - model.billedUsd()) < 1e-6, `report ${JSON.stringify(total)} vs billed ${model.billedUsd()}`);
    assert.deepEqual([total.tokens?.input, total.tokens?.output], [model.billedTokens().input_tokens, model.billedTokens().output_tokens]);
  });

  it("claude is handed budget.usd_per_attempt and stops there; what it spent is what the server billed", async () => {
    const { forge, dir, home } = await project();
    // Each turn costs $0.0045; the budget of $0.005 is passed at the second.
    const model = await startScriptedModel({ script: [{ shell: "true" }, { shell: "true" }, ...SCRIPT], prices: PRICES });
    cleanups.push(() => model.close());
    const [n] = (await readyIssues(forge, ["Costly task"])) as [number];
    const host = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    const started = await host.start({
      repo: forge.repo,
      engine: "claude",
      model: CLAUDE_MODEL,
      target: 1,
      auto_merge: true,
      config: baseConfig({ claude: { binary: join(BIN, "claude") } }, { retry: 0, budget: { usd_per_attempt: 0.005 } }),
    });
    assert.match(started.registration!.worker_command, / '--max-budget-usd' '0\.005'$/);
    const spends = await waitFor(
      "the spend record",
      async () => {
        const s = await spendRecords(host, forge);
        return s.length > 0 ? s : false;
      },
      { deadlineMs: 2 * 60_000, intervalMs: 250, explain: () => supervisorText(host, forge) },
    );
    assert.equal(model.turns.length, 2, "the CLI stopped at its budget");
    assert.deepEqual([spends[0]!.input_tokens, spends[0]!.output_tokens], [model.billedTokens().input_tokens, model.billedTokens().output_tokens]);
    assert.ok(Math.abs(spends[0]!.usd! - model.billedUsd()) < 1e-9, `recorded ${spends[0]!.usd} vs billed ${model.billedUsd()}`);
    const worker = (await host.logs({ repo: forge.repo, lane: "worker", issue: n, tail_lines: 500 })).records.map((r) => String(r.msg));
    assert.ok(worker.some((line) => line.includes('"subtype":"error_max_budget_usd"')));
  });

  it("the ladder's stronger model is the one the server sees on attempt 2, and lands what attempt 1 did not", async () => {
    const { forge, dir, home } = await project();
    // A current model id: the CLI passes it through unchanged (an older dated id, such as
    // claude-opus-4-1-20250805, reaches the server rewritten to the newest of its family).
    const STRONGER = "claude-opus-4-8";
    // The first model only talks; the stronger one does the work.
    const model = await startScriptedModel({ script: SCRIPT, scriptFor: { [CLAUDE_MODEL]: [] }, prices: PRICES });
    cleanups.push(() => model.close());
    const [n] = (await readyIssues(forge, ["Hard task"])) as [number];
    const host = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    await host.start({
      repo: forge.repo,
      engine: "claude",
      model: CLAUDE_MODEL,
      target: 1,
      auto_merge: true,
      config: baseConfig({ claude: { binary: join(BIN, "claude") } }, { routing: { ladder: [{ model: STRONGER }] } }),
    });
    await waitFor(`#${n} landed on attempt 2`, async () => (await issueOf(forge, n)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 500,
      explain: () => supervisorText(host, forge),
    });
    const seen = [...new Set(model.turns.map((t) => t.model))];
    assert.deepEqual(seen, [CLAUDE_MODEL, STRONGER], "attempt 1 asked for the start's model, attempt 2 for the ladder's");
    assert.ok(
      model.turns.filter((t) => t.model === STRONGER).some((t) => t.reply.startsWith("git add")),
      "the stronger model's run committed",
    );
    assert.match(await supervisorText(host, forge), new RegExp(`routed: #${n}: attempt 2 runs claude ${STRONGER} \\(ladder rung 1\\)`));
    const spends = await spendRecords(host, forge);
    assert.deepEqual(
      spends.map((s) => s.model),
      [CLAUDE_MODEL, STRONGER],
    );
  });

  it("a usage limit pauses that engine only: the next birth fails over to codex, with no attempt spent", async () => {
    const { forge, dir, home } = await project();
    // Every Messages request answers the plan-limit 429; the Responses API works.
    const model = await startScriptedModel({ script: SCRIPT, prices: PRICES, rateLimited: { resetEpochSeconds: Math.floor(Date.now() / 1000) + 3 * 3600 } });
    cleanups.push(() => model.close());
    await writeCodexConfig(home, model);
    const [n] = (await readyIssues(forge, ["Failover task"])) as [number];
    const host = fleetHost(forge, dir, cleanups, cliEnv(model, home));
    await host.start({
      repo: forge.repo,
      engine: "claude",
      model: CLAUDE_MODEL,
      target: 1,
      auto_merge: true,
      config: baseConfig(
        { claude: { binary: join(BIN, "claude") }, codex: { binary: join(BIN, "codex"), default_model: CODEX_MODEL } },
        {
          routing: { ladder: [{ engine: "codex" }] },
          prices: { [CODEX_MODEL]: { input_per_mtok: PRICES[CODEX_MODEL].input, output_per_mtok: PRICES[CODEX_MODEL].output } },
        },
      ),
    });
    await waitFor(`#${n} landed by codex`, async () => (await issueOf(forge, n)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 500,
      explain: () => supervisorText(host, forge),
    });
    const text = await supervisorText(host, forge);
    assert.match(text, /engine_paused: #\d+: engine claude paused \(usage limit reached \(API Error: Request rejected \(429\).*births go on with codex/);
    assert.match(text, new RegExp(`failover: #${n}: attempt 1 fails over from claude to codex`));
    assert.ok(!/breaker/i.test(text), "a usage limit is not a fast death");
    assert.deepEqual([...new Set(model.turns.map((t) => t.api))], ["anthropic", "openai"]);
    const spends = (await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 2000 })).records
      .filter((r) => r.event === "spend")
      .map((r) => ({ attempt: r.attempt, engine: (r.data as { engine: string }).engine }));
    assert.deepEqual(
      spends,
      [
        { attempt: 1, engine: "claude" },
        { attempt: 1, engine: "codex" },
      ],
      "the failover spent no attempt",
    );
    const status = await host.status({ repo: forge.repo, scope: "worker" });
    assert.equal(status.births?.paused, false, "births stayed open: one engine was healthy");
  });
});

/** Codex's config: the scripted provider, and off what it otherwise fetches (the demo's, server/demo/engine.ts). */
async function writeCodexConfig(home: string, model: ScriptedModel): Promise<void> {
  await writeDemoCodexConfig(join(home, ".codex"), model.url);
}
