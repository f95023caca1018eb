// The `actions` runtime's tests on loopback in one place: the worker workflow installed as a user
// installs it (`afk-mcp actions init` proposes it as a PR, the test merges it), the engine script
// whose behaviour each issue's line in a table picks (workers/actions.sh), the config those
// fleets share, the local runner paused and resumed, and reads of the workflow runs.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { actionsInit, INIT_BRANCH } from "../../server/host/actions-init.js";
import { connect } from "../../server/host/connection.js";
import { silentLogger } from "../../server/gh/octokit.js";
import { shellQuote } from "../../server/runtimes/local/spawn.js";
import { api, git, repoPath, type TestForge } from "./forge-fixtures.js";
import { issueWorld } from "./fleet-fixtures.js";
import { ROOT } from "./paths.js";

export const ENGINE = join(ROOT, "test", "support", "workers", "actions.sh");
/** The runner's worker: this checkout's build, as `afk-mcp actions init --worker` would name it. */
export const WORKER = `node ${join(ROOT, "dist", "server", "bin.js")} worker`;

export const ACTIONS_CONFIG = {
  retry: 1,
  runtime: "actions" as const,
  actions: { beat_seconds: 10, pickup_seconds: 20 },
  gate: { ci: "local" as const, local_command: "true" },
  landing: { strategy: "push" as const },
  pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
};

/**
 * `afk-mcp actions init` proposes the workflow on a branch of its own; the test merges its PR; a
 * second init finds it present. `setup`: steps before the worker's (`--setup`).
 */
export async function initWorkflow(forge: TestForge, dir: string, setup: string[] = []): Promise<void> {
  const init = async () =>
    actionsInit(
      await connect({
        repo: forge.repo,
        env: { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: join(dir, "init-state") },
        logger: silentLogger,
      }),
      { worker: WORKER, ...(setup.length > 0 ? { setup } : {}) },
    );
  const proposed = await init();
  assert.equal(proposed.status, "proposed", proposed.message);
  const pr = proposed.pr!;
  const opened = await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`));
  assert.equal(opened.body.head.ref, INIT_BRANCH, "proposed on a branch of its own, never pushed to the base");
  assert.match((await git(forge.bareRepo, "show", `${INIT_BRANCH}:.github/workflows/afk-worker.yml`)).stdout, /run: "node .*bin\.js worker"/);
  const merged = await api(forge, "PUT", repoPath(forge, `/pulls/${pr.number}/merge`), { merge_method: "merge" });
  assert.equal(merged.status, 200, JSON.stringify(merged.body));
  const again = await init();
  assert.equal(again.status, "present", again.message);
}

/** issueWorld (fleet-fixtures.ts) with the worker workflow installed. */
export async function actionsWorld(...args: Parameters<typeof issueWorld>): ReturnType<typeof issueWorld> {
  const world = await issueWorld(...args);
  await initWorkflow(world.forge, world.dir);
  return world;
}

/**
 * One worker command for every issue: the engine picks its behaviour by issue number from a
 * table the test writes under `dir` (`modes`); `args` follow the mode (test-made paths, never issue text).
 */
export async function engineByIssue(dir: string, modes: Record<number, string>, ...args: string[]): Promise<string> {
  const table = join(dir, "modes");
  await writeFile(
    table,
    Object.entries(modes)
      .map(([n, m]) => `${n}=${m}\n`)
      .join(""),
  );
  return [`sh ${shellQuote(ENGINE)} "$(sed -n "s/^$AFK_ISSUE=//p" ${shellQuote(table)})"`, ...args.map(shellQuote)].join(" ");
}

export async function comments(forge: TestForge, n: number): Promise<string> {
  const r = await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`));
  return (r.body as Array<{ body: string }>).map((c) => c.body).join("\n---\n");
}

export async function closed(forge: TestForge, n: number): Promise<boolean> {
  return ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string }).state === "closed";
}

export interface RunRow {
  id: number;
  display_title: string;
  status: string;
  conclusion: string | null;
}

/** Every workflow run of the repository, newest first (`status`: only those in that status or conclusion). */
export async function workflowRuns(forge: TestForge, status?: string): Promise<RunRow[]> {
  const query = `per_page=100${status ? `&status=${status}` : ""}`;
  return ((await api(forge, "GET", repoPath(forge, `/actions/runs?${query}`))).body as { workflow_runs: RunRow[] }).workflow_runs;
}

/** Pauses (nothing dispatched is picked up, as when no runner serves `runs-on`) or resumes the local runner. */
export async function pauseRunner(forge: TestForge, paused: boolean): Promise<void> {
  const r = await fetch(`${forge.apiUrl}/_forge/actions/runner`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paused }),
  });
  assert.equal(r.status, 200, await r.text());
}

/** The tail of every job's log, run by run: a failure's story. */
export async function runLogs(forge: TestForge): Promise<string> {
  let out = "";
  for (const r of await workflowRuns(forge)) {
    const jobs = (await api(forge, "GET", repoPath(forge, `/actions/runs/${r.id}/jobs`))).body as { jobs: Array<{ id: number }> };
    for (const j of jobs.jobs) {
      const res = await fetch(`${forge.apiUrl}/_forge/actions/jobs/${j.id}/logs`);
      out += `\n===== ${r.display_title} (${r.status} ${r.conclusion ?? ""})\n${(await res.text()).slice(-3000)}`;
    }
  }
  return out;
}
