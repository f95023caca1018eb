// The `actions` runtime (server/runtimes/actions/) end to end on loopback: `afk-mcp actions
// init` proposes the workflow as a PR, the test merges it, and a fleet with runtime "actions"
// dispatches every worker to the local forge's Actions runner, which runs the real
// `afk-mcp worker` (dist/server/bin.js) in a fresh clone; the worker runs the engine, pushes
// the issue branch and its beats; the host reads them and lands the issue as usual. Then the
// faults: a start with no workflow, a runner that dies mid-attempt, a run cancelled by someone
// else, a runner that pushes outside its branch, a run no runner picks up — each ends the one
// attempt with its reason in the issue's comment and keeps what was checkpointed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { runnerInputs, engineEnv } from "../server/runtimes/actions/runner-worker.js";
import { fitBrief, handedEnv } from "../server/runtimes/actions/runtime.js";
import { INPUTS_MAX_CHARS, workflowFile } from "../server/runtimes/actions/workflow-file.js";
import { actionsInit, INIT_BRANCH } from "../server/host/actions-init.js";
import { connect } from "../server/host/connection.js";
import { silentLogger } from "../server/gh/octokit.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues } from "./support/fleet-fixtures.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();
const ENGINE = join(ROOT, "test", "support", "workers", "actions.sh");
const WORKER = `node ${join(ROOT, "dist", "server", "bin.js")} worker`;

const CONFIG = {
  retry: 1,
  runtime: "actions" as const,
  actions: { beat_seconds: 10, pickup_seconds: 20 },
  gate: { ci: "local" as const, local_command: "true" },
  landing: { strategy: "push" as const },
  pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
};

async function initWorkflow(forge: TestForge, dir: string): Promise<void> {
  const conn = await connect({
    repo: forge.repo,
    env: { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: join(dir, "init-state") },
    logger: silentLogger,
  });
  const proposed = await actionsInit(conn, { worker: WORKER });
  assert.equal(proposed.status, "proposed", proposed.message);
  const pr = proposed.pr!;
  const opened = await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`));
  assert.equal(opened.body.head.ref, INIT_BRANCH, "proposed on a branch of its own, never pushed to the base");
  assert.match((await git(forge.bareRepo, "show", `${INIT_BRANCH}:.github/workflows/afk-worker.yml`)).stdout, /run: "node .*bin\.js worker"/);
  const merged = await api(forge, "PUT", repoPath(forge, `/pulls/${pr.number}/merge`), { merge_method: "merge" });
  assert.equal(merged.status, 200, JSON.stringify(merged.body));
  const again = await actionsInit(
    await connect({
      repo: forge.repo,
      env: { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: join(dir, "init-state") },
      logger: silentLogger,
    }),
    { worker: WORKER },
  );
  assert.equal(again.status, "present", again.message);
}

async function comments(forge: TestForge, n: number): Promise<string> {
  const r = await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`));
  return (r.body as Array<{ body: string }>).map((c) => c.body).join("\n---\n");
}

async function closed(forge: TestForge, n: number): Promise<boolean> {
  return ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string }).state === "closed";
}

