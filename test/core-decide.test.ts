// decide, table-tested for the rows the fleet suite found wrong: one row per case, named after it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decide, type DecideInput, type LocalClaim } from "../server/state/decide.js";
import type { MineClaim } from "../server/state/inflight.js";
import { mineClaim } from "./support/snapshots.js";
import type { WorkingSet } from "../server/state/rebuild.js";

const claim = mineClaim;

function input(mine: MineClaim[], local: Record<number, LocalClaim>, over: Partial<DecideInput> = {}): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "2026-01-01T00:00:00Z",
    frontier: { dispatch: [], excluded: [] },
    mine,
    peer_live: [],
    stale: [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
  } as unknown as WorkingSet;
  return { set, local: new Map(Object.entries(local).map(([k, v]) => [Number(k), v])), target: 2, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...over };
}

const blocked = (blockers: number[], open: number[]): LocalClaim => ({
  worker: "exited",
  outcome: "verdict",
  verdict: { kind: "blocked", reason: "needs it" },
  blockers,
  blockersOpen: open,
  idleSeconds: Number.POSITIVE_INFINITY,
});

const finished = (killed: boolean): LocalClaim => ({ worker: "exited", outcome: "commits", commitsAhead: 1, changes: true, verdict: null, killed, idleSeconds: Number.POSITIVE_INFINITY });

const rows: { name: string; in: DecideInput; kinds: string[] }[] = [
  { name: "blocked by an open issue nobody linked: escalate the gap", in: input([claim(1)], { 1: blocked([7], [7]) }), kinds: ["escalate"] },
  { name: "blocked, every named blocker closed now: dispatch again on the same claim", in: input([claim(1)], { 1: blocked([7], []) }), kinds: ["redispatch"] },
  {
    name: "blocked again after two free re-dispatches: escalate instead of looping",
    in: input([claim(1)], { 1: { ...blocked([7], []), redispatches: 2 } }),
    kinds: ["escalate"],
  },
  { name: "blocked on nothing anyone can name: escalate, never an endless redispatch", in: input([claim(1)], { 1: blocked([], []) }), kinds: ["escalate"] },
  { name: "stopping, a worker that finished on its own: its commits become a PR", in: input([claim(1)], { 1: finished(false) }, { stopping: true }), kinds: ["open_pr"] },
  { name: "stopping, a killed worker's commits: release, never proposed", in: input([claim(1)], { 1: finished(true) }, { stopping: true }), kinds: ["release"] },
  {
    name: "stopping, a red PR with attempts left: the retry is recorded, then the claim between two attempts is released",
    in: input([claim(1, { status: "failure", pr: 9, failing: ["ci"] })], {}, { stopping: true }),
    kinds: ["retry", "release"],
  },
  {
    name: "stopping, a hung worker killed with attempts left: release after the retry, never a birth",
    in: input([claim(1)], { 1: { worker: "running", liveness: "kill", kills: 1 } }, { stopping: true }),
    kinds: ["kill", "retry", "release"],
  },
  {
    name: "stopping, a red PR out of attempts: escalate (terminal, releases the claim itself)",
    in: input([claim(1, { status: "failure", pr: 9, failing: ["ci"], attempt: 2 })], {}, { stopping: true }),
    kinds: ["escalate"],
  },
  { name: "stopping, a worker still running: wait for it", in: input([claim(1)], { 1: { worker: "running", liveness: "active" } }, { stopping: true }), kinds: [] },
];

describe("decide", () => {
  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(
        decide(row.in).actions.map((a) => a.kind),
        row.kinds,
      );
    });
  }
});
