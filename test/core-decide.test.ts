// decide as a kodiak-style table: one row per case, named after it, built from small builders
// for the working set (our claims, stale claims, the frontier) and this host's local facts.
// Every action kind decide returns appears, and every reason it holds one back.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decide, failureAction, type Action, type DecideInput, type Decision, type ClaimFacts } from "../server/state/decide.js";
import { boardPhase } from "../server/state/board-phase.js";
import { doneEpics } from "../server/state/epics.js";
import type { MineClaim, StaleClaim } from "../server/state/inflight.js";
import type { DispatchItem } from "../server/state/frontier.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import type { OrphanPull } from "../server/state/orphans.js";
import { mineClaim } from "./support/snapshots.js";

// ---- builders ------------------------------------------------------------------------------

const mine = (issue: number, over: Partial<MineClaim> = {}): MineClaim => mineClaim(issue, { sha: `claim${issue}`, ...over });
const green = (issue: number, over: Partial<MineClaim> = {}): MineClaim =>
  mine(issue, { status: "awaiting_merge", pr: 100 + issue, head: `head${issue}`, ...over });
const waiting = (issue: number, over: Partial<MineClaim> = {}): MineClaim =>
  mine(issue, { status: "awaiting_ci", pr: 100 + issue, head: `head${issue}`, ...over });
const red = (issue: number, attempt = 0, over: Partial<MineClaim> = {}): MineClaim =>
  mine(issue, { status: "failure", pr: 100 + issue, head: `head${issue}`, failing: ["ci"], attempt, ...over });

function stale(issue: number, over: Partial<StaleClaim> = {}): StaleClaim {
  return { issue, sha: `stale${issue}`, instance: "peer", host: "p", at: null, issueOpen: true, reason: "expired", heartbeatAt: null, ...over };
}
function ready(issue: number, attempt = 0): DispatchItem {
  return { number: issue, title: `Issue ${issue}`, selector: 0, high: false, attempt } as DispatchItem;
}

const orphan = (issue: number): OrphanPull => ({ issue, pr: 100 + issue, head: `head${issue}`, headRef: `afk/${issue}-x` });

interface World {
  orphans?: OrphanPull[];
  mine?: MineClaim[];
  stale?: StaleClaim[];
  ready?: DispatchItem[];
  local?: Record<number, ClaimFacts>;
}
function world(w: World, over: Partial<DecideInput> = {}): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "2026-01-01T00:00:00Z",
    frontier: { dispatch: w.ready ?? [], excluded: [] },
    mine: w.mine ?? [],
    peer_live: [],
    stale: w.stale ?? [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
    orphans: w.orphans ?? [],
  } as unknown as WorkingSet;
  const local = new Map(Object.entries(w.local ?? {}).map(([k, v]) => [Number(k), v]));
  return { set, local, target: 2, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...over };
}

// Local facts.
const running = (liveness: ClaimFacts["liveness"] = "active", over: Partial<ClaimFacts> = {}): ClaimFacts => ({
  worker: "running",
  liveness,
  idleSeconds: 1,
  ...over,
});
const committed = (over: Partial<ClaimFacts> = {}): ClaimFacts => ({
  worker: "exited",
  outcome: "commits",
  commitsAhead: 1,
  changes: true,
  verdict: null,
  killed: false,
  idleSeconds: Infinity,
  ...over,
});
const said = (kind: "already-satisfied" | "blocked" | "giving-up", over: Partial<ClaimFacts> = {}): ClaimFacts => ({
  worker: "exited",
  outcome: "verdict",
  verdict: { kind, reason: `${kind} because` },
  idleSeconds: Infinity,
  ...over,
});
const nothing = (over: Partial<ClaimFacts> = {}): ClaimFacts => ({
  worker: "exited",
  outcome: "nothing",
  commitsAhead: 0,
  changes: false,
  verdict: null,
  idleSeconds: Infinity,
  ...over,
});
const noWorker = (over: Partial<ClaimFacts> = {}): ClaimFacts => ({ worker: "none", ...over });

// ---- the table -----------------------------------------------------------------------------

interface Row {
  name: string;
  in: DecideInput;
  /** The action kinds, in order, as "kind#issue". */
  do: string[];
  /** Further facts of the decision. */
  check?: (d: Decision) => void;
}

