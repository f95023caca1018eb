// Re-running a red check before it counts (`gate.rerun_failed`), table-tested in the core: which
// failing checks the fleet may re-run (rerunVerdict), how a red claim carries them
// (classifyClaims), what decide does with it, and the local gate's rule (rerunLocalGate).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { CheckRun, CommitStatus, RequiredChecks } from "../server/gh/forge.js";
import { evaluateGate, rerunLocalGate, rerunVerdict } from "../server/state/gate.js";
import { decide, type DecideInput, type ClaimFacts } from "../server/state/decide.js";
import { classifyClaims, type ClaimContext, type MineClaim } from "../server/state/inflight.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import type { SnapshotPull } from "../server/state/snapshot.js";
import { boardPhase } from "../server/state/board-phase.js";

const HEAD = "a".repeat(40);

/** A check run; `app` "actions" is GitHub Actions' (suite 7 unless given), "other" a third-party app's. */
function run(name: string, conclusion: string | null, id: number, app: "actions" | "other" = "actions", suite = 7): CheckRun {
  return {
    id,
    name,
    status: conclusion === null ? "in_progress" : "completed",
    conclusion,
    title: null,
    summary: null,
    text: null,
    detailsUrl: null,
    htmlUrl: null,
    appId: app === "actions" ? 15368 : 99,
    app: app === "actions" ? "github-actions" : "some-ci",
    suiteId: app === "actions" ? suite : id,
  };
}
const st = (context: string, state: string): CommitStatus => ({ context, state, description: null, targetUrl: null });
const required = (...contexts: string[]): RequiredChecks => ({ contexts, strict: false, source: contexts.length > 0 ? "protection" : "none", readable: true });

interface VerdictRow {
  name: string;
  runs: CheckRun[];
  statuses?: CommitStatus[];
  required?: RequiredChecks;
  limit?: number;
  /** The runs to re-run, by id; null: the failure counts. */
  rerun: number[] | null;
  /** For a failure that counts: part of why. */
  why?: RegExp;
}

const verdictRows: VerdictRow[] = [
  { name: "an Actions job failed once: re-run it", runs: [run("test", "failure", 1)], rerun: [1] },
  {
    name: "an Actions job failed on its re-run too (two runs of the name in its suite): it counts",
    runs: [run("test", "failure", 1), run("test", "failure", 2)],
    rerun: null,
    why: /failed again after 1 re-run/,
  },
  { name: "two re-runs allowed, one made: re-run again", runs: [run("test", "failure", 1), run("test", "failure", 2)], limit: 2, rerun: [2] },
  { name: "re-runs off (0): the first failure counts", runs: [run("test", "failure", 1)], limit: 0, rerun: null, why: /re-runs are off/ },
  { name: "a third-party app's check cannot be re-run: it counts", runs: [run("lint", "failure", 1, "other")], rerun: null, why: /app some-ci/ },
  {
    name: "a failing commit status cannot be re-run: it counts",
    runs: [run("test", "success", 1)],
    statuses: [st("deploy", "failure")],
    rerun: null,
    why: /deploy is a commit status/,
  },
  {
    name: "an Actions job and a status of the same name, both failing: the status counts",
    runs: [run("test", "failure", 1)],
    statuses: [st("test", "failure")],
    rerun: null,
    why: /also failed as a commit status/,
  },
  {
    name: "one re-runnable failure beside one that is not: nothing is re-run (the attempt fails anyway)",
    runs: [run("test", "failure", 1), run("lint", "failure", 2, "other")],
    rerun: null,
    why: /lint/,
  },
  {
    name: "two failing Actions jobs with re-runs left: both re-run",
    runs: [run("unit", "failure", 1), run("e2e", "failure", 2)],
    rerun: [2, 1],
  },
  {
    name: "a run of the same name in another suite (a push and a pull_request workflow) is no re-run",
    runs: [run("test", "failure", 1, "actions", 7), run("test", "failure", 2, "actions", 8)],
    rerun: [2],
  },
  {
    name: "only the required check counts: an unrequired failure elsewhere is not re-run",
    runs: [run("test", "failure", 1), run("extra", "failure", 2)],
    required: required("test"),
    rerun: [1],
  },
  { name: "a green gate re-runs nothing", runs: [run("test", "failure", 1), run("test", "success", 2)], rerun: null, why: /not red/ },
];

