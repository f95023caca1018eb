// The local forge's Actions beyond a dispatch, over real HTTP, git and processes: a pull request
// opened or moved runs its `pull_request` workflows on the head; each job posts a check run there
// (the app github-actions, the job's id, the run as its suite); and a run's failed jobs, or one
// job, run again as the run's next attempt, with new check runs of the same names.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { api, commitFile, forgeForFile, git, repoPath, type TestForge } from "./support/forge-fixtures.js";

let forge: TestForge;
let clone: string;

/** `test` fails on a run's first attempt only: a flaky check. */
const CI = `name: ci
on:
  pull_request:
jobs:
  build:
    steps:
      - run: echo built
  test:
    steps:
      - run: |
          echo "attempt $GITHUB_RUN_ATTEMPT of $GITHUB_EVENT_NAME on $GITHUB_SHA"
          test "$GITHUB_RUN_ATTEMPT" -gt 1
`;
const ON_CLOSE = `on:
  pull_request:
    types: [closed]
jobs:
  j:
    steps:
      - run: echo closed
`;
const DISPATCH_ONLY = `on: workflow_dispatch
jobs:
  j:
    steps:
      - run: echo dispatched
`;

forgeForFile({}, async (f, work) => {
  forge = f;
  clone = work;
  await commitFile(work, ".github/workflows/ci.yml", CI);
  await commitFile(work, ".github/workflows/on-close.yml", ON_CLOSE);
  await commitFile(work, ".github/workflows/dispatch.yml", DISPATCH_ONLY);
  await git(work, "push", "--quiet", "origin", "HEAD:main");
});

const path = (suffix: string): string => repoPath(forge, suffix);

async function waitFor<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = await probe();
    if (v !== null) return v;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Pushes a commit on `branch` (from main the first time); returns its sha. */