const shown = (a: Action): string => `${a.kind}#${a.issue}`;
const only = <K extends Action["kind"]>(d: Decision, kind: K): Extract<Action, { kind: K }> => {
  const found = d.actions.filter((a): a is Extract<Action, { kind: K }> => a.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!;
};

const rows: Row[] = [];
const row = (name: string, input: DecideInput, expected: string[], check?: (d: Decision) => void): void => {
  rows.push({ name, in: input, do: expected, ...(check ? { check } : {}) });
};

// Releases: a claim on a closed issue, or one a human took back.
row("closed issue, no worker: release", world({ mine: [mine(1, { issueOpen: false })] }), ["release#1"], (d) =>
  assert.equal(only(d, "release").killWorker, false),
);
row("closed issue, worker running: release and end the worker", world({ mine: [mine(1, { issueOpen: false })], local: { 1: running() } }), ["release#1"], (d) =>
  assert.equal(only(d, "release").killWorker, true),
);
row("closed issue with a green PR: release, never land", world({ mine: [green(1, { issueOpen: false })] }), ["release#1"]);
row("closed issue with a red PR: release, no retry", world({ mine: [red(1, 0, { issueOpen: false })] }), ["release#1"]);
row("human took the issue back: release with that reason", world({ mine: [mine(1, { reservedByHuman: true })] }), ["release#1"], (d) =>
  assert.match(only(d, "release").why, /human/),
);
row(
  "human took it back while its worker runs: release, kill",
  world({ mine: [mine(1, { reservedByHuman: true })], local: { 1: running() } }),
  ["release#1"],
  (d) => assert.equal(only(d, "release").killWorker, true),
);
row(
  "a released running worker frees its slot for a dispatch",
  world({ mine: [mine(1, { issueOpen: false })], local: { 1: running() }, ready: [ready(5)] }, { target: 1 }),
  ["release#1", "dispatch#5"],
);

// Green PRs: land, hold, or wait for the landing slot.
row("green PR, auto_merge: land its gated head", world({ mine: [green(1)] }), ["land#1"], (d) => {
  const land = only(d, "land");
  assert.deepEqual([land.pr, land.head, land.sha], [101, "head1", "claim1"]);
});
row("green PR without auto_merge: hold", world({ mine: [green(1)] }, { autoMerge: false }), ["hold#1"], (d) => assert.match(only(d, "hold").why, /auto_merge/));
row("green PR whose head is unknown: hold, never land blind", world({ mine: [green(1, { head: null })] }), ["hold#1"]);
row("green PR with no PR number: hold", world({ mine: [green(1, { pr: null })] }), ["hold#1"]);
row(
  "two green PRs under a local gate: both land, not exclusive",
  world({ mine: [green(1), green(2)] }, { oneLandingPerTick: false }),
  ["land#1", "land#2"],
  (d) =>
    assert.deepEqual(
      d.actions.map((a) => (a.kind === "land" ? a.exclusive : null)),
      [false, false],
    ),
);
row(
  "two green PRs under required CI: both exclusive (one landing move per tick)",
  world({ mine: [green(1), green(2)] }, { oneLandingPerTick: true }),
  ["land#1", "land#2"],
  (d) =>
    assert.deepEqual(
      d.actions.map((a) => (a.kind === "land" ? a.exclusive : null)),
      [true, true],
    ),
);
row(
  "slot held by a synced PR still in CI: other green PRs wait",
  world({ mine: [waiting(1), green(2), green(3)] }, { landingSlot: 1, oneLandingPerTick: true }),
  [],
  (d) => assert.equal(d.landingSlot, 1),
);
row(
  "slot holder turned green: it lands first, then the next green PR may take the slot",
  world({ mine: [green(1), green(2)] }, { landingSlot: 1, oneLandingPerTick: true }),
  ["land#1", "land#2"],
  (d) => assert.equal(d.landingSlot, null),
);
row(
  "slot holder turned green behind another green PR: it still lands first",
  world({ mine: [green(1), green(2)] }, { landingSlot: 2, oneLandingPerTick: true }),
  ["land#2", "land#1"],
  (d) => assert.equal(d.landingSlot, null),
);
row(
  "slot holder went red: the slot frees, others land, it retries",
  world({ mine: [red(1), green(2)] }, { landingSlot: 1, oneLandingPerTick: true }),
  ["land#2", "retry#1"],
  (d) => assert.equal(d.landingSlot, null),
);
row(
  "slot holder's issue closed: the slot frees",
  world({ mine: [waiting(1, { issueOpen: false }), green(2)] }, { landingSlot: 1 }),
  ["release#1", "land#2"],
  (d) => assert.equal(d.landingSlot, null),
);
row("slot holder no longer ours: the slot frees", world({ mine: [green(2)] }, { landingSlot: 1 }), ["land#2"], (d) => assert.equal(d.landingSlot, null));
row("no slot: nothing held", world({ mine: [waiting(1)] }), [], (d) => assert.equal(d.landingSlot, null));
row("slot kept while its PR waits for CI, with no other PR", world({ mine: [waiting(1)] }, { landingSlot: 1 }), [], (d) => assert.equal(d.landingSlot, 1));
row("held merges ignore the slot: hold every green PR", world({ mine: [waiting(1), green(2)] }, { landingSlot: 1, autoMerge: false }), ["hold#2"]);
// Landing trains (landing.train.max > 1).
row(
  "three green PRs, train max 8: one train of all three, in claim order",
  world({ mine: [green(3), green(1), green(2)] }, { trainMax: 8, oneLandingPerTick: true }),
  ["land_train#3"],
  (d) =>
    assert.deepEqual(
      only(d, "land_train").members.map((m) => [m.issue, m.pr, m.head, m.sha]),
      [
        [3, 103, "head3", "claim3"],
        [1, 101, "head1", "claim1"],
        [2, 102, "head2", "claim2"],
      ],
    ),
);
row(
  "four green PRs, train max 2: a train of the first two, the others wait",
  world({ mine: [green(1), green(2), green(3), green(4)] }, { trainMax: 2 }),
  ["land_train#1"],
  (d) =>
    assert.deepEqual(
      only(d, "land_train").members.map((m) => m.issue),
      [1, 2],
    ),
);
row("one green PR, train max 8: it lands alone", world({ mine: [green(1), waiting(2)] }, { trainMax: 8, oneLandingPerTick: true }), ["land#1"]);
row("train max 1 (the default): each PR lands on its own", world({ mine: [green(1), green(2)] }, { trainMax: 1 }), ["land#1", "land#2"]);
row(
  "a train waits while the landing slot is held",
  world({ mine: [waiting(1), green(2), green(3)] }, { trainMax: 8, landingSlot: 1, oneLandingPerTick: true }),
  [],
  (d) => assert.equal(d.landingSlot, 1),
);
row(
  "the slot holder turned green with others: it lands alone first",
  world({ mine: [green(1), green(2), green(3)] }, { trainMax: 8, landingSlot: 1, oneLandingPerTick: true }),
  ["land#1"],
);
row("held merges hold train riders too", world({ mine: [green(1), green(2)] }, { trainMax: 8, autoMerge: false }), ["hold#1", "hold#2"]);
row("a train keeps its place before births", world({ mine: [green(1), green(2)], ready: [ready(9)] }, { trainMax: 8 }), ["land_train#1", "dispatch#9"]);
row("green PR while stopping: it still lands (a PR keeps its claim)", world({ mine: [green(1)] }, { stopping: true }), ["land#1"]);

// Human reviews the base requires.
const reviewGate = (state: "awaiting" | "changes_requested", over: Partial<NonNullable<MineClaim["review"]>> = {}): MineClaim["review"] => ({
  state,
  required: 1,
  approvedBy: [],
  changes: state === "changes_requested" ? [{ by: "alice", body: "rename it", at: null }] : [],
  ...over,
});
row(
  "green PR short of a required approval: await the review, keep the claim",
  world({ mine: [green(1, { status: "awaiting_review", review: reviewGate("awaiting") })] }),
  ["await_review#1"],
  (d) => {
    const a = only(d, "await_review");
    assert.deepEqual([a.pr, a.head, a.required, a.approvedBy], [101, "head1", 1, []]);
  },
);
row(
  "two approvals required, one given: still awaiting",
  world({ mine: [green(1, { status: "awaiting_review", review: reviewGate("awaiting", { required: 2, approvedBy: ["bob"] }) })] }),
  ["await_review#1"],
  (d) => assert.deepEqual(only(d, "await_review").approvedBy, ["bob"]),
);
row("awaiting review with no review facts: nothing to say", world({ mine: [green(1, { status: "awaiting_review", review: null })] }), []);
row(
  "awaiting review takes no worker slot",
  world({ mine: [green(1, { status: "awaiting_review", review: reviewGate("awaiting") })], ready: [ready(5), ready(6)] }),
  ["await_review#1", "dispatch#5", "dispatch#6"],
);
row(
  "a human asked for changes: retry with the review as evidence",
  world({ mine: [green(1, { status: "changes_requested", review: reviewGate("changes_requested") })] }),
  ["retry#1"],
  (d) => assert.deepEqual(only(d, "retry").evidence, { kind: "review", pr: 101, changes: [{ by: "alice", body: "rename it" }] }),
);
row(
  "changes requested, out of attempts: escalate",
  world({ mine: [green(1, { status: "changes_requested", attempt: 2, review: reviewGate("changes_requested") })] }),
  ["escalate#1"],
);

// The review stage (review.command set): a green PR is reviewed before it lands.
const reviewOn = { review: { maxRounds: 2 } };
const mark = (verdict: "approve" | "fix" | "refute" | "none", head: string, round: number) => ({ verdict, head, round });
row("review stage, green PR never reviewed: a reviewer starts (round 1)", world({ mine: [green(1)] }, reviewOn), ["review#1"], (d) =>
  assert.equal(only(d, "review").round, 1),
);
row(
  "review stage, reviewer still running: wait",
  world({ mine: [green(1)], local: { 1: { worker: "none", reviewer: "running", liveness: "active" } } }, reviewOn),
  [],
);
row("review stage, reviewer exited: take its result", world({ mine: [green(1)], local: { 1: { worker: "none", reviewer: "exited" } } }, reviewOn), [
  "review_result#1",
]);
row("review stage, approved at this very head: land", world({ mine: [green(1, { reviewMarks: [mark("approve", "head1", 1)] })] }, reviewOn), ["land#1"]);
row(
  "review stage, approved an older head: review again",
  world({ mine: [green(1, { reviewMarks: [mark("approve", "old", 1)] })] }, reviewOn),
  ["review#1"],
  (d) => assert.equal(only(d, "review").round, 2),
);
row(
  "review stage, rounds spent without a pass: escalate",
  world({ mine: [green(1, { reviewMarks: [mark("none", "head1", 1), mark("none", "head1", 2)] })] }, reviewOn),
  ["escalate#1"],
);
row("review stage while births are paused: the reviewer waits", world({ mine: [green(1)] }, { ...reviewOn, birthsPaused: true }), []);

// PRs whose CI runs: nothing to do.
row("CI pending: wait", world({ mine: [waiting(1)] }), []);
row("CI pending while a worker still runs (a push after the PR): wait", world({ mine: [waiting(1)], local: { 1: running() } }), []);
row("CI pending while stopping: keep the claim with its PR", world({ mine: [waiting(1)] }, { stopping: true }), []);

// Red PRs: retry while attempts are left, then escalate.
for (const retry of [0, 1, 2, 3]) {
  for (let attempt = 0; attempt <= retry; attempt += 1) {
    const left = attempt < retry;
    row(
      `red PR, attempt ${attempt} of retry limit ${retry}: ${left ? "retry" : "escalate"}`,
      world({ mine: [red(1, attempt)] }, { retry }),
      [left ? "retry#1" : "escalate#1"],
      (d) => {
        const a = d.actions[0]!;
        if (a.kind === "retry") {
          assert.equal(a.attempt, attempt + 1);
          assert.deepEqual(a.evidence, { kind: "ci", pr: 101, failing: ["ci"] });
          assert.equal(a.pr, 101);
        } else if (a.kind === "escalate") {
          assert.match(a.why, new RegExp(`failed ${attempt + 1} attempt`));
          assert.equal(a.pr, 101);
        }
      },
    );
  }
}
row("red PR retried while births are paused: the retry stands, no worker yet", world({ mine: [red(1)] }, { birthsPaused: true }), ["retry#1"], (d) =>
  assert.equal(only(d, "retry").startWorker, false),
);
row("red PR retried with births open: the next worker starts", world({ mine: [red(1)] }), ["retry#1"], (d) => assert.equal(only(d, "retry").startWorker, true));
row("red PR retried with no room: the retry stands, after running work", world({ mine: [red(1), mine(2), mine(3)], local: { 2: running(), 3: running() } }), [
  "retry#1",
]);
row("red PR while stopping, attempts left: retry recorded, then released", world({ mine: [red(1)] }, { stopping: true }), ["retry#1", "release#1"], (d) =>
  assert.equal(only(d, "retry").startWorker, false),
);
row("red PR while stopping, out of attempts: escalate", world({ mine: [red(1, 2)] }, { stopping: true }), ["escalate#1"]);

// Fixing forward: a red PR's next attempt continues on its branch, once per PR.
const fixWorld = (claim: MineClaim, local?: ClaimFacts, over: Partial<DecideInput> = {}): DecideInput =>
  world({ mine: [claim], ...(local ? { local: { 1: local } } : {}) }, { fixForward: true, ...over });
row(
  "red PR this attempt opened, fix_forward: the retry fixes it forward (PR kept, the branch continued)",
  fixWorld(red(1, 0, { prAttempt: 1 })),
  ["retry#1"],
  (d) => {
    const retry = only(d, "retry");
    assert.equal(retry.fix, true);
    assert.equal(retry.resume, true);
    assert.equal(retry.pr, 101);
    assert.equal(retry.startWorker, true);
    assert.deepEqual(retry.evidence, { kind: "ci", pr: 101, failing: ["ci"] });
  },
);
row("red PR an earlier attempt opened (its fix is red too): the retry starts fresh", fixWorld(red(1, 1, { prAttempt: 1 })), ["retry#1"], (d) =>
  assert.equal(only(d, "retry").fix, undefined),
);
row("red PR this attempt opened, fix_forward off: fresh", fixWorld(red(1, 0, { prAttempt: 1 }), undefined, { fixForward: false }), ["retry#1"], (d) =>
  assert.equal(only(d, "retry").fix, undefined),
);
row("red PR whose description names no attempt (an older PR): fresh", fixWorld(red(1, 0, { prAttempt: null })), ["retry#1"], (d) =>
  assert.equal(only(d, "retry").fix, undefined),
);
row("red PR on the last attempt, fix_forward: escalate", fixWorld(red(1, 2, { prAttempt: 3 })), ["escalate#1"]);
row(
  "red PR while stopping, fix_forward: fresh (no worker starts; the PR closes)",
  fixWorld(red(1, 0, { prAttempt: 1 }), undefined, { stopping: true }),
  ["retry#1", "release#1"],
  (d) => assert.equal(only(d, "retry").fix, undefined),
);
row(
  "a conflict the base made on a PR this attempt opened: fresh, not fixed",
  world(
    { mine: [waiting(1, { prAttempt: 1 })] },
    { fixForward: true, conflicts: new Map([[1, { pr: 101, files: ["a.ts"], source: "landing" as const, heldSeconds: 0, blockers: [] }]]) },
  ),
  ["retry#1"],
  (d) => assert.equal(only(d, "retry").fix, undefined),
);
row("the fix attempt's worker runs on the red PR: wait for it", fixWorld(red(1, 1, { prAttempt: 1 }), running()), [], (d) => assert.equal(d.workers, 1));
row("the fix attempt's worker hangs: end it and continue it", fixWorld(red(1, 1, { prAttempt: 1 }), running("kill")), ["kill#1", "recover#1"]);
row(
  "the fix attempt's worker hangs past the kill limit: a failed fix, fresh",
  fixWorld(red(1, 1, { prAttempt: 1 }), running("kill", { kills: 1 })),
  ["kill#1", "retry#1"],
  (d) => {
    assert.equal(only(d, "retry").fix, undefined);
    assert.deepEqual(only(d, "retry").evidence, { kind: "hung", kills: 2 });
  },
);
row("the fix attempt committed: push the fix to the PR, whose checks run again", fixWorld(red(1, 1, { prAttempt: 1 }), committed({ moved: true })), [
  "open_pr#1",
]);
row(
  "the fix attempt exited with no commits of its own (the PR's earlier ones only): a failed fix, fresh",
  fixWorld(red(1, 1, { prAttempt: 1 }), committed({ moved: false })),
  ["retry#1"],
  (d) => {
    assert.equal(only(d, "retry").fix, undefined);
    assert.deepEqual(only(d, "retry").evidence, { kind: "no_result", why: "the fix attempt added no commits to PR #101" });
  },
);
row("the fix attempt gave up: a failed fix, fresh, its verdict the evidence", fixWorld(red(1, 1, { prAttempt: 1 }), said("giving-up")), ["retry#1"], (d) =>
  assert.deepEqual(only(d, "retry").evidence, { kind: "verdict", verdict: "giving-up", reason: "giving-up because" }),
);
row(
  "the fix attempt was killed mid-commit (a stop): its half-done commits are not pushed",
  fixWorld(red(1, 1, { prAttempt: 1 }), committed({ moved: true, killed: true })),
  ["retry#1"],
);
row("the fix attempt's PR is red again after its push (no worker): fresh", fixWorld(red(1, 1, { prAttempt: 1 })), ["retry#1"], (d) =>
  assert.equal(only(d, "retry").fix, undefined),
);

// Running workers: leave them, or end a hung one.
for (const liveness of ["active", "busy", "stall_candidate"] as const) {
  row(`running worker ${liveness}: leave it`, world({ mine: [mine(1)], local: { 1: running(liveness) } }), []);
  row(`running worker ${liveness} while stopping: wait for it`, world({ mine: [mine(1)], local: { 1: running(liveness) } }, { stopping: true }), []);
}
row("hung worker, first kill: kill, then recover on the same claim", world({ mine: [mine(1)], local: { 1: running("kill") } }), ["kill#1", "recover#1"]);
row(
  "hung worker, second kill: kill, and the attempt failed (retry)",
  world({ mine: [mine(1)], local: { 1: running("kill", { kills: 1 }) } }),
  ["kill#1", "retry#1"],
  (d) => assert.deepEqual(only(d, "retry").evidence, { kind: "hung", kills: 2 }),
);
row("hung worker, second kill, out of attempts: kill and escalate", world({ mine: [mine(1, { attempt: 2 })], local: { 1: running("kill", { kills: 1 }) } }), [
  "kill#1",
  "escalate#1",
]);
row("hung worker with maxKills 1: the first kill fails the attempt", world({ mine: [mine(1)], local: { 1: running("kill") } }, { maxKills: 1 }), [
  "kill#1",
  "retry#1",
]);
row("hung worker with maxKills 3, second kill: recover again", world({ mine: [mine(1)], local: { 1: running("kill", { kills: 1 }) } }, { maxKills: 3 }), [
  "kill#1",
  "recover#1",
]);
row(
  "hung worker while births are paused: kill, the recovery waits",
  world({ mine: [mine(1)], local: { 1: running("kill") } }, { birthsPaused: true }),
  ["kill#1"],
  (d) => assert.equal(d.birthsHeld, "births are paused"),
);
row(
  "hung worker while stopping: kill, no recovery (the claim goes once the worker has)",
  world({ mine: [mine(1)], local: { 1: running("kill") } }, { stopping: true }),
  ["kill#1"],
);
row(
  "hung worker killed a second time while stopping: the retry is recorded, then released, never a birth",
  world({ mine: [mine(1)], local: { 1: running("kill", { kills: 1 }) } }, { stopping: true }),
  ["kill#1", "retry#1", "release#1"],
);
row(
  "a hung worker's retry takes the slot its kill freed, before the frontier",
  world({ mine: [mine(1)], local: { 1: running("kill", { kills: 1 }) }, ready: [ready(5)] }, { target: 1 }),
  ["kill#1", "retry#1"],
);

// Exited workers with commits: propose them.
row("exited with commits: open the PR", world({ mine: [mine(1)], local: { 1: committed() } }), ["open_pr#1"]);
row(
  "exited with commits and an already-satisfied verdict: the commits win",
  world({ mine: [mine(1)], local: { 1: committed({ verdict: { kind: "already-satisfied", reason: "x" } }) } }),
  ["open_pr#1"],
);
row("exited with commits while stopping: still proposed", world({ mine: [mine(1)], local: { 1: committed() } }, { stopping: true }), ["open_pr#1"]);
row("killed with commits while stopping: released, never proposed", world({ mine: [mine(1)], local: { 1: committed({ killed: true }) } }, { stopping: true }), [
  "release#1",
]);
row("exited with commits while births are paused: the PR still opens", world({ mine: [mine(1)], local: { 1: committed() } }, { birthsPaused: true }), [
  "open_pr#1",
]);

// Verdicts.
row(
  "already satisfied, the branch changes nothing: close as done",
  world({ mine: [mine(1)], local: { 1: said("already-satisfied", { changes: false }) } }),
  ["close_done#1"],
  (d) => assert.equal(only(d, "close_done").reason, "already-satisfied because"),
);
row(
  "already satisfied, but the branch changes files: refuted, retry",
  world({ mine: [mine(1)], local: { 1: said("already-satisfied", { changes: true }) } }),
  ["retry#1"],
  (d) =>
    assert.deepEqual(only(d, "retry").evidence, {
      kind: "verdict",
      verdict: "already-satisfied",
      reason: "the branch changes files, which refutes already-satisfied",
    }),
);
row(
  "already satisfied, refuted, out of attempts: escalate",
  world({ mine: [mine(1, { attempt: 2 })], local: { 1: said("already-satisfied", { changes: true }) } }),
  ["escalate#1"],
);
row("already satisfied with commits ahead (a restart): retry", world({ mine: [mine(1)], local: { 1: said("already-satisfied", { commitsAhead: 2 }) } }), [
  "retry#1",
]);
row(
  "already satisfied, read from the fleet's marker after a restart: close",
  world({ mine: [mine(1)], local: { 1: { ...said("already-satisfied"), worker: "exited" } } }),
  ["close_done#1"],
);
row("already satisfied while stopping: released, never closed", world({ mine: [mine(1)], local: { 1: said("already-satisfied") } }, { stopping: true }), [
  "release#1",
]);
row("giving up, attempts left: retry with the verdict as evidence", world({ mine: [mine(1)], local: { 1: said("giving-up") } }), ["retry#1"], (d) =>
  assert.deepEqual(only(d, "retry").evidence, { kind: "verdict", verdict: "giving-up", reason: "giving-up because" }),
);
row("giving up, out of attempts: escalate", world({ mine: [mine(1, { attempt: 2 })], local: { 1: said("giving-up") } }), ["escalate#1"]);
row("giving up with retry 0: escalate at once", world({ mine: [mine(1)], local: { 1: said("giving-up") } }, { retry: 0 }), ["escalate#1"]);
row(
  "blocked by an open issue: escalate the gap",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [7] }) } }),
  ["escalate#1"],
  (d) => assert.match(only(d, "escalate").why, /#7/),
);
row(
  "blocked by two open issues: both named",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7, 8], blockersOpen: [7, 8] }) } }),
  ["escalate#1"],
  (d) => assert.match(only(d, "escalate").why, /#7, #8/),
);
row(
  "blocked, every blocker closed: dispatch again on the claim",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [] }) } }),
  ["redispatch#1"],
);
row(
  "blocked, blockers closed, one re-dispatch so far: again",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [], redispatches: 1 }) } }),
  ["redispatch#1"],
);
row(
  "blocked after two free re-dispatches: escalate",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [], redispatches: 2 }) } }),
  ["escalate#1"],
);
row(
  "blocked, re-dispatch bound 5: the third is still free",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [], redispatches: 2 }) } }, { maxRedispatches: 5 }),
  ["redispatch#1"],
);
row("blocked on nothing anyone names: escalate the gap", world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [], blockersOpen: [] }) } }), [
  "escalate#1",
]);
row(
  "blocked, blockers closed, births paused: the re-dispatch waits",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [] }) } }, { birthsPaused: true }),
  [],
);
row(
  "blocked, blockers closed, no room: the re-dispatch waits",
  world({ mine: [mine(1), mine(2)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [] }), 2: running() } }, { target: 1 }),
  [],
);
row("blocked while stopping: released", world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [7] }) } }, { stopping: true }), [
  "release#1",
]);
row(
  "blocked escalations spend no attempt label: evidence is the verdict",
  world({ mine: [mine(1)], local: { 1: said("blocked", { blockers: [7], blockersOpen: [7] }) } }),
  ["escalate#1"],
  (d) => assert.deepEqual(only(d, "escalate").evidence, { kind: "verdict", verdict: "blocked", reason: "blocked because" }),
);

