// End to end through the stdio MCP server (the built binary) and the daemon it starts: project_start on a local forge
// seeded with the demo backlog and watched by the demo's CI runner drains it; status and logs
// answer throughout; project_stop drains. Then the invariants: every issue reached its
// expected end, every commit on the base is a tree CI passed, no claim ref is left behind.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { buildSeed, expectationsFor, ESCALATE_LABEL } from "../server/demo/backlog.js";
import { startCiRunner, type CiRunner } from "../server/demo/ci-runner.js";
import { workerShellCommand } from "../server/demo/worker-command.js";
import { api, git, protectBranch, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";
import { cli } from "./support/daemon-fixtures.js";
import { assertBaseOnGatedTrees } from "./support/nrsr.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";
let forge: TestForge;
let ci: CiRunner;
let client: Client;
let dir: string;
let daemonEnv: Record<string, string>;

type Tool = { structuredContent?: unknown; isError?: boolean; content?: unknown };

before(async () => {
  assert.ok(existsSync(BIN), `build first: ${BIN} is missing`);
  dir = await tempDir("afk-e2e-");
  const seed = join(dir, "seed.json");
  await writeFile(seed, JSON.stringify(buildSeed()));
  forge = await startTestForge({ dir: join(dir, "forge"), seed });
  await protectBranch(forge, { contexts: ["test"], strict: true });
  ci = startCiRunner({ apiUrl: forge.apiUrl, token: forge.token, repo: REPO, gitUrl: forge.gitUrl, workDir: join(dir, "ci"), intervalMs: 300 });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? dir,
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: join(dir, "state"),
    AFK_TIME_SCALE: "0.05",
  };
  daemonEnv = env;
  client = new Client({ name: "afk-e2e", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" }));
});

after(async () => {
  await client?.close();
  // The project lives in the daemon the stdio server started: stop it (and its workers) too.
  if (dir) await cli(daemonEnv, "daemon", "stop", "--kill-workers");
  await ci?.stop();
  await forge?.dispose();
});

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  // A loaded machine can take minutes over a start or a stop: not the SDK's 60 s default.
  const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })) as Tool;
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, unknown>;
}

interface IssueRow {
  number: number;
  state: string;
  labels: { name: string }[];
  pull_request?: unknown;
}

async function issues(): Promise<Map<number, IssueRow>> {
  const rows = (await api(forge, "GET", `/repos/${REPO}/issues?state=all&per_page=100`)).body as IssueRow[];
  return new Map(rows.filter((r) => !r.pull_request).map((r) => [r.number, r]));
}

