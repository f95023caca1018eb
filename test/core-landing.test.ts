// The landing policy (server/state/decide/landing.ts) as tables: the train size (trainMax by
// strategy and merge queue, trains off), when trains go off, inline or in the background, the
// rules of a landing's turn in the pass (a landing in flight, one landing move per tick under
// required CI, the landing slot, a conflict seen earlier in the pass), and the train's riders.
// A new landing rule is a row here. Pure: no forge, no git.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decide, type Action, type DecideInput, type Decision } from "../server/state/decide.js";
import { landingTurn, trainMax, trainRiders, trainSize, trainsOffAfter, type LandingPass } from "../server/state/decide/landing.js";
import type { MineClaim } from "../server/state/inflight.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { mineClaim } from "./support/snapshots.js";

const green = (issue: number): MineClaim => mineClaim(issue, { sha: `claim${issue}`, status: "awaiting_merge", pr: 100 + issue, head: `head${issue}` });
const waiting = (issue: number): MineClaim => mineClaim(issue, { sha: `claim${issue}`, status: "awaiting_ci", pr: 100 + issue, head: `head${issue}` });

function world(mine: MineClaim[], over: Partial<DecideInput> = {}): DecideInput {
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
    orphans: [],
  } as unknown as WorkingSet;
  return { set, local: new Map(), target: 2, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...over };
}
const shown = (d: Decision): string[] => d.actions.map((a) => `${a.kind}#${a.issue}`);
const lands = (d: Decision): Array<Extract<Action, { kind: "land" }>> => d.actions.filter((a): a is Extract<Action, { kind: "land" }> => a.kind === "land");

describe("train size: trainMax and trains off", () => {
  const cfg = (strategy: string, max = 8) => ({ landing: { strategy, train: { max } } });
  const table: Array<[string, number, number]> = [
    ["push lands by fast-forward: up to landing.train.max", trainMax(cfg("push"), {}), 8],
    ["auto: up to landing.train.max", trainMax(cfg("auto"), { mergeQueue: false }), 8],
    ["squash through the merge API: one at a time", trainMax(cfg("squash"), {}), 1],
    ["merge through the merge API: one at a time", trainMax(cfg("merge"), { mergeQueue: false }), 1],
    ["squash under a merge queue: the queue takes up to max at once", trainMax(cfg("squash", 5), { mergeQueue: true }), 5],
    ["trains on: the configured size", trainSize({ trainMax: 8, trainsOff: null }), 8],
    ["trains off (CI never ran on one): one at a time", trainSize({ trainMax: 8, trainsOff: "no CI ran on a train" }), 1],
    ["no trainMax given: one at a time", trainSize({}), 1],
  ];
  for (const [name, got, want] of table) it(name, () => assert.equal(got, want));
});

describe("trains go off when CI never reported on a train", () => {
  const table: Array<[string, Parameters<typeof trainsOffAfter>[0], string | null]> = [
    ["a train whose CI ran: trains stay as they are", { ciSilent: false, members: [{ outcome: "merged" }] }, null],
    [
      "CI silent: the waiting member's reason",
      { ciSilent: true, members: [{ outcome: "merged" }, { outcome: "retry_later", why: "no check ran on afk-train/x" }] },
      "no check ran on afk-train/x",
    ],
    ["CI silent and nobody left waiting: the general reason", { ciSilent: true, members: [{ outcome: "fenced", why: "lost" }] }, "no CI ran on a train"],
  ];
  for (const [name, result, want] of table) it(name, () => assert.equal(trainsOffAfter(result), want));
  it("decide builds no train once trains are off: each green PR lands alone", () => {
    const d = decide(world([green(1), green(2)], { trainMax: 8, trainsOff: "no CI ran on a train" }));
    assert.deepEqual(shown(d), ["land#1", "land#2"]);
  });
  const silent = { ciSilent: true, members: [{ outcome: "retry_later", why: "no check ran on afk-train/x" }] };
  const ran = { ciSilent: false, members: [{ outcome: "merged" }] };
  const rows: Array<[string, Partial<DecideInput>, string | null, string[]]> = [
    [
      "a train just ended with CI silent: decide turns trains off, and this very tick lands alone",
      { trainsEnded: [silent] },
      "no check ran on afk-train/x",
      ["land#1", "land#2"],
    ],
    ["a train just ended whose CI ran: trains stay on", { trainsEnded: [ran] }, null, ["land_train#1"]],
    ["trains already off: they stay off, whatever a train said", { trainsOff: "earlier", trainsEnded: [ran] }, "earlier", ["land#1", "land#2"]],
    ["no train ended: trains stay on", {}, null, ["land_train#1"]],
  ];
  for (const [name, over, off, actions] of rows) {
    it(name, () => {
      const d = decide(world([green(1), green(2)], { trainMax: 8, ...over }));
      assert.equal(d.trainsOff, off);
      assert.deepEqual(shown(d), actions);
    });
  }
});

