// The local forge's GitHub Actions subset over real HTTP, real git and real processes:
// dispatch (inputs checked, the run returned), the local runner (fresh clone, env, secrets,
// steps with bash -e), failure, cancel (the step's process group ends), concurrency groups,
// conditional polling, a push from a step with the run's token, and close leaving nothing.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { api, branchTip, commitFile, forgeForFile, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

let forge: TestForge;
let pids: string;
/** A clone of the forge's repository (pushes from here move the repository's pushed_at). */
let clone: string;

const AGENT = `name: agent
run-name: agent for issue \${{ inputs.issue }}
on:
  workflow_dispatch:
    inputs:
      issue: { type: string, required: true }
      engine: { type: choice, options: [claude, codex], default: claude }
      hold: { type: boolean, default: false }
concurrency:
  group: afk-issue-\${{ inputs.issue }}
  cancel-in-progress: true
env:
  ISSUE: \${{ inputs.issue }}
jobs:
  work:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
      - name: show
        env:
          ENGINE: \${{ inputs.engine }}
          KEY: \${{ secrets.API_KEY }}
          WHERE: \${{ github.repository }}@\${{ github.ref_name }}
        run: |
          echo "issue=$ISSUE engine=$ENGINE where=$WHERE run=$GITHUB_RUN_ID key=$KEY"
          test -z "\${GITHUB_TOKEN:-}" && echo "no token unless asked"
          test -f README.md && echo "workspace is a clone"
          echo "FROM_EARLIER=exported $ISSUE" >> "$GITHUB_ENV"
          echo "count=1" >> "$GITHUB_OUTPUT"
      - name: hold
        env:
          HOLD: \${{ inputs.hold }}
          PIDS: ${"${{ secrets.PIDS }}"}
        run: |
          if [ "$HOLD" = "true" ]; then
            sleep 300 &
            echo $! > "$PIDS/$GITHUB_RUN_ID"
            wait
          fi
      - name: push
        env:
          GITHUB_TOKEN: \${{ secrets.GITHUB_TOKEN }}
        run: |
          test -n "$GITHUB_TOKEN"
          echo "later step sees $FROM_EARLIER"
          node -e '
            const call = (path, body) => fetch(process.env.GITHUB_API_URL + path, { method: body ? "POST" : "GET", headers: { authorization: "token " + process.env.GITHUB_TOKEN, "content-type": "application/json" }, body: body && JSON.stringify(body) });
            const repo = "/repos/" + process.env.GITHUB_REPOSITORY;
            call(repo + "/check-runs", { name: "from-the-run", head_sha: process.env.GITHUB_SHA, status: "completed", conclusion: "success" })
              .then((r) => console.log("check run " + r.status))
              .then(() => call("/user")).then((r) => console.log("user " + r.status));'
          git -c user.name=runner -c user.email=runner@example.com commit -q --allow-empty -m "heartbeat $ISSUE"
          git push -q origin HEAD:refs/heads/afk/issue-$ISSUE
`;

const FAILING = `name: failing
on: workflow_dispatch
jobs:
  one:
    steps:
      - run: echo first
      - run: |
          echo about to fail
          exit 1
      - run: echo never
      - if: always()
        run: echo "cleanup runs after a failure"
      - if: \${{ failure() && inputs.none == null }}
        run: echo "failure() sees the failure"
  two:
    steps:
      - run: echo never either
`;

const REFUSED = `on: [workflow_dispatch]
jobs:
  j:
    steps:
      - run: echo \${{ github.sha }}
`;
const FOREIGN = `on: workflow_dispatch
jobs:
  j:
    steps:
      - uses: some/action@v1
`;
const SLOW = `on: workflow_dispatch
jobs:
  slow:
    timeout-minutes: 0.02
    steps:
      - run: sleep 300
      - run: echo after
`;
const PUSH_ONLY = `on: push
jobs:
  j:
    steps:
      - run: echo pushed
`;

forgeForFile({ secrets: { API_KEY: "sk-very-secret-value" } }, async (f, work) => {
  forge = f;
  clone = work;
  pids = await tempDir("afk-actions-pids-");
  const secret = await api(forge, "POST", "/_forge/secrets", { name: "PIDS", value: pids });
  assert.equal(secret.status, 201);
  for (const [file, text] of Object.entries({
    "agent.yml": AGENT,
    "failing.yml": FAILING,
    "refused.yaml": REFUSED,
    "foreign.yml": FOREIGN,
    "push-only.yml": PUSH_ONLY,
    "slow.yml": SLOW,
  })) {
    await commitFile(work, `.github/workflows/${file}`, text);
  }
  await git(work, "push", "--quiet", "origin", "HEAD:main");
});

const actions = (suffix: string): string => repoPath(forge, `/actions${suffix}`);

