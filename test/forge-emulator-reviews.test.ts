// Reviews on the local forge: create and list, GitHub's refusal to let anyone approve their own
// PR, required approving reviews from classic protection and from a ruleset's pull_request
// rule (mergeable_state "blocked", the 405 on merge, refused direct pushes), the latest review
// per reviewer counting, and stale approvals dismissed on a new head.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { api, commitFile, forgeForFile, git, openPull, protectBranch, pushBranch, repoPath, type TestForge } from "./support/forge-fixtures.js";

let forge: TestForge;
let work: string;
const pulls = (suffix = ""): string => repoPath(forge, `/pulls${suffix}`);
const asAlice = () => ({ token: forge.users.alice! });
const asBob = () => ({ token: forge.users.bob! });

async function review(pr: number, event: string | undefined, body: string, who: () => { token: string }) {
  return api(forge, "POST", pulls(`/${pr}/reviews`), { ...(event ? { event } : {}), body }, who());
}

async function state(pr: number): Promise<string> {
  return (await api(forge, "GET", pulls(`/${pr}`))).body.mergeable_state;
}

forgeForFile({ users: ["alice", "bob"] }, (f, w) => {
  [forge, work] = [f, w];
});

describe("reviews", () => {
  it("refuses approving or requesting changes on one's own PR, and lists reviews in order", async () => {
    const pr = await openPull(forge, work, "own-review");
    const own = await api(forge, "POST", pulls(`/${pr.number}/reviews`), { event: "APPROVE" });
    assert.equal(own.status, 422);
    assert.deepEqual(own.body.errors, ["Can not approve your own pull request"]);
    const ownChanges = await api(forge, "POST", pulls(`/${pr.number}/reviews`), { event: "REQUEST_CHANGES", body: "no" });
    assert.deepEqual(ownChanges.body.errors, ["Can not request changes on your own pull request"]);
    assert.equal((await review(pr.number, "REQUEST_CHANGES", " ", asAlice)).status, 422, "changes requested need a body");
    assert.equal((await review(pr.number, "SHIP_IT", "x", asAlice)).status, 422);

    const a = await review(pr.number, "COMMENT", "a question", asAlice);
    assert.equal(a.status, 200);
    assert.deepEqual([a.body.state, a.body.user.login, a.body.commit_id], ["COMMENTED", "alice", pr.head]);
    const draft = await review(pr.number, undefined, "not yet", asBob);
    assert.equal(draft.body.state, "PENDING");
    const b = await review(pr.number, "APPROVE", "", asBob);
    assert.equal(b.body.state, "APPROVED");
    const seenByAlice = await api(forge, "GET", pulls(`/${pr.number}/reviews`), undefined, asAlice());
    assert.deepEqual(
      seenByAlice.body.map((r: { state: string }) => r.state),
      ["COMMENTED", "APPROVED"],
      "a pending review is its author's only",
    );
    const seenByBob = await api(forge, "GET", pulls(`/${pr.number}/reviews`), undefined, asBob());
    assert.equal(seenByBob.body.length, 3);
  });

  it("classic protection: held without an approval, refused while changes are requested, merged once approved", async () => {
    const put = await protectBranch(forge, { contexts: null, enforceAdmins: true, approvals: 1, dismissStaleReviews: false });
    assert.equal(put.body.required_pull_request_reviews.required_approving_review_count, 1);
    try {
      const pr = await openPull(forge, work, "needs-approval");
      assert.equal(await state(pr.number), "blocked");
      const refused = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
      assert.equal(refused.status, 405);
      assert.equal(refused.body.message, "At least 1 approving review is required by reviewers with write access.");

      await review(pr.number, "APPROVE", "", asAlice);
      await review(pr.number, "REQUEST_CHANGES", "please rename the file", asBob);
      const changes = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
      assert.equal(changes.status, 405);
      assert.match(changes.body.message, /Changes were requested/);
      // Bob's newer review replaces his request for changes.
      await review(pr.number, "APPROVE", "fine after all", asBob);
      assert.equal(await state(pr.number), "clean");
      // Direct pushes to a branch that requires reviews are refused, admins included (enforce_admins).
      await assert.rejects(git(work, "push", "--quiet", "origin", `${pr.head}:refs/heads/main`), /Changes must be made through a pull request/);
      const merged = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
      assert.equal(merged.status, 200);
    } finally {
      await api(forge, "PUT", repoPath(forge, "/branches/main/protection"), { required_status_checks: null });
    }
  });

  it("a ruleset's pull_request rule requires approvals too, and dismisses stale ones on push", async () => {
    const created = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "reviewed releases",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/rel/**"], exclude: [] } },
      rules: [{ type: "pull_request", parameters: { required_approving_review_count: 2, dismiss_stale_reviews_on_push: true } }],
    });
    assert.equal(created.status, 201);
    const rules = await api(forge, "GET", repoPath(forge, "/rules/branches/rel%2F2.0"));
    assert.equal(rules.body[0].type, "pull_request");
    assert.equal(rules.body[0].parameters.required_approving_review_count, 2);
    const bad = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "too many",
      enforcement: "active",
      rules: [{ type: "pull_request", parameters: { required_approving_review_count: 11 } }],
    });
    assert.equal(bad.status, 422);

    await pushBranch(work, "rel/2.0", "rel2.txt", "rel\n");
    const pr = await openPull(forge, work, "for-rel2", { base: "rel/2.0" });
    await review(pr.number, "APPROVE", "", asAlice);
    assert.equal(await state(pr.number), "blocked", "one of two approvals");
    await review(pr.number, "APPROVE", "", asBob);
    assert.equal(await state(pr.number), "clean");
    // A new head dismisses both approvals (dismiss_stale_reviews_on_push).
    await git(work, "checkout", "--quiet", "for-rel2");
    const newHead = await commitFile(work, "more.txt", "more\n", "more");
    await git(work, "push", "--quiet", "origin", "for-rel2");
    assert.equal(await state(pr.number), "blocked");
    const stale = await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "merge", sha: newHead });
    assert.equal(stale.status, 405);
    await review(pr.number, "APPROVE", "", asAlice);
    await review(pr.number, "APPROVE", "", asBob);
    assert.equal((await api(forge, "PUT", pulls(`/${pr.number}/merge`), { merge_method: "merge", sha: newHead })).status, 200);
  });
});
