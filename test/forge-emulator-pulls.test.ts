// Pull requests on the local forge: creation rules, mergeability computed from the bare
// repository and required checks, real merges (squash and merge commit), GitHub's refusals
// (409 moved head, 405 conflicts and failing checks), update-branch, checks and statuses,
// protection and rulesets, and the one-shot merge faults.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  api,
  branchTip,
  cloneRepo,
  commitFile,
  forgeForFile,
  git,
  openPull,
  postCheck,
  protectBranch,
  pushBranch,
  repoPath,
  type TestForge,
} from "./support/forge-fixtures.js";

let forge: TestForge;
let work: string;
const pulls = (suffix = ""): string => repoPath(forge, `/pulls${suffix}`);

const mainTip = (): Promise<string> => branchTip(forge);

async function newIssue(title: string): Promise<number> {
  return (await api(forge, "POST", repoPath(forge, "/issues"), { title })).body.number;
}

const pass = (sha: string, name = "ci"): Promise<void> => postCheck(forge, sha, "success", name);

forgeForFile({ users: ["alice"] }, (f, w) => {
  [forge, work] = [f, w];
});

describe("creating and listing", () => {
  it("shares the number sequence with issues and validates head and base", async () => {
    const issue = await newIssue("before the PR");
    const pr = await openPull(forge, work, "seq");
    assert.equal(pr.number, issue + 1);
    const dup = await api(forge, "POST", pulls(), { title: "again", head: "seq", base: "main" });
    assert.equal(dup.status, 422);
    assert.match(dup.body.errors[0].message, /A pull request already exists for afk:seq/);
    assert.equal((await api(forge, "POST", pulls(), { title: "x", head: "no-such-branch", base: "main" })).status, 422);
    assert.equal((await api(forge, "POST", pulls(), { title: "x", head: "seq", base: "nope" })).status, 422);
    await git(work, "push", "--quiet", "origin", "origin/main:refs/heads/empty");
    const empty = await api(forge, "POST", pulls(), { title: "x", head: "empty", base: "main" });
    assert.equal(empty.status, 422);
    assert.match(empty.body.errors[0].message, /No commits between main and empty/);
  });

  it("lists with head=owner:branch, base and state filters", async () => {
    const other = await openPull(forge, work, "listed");
    const byHead = await api(forge, "GET", pulls("?head=afk:listed"));
    assert.deepEqual(
      byHead.body.map((p: { number: number }) => p.number),
      [other.number],
    );
    assert.equal(byHead.body[0].head.sha, other.head);
    assert.equal(byHead.body[0].head.ref, "listed");
    assert.equal(byHead.body[0].base.repo.full_name, forge.repo);
    assert.equal((await api(forge, "GET", pulls("?base=nope"))).body.length, 0);
    assert.ok((await api(forge, "GET", pulls("?state=open&per_page=1"))).headers.get("link"));
  });
});

