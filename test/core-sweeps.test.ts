// The host's housekeeping (server/state/decide/sweeps.ts) as tables: the garbage sweep's
// period, the breaker's sweep, landings a crash left unsettled, merged issues waiting for
// GitHub's close, workers whose claim is gone, checkpoints due, verdicts to post, which claims
// are set aside, and the order the sweeps apply in. Pure: facts in, sweeps out.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decideSweeps, settleMerged, setAside, type Sweep, type SweepFacts } from "../server/state/decide/sweeps.js";
import { decide, type DecideInput } from "../server/state/decide.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { mineClaim } from "./support/snapshots.js";

const NOW = Date.parse("2026-01-01T12:00:00Z");
const GRACE = 30_000;
const claim = (issue: number, attempt = 0) => ({ issue, sha: `claim${issue}`, attempt });

function facts(over: Partial<SweepFacts> = {}): SweepFacts {
  return {
    now: NOW,
    garbage: { lastAt: NOW - 1_000, everyMs: 60_000 },
    breakerOwned: new Set(),
    mine: [],
    landed: [],
    closing: new Map(),
    graceMs: GRACE,
    open: new Set(),
    force: false,
    runs: [],
    checkpointEveryMs: 300_000,
    verdicts: [],
    ...over,
  };
}
const shown = (s: Sweep): string => {
  switch (s.kind) {
    case "collect_garbage":
      return s.kind;
    case "breaker_sweep":
      return `${s.kind}:${s.claims.map((c) => `${c.issue}@${c.sha ?? "-"}`).join(",")}`;
    case "settle_merged":
      return `${s.kind}#${s.issue}:${s.step}`;
    case "drop_worker":
      return `${s.kind}#${s.issue}:${s.kill ? "kill" : "forget"}`;
    default:
      return `${s.kind}#${s.issue}`;
  }
};
const worker = (issue: number, over: Partial<SweepFacts["runs"][number]> = {}) => ({
  issue,
  role: "worker" as const,
  exited: false,
  startedAt: NOW - 1_000,
  lastCheckpointAt: null,
  ...over,
});
const verdict = { kind: "blocked" as const, reason: "waits on #9", blockedBy: [9] };

const table: Array<[string, SweepFacts, string[], number[]]> = [
  // The garbage sweep: at most once per period.
  ["garbage never swept: due now", facts({ garbage: { lastAt: null, everyMs: 60_000 } }), ["collect_garbage"], []],
  ["garbage swept within the period: not yet", facts(), [], []],
  ["garbage period up: due", facts({ garbage: { lastAt: NOW - 60_000, everyMs: 60_000 } }), ["collect_garbage"], []],
  // The breaker's sweep owns its issues: set aside from every decision.
  [
    "a trip owns #3 (claimed) and #4 (not): one sweep, #3's claim with its sha",
    facts({ breakerOwned: new Set([4, 3]), mine: [claim(3), claim(5)] }),
    ["breaker_sweep:3@claim3,4@-"],
    [3, 4],
  ],
  [
    "a breaker-owned issue's worker is the breaker's to end, not dropped",
    facts({ breakerOwned: new Set([3]), mine: [claim(3)], runs: [worker(3)] }),
    ["breaker_sweep:3@claim3"],
    [3],
  ],
  // Landings a crash left unsettled: wrapped up, then settled as a merge of ours past its grace.
  [
    "a landed PR with our claim and its issue open: wrap-up, then close and release",
    facts({ mine: [claim(5, 1)], landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:59:59Z" }], open: new Set([5]) }),
    ["wrap_up_recovered#5", "settle_merged#5:close"],
    [5],
  ],
  [
    "a landed PR whose issue GitHub closed meanwhile: wrap-up, release",
    facts({ mine: [claim(5)], landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:00:00Z" }] }),
    ["wrap_up_recovered#5", "settle_merged#5:release"],
    [5],
  ],
  ["a landed PR without our claim: nothing to wrap up", facts({ landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:00:00Z" }] }), [], []],
  [
    "a landed PR already waiting for its close: not wrapped up twice",
    facts({
      mine: [claim(5)],
      landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:00:00Z" }],
      closing: new Map([[5, { pr: 105, claimSha: "claim5", mergedAt: NOW - 1_000 }]]),
      open: new Set([5]),
    }),
    [],
    [5],
  ],
  [
    "a landed PR the breaker owns: the breaker's",
    facts({ breakerOwned: new Set([5]), mine: [claim(5)], landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:00:00Z" }] }),
    ["breaker_sweep:5@claim5"],
    [5],
  ],
  // Merged issues GitHub closes itself.
  [
    "merged, GitHub closed it: release",
    facts({ mine: [claim(6)], closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - 1_000 }]]) }),
    ["settle_merged#6:release"],
    [6],
  ],
  [
    "merged, still open inside the grace: it waits, set aside",
    facts({ mine: [claim(6)], closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - 1_000 }]]), open: new Set([6]) }),
    [],
    [6],
  ],
  [
    "merged, still open past the grace: close it, then release",
    facts({ mine: [claim(6)], closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - GRACE }]]), open: new Set([6]) }),
    ["settle_merged#6:close"],
    [6],
  ],
  [
    "merged, still open, a stop: close at once",
    facts({ force: true, mine: [claim(6)], closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - 1_000 }]]), open: new Set([6]) }),
    ["settle_merged#6:close"],
    [6],
  ],
  [
    "merged, the claim was taken over (another sha): forget it, decide on the claim",
    facts({
      mine: [{ issue: 6, sha: "peer", attempt: 0 }],
      closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - 1_000 }]]),
      open: new Set([6]),
    }),
    ["settle_merged#6:forget"],
    [],
  ],
  // Workers whose claim is gone.
  ["a running worker with no claim of ours: end it and forget it", facts({ runs: [worker(7)] }), ["drop_worker#7:kill"], []],
  ["an exited worker with no claim: forget it", facts({ runs: [worker(7, { exited: true })] }), ["drop_worker#7:forget"], []],
  [
    "a worker of a merged claim waiting to settle: dropped",
    facts({ mine: [claim(6)], closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - 1_000 }]]), open: new Set([6]), runs: [worker(6)] }),
    ["drop_worker#6:kill"],
    [6],
  ],
  // Checkpoints.
  [
    "a running worker past its period: checkpoint at its claim",
    facts({ mine: [claim(8)], runs: [worker(8, { startedAt: NOW - 300_000 })] }),
    ["checkpoint#8"],
    [],
  ],
  [
    "a running worker inside its period since the last checkpoint: none",
    facts({ mine: [claim(8)], runs: [worker(8, { startedAt: NOW - 900_000, lastCheckpointAt: NOW - 1_000 })] }),
    [],
    [],
  ],
  ["a reviewer is never checkpointed", facts({ mine: [claim(8)], runs: [worker(8, { role: "reviewer", startedAt: NOW - 900_000 })] }), [], []],
  ["an exited worker is not checkpointed periodically", facts({ mine: [claim(8)], runs: [worker(8, { exited: true, startedAt: NOW - 900_000 })] }), [], []],
  // Verdicts.
  [
    "an exited worker's verdict not yet posted: post it",
    facts({ mine: [claim(9)], verdicts: [{ issue: 9, attempt: 1, verdict, posted: false }] }),
    ["post_verdict#9"],
    [],
  ],
  ["a verdict already posted for this attempt: not again", facts({ mine: [claim(9)], verdicts: [{ issue: 9, attempt: 1, verdict, posted: true }] }), [], []],
  // Order: garbage, breaker, wrap-ups, settles, drops, checkpoints, verdicts.
  [
    "every sweep at once, in the order they apply",
    facts({
      garbage: { lastAt: null, everyMs: 1 },
      breakerOwned: new Set([3]),
      mine: [claim(3), claim(5), claim(6), claim(8), claim(9)],
      landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:00:00Z" }],
      closing: new Map([[6, { pr: 106, claimSha: "claim6", mergedAt: NOW - 1_000 }]]),
      runs: [worker(7), worker(8, { startedAt: NOW - 300_000 })],
      verdicts: [{ issue: 9, attempt: 0, verdict, posted: false }],
    }),
    [
      "collect_garbage",
      "breaker_sweep:3@claim3",
      "wrap_up_recovered#5",
      "settle_merged#6:release",
      "settle_merged#5:release",
      "drop_worker#7:kill",
      "checkpoint#8",
      "post_verdict#9",
    ],
    [3, 5, 6],
  ],
];