// Exited with nothing, and claims with no worker here.
row("exited with no commits and no verdict: a failed attempt", world({ mine: [mine(1)], local: { 1: nothing() } }), ["retry#1"], (d) =>
  assert.equal(only(d, "retry").evidence.kind, "no_result"),
);
row("exited with nothing, out of attempts: escalate", world({ mine: [mine(1, { attempt: 2 })], local: { 1: nothing() } }), ["escalate#1"]);
row("exited with nothing while stopping: released", world({ mine: [mine(1)], local: { 1: nothing() } }, { stopping: true }), ["release#1"]);
row("no worker here (a restart): recover by continuation", world({ mine: [mine(1)], local: { 1: noWorker() } }), ["recover#1"]);
row("a claim with no local facts at all: recover", world({ mine: [mine(1)] }), ["recover#1"]);
row("no worker here while births are paused: recovery waits", world({ mine: [mine(1)] }, { birthsPaused: true }), []);
row("no worker here while stopping: released", world({ mine: [mine(1)] }, { stopping: true }), ["release#1"]);
row("three dead claims, room for two: two recover, first come first", world({ mine: [mine(1), mine(2), mine(3)] }), ["recover#1", "recover#2"]);
row("a recovery comes before a new dispatch", world({ mine: [mine(1)], ready: [ready(5)] }, { target: 1 }), ["recover#1"]);