describe("rerunVerdict: which red checks are re-run before they count", () => {
  for (const row of verdictRows) {
    it(row.name, () => {
      const checks = { sha: HEAD, checkRuns: row.runs, statuses: row.statuses ?? [] };
      const verdict = rerunVerdict(checks, evaluateGate(checks, row.required ?? required()), row.limit ?? 1);
      if (row.rerun === null) {
        assert.equal(verdict.rerun, false);
        if (!verdict.rerun && row.why) assert.match(verdict.why, row.why);
      } else {
        assert.equal(verdict.rerun, true, verdict.rerun ? "" : verdict.why);
        assert.deepEqual(
          verdict.checks.map((c) => c.id),
          row.rerun,
        );
      }
    });
  }

  it("counts the re-runs already made on the head", () => {
    const checks = { sha: HEAD, checkRuns: [run("test", "failure", 1), run("test", "failure", 2), run("test", "failure", 3)], statuses: [] };
    assert.deepEqual(rerunVerdict(checks, evaluateGate(checks, required()), 5), { rerun: true, checks: [{ name: "test", id: 3, reruns: 2 }] });
  });
});

describe("rerunLocalGate: a red local gate runs again", () => {
  const rows: Array<[string, boolean, number, number, boolean]> = [
    ["red, no re-run yet, limit 1: again", false, 0, 1, true],
    ["red after one re-run, limit 1: it counts", false, 1, 1, false],
    ["red, limit 0: it counts at once", false, 0, 0, false],
    ["green: done", true, 0, 1, false],
    ["red after one re-run, limit 2: again", false, 1, 2, true],
  ];
  for (const [name, passed, reruns, limit, again] of rows) it(name, () => assert.equal(rerunLocalGate(passed, reruns, limit), again));
});

// ---- a red claim, classified and decided -------------------------------------------------------

function pull(runs: CheckRun[]): SnapshotPull {
  return {
    number: 10,
    title: "t",
    body: "",
    author: "afk-bot",
    draft: false,
    head: { ref: "afk/1-t", sha: HEAD, repoFullName: "o/r" },
    baseRef: "main",
    checks: { sha: HEAD, statuses: [], checkRuns: runs },
  };
}

function classify(p: SnapshotPull, rerunFailed: number | undefined): MineClaim {
  const ctx: ClaimContext = {
    instance: "me",
    nowMs: Date.parse("2026-01-01T00:00:00Z"),
    ttlSeconds: 300,
    gateMode: "required",
    requiredChecks: required(),
    ...(rerunFailed === undefined ? {} : { rerunFailed }),
    issueInfo: () => ({ attempt: 0, reservedByHuman: false }),
    fleetPullOf: new Map([[1, p]]),
    linkedPullsOf: new Map([[1, [10]]]),
  };
  return classifyClaims([{ issue: 1, sha: "c".repeat(40), instance: "me", host: "h", at: "2026-01-01T00:00:00.000Z" }], [], ctx).mine[0]!;
}

function decideFor(claim: MineClaim, over: Partial<DecideInput> = {}, local?: ClaimFacts): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "2026-01-01T00:00:00Z",
    frontier: { dispatch: [], excluded: [] },
    mine: [claim],
    peer_live: [],
    stale: [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
  } as unknown as WorkingSet;
  const locals = new Map<number, ClaimFacts>(local ? [[1, local]] : []);
  return { set, local: locals, target: 2, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...over };
}