describe("sweeps: the host's housekeeping", () => {
  for (const [name, f, want, aside] of table) {
    it(name, () => {
      assert.deepEqual(decideSweeps(f).map(shown), want);
      assert.deepEqual(
        [...setAside(f)].sort((a, b) => a - b),
        aside,
      );
    });
  }

  it("a recovered landing settles from a merge time past the grace, never later than the merge itself", () => {
    const [early] = decideSweeps(facts({ mine: [claim(5)], landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T11:00:00Z" }] }));
    const [recent] = decideSweeps(facts({ mine: [claim(5)], landed: [{ issue: 5, pr: 105, mergedAt: "2026-01-01T12:00:00Z" }] }));
    assert.equal(early?.kind === "wrap_up_recovered" && early.mergedAt, Date.parse("2026-01-01T11:00:00Z"));
    assert.equal(recent?.kind === "wrap_up_recovered" && recent.mergedAt, NOW - GRACE);
  });

  it("settleMerged alone: one step per waiting claim, in the order they began to wait", () => {
    const waiting = new Map([
      [2, { pr: 102, claimSha: "claim2", mergedAt: NOW - GRACE }],
      [1, { pr: 101, claimSha: "claim1", mergedAt: NOW }],
    ]);
    const steps = settleMerged(waiting, [claim(1), claim(2)], new Set([1, 2]), NOW, GRACE, false);
    assert.deepEqual(
      steps.map((s) => `${s.issue}:${s.step}:${s.waitedMs}`),
      [`2:close:${GRACE}`],
    );
  });

  it("decide sets aside what the sweeps own: no release for a breaker-owned claim on a closed issue", () => {
    const set = {
      repo: "o/r",
      instance: "me",
      now: "",
      frontier: { dispatch: [], excluded: [] },
      mine: [mineClaim(3, { sha: "claim3", issueOpen: false }), mineClaim(4, { sha: "claim4", issueOpen: false })],
      peer_live: [],
      stale: [],
      lease: { fresh: true, heartbeatAt: null },
      cycles: [],
      orphans: [],
    } as unknown as WorkingSet;
    const input: DecideInput = {
      set,
      local: new Map(),
      target: 1,
      retry: 1,
      autoMerge: true,
      birthsPaused: false,
      stopping: false,
      idleGraceSeconds: 60,
      sweeps: facts({ breakerOwned: new Set([3]), mine: [claim(3), claim(4)] }),
    };
    const d = decide(input);
    assert.deepEqual(
      d.actions.map((a) => `${a.kind}#${a.issue}`),
      ["release#4"],
    );
    assert.deepEqual(d.sweeps.map(shown), ["breaker_sweep:3@claim3"]);
  });
});