async function dispatch(workflow: string, inputs: Record<string, unknown> = {}, ref = "main"): Promise<number> {
  const r = await api(forge, "POST", actions(`/workflows/${workflow}/dispatches`), { ref, inputs, return_run_details: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.match(r.body.run_url, new RegExp(`/actions/runs/${r.body.workflow_run_id}$`));
  return r.body.workflow_run_id as number;
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = await probe();
    if (v !== null) return v;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function completed(id: number): Promise<any> {
  return waitFor(`run ${id} to complete`, async () => {
    const r = await api(forge, "GET", actions(`/runs/${id}`));
    return r.body.status === "completed" ? r.body : null;
  });
}

async function heldPid(id: number): Promise<number> {
  return waitFor(`run ${id}'s held process`, async () => {
    const text = await readFile(join(pids, String(id)), "utf8").catch(() => "");
    return text.trim() ? Number(text.trim()) : null;
  });
}

/** Whether the process still runs (a zombie waiting for its reaper has ended: state Z). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  return !/^\d+ \(.*\) Z/.test(stat);
}

async function jobLog(runId: number): Promise<string> {
  const jobs = await api(forge, "GET", actions(`/runs/${runId}/jobs`));
  const res = await fetch(`${forge.apiUrl}${actions(`/jobs/${jobs.body.jobs[0].id}/logs`)}`, { headers: { authorization: `token ${forge.token}` } });
  assert.equal(res.status, 200);
  return res.text();
}

describe("workflows and dispatch", () => {
  it("lists the workflow files of the default branch, by id and by file name", async () => {
    const list = await api(forge, "GET", actions("/workflows"));
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.workflows.map((w: { path: string }) => w.path),
      [
        ".github/workflows/agent.yml",
        ".github/workflows/failing.yml",
        ".github/workflows/foreign.yml",
        ".github/workflows/push-only.yml",
        ".github/workflows/refused.yaml",
        ".github/workflows/slow.yml",
      ],
    );
    const agent = list.body.workflows[0];
    assert.equal(agent.name, "agent");
    assert.equal((await api(forge, "GET", actions(`/workflows/${agent.id}`))).body.path, agent.path);
    assert.equal((await api(forge, "GET", actions("/workflows/agent.yml"))).body.id, agent.id);
    assert.equal((await api(forge, "GET", actions("/workflows/nope.yml"))).status, 404);
  });

  it("refuses bad dispatches as GitHub does: 422 for inputs, trigger and ref, 404 for no workflow", async () => {
    const post = (wf: string, body: unknown) => api(forge, "POST", actions(`/workflows/${wf}/dispatches`), body);
    const unknown = await post("agent.yml", { ref: "main", inputs: { issue: "1", color: "red" } });
    assert.equal(unknown.status, 422);
    assert.match(unknown.body.message, /Unexpected inputs provided: \["color"\]/);
    assert.match((await post("agent.yml", { ref: "main", inputs: {} })).body.message, /Required input 'issue' not provided/);
    assert.match((await post("agent.yml", { ref: "main", inputs: { issue: "1", engine: "gpt" } })).body.message, /not in the list of allowed values/);
    assert.match((await post("agent.yml", { ref: "main", inputs: { issue: "1", hold: "maybe" } })).body.message, /not a boolean/);
    assert.equal((await post("agent.yml", { inputs: { issue: "1" } })).status, 422);
    assert.match((await post("agent.yml", { ref: "no-such-branch", inputs: { issue: "1" } })).body.message, /No ref found for: no-such-branch/);
    assert.match((await post("push-only.yml", { ref: "main" })).body.message, /does not have 'workflow_dispatch' trigger/);
    assert.equal((await post("missing.yml", { ref: "main" })).status, 404);
    assert.equal((await api(forge, "GET", actions("/runs"))).body.total_count, 0, "no refused dispatch made a run");
    const plain = await post("failing.yml", { ref: "main" });
    assert.equal(plain.status, 204, "without return_run_details the answer is 204");
    await completed((await api(forge, "GET", actions("/runs?event=workflow_dispatch"))).body.workflow_runs[0].id);
  });
});

describe("the local runner", () => {
  it("runs a dispatch in a fresh clone with its inputs and secrets, and pushes with the run's token", async () => {
    const id = await dispatch("agent.yml", { issue: "42" });
    const run = await completed(id);
    assert.equal(run.conclusion, "success");
    assert.equal(run.display_title, "agent for issue 42");
    assert.equal(run.head_branch, "main");
    assert.equal(run.head_sha, await branchTip(forge, "main"));
    const jobs = await api(forge, "GET", actions(`/runs/${id}/jobs`));
    assert.equal(jobs.body.total_count, 1);
    assert.deepEqual(
      jobs.body.jobs[0].steps.map((s: { conclusion: string }) => s.conclusion),
      ["success", "success", "success", "success", "success"],
    );
    const log = await jobLog(id);
    assert.match(log, new RegExp(`issue=42 engine=claude where=${forge.repo}@main run=${id} key=\\*\\*\\*`));
    assert.ok(!log.includes("sk-very-secret-value"), "a secret is masked in the log");
    assert.match(log, /no token unless asked/);
    assert.match(log, /workspace is a clone/);
    assert.match(log, /later step sees exported 42/, "GITHUB_ENV carries a value to later steps");
    assert.match(log, /check run 201/, "the run's token writes through the REST API while the run is in progress");
    assert.match(log, /user 403/, "an installation token has no /user");
    // The step's push landed on the forge, a child of the dispatched commit.
    const pushed = await branchTip(forge, "afk/issue-42");
    assert.equal((await git(forge.bareRepo, "rev-parse", `${pushed}^`)).stdout, run.head_sha);
    assert.equal((await git(forge.bareRepo, "log", "-1", "--format=%s", pushed)).stdout, "heartbeat 42");
  });

  it("fails the run on a step that exits 1: that step fails, the rest are skipped", async () => {
    const id = await dispatch("failing.yml");
    const run = await completed(id);
    assert.equal(run.conclusion, "failure");
    const jobs = (await api(forge, "GET", actions(`/runs/${id}/jobs`))).body.jobs;
    assert.deepEqual(
      jobs.map((j: { conclusion: string }) => j.conclusion),
      ["failure", "skipped"],
    );
    assert.deepEqual(
      jobs[0].steps.map((s: { conclusion: string }) => s.conclusion),
      ["success", "failure", "skipped", "success", "success"],
    );
    const log = await jobLog(id);
    assert.match(log, /about to fail[\s\S]*Process completed with exit code 1/);
    assert.match(log, /cleanup runs after a failure[\s\S]*failure\(\) sees the failure/);
    assert.doesNotMatch(log, /^never/m, "the steps after the failure without if: did not run");
  });

  it("refuses ${{ }} inside run: and any uses: but checkout and setup-node, with a clear message", async () => {
    const refused = await completed(await dispatch("refused.yaml"));
    assert.equal(refused.conclusion, "failure");
    assert.match(await jobLog(refused.id), /does not evaluate \$\{\{ \}\} expressions inside run: scripts/);
    const foreign = await completed(await dispatch("foreign.yml"));
    assert.equal(foreign.conclusion, "failure");
    assert.match(await jobLog(foreign.id), /uses: some\/action@v1 is outside the local runner's subset/);
  });

  it("honours a job's timeout-minutes: the step is killed, the run concludes timed_out", async () => {
    const id = await dispatch("slow.yml");
    const run = await completed(id);
    assert.equal(run.conclusion, "timed_out");
    const steps = (await api(forge, "GET", actions(`/runs/${id}/jobs`))).body.jobs[0].steps;
    assert.deepEqual(
      steps.map((s: { conclusion: string }) => s.conclusion),
      ["timed_out", "skipped"],
    );
  });

  it("cancels mid-step: 202, the run concludes cancelled, the step's process group is gone", async () => {
    const id = await dispatch("agent.yml", { issue: "7", hold: "true" });
    const pid = await heldPid(id);
    assert.ok(alive(pid));
    assert.equal((await api(forge, "POST", actions(`/runs/${id}/cancel`))).status, 202);
    const run = await completed(id);
    assert.equal(run.conclusion, "cancelled");
    assert.equal(alive(pid), false, "the held process was killed with its group");
    const steps = (await api(forge, "GET", actions(`/runs/${id}/jobs`))).body.jobs[0].steps;
    assert.deepEqual(
      steps.map((s: { conclusion: string }) => s.conclusion),
      ["success", "success", "success", "cancelled", "skipped"],
    );
    assert.equal((await api(forge, "POST", actions(`/runs/${id}/cancel`))).status, 409);
    await assert.rejects(git(forge.bareRepo, "rev-parse", "--verify", "refs/heads/afk/issue-7"), "a cancelled run pushed nothing");
  });

  it("a concurrency group with cancel-in-progress cancels the older run", async () => {
    const older = await dispatch("agent.yml", { issue: "9", hold: "true" });
    const pid = await heldPid(older);
    const newer = await dispatch("agent.yml", { issue: "9" });
    assert.equal((await completed(older)).conclusion, "cancelled");
    assert.equal((await completed(newer)).conclusion, "success");
    assert.equal(alive(pid), false);
    const listed = await api(forge, "GET", actions("/workflows/agent.yml/runs?status=cancelled"));
    assert.ok(listed.body.workflow_runs.some((r: { id: number }) => r.id === older));
    assert.ok(!listed.body.workflow_runs.some((r: { id: number }) => r.id === newer));
  });

  it("a paused runner picks up nothing: a dispatch stays queued (a cancel ends it there) until the runner is resumed; a bad body is refused", async () => {
    const pause = (body: unknown) => api(forge, "POST", "/_forge/actions/runner", body);
    assert.equal((await pause({ paused: "yes" })).status, 422);
    const paused = await pause({ paused: true });
    assert.equal(paused.status, 200);
    assert.deepEqual(paused.body, { paused: true, queued: 0, in_progress: 0 });
    let waiting: number;
    try {
      const cancelled = await dispatch("failing.yml");
      waiting = await dispatch("failing.yml");
      // A runner that is not paused has started a run by the time its dispatch answers.
      assert.equal((await api(forge, "GET", actions(`/runs/${waiting}`))).body.status, "queued");
      assert.equal((await api(forge, "POST", actions(`/runs/${cancelled}/cancel`))).status, 202);
      assert.equal((await completed(cancelled)).conclusion, "cancelled");
      const job = (await api(forge, "GET", actions(`/runs/${cancelled}/jobs`))).body.jobs[0];
      assert.equal(job.conclusion, "cancelled");
      assert.ok(
        job.steps.every((s: { conclusion: string }) => s.conclusion === "skipped"),
        "none of its steps ran",
      );
      assert.equal((await api(forge, "GET", actions(`/runs/${waiting}`))).body.status, "queued");
    } finally {
      const resumed = await pause({ paused: false });
      assert.equal(resumed.status, 200);
      assert.equal(resumed.body.paused, false);
    }
    assert.equal((await completed(waiting)).conclusion, "failure", "resumed, the runner picked the queued run up and ran it");
  });

  it("answers an unchanged run's poll with 304, which costs no rate limit, even after a push elsewhere in the repository", async () => {
    const id = await dispatch("failing.yml");
    await completed(id);
    const first = await api(forge, "GET", actions(`/runs/${id}`));
    const etag = first.headers.get("etag")!;
    const before = Number(first.headers.get("x-ratelimit-remaining"));
    // A push moves the repository's pushed_at (to the second): the run embeds the repository as
    // GitHub does there, identity and URLs only, so twenty runs' heartbeats never change each other's runs.
    await sleep(1_100);
    await git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "a push elsewhere");
    await git(clone, "push", "--quiet", "origin", "HEAD:refs/heads/elsewhere");
    assert.equal(first.body.repository.pushed_at, undefined);
    for (let i = 0; i < 3; i++) {
      const again = await api(forge, "GET", actions(`/runs/${id}`), undefined, { headers: { "if-none-match": etag } });
      assert.equal(again.status, 304);
      assert.equal(Number(again.headers.get("x-ratelimit-remaining")), before);
    }
    const filtered = await api(forge, "GET", actions(`/runs?head_sha=${first.body.head_sha}&branch=main&status=failure&per_page=1`));
    assert.equal(filtered.body.workflow_runs.length, 1);
    assert.ok(filtered.body.total_count >= 2);
    assert.match(filtered.headers.get("link") ?? "", /rel="next"/);
  });
});

describe("closing the forge", () => {
  it("kills runs in progress and leaves no process behind; the run is concluded on disk", async () => {
    const other = await startTestForge({ actionsConcurrency: 1 });
    let closed = false;
    try {
      const work = join(await tempDir("afk-actions-close-"), "w");
      await git(join(work, ".."), "clone", "--quiet", other.gitUrl.replace("http://", `http://x:${other.token}@`), work);
      await commitFile(work, ".github/workflows/agent.yml", AGENT);
      await git(work, "push", "--quiet", "origin", "HEAD:main");
      await api(other, "POST", "/_forge/secrets", { name: "PIDS", value: pids });
      const post = (issue: string) =>
        api(other, "POST", repoPath(other, "/actions/workflows/agent.yml/dispatches"), {
          ref: "main",
          inputs: { issue, hold: "true" },
          return_run_details: true,
        });
      const a = (await post("100")).body.workflow_run_id as number;
      const b = (await post("101")).body.workflow_run_id as number;
      const pid = await heldPid(a);
      const queued = await api(other, "GET", repoPath(other, `/actions/runs/${b}`));
      assert.equal(queued.body.status, "queued", "one run at a time with actionsConcurrency 1");
      await other.close();
      closed = true;
      assert.equal(alive(pid), false);
      const state = JSON.parse(await readFile(join(other.dir, "forge-state.json"), "utf8"));
      assert.deepEqual(
        state.actions.runs.map((r: { status: string; conclusion: string }) => `${r.status}/${r.conclusion}`),
        ["completed/cancelled", "completed/cancelled"],
      );
    } finally {
      if (!closed) await other.close();
      await other.dispose();
    }
  });
});