describe("the actions runtime's pieces", () => {
  it("the workflow file passes every input through env:, never inside run:; the runner's inputs are checked by name", () => {
    const text = workflowFile({ worker: "npx -y afk-mcp@1.2.3 worker" });
    const run = text.split("\n").filter((l) => l.trim().startsWith("run:"));
    assert.deepEqual(run, ['        run: "npx -y afk-mcp@1.2.3 worker"']);
    assert.match(text, /AFK_BRIEF_TEXT: \$\{\{ inputs\.brief \}\}/);
    assert.match(text, /group: afk-issue-\$\{\{ inputs\.issue \}\}\n {2}cancel-in-progress: true/);
    assert.match(text, /timeout-minutes: 350/);
    assert.throws(() => runnerInputs({}), /AFK_BRANCH is not set/);
    const env = {
      AFK_ISSUE: "3",
      AFK_BRANCH: "afk/3-x",
      AFK_BASE: "main",
      AFK_ATTEMPT: "1",
      AFK_COMMAND: "true",
      AFK_BRIEF_TEXT: "b",
      AFK_RUN_REF: "refs/afk/run/3",
      GITHUB_RUN_ID: "9",
    };
    assert.throws(() => runnerInputs({ ...env, AFK_BRANCH: "--upload-pack=x" }), /branch/);
    assert.throws(() => runnerInputs({ ...env, AFK_ISSUE: "0" }), /AFK_ISSUE="0": expected an integer/);
    const inputs = runnerInputs({
      ...env,
      AFK_ENV_JSON: JSON.stringify({ ANTHROPIC_BASE_URL: "http://127.0.0.1:1", PATH: "/evil", AFK_ISSUE: "7", "bad name": "x" }),
    });
    assert.deepEqual(inputs.extraEnv, { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" }, "a handed-over variable may not set PATH or the issue's facts");
    const engine = engineEnv({ ...env, GITHUB_TOKEN: "ghs_secret", ACTIONS_RUNTIME_TOKEN: "x", PATH: "/usr/bin" }, inputs, {
      brief: "/t/b",
      verdict: "/t/v",
      worktree: "/w",
    });
    assert.equal(engine.GITHUB_TOKEN, undefined);
    assert.equal(engine.ACTIONS_RUNTIME_TOKEN, undefined);
    assert.equal(engine.AFK_BRIEF_TEXT, undefined);
    assert.equal(engine.AFK_ISSUE, "3");
    assert.equal(engine.ANTHROPIC_BASE_URL, "http://127.0.0.1:1");
    assert.deepEqual(handedEnv({ OPENAI_BASE_URL: "u", SECRET: "s", AFK_USER_X: "y" }, ["AFK_USER_X"]), { OPENAI_BASE_URL: "u", AFK_USER_X: "y" });
    const cut = fitBrief("x".repeat(100_000), 1_000);
    assert.ok(cut.length + 1_000 <= INPUTS_MAX_CHARS && cut.endsWith("inputs]\n"), "a long brief is cut to GitHub's input limit, with a note");
    assert.equal(fitBrief("short", 1_000), "short");
  });
});

describe("workers on the local forge's Actions runner (real afk-mcp worker, real git)", () => {
  it("a start with no workflow on the base is refused, naming `afk-mcp actions init`", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const dir = await tempDir("afk-act-none-");
    const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
    await assert.rejects(
      host.start({ repo: forge.repo, worker_command: "true", target: 1, config: CONFIG }),
      /project_start refused: runtime actions: no workflow \.github\/workflows\/afk-worker\.yml on .*run `afk-mcp actions init`/,
    );
  });

  it(
    "two issues drain with every worker on the runner: output, commits and exits come home, both land; then a dying runner, a cancel from outside and a hijacking push each spend one attempt with their reason",
    { timeout: 480_000 },
    async () => {
      const forge = await startTestForge({ actionsConcurrency: 3 });
      cleanups.push(() => forge.dispose());
      const dir = await tempDir("afk-act-");
      await initWorkflow(forge, dir);
      const [a, b, die, hostile, cancel] = (await readyIssues(forge, ["Alpha", "Beta", "Dies", "Hijacks", "Cancelled"])) as [
        number,
        number,
        number,
        number,
        number,
      ];
      const modes: Record<number, string> = { [a]: "work", [b]: "work", [die]: "die", [hostile]: "hostile", [cancel]: "slow" };
      // One command for every issue: the engine picks its behaviour by issue number (a table the test wrote).
      const command = `sh ${shellQuote(ENGINE)} "$(sed -n "s/^$AFK_ISSUE=//p" ${shellQuote(join(dir, "modes"))})"`;
      await (
        await import("node:fs/promises")
      ).writeFile(
        join(dir, "modes"),
        Object.entries(modes)
          .map(([n, m]) => `${n}=${m}\n`)
          .join(""),
      );
      const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
      const steps: string[] = [];
      await host.start({ repo: forge.repo, worker_command: command, target: 5, auto_merge: true, config: CONFIG }, (s) => steps.push(s));
      assert.ok(
        steps.some((s) => s.startsWith('runtime actions: each worker on a GitHub Actions runner through workflow "afk worker"')),
        steps.join("\n"),
      );
      const supervisor = async () =>
        ((await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 400 })).records as Array<{ event?: unknown; msg?: unknown }>)
          .map((r) => `${String(r.event)}: ${String(r.msg)}`)
          .join("\n");

      // The cancel from outside: once the slow run pushed its partial work, someone cancels it on GitHub.
      const slowRun = await waitFor(
        `#${cancel}'s partial work on origin`,
        async () => {
          const branches = (await git(forge.bareRepo, "for-each-ref", "--format=%(refname)", `refs/heads/afk/${cancel}-*`)).stdout.trim();
          if (!branches) return null;
          const files = (await git(forge.bareRepo, "ls-tree", "--name-only", branches.split("\n")[0]!)).stdout;
          if (!files.includes(`partial-${cancel}.txt`)) return null;
          const runs = (await api(forge, "GET", repoPath(forge, "/actions/runs?status=in_progress"))).body as {
            workflow_runs: Array<{ id: number; display_title: string }>;
          };
          return runs.workflow_runs.find((r) => r.display_title === `afk #${cancel} attempt 1`) ?? null;
        },
        { deadlineMs: 3 * 60_000, intervalMs: 250, explain: supervisor },
      );
      assert.equal((await api(forge, "POST", repoPath(forge, `/actions/runs/${slowRun.id}/cancel`))).status, 202);

      const jobLogs = async () => {
        const runs = (
          (await api(forge, "GET", repoPath(forge, "/actions/runs?per_page=100"))).body as { workflow_runs: Array<{ id: number; display_title: string }> }
        ).workflow_runs;
        let out = "";
        for (const r of runs) {
          const jobs = (await api(forge, "GET", repoPath(forge, `/actions/runs/${r.id}/jobs`))).body as { jobs: Array<{ id: number }> };
          for (const j of jobs.jobs) {
            const res = await fetch(`${forge.apiUrl}/_forge/actions/jobs/${j.id}/logs`);
            out += `\n===== ${r.display_title}\n${(await res.text()).slice(-3000)}`;
          }
        }
        const worker = ((await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 2000 })).records as Array<{ msg?: unknown; issue?: unknown }>)
          .map((r) => `${String(r.issue)} ${String(r.msg)}`)
          .join("\n");
        return out + "\n===== worker lane\n" + worker + "\n" + (await supervisor());
      };
      for (const n of [a, b, die, hostile, cancel]) {
        await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 6 * 60_000, intervalMs: 500, explain: jobLogs });
      }
      await host.stop({ repo: forge.repo, stop_workers: true });

      // Everything ran on the runner: every attempt is a workflow run, and the engine never saw the job's token.
      const runs = (
        (await api(forge, "GET", repoPath(forge, "/actions/runs?per_page=100"))).body as { workflow_runs: Array<{ display_title: string; conclusion: string }> }
      ).workflow_runs;
      const titles = runs.map((r) => r.display_title).sort();
      assert.deepEqual(
        titles,
        [a, b, die, die, hostile, hostile, cancel, cancel].map((n, i, all) => `afk #${n} attempt ${all.slice(0, i).filter((m) => m === n).length + 1}`).sort(),
      );
      const log = await supervisor();
      assert.ok(!log.includes("ghs_"), "no run token in the fleet's lanes");
      const worker = ((await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 2000 })).records as Array<{ msg?: unknown; issue?: unknown }>).map((r) =>
        String(r.msg),
      );
      assert.ok(worker.includes(`engine on the runner: issue ${a} attempt 1 mode work`), "the runner's output reached the worker lane");
      assert.ok(worker.includes("token in my environment: none"), "the engine's environment has no job token");

      for (const n of [a, b, die, hostile, cancel]) {
        assert.equal((await git(forge.bareRepo, "show", `main:work-${n}.txt`)).stdout.trim(), `work for ${n}`);
      }
      // What the dead and the cancelled runs had pushed was kept and continued by the next attempt.
      for (const n of [die, cancel]) assert.equal((await git(forge.bareRepo, "show", `main:partial-${n}.txt`)).stdout.trim(), `partial for ${n}`);
      // Each fault's reason is on the issue's board (and in the supervisor lane); no other issue was blamed.
      assert.match(await comments(forge, die), /Attempt 1 failed: workflow run \d+ ended \(failure\) without the worker's last beat: the runner died/);
      assert.match(await comments(forge, cancel), /Attempt 1 failed: workflow run \d+ was cancelled outside the fleet/);
      assert.match(
        await comments(forge, hostile),
        new RegExp(`Attempt 1 failed: the runner pushed to refs/heads/hijack-${hostile}, outside the issue's branch`),
      );
      for (const n of [a, b]) assert.doesNotMatch(await comments(forge, n), /failed:/, `#${n} ran clean`);
      assert.equal(log.match(/^retry: /gm)?.length, 3, log);
    },
  );
});