const kinds = (input: DecideInput): string[] => decide(input).actions.map((a) => a.kind);

describe("a red PR's flaky Actions check costs no attempt", () => {
  it("a first failure of an Actions job: the claim is a failure carrying the job to re-run, and decide re-runs it", () => {
    const claim = classify(pull([run("test", "failure", 41)]), 1);
    assert.equal(claim.status, "failure");
    assert.deepEqual(claim.rerun, [{ name: "test", id: 41, reruns: 0 }]);
    const [action] = decide(decideFor(claim)).actions;
    assert.deepEqual(action, { kind: "rerun_checks", issue: 1, sha: "c".repeat(40), pr: 10, head: HEAD, checks: [{ name: "test", id: 41, reruns: 0 }] });
  });

  it("its re-run running: the claim waits for CI (the gate takes the newest run)", () => {
    const claim = classify(pull([run("test", "failure", 41), run("test", null, 42)]), 1);
    assert.equal(claim.status, "awaiting_ci");
    assert.deepEqual(kinds(decideFor(claim)), []);
  });

  it("its re-run failed too: the attempt's failure counts (a retry)", () => {
    const claim = classify(pull([run("test", "failure", 41), run("test", "failure", 42)]), 1);
    assert.equal(claim.rerun, undefined);
    assert.deepEqual(kinds(decideFor(claim)), ["retry"]);
  });

  it("its re-run passed: the PR lands", () => {
    const claim = classify(pull([run("test", "failure", 41), run("test", "success", 42)]), 1);
    assert.equal(claim.status, "awaiting_merge");
    assert.deepEqual(kinds(decideFor(claim)), ["land"]);
  });

  it("gate.rerun_failed 0 (or not given): the first failure counts at once", () => {
    assert.deepEqual(kinds(decideFor(classify(pull([run("test", "failure", 41)]), 0))), ["retry"]);
    assert.deepEqual(kinds(decideFor(classify(pull([run("test", "failure", 41)]), undefined))), ["retry"]);
  });

  it("a third-party app's failing check counts as it is", () => {
    assert.deepEqual(kinds(decideFor(classify(pull([run("lint", "failure", 41, "other")]), 1))), ["retry"]);
  });

  it("GitHub refused the re-run on this head: the failure counts", () => {
    const claim = classify(pull([run("test", "failure", 41)]), 1);
    assert.deepEqual(kinds(decideFor(claim, {}, { worker: "none", rerunRefused: "403 too old" })), ["retry"]);
  });

  it("on the last attempt, a flaky check is still re-run before the escalation", () => {
    const claim = classify(pull([run("test", "failure", 41)]), 1);
    assert.deepEqual(kinds(decideFor({ ...claim, attempt: 2 })), ["rerun_checks"]);
    assert.deepEqual(kinds(decideFor({ ...classify(pull([run("test", "failure", 41), run("test", "failure", 42)]), 1), attempt: 2 })), ["escalate"]);
  });

  it("the board shows a claim whose checks are re-run as a PR in CI, not as a failure", () => {
    assert.equal(boardPhase(classify(pull([run("test", "failure", 41)]), 1), false), "pr_open");
    assert.equal(boardPhase(classify(pull([run("test", "failure", 41)]), 0), false), "ci_failed");
  });

  it("a re-run keeps the landing slot (its CI runs again); a failure that counts frees it", () => {
    assert.equal(decide(decideFor(classify(pull([run("test", "failure", 41)]), 1), { landingSlot: 1 })).landingSlot, 1);
    assert.equal(decide(decideFor(classify(pull([run("test", "failure", 41)]), 0), { landingSlot: 1 })).landingSlot, null);
  });

  it("while stopping, nothing is re-run: the failure counts as before", () => {
    assert.deepEqual(kinds(decideFor(classify(pull([run("test", "failure", 41)]), 1), { stopping: true })), ["retry", "release"]);
  });
});