describe("the demo backlog through the stdio MCP server", () => {
  it("drains: every issue reaches its expected end, the base only holds gated trees, no claim is left", async () => {
    const started = await call("project_start", {
      repo: REPO,
      worker_command: workerShellCommand(),
      target: 3,
      auto_merge: true,
      config: { retry: 2, pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 } },
    });
    assert.equal((started.registration as { merges: string }).merges, "authorized");

    const expectations = expectationsFor(2);
    const maxAttempt = new Map<number, number>();
    let statusCalls = 0;
    let logRecords = 0;
    // No wall-clock deadline for the drain: a loaded machine is slower, not wrong. The test fails
    // when the fleet stops making progress (no new tick summary and no change on the forge for minutes), or
    // after a cap that only a hung fleet reaches.
    let lastTick = "";
    let seen = "";
    await waitFor(
      "the backlog to drain",
      async () => {
        const status = await call("status", { repo: REPO, scope: "worker" });
        statusCalls += 1;
        assert.ok(status.registration, "status shows the registration while the project runs");
        const logs = await call("logs", { repo: REPO, lane: "supervisor", tail_lines: 20 });
        logRecords = Math.max(logRecords, (logs.records as unknown[]).length);
        const now = await issues();
        for (const [n, row] of now) {
          for (const l of row.labels) {
            const m = /^afk-attempt\/(\d+)$/.exec(l.name);
            if (m) maxAttempt.set(n, Math.max(maxAttempt.get(n) ?? 0, Number(m[1])));
          }
        }
        const done = expectations.every((e) => {
          const row = now.get(e.number);
          if (!row) return false;
          const escalated = row.labels.some((l) => l.name === ESCALATE_LABEL);
          if (e.end === "escalated") return escalated;
          if (e.end === "open_epic") return row.state === "open" && !escalated;
          if (e.end === "epic_done") return row.state === "closed" && !escalated;
          return row.state === "closed";
        });
        lastTick = String(status.last_tick ?? "");
        // The tick's summary without its timestamp: a loop that ticks without moving is not progress.
        const summary = lastTick.replace(/^\S+: /, "");
        seen = JSON.stringify([summary, [...now.values()].map((r) => [r.number, r.state, r.labels.map((l) => l.name).sort()])]);
        return done && (status.workers as { state: string }[]).every((w) => w.state !== "running");
      },
      { deadlineMs: 30 * 60_000, intervalMs: 1500, stall: { ms: 300_000, signature: () => seen }, explain: () => `last tick: ${lastTick}` },
    );
    assert.ok(statusCalls > 0 && logRecords > 0, "status and logs answered throughout");

    // Retries happened where the backlog says, and nowhere else. The labels were sampled between
    // polls, and an escalation removes the last attempt's label: a quick last attempt can come and
    // go unseen. Each worker's birth record in the issue's lane (attempts count from 1) says it ran.
    for (const e of expectations) {
      if (e.attempts === undefined) continue;
      const lane = await call("logs", { repo: REPO, lane: "supervisor", issue: e.number, tail_lines: 200 });
      const born = (lane.records as { event?: string; attempt?: number }[])
        .filter((r) => r.event === "worker_born" && typeof r.attempt === "number")
        .map((r) => r.attempt as number);
      assert.equal(Math.max((maxAttempt.get(e.number) ?? 0) + 1, ...born), e.attempts, `#${e.number} ${e.title}: attempts`);
    }

    // Red checks are fixed forward once: the retry that follows a PR's red CI continues on its
    // branch (the PR stays open, and lands if the fix is green); a fix that is red too starts fresh.
    const retryModes = async (title: RegExp): Promise<string[]> => {
      const n = expectations.find((e) => title.test(e.title))!.number;
      const lane = await call("logs", { repo: REPO, lane: "supervisor", issue: n, tail_lines: 200 });
      return (lane.records as { event?: string; data?: { mode?: string } }[]).filter((r) => r.event === "retry").map((r) => r.data?.mode ?? "?");
    };
    assert.deepEqual(await retryModes(/^Add truncate\(\)/), ["fix"], "truncate's red PR was fixed forward");
    assert.deepEqual(await retryModes(/^Add hyphenate\(\)/), ["fix", "fresh"], "hyphenate's fix was red too: its third attempt started fresh");
    const truncate = expectations.find((e) => /^Add truncate\(\)/.test(e.title))!.number;
    const pulls = (await api(forge, "GET", `/repos/${REPO}/pulls?state=all&per_page=100`)).body as { head: { ref: string }; merged_at: string | null }[];
    const truncatePulls = pulls.filter((p) => p.head.ref.startsWith(`afk/${truncate}-`));
    assert.equal(truncatePulls.length, 1, "one PR for truncate: its fix landed through the PR the first attempt opened");
    assert.notEqual(truncatePulls[0]!.merged_at, null);

    const stopped = await call("project_stop", { repo: REPO });
    assert.match(String(stopped.message), /stopped/);

    // No phantom locks: every terminal transition deleted its claim ref.
    const clone = join(dir, "inspect");
    await git(dir, "clone", "--quiet", forge.gitUrl, clone);
    const claims = (await git(clone, "ls-remote", "origin", "refs/afk/claim/*")).stdout;
    assert.equal(claims, "", `claim refs left behind:\n${claims}`);

    // The Not Rocket Science Rule: every commit the fleet put on main has the tree of a head
    // that CI passed (the CI runner posted "success" on it).
    const landed = await assertBaseOnGatedTrees(forge, REPO, clone);
    assert.ok(landed.length >= 7, `the fleet landed the mergeable issues (main has ${landed.length} commits besides the seed)`);
    assert.deepEqual(forge.violations(), [], "every forge answer matched GitHub's OpenAPI description");
  });
});
