// Required human approvals in the pure core, table-tested: how reviews count (evaluateReviews),
// how they turn a claim's status (classifyClaims), and what decide does with it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { PullReview, RequiredChecks } from "../server/gh/forge.js";
import { decide, type DecideInput } from "../server/state/decide.js";
import { classifyClaims, type ClaimContext, type MineClaim } from "../server/state/inflight.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { evaluateReviews, reviewNeed } from "../server/state/reviews.js";
import type { SnapshotPull } from "../server/state/snapshot.js";

const HEAD = "a".repeat(40);
const OLD = "b".repeat(40);
let nextId = 1;

function review(author: string, state: PullReview["state"], over: Partial<PullReview> = {}): PullReview {
  return { id: nextId++, author, association: "COLLABORATOR", state, body: "", commitId: HEAD, submittedAt: "2026-01-01T00:00:00Z", ...over };
}

const one = { approvals: 1, dismissStaleApprovals: false };

const reviewRows: {
  name: string;
  reviews: PullReview[];
  required: Pick<RequiredChecks, "approvals" | "dismissStaleApprovals">;
  state: string;
  approvedBy?: string[];
}[] = [
  {
    name: "nothing required: not_required whatever the reviews say",
    reviews: [review("bob", "CHANGES_REQUESTED")],
    required: { approvals: 0 },
    state: "not_required",
  },
  { name: "required, no reviews: awaiting", reviews: [], required: one, state: "awaiting" },
  { name: "one approval by a collaborator: approved", reviews: [review("alice", "APPROVED")], required: one, state: "approved", approvedBy: ["alice"] },
  { name: "two required, one approval: awaiting", reviews: [review("alice", "APPROVED")], required: { approvals: 2 }, state: "awaiting" },
  {
    name: "the same reviewer twice is one approval",
    reviews: [review("alice", "APPROVED"), review("alice", "APPROVED")],
    required: { approvals: 2 },
    state: "awaiting",
  },
  { name: "a comment does not approve", reviews: [review("alice", "COMMENTED")], required: one, state: "awaiting" },
  { name: "a pending draft does not approve", reviews: [review("alice", "PENDING")], required: one, state: "awaiting" },
  { name: "a stranger's approval does not count", reviews: [review("eve", "APPROVED", { association: "NONE" })], required: one, state: "awaiting" },
  { name: "the fleet's own login never counts, even through a second token", reviews: [review("afk-bot", "APPROVED")], required: one, state: "awaiting" },
  {
    name: "changes requested block despite an approval",
    reviews: [review("alice", "APPROVED"), review("bob", "CHANGES_REQUESTED", { body: "rename it" })],
    required: one,
    state: "changes_requested",
  },
  {
    name: "a later approval by the same reviewer lifts the request",
    reviews: [review("bob", "CHANGES_REQUESTED"), review("bob", "APPROVED")],
    required: one,
    state: "approved",
  },
  { name: "a dismissed request no longer blocks", reviews: [review("bob", "CHANGES_REQUESTED"), review("bob", "DISMISSED")], required: one, state: "awaiting" },
  {
    name: "a stranger's request for changes is not honoured",
    reviews: [review("eve", "CHANGES_REQUESTED", { association: "CONTRIBUTOR" })],
    required: one,
    state: "awaiting",
  },
  { name: "a stale approval counts when stale reviews stand", reviews: [review("alice", "APPROVED", { commitId: OLD })], required: one, state: "approved" },
  {
    name: "a stale approval is void when the base dismisses them",
    reviews: [review("alice", "APPROVED", { commitId: OLD })],
    required: { approvals: 1, dismissStaleApprovals: true },
    state: "awaiting",
  },
];

describe("evaluateReviews", () => {
  for (const row of reviewRows) {
    it(row.name, () => {
      const gate = evaluateReviews(row.reviews, row.required, "afk-bot", HEAD);
      assert.equal(gate.state, row.state);
      if (row.approvedBy) assert.deepEqual(gate.approvedBy, row.approvedBy);
    });
  }

  it("keeps the request's text and says what a human must do", () => {
    const gate = evaluateReviews([review("bob", "CHANGES_REQUESTED", { body: "rename it" })], one, "afk-bot", HEAD);
    assert.deepEqual(
      gate.changes.map((c) => [c.by, c.body]),
      [["bob", "rename it"]],
    );
    const waiting = evaluateReviews([review("alice", "APPROVED")], { approvals: 2 }, "afk-bot", HEAD);
    assert.equal(
      reviewNeed(waiting),
      "needs 1 more approving review from someone with write access (approved so far by alice): the base branch requires 2, and the fleet cannot approve its own pull requests",
    );
  });
});

// ---- classification -----------------------------------------------------------------------------

