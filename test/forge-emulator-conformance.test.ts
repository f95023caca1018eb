// Proves the local forge answers like GitHub: a scenario drives every REST operation the
// fleet uses over real HTTP (and git smart HTTP for pushes), every response is checked
// against GitHub's official OpenAPI description (test/openapi/github-subset.json), and the
// test fails on any violation or on any listed operation the scenario did not reach.
//
// When it fails, the messages name the route, status and field; a copy goes to
// .conformance-report.md at the repository root for whoever works on the forge (removed
// again by the next passing run).

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startForge } from "../server/forge-emulator/index.js";
import { conformanceRecorder } from "./support/conformance.js";
import { LISTED_OPERATIONS } from "./support/openapi.js";

const run = promisify(execFile);

interface Reply {
  status: number;
  body: unknown;
  headers: Headers;
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
}

const WORKFLOW = `name: ci
on:
  workflow_dispatch:
    inputs:
      issue: { type: string, required: true }
      hold: { type: boolean, default: false }
jobs:
  build:
    steps:
      - uses: actions/checkout@v4
      - env:
          HOLD: \${{ inputs.hold }}
        run: |
          echo building
          if [ "$HOLD" = "true" ]; then sleep 300; fi
`;

test("the local forge conforms to GitHub's OpenAPI description on every operation it serves", { timeout: 120_000 }, async (t) => {
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), "afk-conformance-"));
  const recorder = conformanceRecorder();
  const forge = await startForge({ dir, onResponse: recorder.onResponse });
  const expectations: string[] = [];
  try {
    const apiUrl = forge.apiUrl.replace(/\/$/, "");
    const token = forge.token;
    // Owner and name from the clone URL (http://host/owner/name.git).
    const m = /\/([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(new URL(forge.gitUrl).pathname);
    assert.ok(m, `cannot read owner/name from ${forge.gitUrl}`);
    const owner = m[1] as string;
    const name = m[2] as string;
    const repo = `/repos/${owner}/${name}`;

    async function call(method: string, path: string, body?: unknown, opts: { auth?: boolean; headers?: Record<string, string> } = {}): Promise<Reply> {
      const headers: Record<string, string> = { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", ...opts.headers };
      if (opts.auth !== false) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(apiUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let parsed: unknown = undefined;
      if (text !== "") {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return { status: res.status, body: parsed, headers: res.headers };
    }

    /** Calls and notes (without stopping the scenario) when the status is not the expected one. */
    async function step(
      expected: number | number[],
      method: string,
      path: string,
      body?: unknown,
      opts?: { auth?: boolean; headers?: Record<string, string> },
    ): Promise<Reply> {
      const r = await call(method, path, body, opts);
      const ok = Array.isArray(expected) ? expected.includes(r.status) : r.status === expected;
      if (!ok) {
        const shown = JSON.stringify(r.body) ?? "";
        expectations.push(`${method} ${path}: expected ${String(expected)}, got ${r.status} ${shown.slice(0, 300)}`);
      }
      return r;
    }

    const scenario = async (): Promise<void> => {
      // --- git: a base commit on main, a feature branch, a conflicting one, one that will fall behind
      const work = join(dir, "clone");
      const gitEnv = {
        ...process.env,
        GIT_TERMINAL_PROMPT: "0",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "http.extraHeader",
        GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}`,
        GIT_AUTHOR_NAME: "Conformance",
        GIT_AUTHOR_EMAIL: "conformance@example.com",
        GIT_COMMITTER_NAME: "Conformance",
        GIT_COMMITTER_EMAIL: "conformance@example.com",
      };
      const git = async (...args: string[]): Promise<string> => (await run("git", args, { cwd: work, env: gitEnv })).stdout.trim();
      await run("git", ["clone", "--quiet", forge.gitUrl, work], { env: gitEnv });
      const heads = await git("ls-remote", "--heads", "origin");
      if (!/refs\/heads\/main$/m.test(heads)) {
        await git("checkout", "-q", "-B", "main");
        await writeFile(join(work, "README.md"), "# fleet\n");
        await git("add", "README.md");
        await git("commit", "-q", "-m", "Initial commit");
        await git("push", "-q", "origin", "main");
      } else {
        await git("checkout", "-q", "main");
      }
      // A dispatchable workflow on the default branch, for the Actions routes.
      await mkdir(join(work, ".github", "workflows"), { recursive: true });
      await writeFile(join(work, ".github", "workflows", "ci.yml"), WORKFLOW);
      await git("add", ".github/workflows/ci.yml");
      await git("commit", "-q", "-m", "Add a workflow");
      await git("push", "-q", "origin", "main");
      const base = await git("rev-parse", "HEAD");
      const branch = async (nameOfBranch: string, file: string, content: string): Promise<string> => {
        await git("checkout", "-q", "-B", nameOfBranch, base);
        await writeFile(join(work, file), content);
        await git("add", file);
        await git("commit", "-q", "-m", `Change ${file} on ${nameOfBranch}`);
        await git("push", "-q", "origin", `${nameOfBranch}:refs/heads/${nameOfBranch}`);
        return git("rev-parse", "HEAD");
      };
      const featureSha = await branch("feature/x", "shared.txt", "feature\n");
      const conflictSha = await branch("conflict", "shared.txt", "conflicting\n");
      const behindSha = await branch("behind", "other.txt", "other\n");

      // --- identity, limits, repository
      await step(200, "GET", "/user");
      await step(401, "GET", "/user", undefined, { auth: false });
      await step(200, "GET", "/rate_limit");
      await step(200, "GET", repo);
      await step(404, "GET", `/repos/${owner}/no-such-repo`);

      // --- labels
      await step(201, "POST", `${repo}/labels`, { name: "afk:ready", color: "0e8a16", description: "Ready for an agent" });
      await step(201, "POST", `${repo}/labels`, { name: "area/ui", color: "c5def5" });
      await step(422, "POST", `${repo}/labels`, { name: "AFK:READY", color: "ffffff" });
      await step(200, "GET", `${repo}/labels?per_page=100`);
      await step(200, "GET", `${repo}/labels/afk:ready`);
      await step(200, "GET", `${repo}/labels/${encodeURIComponent("area/ui")}`);
      await step(404, "GET", `${repo}/labels/nope`);

      // --- issues
      const i1 = obj((await step(201, "POST", `${repo}/issues`, { title: "First", body: "Body", labels: ["afk:ready"] })).body);
      const i2 = obj((await step(201, "POST", `${repo}/issues`, { title: "Second" })).body);
      const i3 = obj((await step(201, "POST", `${repo}/issues`, { title: "Third", body: null, labels: ["area/ui"] })).body);
      const [n1, n2, n3] = [i1.number, i2.number, i3.number] as number[];
      const [id1, id3] = [i1.id, i3.id] as number[];
      assert.ok(n1 && n2 && n3 && id1 && id3, `issue creation failed: ${expectations.join("\n")}`);
      await step(422, "POST", `${repo}/issues`, { body: "no title" });
      await step(200, "GET", `${repo}/issues?state=all&per_page=100`);
      const got = await step(200, "GET", `${repo}/issues/${n1}`);
      const etag = got.headers.get("etag");
      if (etag) await step([200, 304], "GET", `${repo}/issues/${n1}`, undefined, { headers: { "if-none-match": etag } });
      await step(404, "GET", `${repo}/issues/99999`);
      await step(200, "PATCH", `${repo}/issues/${n2}`, { title: "Second, renamed", assignees: [] });
      await step(200, "PATCH", `${repo}/issues/${n3}`, { state: "closed", state_reason: "not_planned" });
      await step(200, "PATCH", `${repo}/issues/${n3}`, { state: "open" });
      await step(422, "PATCH", `${repo}/issues/${n2}`, { state: "sideways" });

      // --- issue labels
      await step(200, "POST", `${repo}/issues/${n2}/labels`, { labels: ["afk:ready", "area/ui"] });
      await step(200, "GET", `${repo}/issues/${n2}/labels`);
      await step(200, "DELETE", `${repo}/issues/${n2}/labels/afk:ready`);
      await step(200, "DELETE", `${repo}/issues/${n2}/labels/${encodeURIComponent("area/ui")}`);
      await step(404, "DELETE", `${repo}/issues/${n2}/labels/afk:ready`);

      // --- comments
      const c1 = obj((await step(201, "POST", `${repo}/issues/${n1}/comments`, { body: "Claimed by worker-1" })).body);
      await step(200, "GET", `${repo}/issues/${n1}/comments?per_page=100`);
      await step(200, "GET", `${repo}/issues/comments/${String(c1.id)}`);
      await step(200, "PATCH", `${repo}/issues/comments/${String(c1.id)}`, { body: "Claimed by worker-1 (edited)" });
      await step(404, "GET", `${repo}/issues/comments/99999999`);
      await step(422, "POST", `${repo}/issues/${n1}/comments`, {});
      await step(404, "POST", `${repo}/issues/99999/comments`, { body: "nowhere" });

      // --- dependencies: n2 is blocked by n1
      await step(201, "POST", `${repo}/issues/${n2}/dependencies/blocked_by`, { issue_id: id1 });
      await step(200, "GET", `${repo}/issues/${n2}/dependencies/blocked_by`);
      await step(200, "GET", `${repo}/issues/${n1}/dependencies/blocking`);
      await step(200, "GET", `${repo}/issues/${n2}`); // carries issue_dependencies_summary
      await step([404, 422], "POST", `${repo}/issues/${n2}/dependencies/blocked_by`, { issue_id: 424242 });
      await step(200, "DELETE", `${repo}/issues/${n2}/dependencies/blocked_by/${id1}`);
      await step(404, "DELETE", `${repo}/issues/${n2}/dependencies/blocked_by/${id1}`);

      // --- sub-issues: n3 under n1
      await step(201, "POST", `${repo}/issues/${n1}/sub_issues`, { sub_issue_id: id3 });
      await step(200, "GET", `${repo}/issues/${n1}/sub_issues`);
      await step(200, "GET", `${repo}/issues/${n3}/parent`);
      await step(200, "GET", `${repo}/issues/${n1}`); // carries sub_issues_summary
      await step(422, "POST", `${repo}/issues/${n1}/sub_issues`, { sub_issue_id: id1 }); // itself
      await step(200, "DELETE", `${repo}/issues/${n1}/sub_issue`, { sub_issue_id: id3 });
      await step(404, "GET", `${repo}/issues/${n3}/parent`);
      await step(201, "POST", `${repo}/issues/${n1}/sub_issues`, { sub_issue_id: id3 }); // leave one in place

      // --- refs (Octokit encodes {ref}: both spellings are exercised)
      await step(200, "GET", `${repo}/git/ref/heads/main`);
      await step(200, "GET", `${repo}/git/ref/${encodeURIComponent("heads/feature/x")}`);
      await step(404, "GET", `${repo}/git/ref/heads/nope`);
      await step(201, "POST", `${repo}/git/refs`, { ref: "refs/afk/claim/1", sha: base });
      await step(422, "POST", `${repo}/git/refs`, { ref: "refs/afk/claim/1", sha: base });
      await step(422, "POST", `${repo}/git/refs`, { ref: "refs/afk/claim/2", sha: "0123456789012345678901234567890123456789" });
      await step(200, "GET", `${repo}/git/matching-refs/${encodeURIComponent("afk/claim/")}`);
      await step(200, "GET", `${repo}/git/matching-refs/afk/`);
      await step(200, "GET", `${repo}/git/matching-refs/heads/`);
      await step(200, "GET", `${repo}/git/matching-refs/afk/nothing-here/`);
      await step(200, "PATCH", `${repo}/git/refs/${encodeURIComponent("afk/claim/1")}`, { sha: featureSha, force: true });
      await step(422, "PATCH", `${repo}/git/refs/afk/claim/1`, { sha: conflictSha, force: false }); // not a fast-forward
      await step(204, "DELETE", `${repo}/git/refs/${encodeURIComponent("afk/claim/1")}`);
      await step(422, "DELETE", `${repo}/git/refs/afk/claim/1`);
      await step(404, "GET", `${repo}/git/ref/afk/claim/1`);

      // --- repository activity: the pushes and ref writes above
      await step(200, "GET", `${repo}/activity`);
      await step(200, "GET", `${repo}/activity?ref=${encodeURIComponent("feature/x")}&direction=asc&per_page=1`);
      await step(200, "GET", `${repo}/activity?activity_type=branch_deletion&ref=refs/afk/claim/1`);
      await step(422, "GET", `${repo}/activity?direction=sideways`);

      // --- branches, protection, rulesets
      await step(200, "GET", `${repo}/branches/main`);
      await step(200, "GET", `${repo}/branches/${encodeURIComponent("feature/x")}`);
      await step(404, "GET", `${repo}/branches/nope`);
      await step(404, "GET", `${repo}/branches/main/protection`);
      await step(200, "PUT", `${repo}/branches/main/protection`, {
        required_status_checks: { strict: false, contexts: ["ci/build"] },
        enforce_admins: false,
        required_pull_request_reviews: null,
        restrictions: null,
      });
      await step(200, "GET", `${repo}/branches/main/protection`);
      await step(200, "GET", `${repo}/branches/main`); // now protected
      await step(201, "POST", `${repo}/rulesets`, {
        name: "main checks",
        target: "branch",
        enforcement: "active",
        conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
        rules: [
          { type: "deletion" },
          { type: "required_status_checks", parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "ci/checks" }] } },
        ],
      });
      await step(422, "POST", `${repo}/rulesets`, { name: "bad", target: "branch", enforcement: "sometimes", rules: [] });
      await step(200, "GET", `${repo}/rules/branches/main`);
      await step(200, "GET", `${repo}/rules/branches/${encodeURIComponent("feature/x")}`);

      // --- pull requests
      const pr = obj((await step(201, "POST", `${repo}/pulls`, { title: "Feature X", head: "feature/x", base: "main", body: `Closes #${n2}` })).body);
      const prConflict = obj((await step(201, "POST", `${repo}/pulls`, { title: "Conflict", head: "conflict", base: "main" })).body);
      const prBehind = obj((await step(201, "POST", `${repo}/pulls`, { title: "Behind", head: "behind", base: "main", draft: true })).body);
      const [p1, p2, p3] = [pr.number, prConflict.number, prBehind.number] as number[];
      assert.ok(p1 && p2 && p3, `pull request creation failed:\n${expectations.join("\n")}`);
      await step(422, "POST", `${repo}/pulls`, { title: "Again", head: "feature/x", base: "main" }); // one open PR per head
      await step(422, "POST", `${repo}/pulls`, { title: "No branch", head: "no-such-branch", base: "main" });
      await step(200, "GET", `${repo}/pulls?state=open&per_page=100`);
      await step(200, "GET", `${repo}/pulls/${p1}`);
      await step(404, "GET", `${repo}/pulls/99999`);
      await step(200, "PATCH", `${repo}/pulls/${p1}`, { body: `Closes #${n2}\n\nMore words.` });
      await step(200, "GET", `${repo}/issues?state=open&per_page=100`); // lists PRs too
      await step(200, "GET", `${repo}/issues/${p1}`);

      // --- reviews: nobody approves their own PR; comments are fine
      await step(422, "POST", `${repo}/pulls/${p1}/reviews`, { event: "APPROVE" });
      await step(422, "POST", `${repo}/pulls/${p1}/reviews`, { event: "COMMENT" }); // a comment needs a body
      await step(200, "POST", `${repo}/pulls/${p1}/reviews`, { event: "COMMENT", body: "Reads well." });
      await step(200, "POST", `${repo}/pulls/${p1}/reviews`, { body: "a draft" }); // PENDING
      await step(200, "GET", `${repo}/pulls/${p1}/reviews`);
      await step(404, "GET", `${repo}/pulls/99999/reviews`);
      // --- review line comments: on a path and line of the head
      await step(201, "POST", `${repo}/pulls/${p1}/comments`, { body: "Use a const here.", path: "shared.txt", line: 1, commit_id: featureSha });
      await step(422, "POST", `${repo}/pulls/${p1}/comments`, { body: "No place", line: 1 }); // a path is required
      await step(200, "GET", `${repo}/pulls/${p1}/comments`);
      await step(404, "GET", `${repo}/pulls/99999/comments`);

      // --- statuses and check runs on the PR head
      await step(200, "GET", `${repo}/commits/${featureSha}/status`); // pending, no statuses yet
      await step(201, "POST", `${repo}/statuses/${featureSha}`, { state: "pending", context: "ci/build", description: "Building" });
      await step(201, "POST", `${repo}/statuses/${featureSha}`, { state: "success", context: "ci/build", target_url: "https://ci.example.com/1" });
      await step(422, "POST", `${repo}/statuses/${featureSha}`, { state: "great", context: "ci/build" });
      await step(200, "GET", `${repo}/commits/${featureSha}/status`);
      await step(200, "GET", `${repo}/commits/${encodeURIComponent("feature/x")}/status`);
      await step(200, "GET", `${repo}/commits/${featureSha}/statuses`);
      const run1 = obj((await step(201, "POST", `${repo}/check-runs`, { name: "ci/checks", head_sha: featureSha, status: "in_progress" })).body);
      await step(200, "PATCH", `${repo}/check-runs/${String(run1.id)}`, {
        status: "completed",
        conclusion: "success",
        output: { title: "OK", summary: "All green" },
      });
      await step(201, "POST", `${repo}/check-runs`, { name: "lint", head_sha: featureSha, status: "completed", conclusion: "neutral" });
      await step(200, "GET", `${repo}/commits/${featureSha}/check-runs?filter=latest`);
      await step(200, "GET", `${repo}/commits/${encodeURIComponent("feature/x")}/check-runs`);

      // --- merging: 409 stale sha, 405 not mergeable, 200, 405 already merged; update-branch
      await step(409, "PUT", `${repo}/pulls/${p1}/merge`, { merge_method: "merge", sha: base });
      await step(200, "PUT", `${repo}/pulls/${p1}/merge`, { merge_method: "squash", sha: featureSha, commit_title: "Feature X (#1)" });
      await step(405, "PUT", `${repo}/pulls/${p1}/merge`, { merge_method: "merge" });
      await step(200, "GET", `${repo}/pulls/${p1}`); // merged
      await step(200, "GET", `${repo}/issues/${n2}`); // closed by "Closes #n2"
      await step(200, "GET", `${repo}/pulls/${p2}`);
      await step(405, "PUT", `${repo}/pulls/${p2}/merge`, { merge_method: "merge", sha: conflictSha });
      await step([405, 422], "PUT", `${repo}/pulls/${p2}/merge`, { merge_method: "octopus" });
      await step(422, "PUT", `${repo}/pulls/${p3}/update-branch`, { expected_head_sha: base });
      await step(202, "PUT", `${repo}/pulls/${p3}/update-branch`, { expected_head_sha: behindSha });
      await step(200, "PATCH", `${repo}/pulls/${p2}`, { state: "closed" });
      await step(422, "PUT", `${repo}/pulls/${p2}/update-branch`, {});
      await step(200, "GET", `${repo}/pulls?state=all`);
      await step(200, "GET", `${repo}/commits/main/status`);

      // --- actions: workflows, dispatch, runs, cancel, jobs (the run executes on the local runner)
      const workflows = obj((await step(200, "GET", `${repo}/actions/workflows`)).body);
      const workflowId = obj((workflows.workflows as unknown[])[0]).id as number;
      await step(200, "GET", `${repo}/actions/workflows/${workflowId}`);
      await step(200, "GET", `${repo}/actions/workflows/ci.yml`);
      await step(404, "GET", `${repo}/actions/workflows/nope.yml`);
      const dispatches = `${repo}/actions/workflows/ci.yml/dispatches`;
      const dispatched = obj((await step(200, "POST", dispatches, { ref: "main", inputs: { issue: "1" }, return_run_details: true })).body);
      const runId = dispatched.workflow_run_id as number;
      assert.ok(runId, `dispatch failed:\n${expectations.join("\n")}`);
      await step(204, "POST", dispatches, { ref: "main", inputs: { issue: "2", hold: true } });
      await step(422, "POST", dispatches, { ref: "main", inputs: { color: "red" } });
      await step(404, "POST", `${repo}/actions/workflows/nope.yml/dispatches`, { ref: "main" });
      const runs = obj((await step(200, "GET", `${repo}/actions/runs?event=workflow_dispatch&branch=main&per_page=10`)).body);
      const held = obj((runs.workflow_runs as unknown[])[0]).id as number;
      await step(200, "GET", `${repo}/actions/workflows/${workflowId}/runs?status=queued`);
      await step(202, "POST", `${repo}/actions/runs/${held}/cancel`);
      for (let i = 0; i < 600; i++) {
        const r = obj((await step(200, "GET", `${repo}/actions/runs/${runId}`)).body);
        if (r.status === "completed") break;
        await new Promise((ok) => setTimeout(ok, 100));
      }
      await step(409, "POST", `${repo}/actions/runs/${runId}/cancel`);
      await step(404, "GET", `${repo}/actions/runs/99999999`);
      const jobs = obj((await step(200, "GET", `${repo}/actions/runs/${runId}/jobs`)).body);
      const jobId = String(obj((jobs.jobs as unknown[])[0]).id);
      await step(200, "GET", `${repo}/actions/jobs/${jobId}`);
      // Re-runs: one job of the completed run as its next attempt; the run is then in progress.
      await step(201, "POST", `${repo}/actions/jobs/${jobId}/rerun`);
      await step(403, "POST", `${repo}/actions/runs/${runId}/rerun-failed-jobs`);
      await step(404, "POST", `${repo}/actions/runs/99999999/rerun-failed-jobs`);
      // The cancelled run's failed job runs again (and is cancelled again: it would hold).
      for (let i = 0; i < 600; i++) {
        if (obj((await step(200, "GET", `${repo}/actions/runs/${held}`)).body).status === "completed") break;
        await new Promise((ok) => setTimeout(ok, 100));
      }
      await step(201, "POST", `${repo}/actions/runs/${held}/rerun-failed-jobs`);
      await step(202, "POST", `${repo}/actions/runs/${held}/cancel`);
    };

    let aborted: string | null = null;
    try {
      await scenario();
    } catch (err) {
      aborted = (err as Error).stack ?? String(err);
    }

    // --- report (written even when the scenario stopped early)
    const violations = recorder.violations();
    const seen = recorder.seen();
    const unseen = LISTED_OPERATIONS.filter((op) => !seen.has(op));
    // Reached is not enough: each operation must also have succeeded at least once (a 404
    // from a route the forge lacks would be a valid GitHub error, yet prove nothing).
    const statuses = [...recorder.seenStatuses()];
    const neverSucceeded = LISTED_OPERATIONS.filter((op) => seen.has(op) && !statuses.some((s) => s.startsWith(`${op} 2`)));
    const elapsed = ((performance.now() - started) / 1000).toFixed(1);
    t.diagnostic(
      `${recorder.count()} responses, ${seen.size}/${LISTED_OPERATIONS.length} operations, ${recorder.validator.compiledCount()} schemas compiled, ${elapsed}s`,
    );
    await writeReport(violations, unseen, neverSucceeded, expectations, statuses.sort(), aborted);
    assert.equal(aborted, null, `the scenario stopped early:\n${aborted}\n${expectations.join("\n")}`);
    assert.deepEqual(unseen, [], "operations the scenario did not reach");
    assert.deepEqual(neverSucceeded, [], "operations that never answered 2xx");
    assert.deepEqual(violations, [], `responses that do not conform to GitHub's OpenAPI description:\n${violations.join("\n")}`);
    assert.deepEqual(expectations, [], `statuses that differ from what GitHub answers:\n${expectations.join("\n")}`);
  } finally {
    await forge.close();
    await rm(dir, { recursive: true, force: true });
  }
});

async function writeReport(
  violations: string[],
  unseen: string[],
  neverSucceeded: string[],
  expectations: string[],
  statuses: string[],
  aborted: string | null,
): Promise<void> {
  const root = new URL("../", import.meta.url);
  // Only from the sources (tsx), never from dist/test.
  if (root.pathname.endsWith("/dist/")) return;
  const file = new URL(".conformance-report.md", root);
  const failing = violations.length + unseen.length + neverSucceeded.length + expectations.length > 0 || aborted !== null;
  if (!failing) {
    // A report lists failures: none left, no report (and nothing stray in the working tree).
    await rm(file, { force: true });
    return;
  }
  const lines = [
    "# Local forge conformance report",
    "",
    `Generated by test/forge-emulator-conformance.test.ts on ${new Date().toISOString()} against test/openapi/github-subset.json.`,
    "",
    ...(aborted ? ["## The scenario stopped early", "", "```", aborted, "```", ""] : []),
    `## Schema violations (${violations.length})`,
    "",
    ...(violations.length ? violations.map((v) => `- ${v}`) : ["none"]),
    "",
    `## Listed operations not reached (${unseen.length})`,
    "",
    ...(unseen.length ? unseen.map((v) => `- ${v}`) : ["none"]),
    "",
    `## Listed operations reached but never successful (${neverSucceeded.length})`,
    "",
    ...(neverSucceeded.length ? neverSucceeded.map((v) => `- ${v}`) : ["none"]),
    "",
    `## Unexpected statuses (${expectations.length})`,
    "",
    ...(expectations.length ? expectations.map((v) => `- ${v}`) : ["none"]),
    "",
    "## Operation/status pairs exercised",
    "",
    ...statuses.map((s) => `- ${s}`),
    "",
  ];
  await writeFile(file, lines.join("\n"));
}
