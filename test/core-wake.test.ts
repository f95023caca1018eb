// The wake plan (what the loop watches between ticks, and when it ticks at once) and the watch
// cadence, one row per case.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { planWake, watchDelay, type WakeInput, type WakePlan } from "../server/state/wake.js";

type Claim = WakeInput["claims"][number];

const ci = (issue: number, head = `h${issue}`): Claim => ({ issue, status: "awaiting_ci", pr: 100 + issue, head, issueOpen: true });
const green = (issue: number): Claim => ({ issue, status: "awaiting_merge", pr: 100 + issue, head: `h${issue}`, issueOpen: true });
const coding = (issue: number): Claim => ({ issue, status: "no_pr", pr: null, head: null, issueOpen: true });
const red = (issue: number): Claim => ({ issue, status: "failure", pr: 100 + issue, head: `h${issue}`, issueOpen: true });

const base: WakeInput = { gateMode: "required", autoMerge: true, claims: [], pushed: [], settled: [], blocked: [], landed: false, stopping: false };

interface Row {
  name: string;
  input: Partial<WakeInput>;
  expect: Omit<WakePlan, "why">;
}

const rows: Row[] = [
  { name: "idle: nothing held, nothing watched", input: {}, expect: { now: false, heads: [], base: false } },
  {
    name: "coding only: nothing to watch (the worker's exit is the event)",
    input: { claims: [coding(1), coding(2)] },
    expect: { now: false, heads: [], base: false },
  },
  {
    name: "required CI running on a PR: its head is watched",
    input: { claims: [ci(3), coding(1)] },
    expect: { now: false, heads: [{ issue: 3, pr: 103, head: "h3" }], base: false },
  },
  {
    name: "a PR opened this tick: its pushed head is watched",
    input: { claims: [coding(4)], pushed: [{ issue: 4, pr: 104, head: "new4" }] },
    expect: { now: false, heads: [{ issue: 4, pr: 104, head: "new4" }], base: false },
  },
  {
    name: "a synced head replaces the head the snapshot saw",
    input: { claims: [ci(5, "old5"), green(6)], pushed: [{ issue: 6, pr: 106, head: "synced6" }] },
    expect: {
      now: false,
      heads: [
        { issue: 5, pr: 105, head: "old5" },
        { issue: 6, pr: 106, head: "synced6" },
      ],
      base: false,
    },
  },
  { name: "red checks: nothing to watch (the retry is decided already)", input: { claims: [red(7)] }, expect: { now: false, heads: [], base: false } },
  {
    name: "a landing finished and a green PR waits: tick now",
    input: { claims: [green(1), green(2)], landed: true, settled: [1] },
    expect: { now: true, heads: [], base: false },
  },
  {
    name: "a landing finished and the next green PR was synced in the same tick: watch its new head, no tick now",
    input: { claims: [green(1), green(2), green(3)], landed: true, settled: [1], slotHeld: true, pushed: [{ issue: 2, pr: 102, head: "synced2" }] },
    expect: { now: false, heads: [{ issue: 2, pr: 102, head: "synced2" }], base: false },
  },
  {
    name: "a landing finished and nothing else is green: watch what runs",
    input: { claims: [green(1), ci(2)], landed: true, settled: [1] },
    expect: { now: false, heads: [{ issue: 2, pr: 102, head: "h2" }], base: false },
  },
  {
    name: "merges held (no auto_merge): no immediate tick, checks still watched",
    input: { autoMerge: false, claims: [green(1), green(2), ci(3)], landed: true },
    expect: { now: false, heads: [{ issue: 3, pr: 103, head: "h3" }], base: false },
  },
  {
    name: "local gate: a PR opened this tick lands at once",
    input: { gateMode: "local", claims: [coding(1)], pushed: [{ issue: 1, pr: 101, head: "x" }] },
    expect: { now: true, heads: [], base: false },
  },
  {
    name: "local gate: a PR opened while a landing runs in the background waits for its end (which wakes the loop)",
    input: { gateMode: "local", claims: [green(1), coding(2)], pushed: [{ issue: 2, pr: 102, head: "x" }], landingInFlight: true },
    expect: { now: false, heads: [], base: false },
  },
  {
    name: "a landing finished while another runs in the background: no tick now",
    input: { claims: [green(1), green(2), green(3)], landed: true, settled: [1], landingInFlight: true },
    expect: { now: false, heads: [], base: false },
  },
  {
    name: "local gate: checks are never watched",
    input: { gateMode: "local", claims: [ci(1)] },
    expect: { now: false, heads: [], base: false },
  },
  {
    name: "the landing lock is held by a peer: watch the base",
    input: { claims: [green(1)], blocked: [1] },
    expect: { now: false, heads: [], base: true },
  },
  {
    name: "stopping: no immediate landing, no base watch",
    input: { stopping: true, claims: [green(1), green(2)], landed: true, settled: [1], blocked: [2] },
    expect: { now: false, heads: [], base: false },
  },
  {
    name: "a closed issue's PR is not watched",
    input: { claims: [{ ...ci(9), issueOpen: false }] },
    expect: { now: false, heads: [], base: false },
  },
  {
    name: "a retried claim (settled) is not watched even if pushed earlier",
    input: { claims: [ci(8)], settled: [8], pushed: [{ issue: 8, pr: 108, head: "n8" }] },
    expect: { now: false, heads: [], base: false },
  },
];

describe("planWake", () => {
  for (const row of rows) {
    it(row.name, () => {
      const plan = planWake({ ...base, ...row.input });
      assert.deepEqual({ now: plan.now, heads: plan.heads, base: plan.base }, row.expect);
      assert.ok(plan.why.length > 0);
    });
  }
});

describe("watchDelay", () => {
  const cases: Array<{ name: string; watch: number | undefined; polls: number[] }> = [
    { name: "default 10 s: soon after a push, then backing off to the cap", watch: undefined, polls: [0.5, 0.5, 1, 1, 2, 2, 4, 4, 8, 8, 10, 10, 10] },
    { name: "a 3 s cap", watch: 3, polls: [0.5, 0.5, 1, 1, 2, 2, 3, 3] },
    { name: "a 1 s cap watches every second after the first two looks", watch: 1, polls: [0.5, 0.5, 1, 1, 1] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(
        c.polls.map((_, i) => watchDelay(i, c.watch === undefined ? {} : { watch_seconds: c.watch })),
        c.polls,
      );
    });
  }
});
