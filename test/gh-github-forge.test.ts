// GitHubForge and GitRefStore against the local forge over real HTTP: pagination, ETags that
// make an unchanged read free, label and comment round trips, merge answers that are typed
// and never retried, retried faults, the token only ever in a header, and clear refusals.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startForge } from "../server/forge-emulator/index.js";
import { createGitHubForge, type GitHubForge } from "../server/gh/github-forge.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { gatherSnapshot, GatherMemory } from "../server/gh/gather.js";
import { git } from "../server/gh/git.js";
import { resolveToken } from "../server/gh/auth.js";
import { silentLogger } from "../server/gh/octokit.js";
import { ForgeError, GitError, UsageError } from "../server/gh/errors.js";
import { evaluateGate } from "../server/state/gate.js";
import { protectBranch } from "./support/forge-fixtures.js";
import { discussion } from "../server/agent/brief-comments.js";

type Handle = Awaited<ReturnType<typeof startForge>>;

interface Accounting {
  total: number;
  counted: number;
  not_modified: number;
  by_route: Record<string, { total: number; counted: number; not_modified: number }>;
  by_status?: Record<string, number>;
}

let root: string;
let handle: Handle;
let forge: GitHubForge;
let work: string;
const REPO = "afk/demo";

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${handle.apiUrl}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status}`);
  return response.status === 204 ? null : response.json();
}

/** A raw REST call as another client would make it (to set up what the Forge interface cannot). */
async function api<T = { id: number; number: number }>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${handle.apiUrl}${path}`, {
    method,
    headers: { authorization: `token ${handle.token}`, "content-type": "application/json", accept: "application/vnd.github+json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
  return (response.status === 204 ? null : await response.json()) as T;
}

const accounting = () => control("GET", "/_forge/accounting") as Promise<Accounting>;
const routeTotal = (a: Accounting, key: string) => a.by_route[key]?.total ?? 0;

function fastForge(extra: Parameters<typeof createGitHubForge>[0]["client"] = {}): GitHubForge {
  return createGitHubForge({ repo: REPO, token: handle.token, baseUrl: handle.apiUrl, fast: true, logger: silentLogger, client: extra });
}

/** A commit on `branch` in the working clone, pushed to the forge with the token as a header. */
async function pushBranch(branch: string, file: string, content: string): Promise<string> {
  const auth = { token: handle.token, url: handle.gitUrl };
  await git(["checkout", "--quiet", "-B", branch, "origin/main"], { cwd: work });
  await writeFile(join(work, file), content);
  await git(["add", "--", file], { cwd: work });
  await git(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", `change ${file}`], { cwd: work });
  await git(["push", "--quiet", "--force", "origin", `HEAD:refs/heads/${branch}`], { cwd: work, auth });
  const { stdout } = await git(["rev-parse", "HEAD"], { cwd: work });
  return stdout.trim();
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), "afk-ghforge-"));
  handle = await startForge({ dir: join(root, "forge"), port: 0, repo: REPO, users: ["peer"] });
  forge = fastForge();
  work = join(root, "work");
  await git(["clone", "--quiet", handle.gitUrl, work], { cwd: root, auth: { token: handle.token, url: handle.gitUrl } });
});

after(async () => {
  await handle?.close();
  await rm(root, { recursive: true, force: true });
});

/** An epic with a child sub-issue that a blocker blocks; titles start with `prefix`. */
async function linkedIssues(prefix: string) {
  const make = (title: string) => api("POST", `/repos/${REPO}/issues`, { title });
  const epic = await make(`${prefix}epic`);
  const child = await make(`${prefix}child`);
  const blocker = await make(`${prefix}blocker`);
  await api("POST", `/repos/${REPO}/issues/${child.number}/dependencies/blocked_by`, { issue_id: blocker.id });
  await api("POST", `/repos/${REPO}/issues/${epic.number}/sub_issues`, { sub_issue_id: child.id });
  return { make, epic, child, blocker };
}