// Stale claims of dead peers.
row("stale claim on an open issue, room: reclaim and continue", world({ stale: [stale(4)] }), ["reclaim#4"], (d) => {
  const r = only(d, "reclaim");
  assert.deepEqual([r.thenRelease, r.from, r.sha], [false, "peer", "stale4"]);
});
row("stale claim on a closed issue: reclaim and drop it (a phantom lock)", world({ stale: [stale(4, { issueOpen: false })] }), ["reclaim#4"], (d) =>
  assert.equal(only(d, "reclaim").thenRelease, true),
);
row(
  "phantom lock with no room: still dropped (it takes no slot)",
  world({ stale: [stale(4, { issueOpen: false })], mine: [mine(1), mine(2)], local: { 1: running(), 2: running() } }),
  ["reclaim#4"],
);
row("phantom lock while births are paused: still dropped", world({ stale: [stale(4, { issueOpen: false })] }, { birthsPaused: true }), ["reclaim#4"]);
row("phantom lock while stopping: left for a later run", world({ stale: [stale(4, { issueOpen: false })] }, { stopping: true }), []);
row("stale claim on an open issue while births are paused: left", world({ stale: [stale(4)] }, { birthsPaused: true }), []);
row("stale claim on an open issue, no room: left", world({ stale: [stale(4)], mine: [mine(1), mine(2)], local: { 1: running(), 2: running() } }), []);
row("stale claims come before the frontier", world({ stale: [stale(4)], ready: [ready(5)] }, { target: 1 }), ["reclaim#4"]);
row(
  "stale claim with an unknown owner: reclaimed, from nobody named",
  world({ stale: [stale(4, { instance: null, reason: "unreadable" })] }),
  ["reclaim#4"],
  (d) => assert.equal(only(d, "reclaim").from, null),
);

