// The Forge contract: one set of cases run against the fake (test/support/fake-forge.ts) and
// against GitHubForge on the local forge over HTTP (whose every answer is checked against
// GitHub's OpenAPI), so the fake cannot drift from the emulator. The cases are what the fleet
// relies on: issues, labels and comments and their listing order; pull requests opened, listed,
// closed and merged pinned to a head (409 when it moved, 405 when not mergeable); a branch
// brought up to date; check runs and statuses of a sha; a branch's required checks; reviews.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { ForgeError, UsageError } from "../server/gh/errors.js";
import { evaluateGate, rerunVerdict } from "../server/state/gate.js";
import { fakeWorld, localWorld, type ForgeWorld } from "./support/contract-worlds.js";
import { startTestForge, type TestForge } from "./support/forge-fixtures.js";

/** Rejects with a ForgeError of `kind` (and `status`). */
async function refusal(promise: Promise<unknown>, kind: string, status: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ForgeError, `a ForgeError, not ${String(error)}`);
    assert.deepEqual({ kind: error.kind, status: error.status }, { kind, status }, error.message);
    return true;
  });
}

function forgeContract(name: string, world: () => ForgeWorld): void {
  describe(`Forge contract: ${name}`, () => {
    let n = 0;
    /** A name of its own per use, so the cases share one forge without meeting. */
    const fresh = (what: string): string => `${what}-${(n += 1)}`;

    test("whoami and repoInfo name the token's login and the repository", async () => {
      const { forge } = world();
      assert.match(await forge.whoami(), /\S/);
      const info = await forge.repoInfo();
      assert.equal(info.fullName, `${forge.repo.owner}/${forge.repo.name}`);
      assert.equal(info.defaultBranch, "main");
      assert.deepEqual([info.permissions.push, info.allowSquashMerge, info.allowMergeCommit, info.allowRebaseMerge], [true, true, true, false]);
    });

    test("issues: listed open, newest first, pull requests left out; read one; close with a reason; an unknown number is not_found", async () => {
      const w = world();
      const me = await w.forge.whoami();
      const tag = fresh("issue");
      const [a, b, c] = [
        await w.openIssue({ title: `${tag} a`, body: "body a", labels: ["ready"] }),
        await w.openIssue({ title: `${tag} b` }),
        await w.openIssue({ title: `${tag} c` }),
      ];
      const mine = (await w.forge.listOpenIssues()).filter((i) => i.title.startsWith(tag));
      assert.deepEqual(
        mine.map((i) => i.number),
        [c, b, a],
      );
      const one = await w.forge.getIssue(a);
      assert.deepEqual(
        {
          title: one.title,
          body: one.body,
          state: one.state,
          labels: one.labels,
          author: one.author,
          parent: one.parent,
          blocked: one.blockedByCount,
          subs: one.subIssueCount,
        },
        { title: `${tag} a`, body: "body a", state: "open", labels: ["ready"], author: me, parent: null, blocked: 0, subs: 0 },
      );
      assert.ok(one.id > 0 && one.htmlUrl !== "" && one.createdAt !== "");
      await w.forge.closeIssue(b, "not_planned");
      const closed = await w.forge.getIssue(b);
      assert.deepEqual([closed.state, closed.stateReason], ["closed", "not_planned"]);
      assert.deepEqual(
        (await w.forge.listOpenIssues()).filter((i) => i.title.startsWith(tag)).map((i) => i.number),
        [c, a],
      );
      const branch = fresh("b");
      await w.push(branch, { [`${tag}.txt`]: "x\n" });
      const pr = await w.forge.createPull({ title: `${tag} pr`, body: "", head: branch, base: "main" });
      assert.ok(!(await w.forge.listOpenIssues()).some((i) => i.number === pr.number), "a pull request is not an issue here");
      await refusal(w.forge.getIssue(99_999), "not_found", 404);
    });

    test("labels: ensureLabel makes one once, adding an unknown name makes it, names keep the repository's spelling, removing an absent one is fine", async () => {
      const w = world();
      const name = fresh("Label");
      await w.forge.ensureLabel({ name, color: "#0e8a16", description: "made by the test" });
      await w.forge.ensureLabel({ name, color: "ff0000", description: null });
      const made = (await w.forge.listLabels()).find((l) => l.name === name);
      assert.deepEqual(made, { name, color: "0e8a16", description: "made by the test" }, "an existing label is left alone");
      const issue = await w.openIssue({ title: fresh("labelled") });
      const unknown = fresh("unknown");
      await w.forge.addLabels(issue, [name.toLowerCase(), unknown]);
      await w.forge.addLabels(issue, [name]);
      await w.forge.addLabels(issue, []);
      assert.deepEqual((await w.forge.getIssue(issue)).labels, [name, unknown]);
      assert.ok(
        (await w.forge.listLabels()).some((l) => l.name === unknown),
        "adding an unknown label made it",
      );
      await w.forge.removeLabel(issue, name);
      await w.forge.removeLabel(issue, name);
      await w.forge.removeLabel(issue, fresh("never"));
      assert.deepEqual((await w.forge.getIssue(issue)).labels, [unknown]);
      await refusal(w.forge.addLabels(99_999, [name]), "not_found", 404);
    });

    test("comments: listed oldest first, updated in place, counted on the issue; an unknown issue or comment is not_found", async () => {
      const w = world();
      const me = await w.forge.whoami();
      const issue = await w.openIssue({ title: fresh("commented") });
      const first = await w.forge.createComment(issue, "first");
      const second = await w.forge.createComment(issue, "second");
      assert.equal(first.author, me);
      const updated = await w.forge.updateComment(first.id, "first, edited");
      assert.deepEqual([updated.id, updated.body], [first.id, "first, edited"]);
      assert.deepEqual(
        (await w.forge.listComments(issue)).map((c) => [c.id, c.body]),
        [
          [first.id, "first, edited"],
          [second.id, "second"],
        ],
      );
      assert.equal((await w.forge.getIssue(issue)).comments, 2);
      await refusal(w.forge.createComment(99_999, "x"), "not_found", 404);
      await refusal(w.forge.updateComment(9_999_999, "x"), "not_found", 404);
    });

    test("links: blockers counted while open, sub-issues with their parent and how many are done", async () => {
      const w = world();
      const [epic, child, blocker] = [
        await w.openIssue({ title: fresh("epic") }),
        await w.openIssue({ title: fresh("child") }),
        await w.openIssue({ title: fresh("blocker") }),
      ];
      await w.block(child, blocker);
      await w.nest(epic, child);
      assert.deepEqual(await w.forge.listBlockedBy(child), [{ number: blocker, id: (await w.forge.getIssue(blocker)).id, state: "open" }]);
      assert.deepEqual(
        (await w.forge.listSubIssues(epic)).map((l) => [l.number, l.state]),
        [[child, "open"]],
      );
      const seen = await w.forge.getIssue(child);
      assert.deepEqual([seen.blockedByCount, seen.parent], [1, epic]);
      await w.forge.closeIssue(blocker, "completed");
      await w.forge.closeIssue(child, "completed");
      assert.equal((await w.forge.getIssue(child)).blockedByCount, 0, "a closed blocker blocks no more");
      const done = await w.forge.getIssue(epic);
      assert.deepEqual([done.subIssueCount, done.subIssuesCompleted], [1, 1]);
    });

    test("pull requests: opened at the branch's head, listed newest first, refused twice or without commits, closed with a note", async () => {
      const w = world();
      const me = await w.forge.whoami();
      const [b1, b2] = [fresh("b"), fresh("b")];
      const h1 = await w.push(b1, { [`${b1}.txt`]: "one\n" });
      const h2 = await w.push(b2, { [`${b2}.txt`]: "two\n" });
      const p1 = await w.forge.createPull({ title: `${b1} pr`, body: "first", head: b1, base: "main" });
      const p2 = await w.forge.createPull({ title: `${b2} pr`, body: "", head: b2, base: "main", draft: true });
      assert.deepEqual(
        { head: p1.head.ref, sha: p1.head.sha, base: p1.base.ref, state: p1.state, draft: p1.draft, merged: p1.merged, author: p1.author, body: p1.body },
        { head: b1, sha: h1, base: "main", state: "open", draft: false, merged: false, author: me, body: "first" },
      );
      assert.equal(p2.draft, true);
      const open = (await w.forge.listOpenPulls()).filter((p) => p.number === p1.number || p.number === p2.number);
      assert.deepEqual(
        open.map((p) => [p.number, p.head.sha]),
        [
          [p2.number, h2],
          [p1.number, h1],
        ],
      );
      await refusal(w.forge.createPull({ title: "again", body: "", head: b1, base: "main" }), "validation", 422);
      await refusal(w.forge.createPull({ title: "nothing", body: "", head: "main", base: "main" }), "validation", 422);
      await refusal(w.forge.createPull({ title: "no branch", body: "", head: fresh("absent"), base: "main" }), "validation", 422);
      const moved = await w.push(b1, { [`${b1}.txt`]: "one, more\n" });
      assert.equal((await w.forge.getPull(p1.number)).head.sha, moved, "an open PR's head follows its branch");
      await w.forge.closePull(p1.number, "closed: a retry starts over");
      const closed = await w.forge.getPull(p1.number);
      assert.deepEqual([closed.state, closed.merged, closed.body], ["closed", false, "closed: a retry starts over"]);
      assert.ok(!(await w.forge.listOpenPulls()).some((p) => p.number === p1.number));
      const recent = (await w.forge.listRecentlyClosedPulls()).find((p) => p.number === p1.number);
      assert.equal(recent?.mergedAt, null, "closed unmerged");
      await refusal(w.forge.getPull(99_999), "not_found", 404);
    });

    test("merge is pinned to the head: 409 when it moved, then merged at the new head; 405 once merged, as a draft, or not mergeable", async () => {
      const w = world();
      const branch = fresh("m");
      const first = await w.push(branch, { [`${branch}.txt`]: "v1\n" });
      const pr = await w.forge.createPull({ title: `${branch} pr`, body: "", head: branch, base: "main" });
      const head = await w.push(branch, { [`${branch}.txt`]: "v2\n" });
      await refusal(w.forge.mergePull(pr.number, { sha: first, method: "squash" }), "conflict", 409);
      await assert.rejects(w.forge.mergePull(pr.number, { sha: "HEAD", method: "squash" }), UsageError);
      const detail = await w.forge.getPull(pr.number);
      assert.deepEqual([detail.mergeable, detail.mergeableState], [true, "clean"]);
      const merged = await w.forge.mergePull(pr.number, { sha: head, method: "squash" });
      assert.equal(merged.merged, true);
      assert.equal(merged.sha, await w.tip("main"), "the merge commit is the base's new tip");
      const after = await w.forge.getPull(pr.number);
      assert.deepEqual([after.state, after.merged, after.mergeCommitSha, after.head.sha], ["closed", true, merged.sha, head]);
      assert.notEqual((await w.forge.listRecentlyClosedPulls()).find((p) => p.number === pr.number)?.mergedAt ?? null, null);
      await refusal(w.forge.mergePull(pr.number, { sha: head, method: "squash" }), "not_mergeable", 405);

      const draftBranch = fresh("d");
      const draftHead = await w.push(draftBranch, { [`${draftBranch}.txt`]: "draft\n" });
      const draft = await w.forge.createPull({ title: "draft", body: "", head: draftBranch, base: "main", draft: true });
      await refusal(w.forge.mergePull(draft.number, { sha: draftHead, method: "squash" }), "not_mergeable", 405);
      await refusal(w.forge.mergePull(draft.number, { sha: draftHead, method: "rebase" }), "not_mergeable", 405);
    });

    test("a conflict with the base: mergeable false (dirty), a merge refused 405, the branch not updatable; a clean branch behind is brought up to date", async () => {
      const w = world();
      const file = `${fresh("shared")}.txt`;
      const [x, y, z] = [fresh("x"), fresh("y"), fresh("z")];
      const hx = await w.push(x, { [file]: "from x\n" });
      const hy = await w.push(y, { [file]: "from y\n" });
      const hz = await w.push(z, { [`${z}.txt`]: "z\n" });
      const [px, py, pz] = [
        await w.forge.createPull({ title: x, body: "", head: x, base: "main" }),
        await w.forge.createPull({ title: y, body: "", head: y, base: "main" }),
        await w.forge.createPull({ title: z, body: "", head: z, base: "main" }),
      ];
      await w.forge.mergePull(px.number, { sha: hx, method: "merge" });
      const dirty = await w.forge.getPull(py.number);
      assert.deepEqual([dirty.mergeable, dirty.mergeableState], [false, "dirty"]);
      await refusal(w.forge.mergePull(py.number, { sha: hy, method: "squash" }), "not_mergeable", 405);
      await refusal(w.forge.updatePullBranch(py.number, hy), "validation", 422);

      // GitHub says "head moved" here with a 422; the port calls it a conflict, as merge's 409.
      await refusal(w.forge.updatePullBranch(pz.number, hx), "conflict", 422);
      await w.forge.updatePullBranch(pz.number, hz);
      const updated = await w.forge.getPull(pz.number);
      assert.notEqual(updated.head.sha, hz, "a merge of the base was added to the branch");
      assert.equal(updated.head.sha, await w.tip(z));
      assert.equal(updated.base.sha, await w.tip("main"));
      const again = await w.forge.mergePull(pz.number, { sha: updated.head.sha, method: "squash" });
      assert.equal(again.merged, true);
    });

    test("checks of a sha: every run, newest first (a re-run too: the gate takes the newest per name); every status, newest first; with a gate, statuses unread while a run fails", async () => {
      const w = world();
      const branch = fresh("c");
      const sha = await w.push(branch, { [`${branch}.txt`]: "c\n" });
      assert.deepEqual(await w.forge.checksFor(sha), { sha, checkRuns: [], statuses: [] });
      await w.postCheck(sha, "ci", "failure");
      await w.postCheck(sha, "lint", "success");
      await w.postCheck(sha, "ci", "success");
      await w.postCheck(sha, "slow", null);
      await w.postStatus(sha, "ext", "pending");
      await w.postStatus(sha, "ext", "success");
      const checks = await w.forge.checksFor(sha);
      assert.equal(checks.sha, sha);
      assert.deepEqual(
        checks.checkRuns.map((r) => [r.name, r.status, r.conclusion]),
        [
          ["slow", "in_progress", null],
          ["ci", "completed", "success"],
          ["lint", "completed", "success"],
          ["ci", "completed", "failure"],
        ],
      );
      assert.equal(evaluateGate(checks, { contexts: ["ci", "lint"], strict: false, source: "protection", readable: true }).state, "green");
      assert.deepEqual(
        checks.statuses.map((s) => [s.context, s.state]),
        [
          ["ext", "success"],
          ["ext", "pending"],
        ],
      );
      await w.postCheck(sha, "lint", "failure");
      const gate = { contexts: ["lint"], strict: false, source: "protection" as const, readable: true };
      assert.deepEqual((await w.forge.checksFor(sha, gate)).statuses, [], "a failed required run: the statuses are not read");
      await assert.rejects(w.forge.checksFor("main"), UsageError);
    });

    test("an Actions job that failed is re-run: a new run of its name in its suite on the head; not past its last allowed attempt; a check that is no job is not_found", async () => {
      const w = world();
      const sha = await w.failedActionsJob(fresh("flaky"));
      const before = (await w.forge.checksFor(sha)).checkRuns.filter((r) => r.name === "flaky");
      assert.deepEqual(
        before.map((r) => [r.app, r.conclusion]),
        [["github-actions", "failure"]],
      );
      const red = { sha, checkRuns: before, statuses: [] };
      assert.deepEqual(rerunVerdict(red, evaluateGate(red, { contexts: [], strict: false, source: "none", readable: true }), 1), {
        rerun: true,
        checks: [{ name: "flaky", id: before[0]!.id, reruns: 0 }],
      });
      const runs = await w.forge.rerunFailedJobs([before[0]!.id], 2);
      assert.equal(runs.rerun.length, 1, "one workflow run re-run");
      assert.deepEqual(runs.exhausted, []);
      const after = (await w.forge.checksFor(sha)).checkRuns.filter((r) => r.name === "flaky");
      assert.equal(after.length, 2, "the re-run is a second run of the name");
      assert.ok(after[0]!.id > before[0]!.id, "newest first");
      assert.deepEqual([after[0]!.suiteId, after[0]!.app], [before[0]!.suiteId, "github-actions"], "in the same suite, from the same app");
      assert.deepEqual(
        await w.forge.rerunFailedJobs([after[0]!.id], 2),
        { rerun: [], exhausted: runs.rerun },
        "a run on its last allowed attempt is left alone",
      );
      await w.postCheck(sha, "third-party", "failure");
      const other = (await w.forge.checksFor(sha)).checkRuns.find((r) => r.name === "third-party")!;
      assert.notEqual(other.app, "github-actions");
      await refusal(w.forge.rerunFailedJobs([other.id], 2), "not_found", 404);
    });

    test("a protected base: its required checks, a PR blocked until they pass, then merged; reviews on one's own PR are comments only", async () => {
      const w = world();
      const base = fresh("release");
      await w.push(base, { [`${base}.md`]: "base\n" });
      assert.deepEqual(await w.forge.requiredChecks(base), {
        contexts: [],
        strict: false,
        source: "none",
        readable: true,
        approvals: 0,
        dismissStaleApprovals: false,
      });
      await w.protect(base, ["ci"]);
      assert.deepEqual(await w.forge.requiredChecks(base), {
        contexts: ["ci"],
        strict: false,
        source: "protection",
        readable: true,
        approvals: 0,
        dismissStaleApprovals: false,
      });
      assert.deepEqual(await w.forge.directPush(base), { allowed: true, why: "" }, "required checks alone do not refuse a push");
      const branch = fresh("p");
      const head = await w.push(branch, { [`${branch}.txt`]: "p\n" }, base);
      const pr = await w.forge.createPull({ title: branch, body: "", head: branch, base });
      const blocked = await w.forge.getPull(pr.number);
      assert.deepEqual([blocked.mergeable, blocked.mergeableState], [true, "blocked"]);
      await refusal(w.forge.mergePull(pr.number, { sha: head, method: "squash" }), "not_mergeable", 405);
      await w.postCheck(head, "ci", "failure");
      await refusal(w.forge.mergePull(pr.number, { sha: head, method: "squash" }), "not_mergeable", 405);

      const me = await w.forge.whoami();
      const review = await w.forge.createReview(pr.number, { event: "COMMENT", body: "looked at it" });
      assert.deepEqual([review.author, review.state, review.body, review.commitId], [me, "COMMENTED", "looked at it", head]);
      await refusal(w.forge.createReview(pr.number, { event: "APPROVE", body: "mine" }), "validation", 422);
      assert.deepEqual(
        (await w.forge.listReviews(pr.number)).map((r) => [r.id, r.state]),
        [[review.id, "COMMENTED"]],
      );
      assert.deepEqual(await w.forge.listReviewComments(pr.number), []);

      await w.postCheck(head, "ci", "success");
      assert.equal((await w.forge.getPull(pr.number)).mergeableState, "clean");
      const merged = await w.forge.mergePull(pr.number, { sha: head, method: "merge" });
      assert.equal(merged.sha, await w.tip(base));
    });
  });
}

forgeContract("the fake", () => fakeWorld());

{
  let forge: TestForge | undefined;
  let live: ForgeWorld | undefined;
  before(async () => {
    forge = await startTestForge();
    live = await localWorld(forge);
  });
  after(async () => {
    await forge?.dispose();
    assert.deepEqual(forge?.violations(), [], "every answer of the local forge fits GitHub's OpenAPI");
  });
  forgeContract("GitHubForge on the local forge over HTTP", () => {
    if (!live) throw new Error("the forge is not started");
    return live;
  });
}
