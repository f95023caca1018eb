// The `actions` runtime (server/runtimes/actions/) end to end on loopback: `afk-mcp actions
// init` proposes the workflow as a PR, the test merges it, and a fleet with runtime "actions"
// dispatches every worker to the local forge's Actions runner, which runs the real
// `afk-mcp worker` (dist/server/bin.js) in a fresh clone; the worker runs the engine, pushes
// the issue branch and its beats; the host reads them and lands the issue as usual. Then the
// faults: a start with no workflow, a runner that dies mid-attempt, a run cancelled by someone
// else, a runner that pushes outside its branch — each ends the one attempt with its reason in
// the issue's comment and keeps what was checkpointed; and, with the forge's runner paused, a run
// no runner picks up: cancelled after actions.pickup_seconds, that attempt alone spent, the next
// one picked up once the runner is back. (A run adopted after a host crash: runtimes-adopt.)
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { runnerInputs, engineEnv } from "../server/runtimes/actions/runner-worker.js";
import { fitBrief, handedEnv } from "../server/runtimes/actions/runtime.js";
import { INPUTS_MAX_CHARS, workflowFile } from "../server/runtimes/actions/workflow-file.js";
import { api, git, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, laneRows, laneText } from "./support/fleet-fixtures.js";
import { ACTIONS_CONFIG as CONFIG, actionsWorld, closed, comments, engineByIssue, pauseRunner, runLogs, workflowRuns } from "./support/actions-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

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
      const { forge, dir, issues } = await actionsWorld(cleanups, ["Alpha", "Beta", "Dies", "Hijacks", "Cancelled"], "afk-act-", { actionsConcurrency: 3 });
      const [a, b, die, hostile, cancel] = issues as [number, number, number, number, number];
      // One command for every issue: the engine picks its behaviour by issue number (a table the test wrote).
      const command = await engineByIssue(dir, { [a]: "work", [b]: "work", [die]: "die", [hostile]: "hostile", [cancel]: "slow" });
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
          return (await workflowRuns(forge, "in_progress")).find((r) => r.display_title === `afk #${cancel} attempt 1`) ?? null;
        },
        { deadlineMs: 3 * 60_000, intervalMs: 250, explain: supervisor },
      );
      assert.equal((await api(forge, "POST", repoPath(forge, `/actions/runs/${slowRun.id}/cancel`))).status, 202);

      const jobLogs = async () => {
        const worker = ((await host.logs({ repo: forge.repo, lane: "worker", tail_lines: 2000 })).records as Array<{ msg?: unknown; issue?: unknown }>)
          .map((r) => `${String(r.issue)} ${String(r.msg)}`)
          .join("\n");
        return (await runLogs(forge)) + "\n===== worker lane\n" + worker + "\n" + (await supervisor());
      };
      for (const n of [a, b, die, hostile, cancel]) {
        await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 6 * 60_000, intervalMs: 500, explain: jobLogs });
      }
      await host.stop({ repo: forge.repo, stop_workers: true });

      // Everything ran on the runner: every attempt is a workflow run, and the engine never saw the job's token.
      const runs = await workflowRuns(forge);
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
      assert.match(
        await comments(forge, die),
        /Attempt 1 failed: step "afk-mcp worker" failed \(exit code \d+\) without the worker's last beat, workflow run \d+; its log ends: /,
      );
      assert.match(await comments(forge, cancel), /Attempt 1 failed: workflow run \d+ was cancelled outside the fleet/);
      assert.match(
        await comments(forge, hostile),
        new RegExp(`Attempt 1 failed: the runner pushed to refs/heads/hijack-${hostile}, outside the issue's branch`),
      );
      for (const n of [a, b]) assert.doesNotMatch(await comments(forge, n), /failed:/, `#${n} ran clean`);
      assert.equal(log.match(/^retry: /gm)?.length, 3, log);
    },
  );

  it(
    "a run no runner picks up is cancelled after actions.pickup_seconds: that one attempt is spent with its reason, nothing else is blamed, and the next attempt, picked up, lands",
    { timeout: 300_000 },
    async () => {
      const { forge, dir, issues } = await actionsWorld(cleanups, ["Nobody picks it up"], "afk-act-pickup-");
      const [n] = issues as [number];
      // As when no runner serves the job's `runs-on`, or Actions are off: every dispatch stays queued.
      await pauseRunner(forge, true);
      const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
      await host.start({ repo: forge.repo, worker_command: await engineByIssue(dir, { [n]: "work" }), target: 1, auto_merge: true, config: CONFIG });
      const story = async () => `${await runLogs(forge)}\n===== supervisor\n${await laneText(host, forge.repo, "supervisor")}`;
      const first = await waitFor(
        "attempt 1's run, never picked up, to end",
        async () => (await workflowRuns(forge)).find((r) => r.display_title === `afk #${n} attempt 1` && r.status === "completed") ?? null,
        { deadlineMs: 3 * 60_000, intervalMs: 250, explain: story },
      );
      assert.equal(first.conclusion, "cancelled", "the host cancelled the run nobody picked up");
      const jobs = (await api(forge, "GET", repoPath(forge, `/actions/runs/${first.id}/jobs`))).body as {
        jobs: Array<{ conclusion: string; started_at: string | null; steps: Array<{ conclusion: string }> }>;
      };
      assert.ok(
        jobs.jobs.every((j) => j.conclusion === "cancelled" && j.steps.every((st) => st.conclusion !== "success")),
        `no step of it ran: ${JSON.stringify(jobs.jobs)}`,
      );
      // A runner is back: the next attempt is picked up and does the work.
      await pauseRunner(forge, false);
      await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 4 * 60_000, intervalMs: 500, explain: story });
      await host.stop({ repo: forge.repo, stop_workers: true });

      const runs = await workflowRuns(forge);
      assert.deepEqual(
        runs.map((r) => `${r.display_title}: ${r.conclusion}`).sort(),
        [`afk #${n} attempt 1: cancelled`, `afk #${n} attempt 2: success`],
        "one dispatch per attempt, and exactly one attempt spent on the run nobody picked up",
      );
      // The reason is on the board, naming the run and the wait; it is the only failure said.
      const board = await comments(forge, n);
      const failures = board.split("\n").filter((line) => /failed:/.test(line));
      assert.ok(failures.length > 0, board);
      for (const line of failures)
        assert.match(line, new RegExp(`^Attempt 1 failed: no runner picked up workflow run ${first.id} within 20 s \\(is a runner for`));
      const supervisor = await laneRows(host, forge.repo, "supervisor");
      assert.equal(supervisor.filter((r) => r.event === "retry").length, 1, "one retry");
      assert.equal(supervisor.filter((r) => r.event === "escalate" || r.event === "escalation").length, 0, "no escalation");
      const exits = supervisor.filter((r) => r.event === "worker_exited");
      assert.equal(exits.length, 2);
      assert.match(String((exits[0]!.data as { kill_reason?: unknown }).kill_reason), /^no runner picked up workflow run/);
      assert.equal((exits[1]!.data as { kill_reason?: unknown }).kill_reason, null, "attempt 2 ended on its own");
      const starts = (await laneRows(host, forge.repo, "ledger")).filter((r) => r.event === "attempt_start" && r.issue === n);
      assert.deepEqual(
        starts.map((r) => r.attempt),
        [1, 2],
      );
      // The engine ran once, for attempt 2: attempt 1 never reached a runner.
      const worker = (await laneRows(host, forge.repo, "worker")).map((r) => String(r.msg));
      assert.deepEqual(
        worker.filter((l) => l.startsWith("engine on the runner:")),
        [`engine on the runner: issue ${n} attempt 2 mode work`],
      );
      assert.equal((await git(forge.bareRepo, "show", `main:work-${n}.txt`)).stdout.trim(), `work for ${n}`);
      const labels = ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { labels: Array<{ name: string }> }).labels.map((l) => l.name);
      assert.ok(!labels.includes("ready-for-human"), labels.join(", "));
    },
  );
});