// The frontier.
row("frontier, room for two: dispatch two in order", world({ ready: [ready(5), ready(6), ready(7)] }), ["dispatch#5", "dispatch#6"]);
row("frontier, target 0: dispatch nothing", world({ ready: [ready(5)] }, { target: 0 }), []);
row("frontier, target 5, two issues: dispatch both", world({ ready: [ready(5), ready(6)] }, { target: 5 }), ["dispatch#5", "dispatch#6"], (d) =>
  assert.equal(d.workers, 2),
);
row("frontier issue released earlier keeps its attempt count", world({ ready: [ready(5, 1)] }), ["dispatch#5"], (d) =>
  assert.equal(only(d, "dispatch").attempt, 1),
);
row("frontier while births are paused: nothing, and why", world({ ready: [ready(5)] }, { birthsPaused: true }), [], (d) =>
  assert.equal(d.birthsHeld, "births are paused"),
);
row("frontier while stopping: nothing, and why", world({ ready: [ready(5)] }, { stopping: true }), [], (d) => assert.equal(d.birthsHeld, "stopping"));
row("frontier with every slot busy: nothing", world({ ready: [ready(5)], mine: [mine(1), mine(2)], local: { 1: running(), 2: running() } }), [], (d) =>
  assert.equal(d.workers, 2),
);
row("frontier with one slot busy: one dispatch", world({ ready: [ready(5), ready(6)], mine: [mine(1)], local: { 1: running() } }), ["dispatch#5"]);
row("frontier beside a green PR: the PR does not take a slot", world({ ready: [ready(5), ready(6)], mine: [green(1)] }), [
  "land#1",
  "dispatch#5",
  "dispatch#6",
]);
row("frontier beside a PR in CI: it takes no slot either", world({ ready: [ready(5), ready(6)], mine: [waiting(1)] }), ["dispatch#5", "dispatch#6"]);
row("empty world: nothing to do, births not held", world({}), [], (d) => {
  assert.equal(d.birthsHeld, null);
  assert.equal(d.workers, 0);
});