describe("GitHubForge over the local forge", () => {
  test("whoami is the token's login and is asked once", async () => {
    const login = await forge.whoami();
    assert.equal(typeof login, "string");
    assert.notEqual(login, "");
    const before = forge.stats().total;
    assert.equal(await forge.whoami(), login);
    assert.equal(forge.stats().total, before, "the second whoami is served from memory");
  });

  test("repoInfo describes the repository", async () => {
    const info = await forge.repoInfo();
    assert.equal(info.fullName, REPO);
    assert.equal(info.defaultBranch, "main");
    assert.equal(info.cloneUrl.replace(/\.git$/, ""), handle.gitUrl.replace(/\.git$/, ""));
    assert.equal(info.permissions.push, true);
  });

  test("listOpenIssues pages past 100, and an unchanged re-read costs no rate limit", async () => {
    const existing = (await forge.listOpenIssues()).length;
    const toCreate = 125 - existing;
    for (let i = 0; i < toCreate; i += 1) {
      await api("POST", `/repos/${REPO}/issues`, { title: `issue ${i}`, body: `body ${i}`, labels: i % 2 ? ["ready-for-agent"] : [] });
    }

    const first = await forge.listOpenIssues();
    assert.equal(first.length, 125, "all open issues, across pages");
    const numbers = new Set(first.map((issue) => issue.number));
    assert.equal(numbers.size, first.length, "no issue twice");
    const sample = first.find((issue) => issue.title === "issue 1");
    assert.ok(sample);
    assert.deepEqual(sample.labels, ["ready-for-agent"]);
    assert.equal(sample.body, "body 1");
    assert.equal(sample.state, "open");
    assert.equal(sample.author, await forge.whoami());
    assert.equal(sample.blockedByCount, 0);
    assert.equal(sample.subIssueCount, 0);
    assert.equal(sample.parent, null);

    const forgeBefore = await accounting();
    const statsBefore = forge.stats();
    const second = await forge.listOpenIssues();
    const forgeAfter = await accounting();
    const statsAfter = forge.stats();
    assert.deepEqual(second, first, "the cached pages are served as they were");
    const route = "GET /repos/{owner}/{repo}/issues";
    const pages = routeTotal(forgeAfter, route) - routeTotal(forgeBefore, route);
    assert.equal(pages, 2, "125 issues are two pages of 100");
    assert.equal(forgeAfter.counted - forgeBefore.counted, 0, "the forge counted no request against the rate limit");
    assert.equal(forgeAfter.not_modified - forgeBefore.not_modified, pages, "every page was a 304");
    assert.equal(statsAfter.notModified - statsBefore.notModified, pages);
    assert.equal(statsAfter.counted - statsBefore.counted, 0, "the adapter agrees: nothing counted");
    assert.ok(forge.rateLimit() !== null && forge.rateLimit()!.limit > 0, "x-ratelimit-* headers are kept");

    // A change shows up on the next read: the first page's ETag no longer matches.
    await api("POST", `/repos/${REPO}/issues`, { title: "one more" });
    const third = await forge.listOpenIssues();
    assert.equal(third.length, 126);
  });

  test("listOpenIssues leaves out pull requests (GitHub's issue list includes them)", async () => {
    const before = await forge.listOpenIssues();
    const head = await pushBranch("afk/pr-in-list", "in-list.txt", "x\n");
    const pull = await forge.createPull({ title: "a pull request", body: "Closes #1", head: "afk/pr-in-list", base: "main" });
    assert.equal(pull.head.sha, head);
    assert.equal(pull.state, "open");
    const raw = await api<{ number: number; pull_request?: unknown }[]>("GET", `/repos/${REPO}/issues?state=open&per_page=100&sort=created&direction=desc`);
    assert.ok(
      raw.some((item) => item.number === pull.number && item.pull_request),
      "the raw list does carry the pull request",
    );
    const after = await forge.listOpenIssues();
    assert.ok(!after.some((issue) => issue.number === pull.number), "the pull request is not an issue");
    assert.equal(after.length, before.length);
    assert.ok((await forge.listOpenPulls()).some((p) => p.number === pull.number));
  });

  test("blocked-by and sub-issue summaries map to counts, and links list", async () => {
    const { epic, child, blocker } = await linkedIssues("");

    const [epicIssue, childIssue] = await Promise.all([forge.getIssue(epic.number), forge.getIssue(child.number)]);
    assert.equal(epicIssue.subIssueCount, 1);
    assert.equal(childIssue.blockedByCount, 1);
    assert.equal(childIssue.parent, epic.number);
    assert.deepEqual(await forge.listBlockedBy(child.number), [{ number: blocker.number, id: blocker.id, state: "open" }]);
    assert.deepEqual(await forge.listSubIssues(epic.number), [{ number: child.number, id: child.id, state: "open" }]);

    await forge.closeIssue(blocker.number, "completed");
    const closed = await forge.getIssue(blocker.number);
    assert.equal(closed.state, "closed");
    assert.equal(closed.stateReason, "completed");
    assert.equal((await forge.getIssue(child.number)).blockedByCount, 0, "a closed blocker no longer blocks");
  });

  test("gather reads an issue's links again only when the listing says they changed, not when a linked issue did", async () => {
    const { make, epic, child, blocker } = await linkedIssues("gather ");
    const client = fastForge();
    const refs = new GitRefStore({ controlDir: join(root, "gather-control"), remoteUrl: handle.gitUrl, token: handle.token });
    const memory = new GatherMemory();
    const gather = () =>
      gatherSnapshot(client, refs, {
        login: "afk-bot",
        defaultBranch: "main",
        base: "main",
        namespace: "refs/afk",
        gateMode: "local",
        now: new Date(),
        memory,
      });
    const reads = async (): Promise<[number, number]> => {
      const a = await accounting();
      return [
        routeTotal(a, "GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues"),
        routeTotal(a, "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by"),
      ];
    };
    const links = (s: Awaited<ReturnType<typeof gather>>) => ({
      subs: s.issues.find((i) => i.number === epic.number)?.subIssues,
      blockers: s.issues.find((i) => i.number === child.number)?.blockedBy.map((l) => l.number),
    });

    // Update times have whole seconds, so a read within a few seconds of an update is not
    // trusted (gh/gather.ts): let the links settle before each gather that should trust its memo.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 6_000));
    await settle();
    // The first gather reads every linked issue's lists (this file's other epics too).
    const first = await gather();
    assert.deepEqual(links(first), { subs: [child.number], blockers: [blocker.number] });
    const [subs0, blocked0] = await reads();
    // Comments on the linked issues change the link lists' contents, not what the snapshot takes.
    await api("POST", `/repos/${REPO}/issues/${child.number}/comments`, { body: "a comment on the child" });
    await api("POST", `/repos/${REPO}/issues/${blocker.number}/comments`, { body: "a comment on the blocker" });
    await settle();
    const second = await gather();
    assert.deepEqual(links(second), links(first));
    assert.deepEqual(await reads(), [subs0, blocked0 + 1], "the child itself changed (its own links re-read); the epic did not");
    const other = await make("gather second child");
    await api("POST", `/repos/${REPO}/issues/${epic.number}/sub_issues`, { sub_issue_id: other.id });
    await settle();
    assert.deepEqual(links(await gather()).subs, [child.number, other.number], "a new sub-issue changes the epic's summary: read again");
    assert.deepEqual(await reads(), [subs0 + 1, blocked0 + 1]);
  });

  test("labels and comments round-trip; ensureLabel and removeLabel are idempotent", async () => {
    const label = { name: "afk-attempt/1", color: "#ededed", description: "first attempt" };
    await forge.ensureLabel(label);
    await forge.ensureLabel(label); // 422 already_exists is the goal
    const labels = await forge.listLabels();
    assert.deepEqual(
      labels.find((l) => l.name === label.name),
      { name: label.name, color: "ededed", description: "first attempt" },
    );
    // A client that listed the labels creates none it saw there.
    const fresh = fastForge();
    await fresh.listLabels();
    const creates = routeTotal(await accounting(), "POST /repos/{owner}/{repo}/labels");
    await fresh.ensureLabel(label);
    assert.equal(routeTotal(await accounting(), "POST /repos/{owner}/{repo}/labels"), creates, "a listed label is not created again");

    await forge.addLabels(1, ["afk-attempt/1"]);
    assert.ok((await forge.getIssue(1)).labels.includes("afk-attempt/1"));
    await forge.removeLabel(1, "afk-attempt/1");
    await forge.removeLabel(1, "afk-attempt/1"); // 404: it is already gone
    assert.ok(!(await forge.getIssue(1)).labels.includes("afk-attempt/1"));

    const body = "<!-- afk:status -->\nworking on it ✓";
    const created = await forge.createComment(1, body);
    assert.equal(created.body, body);
    assert.equal(created.author, await forge.whoami());
    const updated = await forge.updateComment(created.id, `${body}\ndone`);
    assert.equal(updated.id, created.id);
    const listed = await forge.listComments(1);
    assert.equal(listed.find((c) => c.id === created.id)?.body, `${body}\ndone`);

    await assert.rejects(
      forge.addLabels(999_999, ["x"]),
      (error: unknown) => error instanceof ForgeError && error.kind === "not_found" && /#999999/.test(error.message),
    );
  });

  test("merge: 409 (head moved) and 405 (not mergeable) are typed and sent once; then it merges", async () => {
    const head = await pushBranch("afk/merge-me", "merge-me.txt", "merge me\n");
    const pull = await forge.createPull({ title: "merge me", body: "", head: "afk/merge-me", base: "main" });
    const detail = await forge.getPull(pull.number);
    assert.equal(detail.head.sha, head);
    assert.equal(detail.base.ref, "main");
    assert.equal(detail.head.repoFullName, REPO);
    assert.equal(detail.merged, false);

    const route = "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge";
    const before = await accounting();
    const wrongSha = "0".repeat(40);
    await assert.rejects(forge.mergePull(pull.number, { sha: wrongSha, method: "squash" }), (error: unknown) => {
      assert.ok(error instanceof ForgeError);
      assert.equal(error.kind, "conflict");
      assert.equal(error.status, 409);
      assert.match(error.message, new RegExp(`merge pull request #${pull.number}`));
      return true;
    });
    await control("POST", "/_forge/once", { kind: "merge_405" });
    await assert.rejects(forge.mergePull(pull.number, { sha: head, method: "squash" }), (error: unknown) => {
      assert.ok(error instanceof ForgeError);
      assert.equal(error.kind, "not_mergeable");
      assert.equal(error.status, 405);
      return true;
    });
    const afterFailures = await accounting();
    assert.equal(routeTotal(afterFailures, route) - routeTotal(before, route), 2, "each refused merge was sent exactly once");

    const merged = await forge.mergePull(pull.number, { sha: head, method: "squash", title: "merge me (#1)" });
    assert.equal(merged.merged, true);
    assert.match(merged.sha, /^[0-9a-f]{40}$/);
    const after = await forge.getPull(pull.number);
    assert.equal(after.merged, true);
    assert.equal(after.state, "closed");
    assert.ok(!(await forge.listOpenPulls()).some((p) => p.number === pull.number));
  });

  test("checksFor pages check runs (every one: filter=all, re-runs too) and the statuses", async () => {
    const head = await pushBranch("afk/checks", "checks.txt", "checks\n");
    for (let i = 0; i < 102; i += 1) {
      await api("POST", `/repos/${REPO}/check-runs`, { name: `job-${i}`, head_sha: head, status: "completed", conclusion: i === 0 ? "failure" : "success" });
    }
    // A re-run of job-0: listed beside the first (the gate takes the newest; the count of runs is the re-runs).
    await api("POST", `/repos/${REPO}/check-runs`, { name: "job-0", head_sha: head, status: "in_progress" });
    for (let i = 0; i < 103; i += 1) {
      await api("POST", `/repos/${REPO}/statuses/${head}`, { state: i === 0 ? "pending" : "success", context: `ci/${i}`, description: `status ${i}` });
    }
    const checks = await forge.checksFor(head);
    assert.equal(checks.sha, head);
    assert.equal(checks.checkRuns.length, 103, "every run, across two pages");
    const job0 = checks.checkRuns.filter((run) => run.name === "job-0");
    assert.deepEqual(
      job0.map((run) => [run.status, run.conclusion]),
      [
        ["in_progress", null],
        ["completed", "failure"],
      ],
      "both runs of a name, newest first",
    );
    assert.equal(evaluateGate(checks, { contexts: [], strict: false, source: "none", readable: true }).pending.includes("job-0"), true, "the newest decides");
    assert.equal(checks.checkRuns.filter((run) => run.conclusion === "success").length, 101);
    assert.equal(checks.statuses.length, 103, "statuses across two pages");
    assert.deepEqual(
      checks.statuses.find((s) => s.context === "ci/0"),
      { context: "ci/0", state: "pending", description: "status 0", targetUrl: null },
    );
    await assert.rejects(forge.checksFor("HEAD"), UsageError);
  });

  test("checksFor with the gate's required checks reads the statuses only once the runs pass", async () => {
    const head = await pushBranch("afk/lazy-statuses", "lazy.txt", "lazy\n");
    await api("POST", `/repos/${REPO}/statuses/${head}`, { state: "failure", context: "test", description: "a status of the same name" });
    const run = await api<{ id: number }>("POST", `/repos/${REPO}/check-runs`, { name: "test", head_sha: head, status: "in_progress" });
    const required = { contexts: ["test"], strict: false, source: "protection" as const, readable: true, approvals: 0, dismissStaleApprovals: false };
    const statusesRoute = "GET /repos/{owner}/{repo}/commits/{ref}/statuses";
    const statusReads = async (): Promise<number> => routeTotal(await accounting(), statusesRoute);
    const before = await statusReads();

    const running = await fastForge().checksFor(head, required);
    assert.deepEqual(running.statuses, [], "a run still running: not green whatever the statuses say, so they are not read");
    assert.equal(evaluateGate(running, required).state, "pending");
    assert.equal(await statusReads(), before);

    await api("PATCH", `/repos/${REPO}/check-runs/${run.id}`, { status: "completed", conclusion: "success" });
    const passed = await fastForge().checksFor(head, required);
    assert.equal(await statusReads(), before + 1, "the runs pass: the statuses are read");
    assert.equal(evaluateGate(passed, required).state, "red", "both a run and a status named test: both must pass");
    assert.equal((await fastForge().checksFor(head)).statuses.length, 1, "without a gate both lists are read");
  });

  test("updatePullBranch merges the base in; a stale expected head is a conflict", async () => {
    const head = await pushBranch("afk/behind", "behind.txt", "behind\n");
    const pull = await forge.createPull({ title: "behind", body: "", head: "afk/behind", base: "main" });
    await assert.rejects(forge.updatePullBranch(pull.number, "1".repeat(40)), (error: unknown) => error instanceof ForgeError && error.kind === "conflict");
    await forge.updatePullBranch(pull.number, head);
    let moved = head;
    for (let i = 0; i < 50 && moved === head; i += 1) {
      moved = (await forge.getPull(pull.number)).head.sha; // asynchronous on GitHub
      if (moved === head) await new Promise((r) => setTimeout(r, 50));
    }
    assert.notEqual(moved, head, "the head moved to a merge of the base");
  });

  test("reviews: the fleet may comment on its own PR, never approve it; a peer's approval lists with its association", async () => {
    const head = await pushBranch("afk/reviewed", "reviewed.txt", "reviewed\n");
    const pull = await forge.createPull({ title: "reviewed", body: "", head: "afk/reviewed", base: "main" });
    const note = await forge.createReview(pull.number, { event: "COMMENT", body: "the fleet's review", commitId: head });
    assert.deepEqual([note.state, note.commitId, note.body], ["COMMENTED", head, "the fleet's review"]);
    await assert.rejects(
      forge.createReview(pull.number, { event: "APPROVE", body: "" }),
      (error: unknown) => error instanceof ForgeError && error.kind === "validation",
    );
    const peer = createGitHubForge({ repo: REPO, token: handle.users.peer!, baseUrl: handle.apiUrl, fast: true, logger: silentLogger });
    await peer.createReview(pull.number, { event: "APPROVE", body: "lgtm" });
    const reviews = await forge.listReviews(pull.number);
    assert.deepEqual(
      reviews.map((r) => [r.author, r.state, r.association]),
      [
        ["afk-bot", "COMMENTED", "OWNER"],
        ["peer", "APPROVED", "COLLABORATOR"],
      ],
    );
  });

  test("the brief's discussion: a peer's comments and line comments list with author, path and line; the fleet's markers are left out", async () => {
    await pushBranch("afk/discussed", "discussed.txt", "one\ntwo\n");
    const pull = await forge.createPull({ title: "discussed", body: "", head: "afk/discussed", base: "main" });
    const asPeer = async (path: string, body: unknown) => {
      const response = await fetch(`${handle.apiUrl}${path}`, {
        method: "POST",
        headers: { authorization: `token ${handle.users.peer!}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 201, await response.clone().text());
    };
    const issue = await api("POST", `/repos/${REPO}/issues`, { title: "discussed issue" });
    await forge.createComment(issue.number, "<!-- afk:board -->\nCoding");
    await asPeer(`/repos/${REPO}/issues/${issue.number}/comments`, { body: "Use the existing parser, please." });
    await forge.createComment(issue.number, "A note by the token's own login, no marker.");
    await asPeer(`/repos/${REPO}/pulls/${pull.number}/comments`, { body: "Rename this.", path: "discussed.txt", line: 2 });
    const kept = discussion(await forge.listComments(issue.number), "afk-bot");
    assert.deepEqual(
      kept.map((c) => [c.author, c.body]),
      [
        ["peer", "Use the existing parser, please."],
        ["afk-bot", "A note by the token's own login, no marker."],
      ],
    );
    const lines = await forge.listReviewComments(pull.number);
    assert.deepEqual(
      lines.map((c) => [c.author, c.path, c.line, c.body]),
      [["peer", "discussed.txt", 2, "Rename this."]],
    );
    const before = await accounting();
    await forge.listReviewComments(pull.number);
    const after = await accounting();
    const key = "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments";
    assert.equal(routeTotal(after, key) - routeTotal(before, key), 1);
    assert.equal((after.by_route[key]?.not_modified ?? 0) - (before.by_route[key]?.not_modified ?? 0), 1, "an unchanged re-read answers 304");
  });

  test("requiredChecks unites rulesets and classic protection", async () => {
    const none = { approvals: 0, dismissStaleApprovals: false };
    assert.deepEqual(await forge.requiredChecks("main"), { contexts: [], strict: false, source: "none", readable: true, ...none });

    await pushBranch("release", "release.txt", "release\n");
    await protectBranch(handle, { contexts: ["ci/build"], strict: true, branch: "release" });
    assert.deepEqual(await forge.requiredChecks("release"), { contexts: ["ci/build"], strict: true, source: "protection", readable: true, ...none });

    await api("POST", `/repos/${REPO}/rulesets`, {
      name: "release checks",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/release"], exclude: [] } },
      rules: [
        {
          type: "required_status_checks",
          parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "lint" }, { context: "ci/build" }] },
        },
      ],
    });
    assert.deepEqual(await forge.requiredChecks("release"), { contexts: ["ci/build", "lint"], strict: true, source: "both", readable: true, ...none });

    // A collaborator without admin rights reads the same contexts.
    const peer = createGitHubForge({ repo: REPO, token: handle.users.peer!, baseUrl: handle.apiUrl, fast: true, logger: silentLogger });
    const seenByPeer = await peer.requiredChecks("release");
    assert.deepEqual(seenByPeer.contexts, ["ci/build", "lint"]);

    // Required approvals: from protection (admin-only to read) and from a ruleset's pull_request rule.
    await protectBranch(handle, { contexts: ["ci/build"], strict: true, branch: "release", approvals: 1, dismissStaleReviews: true });
    const withReviews = await forge.requiredChecks("release");
    assert.deepEqual([withReviews.approvals, withReviews.dismissStaleApprovals], [1, true]);
    const peerView = await peer.requiredChecks("release");
    assert.equal(peerView.readable, false, "protection needs admin rights: a peer cannot know all it requires");
    await api("POST", `/repos/${REPO}/rulesets`, {
      name: "release reviews",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/release"], exclude: [] } },
      rules: [{ type: "pull_request", parameters: { required_approving_review_count: 2 } }],
    });
    assert.equal((await peer.requiredChecks("release")).approvals, 2, "rulesets are readable with read access");
    assert.equal((await forge.requiredChecks("release")).approvals, 2, "the strictest rule wins");

    await assert.rejects(forge.requiredChecks("no-such-branch"), (error: unknown) => error instanceof ForgeError && error.kind === "not_found");
  });

  test("a secondary rate limit is waited out and retried, then succeeds", async () => {
    const client = fastForge({ rateLimitRetries: 20, cache: false });
    await control("POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/labels", secondary_rate_limit: 0.5, seed: 7 });
    try {
      const before = await accounting();
      for (let i = 0; i < 6; i += 1) assert.ok((await client.listLabels()).length > 0);
      const after = await accounting();
      const route = "GET /repos/{owner}/{repo}/labels";
      const sent = routeTotal(after, route) - routeTotal(before, route);
      assert.ok(sent > 6, `some requests were refused and retried (${sent} sent for 6 calls)`);
      assert.equal((after.by_status?.["403"] ?? 0) - (before.by_status?.["403"] ?? 0), sent - 6, "every extra request followed a 403 secondary rate limit");
      assert.equal(client.stats().total, sent);
    } finally {
      await control("DELETE", "/_forge/faults");
    }
  });

  test("5xx answers are retried, then the call succeeds", async () => {
    const client = fastForge({ retries: 20, cache: false });
    await control("POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/issues/{issue_number}", error_rate: 0.5, seed: 7 });
    try {
      const before = await accounting();
      for (let i = 0; i < 10; i += 1) assert.equal((await client.getIssue(1)).number, 1);
      const after = await accounting();
      const route = "GET /repos/{owner}/{repo}/issues/{issue_number}";
      const fivexx = (a: Accounting) => (a.by_status?.["500"] ?? 0) + (a.by_status?.["502"] ?? 0);
      assert.ok(fivexx(after) - fivexx(before) > 0, "the forge answered some 5xx");
      assert.equal(routeTotal(after, route) - routeTotal(before, route), 10 + fivexx(after) - fivexx(before), "each 5xx was retried once more");
    } finally {
      await control("DELETE", "/_forge/faults");
    }
  });

  test("an endless 5xx ends as a server ForgeError after the retries", async () => {
    const client = fastForge({ retries: 2, cache: false });
    await control("POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/labels", error_rate: 1 });
    try {
      const before = await accounting();
      await assert.rejects(client.listLabels(), (error: unknown) => error instanceof ForgeError && error.kind === "server");
      const after = await accounting();
      assert.equal(routeTotal(after, "GET /repos/{owner}/{repo}/labels") - routeTotal(before, "GET /repos/{owner}/{repo}/labels"), 3, "1 + 2 retries");
    } finally {
      await control("DELETE", "/_forge/faults");
    }
  });

  test("gather: a claimed issue the paged listing missed is read on its own, not taken for closed", async () => {
    const open = await api("POST", `/repos/${REPO}/issues`, { title: "claimed, open, missed by the listing" });
    const shut = await api("POST", `/repos/${REPO}/issues`, { title: "claimed, closed" });
    await api("PATCH", `/repos/${REPO}/issues/${shut.number}`, { state: "closed" });
    const refs = new GitRefStore({ controlDir: join(root, "gather-missed-control"), remoteUrl: handle.gitUrl, token: handle.token });
    for (const n of [open.number, shut.number]) assert.equal((await refs.create(`refs/afk-missed/claim/${n}`, `afk claim #${n}`)).won, true);
    // A listing that lost an open issue across a page boundary (an item on an earlier page closed
    // while a later page was read): the real client, with that one issue dropped from its answer.
    const client = fastForge();
    const listOpen = client.listOpenIssues.bind(client);
    client.listOpenIssues = async () => (await listOpen()).filter((issue) => issue.number !== open.number);
    const before = routeTotal(await accounting(), "GET /repos/{owner}/{repo}/issues/{issue_number}");
    const snap = await gatherSnapshot(client, refs, {
      login: "afk-bot",
      defaultBranch: "main",
      base: "main",
      namespace: "refs/afk-missed",
      gateMode: "local",
      memory: new GatherMemory(),
      now: new Date(),
    });
    const numbers = new Set(snap.issues.map((i) => i.number));
    assert.ok(numbers.has(open.number), "the open claimed issue is in the snapshot");
    assert.ok(!numbers.has(shut.number), "the closed one is not");
    assert.equal(
      routeTotal(await accounting(), "GET /repos/{owner}/{repo}/issues/{issue_number}") - before,
      2,
      "one read per claimed issue the listing lacked, none for the rest",
    );
    for (const entry of await refs.list("refs/afk-missed/")) await refs.remove(entry.ref, entry.sha);
  });
});

describe("refusals", () => {
  test("an invalid slug is a UsageError naming the expected form", () => {
    assert.throws(
      () => createGitHubForge({ repo: "not a slug", token: "t", baseUrl: handle.apiUrl }),
      (error: unknown) => error instanceof UsageError && /"owner\/name"/.test(error.message),
    );
  });

  test("no token: the refusal names GITHUB_TOKEN, GH_TOKEN and `gh auth login`", async () => {
    const empty = join(root, "empty-path");
    await mkdir(empty, { recursive: true });
    await assert.rejects(resolveToken({ env: { PATH: empty, HOME: root } }), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      for (const word of ["GITHUB_TOKEN", "GH_TOKEN", "gh auth login"]) assert.ok(error.message.includes(word), word);
      return true;
    });
  });

  test("an unreachable API is a clear unreachable error naming the URL and GITHUB_API_URL", async () => {
    const port = await closedPort();
    const dead = createGitHubForge({
      repo: REPO,
      token: handle.token,
      baseUrl: `http://127.0.0.1:${port}`,
      fast: true,
      logger: silentLogger,
      client: { retries: 1 },
    });
    await assert.rejects(dead.listOpenIssues(), (error: unknown) => {
      assert.ok(error instanceof ForgeError);
      assert.equal(error.kind, "unreachable");
      assert.match(error.message, new RegExp(`http://127\\.0\\.0\\.1:${port}`));
      assert.match(error.message, /ECONNREFUSED/);
      assert.match(error.hint, /GITHUB_API_URL/);
      return true;
    });
  });

  test("bad credentials are an auth error that never shows the token", async () => {
    const token = "afkf_0000000000000000000000000000dead";
    const bad = createGitHubForge({ repo: REPO, token, baseUrl: handle.apiUrl, fast: true, logger: silentLogger });
    await assert.rejects(bad.whoami(), (error: unknown) => {
      assert.ok(error instanceof ForgeError);
      assert.equal(error.kind, "auth");
      assert.equal(error.status, 401);
      assert.match(error.hint, /GITHUB_TOKEN/);
      assert.ok(!`${error.message} ${error.hint} ${error.stack}`.includes(token));
      return true;
    });
  });
});

describe("GitRefStore over HTTP with the token as an extraHeader", () => {
  test("create, list, swap, remove against the forge's git URL", async () => {
    const store = new GitRefStore({ controlDir: join(root, "ctl-http"), remoteUrl: handle.gitUrl, token: handle.token });
    const ref = "refs/afk/claim/101";
    const created = await store.create(ref, "instance: http\nhost: here");
    assert.ok(created.won);
    assert.deepEqual(await store.create(ref, "instance: other"), { won: false, current: created.sha });
    const listed = await store.list("refs/afk/");
    assert.deepEqual(
      listed.find((entry) => entry.ref === ref),
      { ref, sha: created.sha, message: "instance: http\nhost: here" },
    );
    const swapped = await store.swap(ref, created.sha, "instance: http\nrenewed");
    assert.ok(swapped.won);
    assert.deepEqual(await store.remove(ref, created.sha), { won: false, current: swapped.sha });
    assert.ok((await store.remove(ref, swapped.sha)).won);
    assert.equal(await store.read(ref), null);
  });

  test("a bad token fails the push with an auth hint and no token in the error", async () => {
    const token = "afkf_badbadbadbadbadbadbadbadbadbad00";
    const store = new GitRefStore({ controlDir: join(root, "ctl-badtoken"), remoteUrl: handle.gitUrl, token });
    await assert.rejects(store.create("refs/afk/claim/102", "m"), (error: unknown) => {
      assert.ok(error instanceof GitError, String(error));
      assert.match(error.hint, /GITHUB_TOKEN/);
      const everything = `${error.message}\n${error.command}\n${error.stderr}\n${error.hint}`;
      assert.ok(!everything.includes(token));
      assert.ok(!everything.includes(Buffer.from(`x-access-token:${token}`).toString("base64")));
      return true;
    });
  });

  test("a remote that is down is a GitError with an unreachable hint", async () => {
    const port = await closedPort();
    const store = new GitRefStore({ controlDir: join(root, "ctl-down"), remoteUrl: `http://127.0.0.1:${port}/afk/demo.git`, token: handle.token });
    await assert.rejects(store.list("refs/afk/"), (error: unknown) => error instanceof GitError && /unreachable/.test(error.hint));
  });

  test("race over HTTP: of 8 concurrent claimers exactly one wins each round", async (t) => {
    // 4 rounds by default (each ~35 git processes over HTTP); test/gh-gitrefs.test.ts races 12 on a
    // path remote. AFK_HTTP_RACE_ROUNDS=100 for a soak.
    const rounds = Number(process.env.AFK_HTTP_RACE_ROUNDS ?? 4);
    const claimers = Array.from(
      { length: 8 },
      (_, i) => new GitRefStore({ controlDir: join(root, `ctl-race-${i}`), remoteUrl: handle.gitUrl, token: handle.token }),
    );
    const result = await raceRounds(claimers, rounds, "refs/afk/claim/777");
    t.diagnostic(
      `http remote: ${rounds} rounds x ${claimers.length} claimers: create winners per round ${JSON.stringify(result.createWinnerCounts)}, ` +
        `swap winners per round ${JSON.stringify(result.swapWinnerCounts)}, wins by claimer ${JSON.stringify(result.winsByClaimer)}, ${result.ms} ms`,
    );
    assert.deepEqual(result.createWinnerCounts, { 1: rounds });
    assert.deepEqual(result.swapWinnerCounts, { 1: rounds });
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

// The same rounds as test/gh-gitrefs.test.ts, over HTTP: all create at once (one wins, the others
// see its sha), all reclaim from that sha at once (one wins), then the reclaimer releases.
async function raceRounds(claimers: GitRefStore[], rounds: number, ref: string) {
  const started = Date.now();
  const createWinnerCounts: Record<number, number> = {};
  const swapWinnerCounts: Record<number, number> = {};
  const winsByClaimer = claimers.map(() => 0);
  await Promise.all(claimers.map((claimer) => claimer.list("refs/afk/")));
  for (let round = 0; round < rounds; round += 1) {
    const created = await Promise.all(claimers.map((claimer, i) => claimer.create(ref, `instance: c${i}\nround: ${round}`)));
    const winners = created.flatMap((outcome, i) => (outcome.won ? [{ i, sha: outcome.sha }] : []));
    createWinnerCounts[winners.length] = (createWinnerCounts[winners.length] ?? 0) + 1;
    const holder = winners[0];
    assert.ok(holder, `round ${round}: nobody won the create`);
    for (const outcome of created) if (!outcome.won) assert.equal(outcome.current, holder.sha);
    winsByClaimer[holder.i]! += 1;
    const swapped = await Promise.all(claimers.map((claimer, i) => claimer.swap(ref, holder.sha, `instance: c${i}\nreclaim ${round}`)));
    const swapWinners = swapped.flatMap((outcome) => (outcome.won ? [outcome.sha] : []));
    swapWinnerCounts[swapWinners.length] = (swapWinnerCounts[swapWinners.length] ?? 0) + 1;
    assert.ok(swapWinners[0], `round ${round}: nobody won the swap`);
    assert.ok((await claimers[round % claimers.length]!.remove(ref, swapWinners[0])).won);
  }
  return { createWinnerCounts, swapWinnerCounts, winsByClaimer, ms: Date.now() - started };
}