describe("mergeability", () => {
  it("is clean, then dirty when the base conflicts", async () => {
    const pr = await openPull(forge, work, "conflicting", { path: "shared.txt", content: "from the PR\n" });
    const clean = await api(forge, "GET", pulls(`/${pr.number}`));
    assert.deepEqual([clean.body.mergeable, clean.body.mergeable_state], [true, "clean"]);
    assert.equal(clean.body.commits, 1);
    assert.equal(clean.body.changed_files, 1);
    await pushBranch(work, "main", "shared.txt", "from main\n");
    const dirty = await api(forge, "GET", pulls(`/${pr.number}`));
    assert.deepEqual([dirty.body.mergeable, dirty.body.mergeable_state], [false, "dirty"]);
    const refused = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
    assert.equal(refused.status, 405);
    assert.equal(refused.body.message, "Pull Request is not mergeable");
  });

  it("is blocked by a missing required check, behind when strict and stale, unstable on a failing optional one", async () => {
    const put = await protectBranch(forge, { contexts: ["ci"], strict: true });
    assert.deepEqual(put.body.required_status_checks.contexts, ["ci"]);
    try {
      const pr = await openPull(forge, work, "gated");
      const state = async () => (await api(forge, "GET", pulls(`/${pr.number}`))).body.mergeable_state;
      assert.equal(await state(), "blocked");
      const refused = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { sha: pr.head });
      assert.equal(refused.status, 405);
      await pass(pr.head);
      assert.equal(await state(), "clean");
      await api(forge, "POST", repoPath(forge, `/statuses/${pr.head}`), { state: "failure", context: "lint" });
      assert.equal(await state(), "unstable");
      await pushBranch(work, "main", "moved.txt", "moved\n");
      assert.equal(await state(), "behind");
      const behind = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { sha: pr.head });
      assert.equal(behind.status, 405);
      assert.match(behind.body.message, /not up to date/);
      // The branch view shows the protection.
      const branch = await api(forge, "GET", repoPath(forge, "/branches/main"));
      assert.equal(branch.body.protected, true);
      assert.deepEqual(branch.body.protection.required_status_checks.contexts, ["ci"]);
      assert.equal(branch.body.commit.sha, await mainTip());
    } finally {
      const off = await api(forge, "PUT", repoPath(forge, "/branches/main/protection"), { required_status_checks: null });
      assert.equal(off.status, 200);
    }
  });

  it("reads required checks from rulesets too", async () => {
    const created = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "release checks",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/rel/**"], exclude: [] } },
      rules: [{ type: "required_status_checks", parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "e2e" }] } }],
    });
    assert.equal(created.status, 201);
    const rules = await api(forge, "GET", repoPath(forge, "/rules/branches/rel%2F1.0"));
    assert.equal(rules.body.length, 1);
    assert.equal(rules.body[0].type, "required_status_checks");
    assert.deepEqual(rules.body[0].parameters.required_status_checks, [{ context: "e2e" }]);
    assert.equal(rules.body[0].ruleset_id, created.body.id);
    assert.deepEqual((await api(forge, "GET", repoPath(forge, "/rules/branches/main"))).body, []);
    await pushBranch(work, "rel/1.0", "rel.txt", "rel\n");
    const pr = await openPull(forge, work, "for-rel", { base: "rel/1.0" });
    assert.equal((await api(forge, "GET", pulls(`/${pr.number}`))).body.mergeable_state, "blocked");
    await pass(pr.head, "e2e");
    assert.equal((await api(forge, "GET", pulls(`/${pr.number}`))).body.mergeable_state, "clean");
  });

  it("enforces protection on pushes: required checks, deletion, admin bypass", async () => {
    const alice = await cloneRepo(forge, forge.users.alice);
    await protectBranch(forge, { contexts: ["ci"], enforceAdmins: false });
    try {
      await git(alice, "fetch", "--quiet", "origin");
      await git(alice, "checkout", "--quiet", "-B", "direct", "origin/main");
      const sha = await commitFile(alice, "direct.txt", "direct\n");
      await assert.rejects(
        git(alice, "push", "--quiet", "origin", "HEAD:main"),
        /protected branch hook declined[\s\S]*|Required status check "ci" is expected/,
      );
      assert.notEqual(await mainTip(), sha, "a refused push changes nothing");
      // CI sees the commit on a branch (unprotected), then the same commit may land on main.
      await git(alice, "push", "--quiet", "origin", "HEAD:refs/heads/direct");
      await pass(sha);
      await git(alice, "push", "--quiet", "origin", "HEAD:main");
      assert.equal(await mainTip(), sha);
      await assert.rejects(git(alice, "push", "--quiet", "origin", ":main"), /declined/);
      // The default user is an admin and protection does not enforce admins: it bypasses.
      await commitFile(work, "admin.txt", "admin\n");
      await git(work, "fetch", "--quiet", "origin");
      await git(work, "rebase", "--quiet", "origin/main");
      await git(work, "push", "--quiet", "origin", "HEAD:main");
      assert.equal(await mainTip(), (await git(work, "rev-parse", "HEAD")).stdout);
    } finally {
      await api(forge, "DELETE", repoPath(forge, "/branches/main/protection"));
    }
  });

  it("only admins manage protection", async () => {
    const r = await api(forge, "PUT", repoPath(forge, "/branches/main/protection"), { required_status_checks: null }, { token: forge.users.alice });
    assert.equal(r.status, 403);
    assert.equal((await api(forge, "GET", repoPath(forge, "/branches/main/protection"), undefined, { token: forge.users.alice })).status, 403);
  });
});

describe("merging", () => {
  it("squash-merges for real and closes the issues it names", async () => {
    const issue = await newIssue("squash me");
    const pr = await openPull(forge, work, "squashed", { body: `Closes #${issue}` });
    const before = await mainTip();
    const r = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "squash", sha: pr.head, commit_title: "Squashed!" });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.merged, r.body.message], [true, "Pull Request successfully merged"]);
    assert.equal(await mainTip(), r.body.sha);
    assert.equal((await git(forge.bareRepo, "rev-parse", `${r.body.sha}^`)).stdout, before);
    await assert.rejects(git(forge.bareRepo, "rev-parse", "--verify", `${r.body.sha}^2`));
    assert.equal((await git(forge.bareRepo, "log", "-1", "--format=%s", r.body.sha)).stdout, "Squashed!");
    assert.equal((await git(forge.bareRepo, "show", `${r.body.sha}:squashed.txt`)).stdout, "squashed");
    const got = (await api(forge, "GET", pulls(`/${pr.number}`))).body;
    assert.deepEqual([got.merged, got.state, got.merge_commit_sha], [true, "closed", r.body.sha]);
    const closed = (await api(forge, "GET", repoPath(forge, `/issues/${issue}`))).body;
    assert.deepEqual([closed.state, closed.state_reason], ["closed", "completed"]);
    assert.equal((await api(forge, "PUT", pulls(`/${pr.number}/merge`), {})).status, 405);
  });

  it("makes a two-parent merge commit with merge_method merge", async () => {
    const pr = await openPull(forge, work, "merged-commit");
    const before = await mainTip();
    const r = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "merge" });
    assert.equal(r.status, 200);
    const parents = (await git(forge.bareRepo, "log", "-1", "--format=%P", r.body.sha)).stdout.split(" ");
    assert.deepEqual(parents, [before, pr.head]);
  });

  it("answers 409 when the sha is not the head", async () => {
    const pr = await openPull(forge, work, "moved-head");
    const r = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { sha: "1".repeat(40) });
    assert.equal(r.status, 409);
    assert.equal(r.body.message, "Head branch was modified. Review and try the merge again.");
    assert.equal((await api(forge, "GET", pulls(`/${pr.number}`))).body.state, "open");
  });

  it("refuses rebase merges as the repository does not allow them", async () => {
    const pr = await openPull(forge, work, "rebase-me");
    assert.equal((await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "rebase" })).status, 405);
    assert.equal((await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "fast" })).status, 422);
  });
});

describe("update-branch", () => {
  it("merges the base into the head, checking expected_head_sha", async () => {
    const pr = await openPull(forge, work, "updatable");
    await pushBranch(work, "main", "base-change.txt", "base\n");
    const base = await mainTip();
    const wrong = await api(forge, "PUT", pulls(`/${pr.number}/update-branch`), { expected_head_sha: "2".repeat(40) });
    assert.equal(wrong.status, 422);
    const ok = await api(forge, "PUT", pulls(`/${pr.number}/update-branch`), { expected_head_sha: pr.head });
    assert.equal(ok.status, 202);
    assert.match(ok.body.url, new RegExp(`/pull/${pr.number}$`));
    const got = (await api(forge, "GET", pulls(`/${pr.number}`))).body;
    assert.notEqual(got.head.sha, pr.head);
    const parents = (await git(forge.bareRepo, "log", "-1", "--format=%P", got.head.sha)).stdout.split(" ");
    assert.deepEqual(parents, [pr.head, base]);
    const noop = await api(forge, "PUT", pulls(`/${pr.number}/update-branch`), {});
    assert.equal(noop.status, 202, "up to date: accepted, nothing to do");
    assert.equal((await api(forge, "GET", pulls(`/${pr.number}`))).body.head.sha, got.head.sha);
  });
});

describe("checks and statuses", () => {
  it("keeps the latest check run per name and finds PRs by head sha", async () => {
    const pr = await openPull(forge, work, "checked");
    const first = await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "ci", head_sha: pr.head, status: "in_progress" });
    assert.equal(first.body.status, "in_progress");
    assert.equal(first.body.conclusion, null);
    assert.deepEqual(
      first.body.pull_requests.map((p: { number: number }) => p.number),
      [pr.number],
    );
    const done = await api(forge, "PATCH", repoPath(forge, `/check-runs/${first.body.id}`), {
      conclusion: "failure",
      output: { title: "1 failed", summary: "see log" },
    });
    assert.deepEqual([done.body.status, done.body.conclusion, done.body.output.title], ["completed", "failure", "1 failed"]);
    assert.ok(done.body.completed_at);
    await pass(pr.head);
    const latest = await api(forge, "GET", repoPath(forge, `/commits/${pr.head}/check-runs`));
    assert.equal(latest.body.total_count, 1);
    assert.equal(latest.body.check_runs[0].conclusion, "success");
    const all = await api(forge, "GET", repoPath(forge, `/commits/${pr.head}/check-runs?filter=all`));
    assert.equal(all.body.total_count, 2);
    const byBranch = await api(forge, "GET", repoPath(forge, "/commits/checked/check-runs"));
    assert.equal(byBranch.body.total_count, 1);
    const bad = await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "ci", head_sha: pr.head, status: "completed" });
    assert.equal(bad.status, 422);
  });

  it("combines statuses: pending when none, latest per context wins", async () => {
    const sha = await commitFile(work, "status.txt", "s\n");
    await git(work, "push", "--quiet", "origin", "HEAD:refs/heads/statused");
    const none = await api(forge, "GET", repoPath(forge, `/commits/${sha}/status`));
    assert.deepEqual([none.body.state, none.body.total_count], ["pending", 0]);
    await api(forge, "POST", repoPath(forge, `/statuses/${sha}`), { state: "failure", context: "ci" });
    await api(forge, "POST", repoPath(forge, `/statuses/${sha}`), { state: "success", context: "ci", description: "retried" });
    await api(forge, "POST", repoPath(forge, `/statuses/${sha}`), { state: "success", context: "lint" });
    const combined = await api(forge, "GET", repoPath(forge, "/commits/statused/status"));
    assert.equal(combined.body.state, "success");
    assert.equal(combined.body.total_count, 2);
    const list = await api(forge, "GET", repoPath(forge, `/commits/${sha}/statuses`));
    assert.equal(list.body.length, 3);
    assert.equal(list.body[0].context, "lint");
    const unknown = await api(forge, "POST", repoPath(forge, `/statuses/${"3".repeat(40)}`), { state: "success" });
    assert.equal(unknown.status, 422);
  });
});

describe("one-shot faults", () => {
  it("merge_405 makes the next merge answer 405, then merges work again", async () => {
    const pr = await openPull(forge, work, "once-405");
    assert.equal((await api(forge, "POST", "/_forge/once", { kind: "merge_405" }, { token: null })).status, 201);
    assert.equal((await api(forge, "PUT", pulls(`/${pr.number}/merge`), { sha: pr.head })).status, 405);
    assert.equal((await api(forge, "PUT", pulls(`/${pr.number}/merge`), { sha: pr.head })).status, 200);
  });

  it("base_moves_before_merge lands a peer commit first; the sha-pinned merge still succeeds, as on GitHub", async () => {
    const pr = await openPull(forge, work, "base-moves");
    const before = await mainTip();
    await api(forge, "POST", "/_forge/once", { kind: "base_moves_before_merge" });
    const r = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
    assert.equal(r.status, 200);
    const parent = (await git(forge.bareRepo, "rev-parse", `${r.body.sha}^`)).stdout;
    assert.notEqual(parent, before, "the merge landed on top of the peer's commit");
    assert.equal((await git(forge.bareRepo, "rev-parse", `${parent}^`)).stdout, before);
    assert.equal((await git(forge.bareRepo, "log", "-1", "--format=%an", parent)).stdout, "forge-peer");
  });
});