// Ordering across kinds.
row(
  "one of each: releases, landings and failures first, then births by seniority",
  world(
    {
      mine: [mine(1, { issueOpen: false }), green(2), red(3), mine(4)],
      local: { 4: committed() },
      stale: [stale(8)],
      ready: [ready(9)],
    },
    { target: 3 },
  ),
  ["release#1", "land#2", "open_pr#4", "retry#3", "reclaim#8", "dispatch#9"],
);
// A landing re-reads the open-PR list (free while unchanged): a PR opened earlier in the pass
// would make that read cost a request (issue 11, "Fewer requests").
row(
  "a landing goes before a PR opened in the same pass, whatever the claim order",
  world({
    mine: [mine(1), green(2), mine(3, { issueOpen: false })],
    local: { 1: committed() },
  }),
  ["release#3", "land#2", "open_pr#1"],
);
row(
  "a stale claim carried by the fleet's open PR: reclaimed with no slot taken",
  world({ stale: [stale(7, { pr: 107 }), stale(8)], ready: [ready(9)] }, { target: 1 }),
  ["reclaim#7", "reclaim#8"],
  (d) => assert.equal(d.workers, 1),
);
row(
  "stale claims beyond the room: the one with a PR is still reclaimed",
  world({ mine: [mine(1)], local: { 1: running() }, stale: [stale(7), stale(8, { pr: 108 })] }, { target: 1 }),
  ["reclaim#8"],
);
// The fleet's own open PR whose issue has no claim: claimed again, taking no worker slot.
row(
  "the fleet's PR with no claim: adopt it, and the slot still goes to the frontier",
  world({ orphans: [orphan(6)], ready: [ready(9)] }, { target: 1 }),
  ["adopt#6", "dispatch#9"],
  (d) => {
    assert.deepEqual(only(d, "adopt"), { kind: "adopt", issue: 6, pr: 106, head: "head6", headRef: "afk/6-x" });
    assert.equal(d.workers, 1, "adoption starts no worker");
  },
);
row("the fleet's PR with no claim, while stopping: left for a running fleet", world({ orphans: [orphan(6)] }, { stopping: true }), []);
row("the fleet's PR with no claim, births paused: no new claim", world({ orphans: [orphan(6)] }, { birthsPaused: true }), []);
row("the fleet's PR with no claim, target 0: no new claim", world({ orphans: [orphan(6)] }, { target: 0 }), []);
row("births beyond the room are cut from the end: the frontier goes first", world({ mine: [red(3)], stale: [stale(8)], ready: [ready(9)] }, { target: 2 }), [
  "retry#3",
  "reclaim#8",
]);
row(
  "a full house while stopping: only terminal and drain moves",
  world(
    {
      mine: [mine(1, { issueOpen: false }), green(2), red(3), mine(4), waiting(5)],
      local: { 4: running() },
      stale: [stale(8)],
      ready: [ready(9)],
    },
    { stopping: true },
  ),
  ["release#1", "land#2", "retry#3", "release#3"],
);