async function pushBranch(branch: string, file: string): Promise<string> {
  await git(clone, "checkout", "--quiet", "-B", branch, "origin/main");
  const exists = (await git(clone, "ls-remote", "origin", `refs/heads/${branch}`)).stdout !== "";
  if (exists) await git(clone, "reset", "--quiet", "--hard", `origin/${branch}`);
  const sha = await commitFile(clone, file, `${file}\n`);
  await git(clone, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
  await git(clone, "fetch", "--quiet", "origin");
  return sha;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The pull_request runs on `sha`, newest first, once every one of them completed (and there is at least `count`). */
async function settledRuns(sha: string, count = 1): Promise<Json[]> {
  return waitFor(`${count} completed run(s) on ${sha.slice(0, 7)}`, async () => {
    const r = await api(forge, "GET", path(`/actions/runs?event=pull_request&head_sha=${sha}`));
    const runs = r.body.workflow_runs as Json[];
    return runs.length >= count && runs.every((run) => run.status === "completed") ? runs : null;
  });
}

async function checkRuns(sha: string, filter: "latest" | "all"): Promise<Json[]> {
  return (await api(forge, "GET", path(`/commits/${sha}/check-runs?filter=${filter}`))).body.check_runs as Json[];
}

describe("pull_request workflows on the local runner", () => {
  let sha = "";
  let runId = 0;
  let failedJob = 0;

  it("a PR opened runs the workflows triggered by its opening on its head; each job posts a check run as GitHub Actions", async () => {
    sha = await pushBranch("flaky", "flaky.txt");
    const pr = await api(forge, "POST", path("/pulls"), { title: "flaky", head: "flaky", base: "main", body: "" });
    assert.equal(pr.status, 201, JSON.stringify(pr.body));
    const [run, ...more] = await settledRuns(sha);
    assert.equal(more.length, 0, "one run: the workflow on closed and the dispatch-only one do not run");
    assert.deepEqual([run.name, run.event, run.head_branch, run.conclusion, run.run_attempt], ["ci", "pull_request", "flaky", "failure", 1]);
    runId = run.id;
    const jobs = (await api(forge, "GET", path(`/actions/runs/${runId}/jobs`))).body.jobs as Json[];
    assert.deepEqual(
      jobs.map((j) => [j.name, j.conclusion]),
      [
        ["build", "success"],
        ["test", "failure"],
      ],
    );
    failedJob = jobs[1].id;
    const checks = await checkRuns(sha, "latest");
    assert.deepEqual(checks.map((c) => [c.name, c.conclusion, c.app.slug, c.check_suite.id]).sort(), [
      ["build", "success", "github-actions", runId],
      ["test", "failure", "github-actions", runId],
    ]);
    assert.deepEqual(checks.map((c) => c.id).sort(), jobs.map((j) => j.id).sort(), "a job's check run has the job's id");
  });

  it("re-running the failed jobs makes the run's next attempt: the failed job runs again (passing now), new check run, same name and suite", async () => {
    const r = await api(forge, "POST", path(`/actions/runs/${runId}/rerun-failed-jobs`));
    assert.deepEqual([r.status, r.body], [201, {}]);
    const again = await api(forge, "POST", path(`/actions/runs/${runId}/rerun-failed-jobs`));
    assert.equal(again.status, 403, "a run in progress is not re-run again");
    const [run] = await settledRuns(sha);
    assert.deepEqual([run.id, run.conclusion, run.run_attempt], [runId, "success", 2]);
    assert.match(run.previous_attempt_url, new RegExp(`/actions/runs/${runId}/attempts/1$`));
    const jobs = (await api(forge, "GET", path(`/actions/runs/${runId}/jobs`))).body.jobs as Json[];
    assert.deepEqual(
      jobs.map((j) => [j.name, j.conclusion, j.run_attempt]),
      [
        ["build", "success", 1],
        ["test", "success", 2],
      ],
      "the job that passed is kept; the failed one ran again",
    );
    assert.notEqual(jobs[1].id, failedJob);
    const old = await api(forge, "GET", path(`/actions/jobs/${failedJob}`));
    assert.deepEqual([old.status, old.body.conclusion, old.body.run_attempt], [200, "failure", 1], "the earlier attempt's job is still there");
    const all = await checkRuns(sha, "all");
    assert.deepEqual(all.map((c) => [c.name, c.conclusion, c.check_suite.id]).sort(), [
      ["build", "success", runId],
      ["test", "failure", runId],
      ["test", "success", runId],
    ]);
    assert.deepEqual((await checkRuns(sha, "latest")).map((c) => [c.name, c.conclusion]).sort(), [
      ["build", "success"],
      ["test", "success"],
    ]);
  });

  it("refuses what GitHub refuses: no failed job to re-run, a job of an earlier attempt; one job re-runs on its own", async () => {
    assert.equal((await api(forge, "POST", path(`/actions/runs/${runId}/rerun-failed-jobs`))).status, 403);
    assert.equal((await api(forge, "POST", path(`/actions/jobs/${failedJob}/rerun`))).status, 403);
    assert.equal((await api(forge, "POST", path("/actions/runs/999999999/rerun-failed-jobs"))).status, 404);
    const jobs = (await api(forge, "GET", path(`/actions/runs/${runId}/jobs`))).body.jobs as Json[];
    const one = await api(forge, "POST", path(`/actions/jobs/${jobs[0].id}/rerun`));
    assert.deepEqual([one.status, one.body], [201, {}]);
    const [run] = await settledRuns(sha);
    assert.equal(run.run_attempt, 3);
    const now = (await api(forge, "GET", path(`/actions/runs/${runId}/jobs`))).body.jobs as Json[];
    assert.deepEqual(
      now.map((j) => [j.name, j.run_attempt, j.conclusion]),
      [
        ["build", 3, "success"],
        ["test", 3, "success"],
      ],
      "the job re-run and the jobs after it",
    );
  });

  it("a push to the PR's branch (synchronize) runs its workflows on the new head", async () => {
    const moved = await pushBranch("flaky", "second.txt");
    const [run] = await settledRuns(moved);
    assert.deepEqual([run.head_sha, run.conclusion, run.run_attempt], [moved, "failure", 1]);
    assert.ok(run.id !== runId);
  });
});