describe("inline or in the background", () => {
  const table: Array<[string, Partial<DecideInput>, boolean[], boolean[]]> = [
    ["required CI: inline, exclusive (one landing move per tick)", { oneLandingPerTick: true, landingWaits: false }, [false, false], [true, true]],
    ["a local gate: in the background, not exclusive", { oneLandingPerTick: false, landingWaits: true }, [true, true], [false, false]],
    ["a merge queue under required CI: in the background, exclusive", { oneLandingPerTick: true, landingWaits: true }, [true, true], [true, true]],
    ["no CI gate: inline, not exclusive", {}, [false, false], [false, false]],
  ];
  for (const [name, over, background, exclusive] of table) {
    it(name, () => {
      const d = decide(world([green(1), green(2)], over));
      assert.deepEqual(
        lands(d).map((l) => l.background),
        background,
      );
      assert.deepEqual(
        lands(d).map((l) => l.exclusive),
        exclusive,
      );
    });
  }
});

describe("a landing's turn in the pass (the skip rules)", () => {
  const pass = (over: Partial<LandingPass> = {}): LandingPass => ({ inFlight: false, slot: null, blocked: 0, conflicted: () => false, ...over });
  const table: Array<[string, { issue: number; exclusive: boolean }, LandingPass, ReturnType<typeof landingTurn>]> = [
    ["nothing in the way: it goes", { issue: 1, exclusive: true }, pass(), { go: true }],
    ["a landing runs beside the loop: it waits", { issue: 1, exclusive: false }, pass({ inFlight: true }), { go: false, why: "in_flight" }],
    ["required CI, a sync earlier in the pass took the slot: it waits", { issue: 2, exclusive: true }, pass({ slot: 1 }), { go: false, why: "exclusive" }],
    [
      "required CI, another host's lock blocked a landing of this pass: it waits",
      { issue: 2, exclusive: true },
      pass({ blocked: 1 }),
      { go: false, why: "exclusive" },
    ],
    ["not exclusive (no required CI): the slot does not hold it", { issue: 2, exclusive: false }, pass({ slot: 1, blocked: 1 }), { go: true }],
    [
      "a landing earlier in the pass left it unmergeable: it waits",
      { issue: 2, exclusive: false },
      pass({ conflicted: (n) => n === 2 }),
      { go: false, why: "conflict" },
    ],
    ["another PR's conflict does not hold it", { issue: 2, exclusive: true }, pass({ conflicted: (n) => n === 3 }), { go: true }],
  ];
  for (const [name, action, p, want] of table) it(name, () => assert.deepEqual(landingTurn(action, p), want));

  it("one landing per tick under required CI: after the first syncs, the next waits for the next pass", () => {
    const d = decide(world([green(1), green(2)], { oneLandingPerTick: true }));
    const state = pass();
    const went: number[] = [];
    for (const l of lands(d)) {
      if (!landingTurn(l, state).go) continue;
      went.push(l.issue);
      state.slot = l.issue; // it synced with the base: its CI runs, it holds the slot
    }
    assert.deepEqual(went, [1]);
  });
});

describe("a train's riders at its turn", () => {
  const members = [1, 2, 3].map((n) => ({ issue: n, sha: `claim${n}`, pr: 100 + n, head: `head${n}` }));
  const pass = (over: Partial<LandingPass> = {}): LandingPass => ({ inFlight: false, slot: null, blocked: 0, conflicted: () => false, ...over });
  const table: Array<[string, LandingPass, number[]]> = [
    ["all ride", pass(), [1, 2, 3]],
    ["a landing in flight holds the train", pass({ inFlight: true }), []],
    ["a synced PR whose CI runs lands first", pass({ slot: 9 }), []],
    ["one seen unmergeable earlier in the pass stays behind", pass({ conflicted: (n) => n === 2 }), [1, 3]],
    ["all unmergeable: no train", pass({ conflicted: () => true }), []],
  ];
  for (const [name, p, want] of table)
    it(name, () =>
      assert.deepEqual(
        trainRiders({ members }, p).map((m) => m.issue),
        want,
      ),
    );
});

describe("the landing slot", () => {
  const table: Array<[string, DecideInput, string[], number | null]> = [
    ["the slot holder's CI runs: the others wait, the slot stays", world([waiting(1), green(2)], { landingSlot: 1, oneLandingPerTick: true }), [], 1],
    [
      "the slot holder turned green: it lands, the next may take the slot in the same pass",
      world([green(2), green(1)], { landingSlot: 1, oneLandingPerTick: true }),
      ["land#1", "land#2"],
      null,
    ],
    [
      "the slot holder's issue closed: the slot is free",
      world([mineClaim(1, { sha: "claim1", issueOpen: false, status: "awaiting_ci" }), green(2)], { landingSlot: 1 }),
      ["release#1", "land#2"],
      null,
    ],
    ["with trains, a green slot holder lands alone first", world([green(1), green(2), green(3)], { landingSlot: 1, trainMax: 8 }), ["land#1"], null],
    ["a landing under way holds its claims: nothing is decided on them", world([green(1), green(2)], { landingHeld: new Set([1]) }), ["land#2"], null],
  ];
  for (const [name, input, want, slot] of table) {
    it(name, () => {
      const d = decide(input);
      assert.deepEqual(shown(d), want);
      assert.equal(d.landingSlot, slot);
    });
  }
});