// Epics whose sub-issues are all closed (doneEpics): closed, listing them, needing no slot.
row(
  "an epic whose sub-issues all closed: close it, and the slot still goes to the frontier",
  { ...world({ ready: [ready(9)] }, { target: 1 }), epicsDone: [{ issue: 4, children: [5, 6] }] },
  ["close_epic#4", "dispatch#9"],
  (d) => assert.deepEqual(only(d, "close_epic").children, [5, 6]),
);
row("an epic done while stopping: left for a running fleet", { ...world({}, { stopping: true }), epicsDone: [{ issue: 4, children: [5] }] }, []);

describe("decide, the table", () => {
  for (const r of rows) {
    it(r.name, () => {
      const decision = decide(r.in);
      assert.deepEqual(decision.actions.map(shown), r.do);
      r.check?.(decision);
    });
  }

  it("has well over a hundred rows and covers every action kind", () => {
    assert.ok(rows.length > 100, `${rows.length} rows`);
    const kinds = new Set(rows.flatMap((r) => decide(r.in).actions.map((a) => a.kind)));
    assert.deepEqual([...kinds].sort(), [
      "adopt",
      "await_review",
      "close_done",
      "close_epic",
      "dispatch",
      "escalate",
      "hold",
      "kill",
      "land",
      "land_train",
      "open_pr",
      "reclaim",
      "recover",
      "redispatch",
      "release",
      "retry",
      "review",
      "review_result",
    ]);
  });
});