function pull(reviews: PullReview[] | undefined, checks: "green" | "red" | "pending" | "none"): SnapshotPull {
  const conclusion = checks === "green" ? "success" : checks === "red" ? "failure" : null;
  return {
    number: 10,
    title: "t",
    body: "",
    author: "afk-bot",
    draft: false,
    head: { ref: "afk/1-t", sha: HEAD, repoFullName: "o/r" },
    baseRef: "main",
    ...(checks === "none"
      ? {}
      : {
          checks: {
            sha: HEAD,
            statuses: [],
            checkRuns: [
              {
                id: 1,
                name: "ci",
                status: conclusion ? "completed" : "in_progress",
                conclusion,
                title: null,
                summary: null,
                text: null,
                detailsUrl: null,
                htmlUrl: null,
                appId: null,
              },
            ],
          },
        }),
    ...(reviews ? { reviews } : {}),
  };
}

function classify(p: SnapshotPull, gateMode: "required" | "local", approvals = 1): MineClaim {
  const ctx: ClaimContext = {
    instance: "me",
    login: "afk-bot",
    nowMs: Date.parse("2026-01-01T00:00:00Z"),
    ttlSeconds: 300,
    gateMode,
    requiredChecks: { contexts: [], strict: false, source: "none", readable: true, approvals },
    issueInfo: () => ({ attempt: 0, reservedByHuman: false }),
    fleetPullOf: new Map([[1, p]]),
    linkedPullsOf: new Map([[1, [10]]]),
  };
  const claim = { issue: 1, sha: "c".repeat(40), instance: "me", host: "h", at: "2026-01-01T00:00:00.000Z" };
  return classifyClaims([claim], [], ctx).mine[0]!;
}

const statusRows: { name: string; pull: SnapshotPull; gate: "required" | "local"; approvals?: number; status: string }[] = [
  { name: "green, no approval yet: awaiting_review", pull: pull([], "green"), gate: "required", status: "awaiting_review" },
  { name: "green and approved: awaiting_merge", pull: pull([review("alice", "APPROVED")], "green"), gate: "required", status: "awaiting_merge" },
  { name: "checks pending, no approval: awaiting_ci (the machine gate first)", pull: pull([], "pending"), gate: "required", status: "awaiting_ci" },
  { name: "checks red, no approval: failure", pull: pull([], "red"), gate: "required", status: "failure" },
  {
    name: "changes requested while checks run: changes_requested",
    pull: pull([review("bob", "CHANGES_REQUESTED")], "pending"),
    gate: "required",
    status: "changes_requested",
  },
  { name: "local gate, no approval: awaiting_review (gated at landing)", pull: pull([], "none"), gate: "local", status: "awaiting_review" },
  { name: "nothing required: green lands", pull: pull(undefined, "green"), gate: "required", approvals: 0, status: "awaiting_merge" },
  { name: "reviews not read but required: held, never landed blind", pull: pull(undefined, "green"), gate: "required", status: "awaiting_review" },
];

describe("classifyClaims with required approvals", () => {
  for (const row of statusRows) {
    it(row.name, () => {
      assert.equal(classify(row.pull, row.gate, row.approvals ?? 1).status, row.status);
    });
  }
});

// ---- decide -------------------------------------------------------------------------------------

function decideFor(claim: MineClaim, attempt = 0): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "2026-01-01T00:00:00Z",
    frontier: { dispatch: [{ number: 2, title: "other", attempt: 0 }], excluded: [] },
    mine: [{ ...claim, attempt }],
    peer_live: [],
    stale: [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
  } as unknown as WorkingSet;
  return { set, local: new Map(), target: 2, retry: 1, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60 };
}

describe("decide with required approvals", () => {
  it("awaiting_review: keeps the claim, says what is needed, and other work is dispatched", () => {
    const actions = decide(decideFor(classify(pull([], "green"), "required"))).actions;
    assert.deepEqual(
      actions.map((a) => a.kind),
      ["await_review", "dispatch"],
    );
    assert.deepEqual(actions[0], { kind: "await_review", issue: 1, pr: 10, head: HEAD, required: 1, approvedBy: [] });
  });

  it("changes requested: a retry whose evidence is the reviewer's text", () => {
    const claim = classify(pull([review("bob", "CHANGES_REQUESTED", { body: "rename it" })], "green"), "required");
    const [action] = decide(decideFor(claim)).actions;
    assert.equal(action?.kind, "retry");
    assert.deepEqual(action?.kind === "retry" ? action.evidence : null, { kind: "review", pr: 10, changes: [{ by: "bob", body: "rename it" }] });
  });

  it("changes requested past the retry limit: escalate with the same evidence", () => {
    const claim = classify(pull([review("bob", "CHANGES_REQUESTED", { body: "no" })], "green"), "required");
    const [action] = decide(decideFor(claim, 1)).actions;
    assert.equal(action?.kind, "escalate");
  });
});