describe("failureAction, what a refused landing becomes", () => {
  const claim = { issue: 1, sha: "c", pr: 9, attempt: 0 };
  const gate = { kind: "gate" as const, summary: "conflicts in a.ts", excerpt: "a.ts" };
  it("retries with the gate's evidence while attempts are left", () => {
    assert.deepEqual(failureAction(claim, { retry: 1, birthsPaused: false, stopping: false }, gate), {
      kind: "retry",
      issue: 1,
      sha: "c",
      attempt: 1,
      pr: 9,
      evidence: gate,
      startWorker: true,
    });
  });
  it("escalates once they are spent", () => {
    const a = failureAction({ ...claim, attempt: 1 }, { retry: 1, birthsPaused: false, stopping: false }, gate);
    assert.equal(a.kind, "escalate");
  });
  it("starts no worker while births are held", () => {
    const a = failureAction(claim, { retry: 1, birthsPaused: true, stopping: false }, gate);
    assert.equal(a.kind === "retry" && a.startWorker, false);
  });
});

describe("boardPhase", () => {
  const cases: Array<[MineClaim["status"], boolean, string]> = [
    ["awaiting_merge", false, "awaiting_merge"],
    ["awaiting_review", false, "awaiting_review"],
    ["changes_requested", false, "claimed"],
    ["awaiting_ci", false, "pr_open"],
    ["failure", true, "ci_failed"],
    ["no_pr", true, "coding"],
    ["no_pr", false, "claimed"],
  ];
  for (const [status, worker, phase] of cases) {
    it(`${status}${worker ? " with a worker here" : ""}: ${phase}`, () => assert.equal(boardPhase({ status }, worker), phase));
  }
});

describe("doneEpics: which epics close", () => {
  const epic = (number: number, total: number, completed: number | undefined, subIssues: number[] = []) => ({
    number,
    id: number,
    title: `e${number}`,
    body: "",
    labels: [],
    author: "a",
    assignees: [],
    milestone: null,
    blockedBy: [],
    subIssues,
    subIssueCount: total,
    parent: null,
    ...(completed === undefined ? {} : { subIssuesCompleted: completed }),
  });
  const excluded = (number: number, kind: "epic" | "not_selected" | "human_reserved") => ({
    number,
    text: "",
    reason:
      kind === "epic"
        ? { kind, via: "sub_issues" as const, count: 1 }
        : kind === "human_reserved"
          ? { kind, via: "hold_label" as const, label: "afk-hold" }
          : { kind },
  });
  const cases: Array<[string, Parameters<typeof doneEpics>, number[]]> = [
    ["picked, all closed: closes", [[epic(1, 2, 2, [3, 2])], [excluded(1, "epic")], []], [1]],
    ["picked, one still open: stays", [[epic(1, 2, 1)], [excluded(1, "epic")], []], []],
    ["picked, the listing gave no completed count: stays", [[epic(1, 2, undefined)], [excluded(1, "epic")], []], []],
    ["not picked by any selector: stays", [[epic(1, 2, 2)], [excluded(1, "not_selected")], []], []],
    ["named by a selector's epic facet: closes", [[epic(1, 1, 1)], [excluded(1, "not_selected")], [{ epic: 1 }]], [1]],
    ["named, but a human holds it: stays", [[epic(1, 1, 1)], [excluded(1, "human_reserved")], [{ epic: 1 }]], []],
    ["an epic by label with no sub-issues: stays", [[epic(1, 0, 0)], [excluded(1, "epic")], []], []],
  ];
  for (const [name, args, want] of cases)
    it(name, () =>
      assert.deepEqual(
        doneEpics(...args).map((e) => e.issue),
        want,
      ),
    );
  it("lists the children in order", () => assert.deepEqual(doneEpics([epic(1, 2, 2, [9, 3])], [excluded(1, "epic")], [])[0]!.children, [3, 9]));
});
