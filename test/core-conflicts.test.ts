// Conflicts between the fleet's own in-flight work, table-tested in the pure core: which pairs are
// worth a merge test, the landing order conflicting pairs give, and when a conflict retry waits
// for in-flight work changing the same files (for whom, for how long, never on a later hold).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { conflictWaitsFor, landingOrder, pairsToTest, touching, type PairConflict, type PendingConflict } from "../server/state/conflicts.js";
import { decide, type DecideInput } from "../server/state/decide.js";
import type { MineClaim } from "../server/state/inflight.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { mineClaim } from "./support/snapshots.js";

describe("touching", () => {
  const rows: { name: string; x: string[]; y: string[]; out: string[] }[] = [
    { name: "a file in both", x: ["a.ts", "b.ts"], y: ["b.ts", "c.ts"], out: ["b.ts"] },
    { name: "nothing shared", x: ["a.ts"], y: ["src/a.ts"], out: [] },
    { name: "a file in one is a folder in the other", x: ["src"], y: ["src/a.ts"], out: ["src"] },
    { name: "the other way round", x: ["src/a.ts"], y: ["src"], out: ["src"] },
    { name: "a shared prefix that is no folder", x: ["src/ab.ts"], y: ["src/a"], out: [] },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(touching(row.x, row.y), row.out));
});

describe("pairsToTest", () => {
  it("pairs only the heads whose files touch, each pair once, in issue order", () => {
    const heads = [
      { issue: 3, files: ["shared.txt"] },
      { issue: 1, files: ["shared.txt", "one.txt"] },
      { issue: 2, files: ["two.txt"] },
      { issue: 4, files: ["shared.txt"] },
    ];
    assert.deepEqual(
      pairsToTest(heads).map(([a, b]) => [a.issue, b.issue]),
      [
        [1, 3],
        [1, 4],
        [3, 4],
      ],
    );
  });
});

const pair = (a: number, b: number): PairConflict => ({ a, b, prA: a + 10, prB: b + 10, files: ["x.ts"] });

describe("landingOrder", () => {
  const claims = [1, 2, 3, 4].map((issue) => ({ issue }));
  it("without conflicting pairs the order is unchanged", () =>
    assert.deepEqual(
      landingOrder(claims, []).map((c) => c.issue),
      [1, 2, 3, 4],
    ));
  it("the PR that conflicts with the most others lands last (landing it would fail them all)", () => {
    // #1 conflicts with #2 and #3, which do not conflict with each other: #2 and #3 land, only #1 is redone.
    assert.deepEqual(
      landingOrder(claims, [pair(1, 2), pair(1, 3)]).map((c) => c.issue),
      [4, 2, 3, 1],
    );
  });
});

const seen = (over: Partial<PendingConflict> = {}): PendingConflict => ({
  pr: 10,
  files: ["shared.txt"],
  source: "early",
  heldSeconds: 5,
  blockers: null,
  ...over,
});
const open = (...issues: number[]) => issues.map((issue) => ({ issue, issueOpen: true }));
const paths = (entries: Record<number, string[]>) => new Map(Object.entries(entries).map(([k, v]) => [Number(k), v]));

describe("conflictWaitsFor", () => {
  const wait = { pathsOf: paths({ 1: ["shared.txt"], 2: ["shared.txt", "b.txt"], 3: ["other.txt"] }), maxSeconds: 60 };
  it("waits for the in-flight claims whose work touches the conflicting files, not the others", () => {
    assert.deepEqual(conflictWaitsFor(1, seen(), open(1, 2, 3), new Map([[1, seen()]]), wait), [2]);
  });
  it("retries at once when nothing in flight touches them", () => {
    assert.deepEqual(
      conflictWaitsFor(3, seen({ files: ["other.txt"] }), open(1, 3), new Map([[3, seen({ files: ["other.txt"] })]]), {
        ...wait,
        pathsOf: paths({ 1: ["a.txt"] }),
      }),
      [],
    );
  });
  it("is bounded: past maxSeconds it retries whatever still runs", () => {
    assert.deepEqual(conflictWaitsFor(1, seen({ heldSeconds: 60 }), open(1, 2), new Map([[1, seen({ heldSeconds: 60 })]]), wait), []);
  });
  it("keeps the claims fixed when the hold began: later work does not extend it, and those gone no longer count", () => {
    const held = seen({ blockers: [2] });
    const pathsOf = paths({ 2: ["shared.txt"], 4: ["shared.txt"] });
    assert.deepEqual(conflictWaitsFor(1, held, open(1, 2, 4), new Map([[1, held]]), { pathsOf, maxSeconds: 60 }), [2], "#4 started later");
    assert.deepEqual(conflictWaitsFor(1, held, open(1, 4), new Map([[1, held]]), { pathsOf, maxSeconds: 60 }), [], "#2 landed");
  });
  it("two holds never wait on each other: the one seen first goes first, then the lower issue", () => {
    const pathsOf = paths({ 1: ["shared.txt"], 2: ["shared.txt"] });
    const older = seen({ heldSeconds: 9 });
    const newer = seen({ heldSeconds: 3 });
    const conflicts = new Map([
      [1, newer],
      [2, older],
    ]);
    assert.deepEqual(conflictWaitsFor(2, older, open(1, 2), conflicts, { pathsOf, maxSeconds: 60 }), [], "#2 was seen first: it retries");
    assert.deepEqual(conflictWaitsFor(1, newer, open(1, 2), conflicts, { pathsOf, maxSeconds: 60 }), [2], "#1 waits for #2's retry");
    const tie = new Map([
      [1, seen()],
      [2, seen()],
    ]);
    assert.deepEqual(conflictWaitsFor(1, seen(), open(1, 2), tie, { pathsOf, maxSeconds: 60 }), []);
    assert.deepEqual(conflictWaitsFor(2, seen(), open(1, 2), tie, { pathsOf, maxSeconds: 60 }), [1]);
  });
});

function input(mine: MineClaim[], over: Partial<DecideInput> = {}): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "",
    frontier: { dispatch: [], excluded: [] },
    mine,
    peer_live: [],
    stale: [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
  } as unknown as WorkingSet;
  return { set, local: new Map(), target: 3, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...over };
}

describe("decide, conflict retries that wait", () => {
  const one = mineClaim(1, { status: "awaiting_merge", pr: 11, head: "h1" });
  const two = mineClaim(2, { status: "awaiting_ci", pr: 12, head: "h2" });
  const three = mineClaim(3, { status: "awaiting_ci", pr: 13, head: "h3" });
  const conflictWait = { pathsOf: paths({ 1: ["shared.txt"], 2: ["shared.txt"], 3: ["shared.txt"] }), maxSeconds: 60 };

  it("of two PRs a landing left unmergeable, the first retries now and the second waits for it, shown as a hold", () => {
    const conflicts = new Map([
      [2, seen({ pr: 12, heldSeconds: 2 })],
      [3, seen({ pr: 13, heldSeconds: 1 })],
    ]);
    const decision = decide(input([two, three], { conflicts, conflictWait }));
    assert.deepEqual(
      decision.actions.map((a) => `${a.kind}#${a.issue}`),
      ["retry#2"],
    );
    assert.deepEqual(decision.conflictHolds, [{ issue: 3, pr: 13, files: ["shared.txt"], waitingFor: [2], heldSeconds: 1, maxSeconds: 60 }]);
  });

  it("a held PR takes no landing turn, and the others land around it", () => {
    const green = mineClaim(3, { status: "awaiting_merge", pr: 13, head: "h3" });
    const decision = decide(input([one, green], { conflicts: new Map([[3, seen({ pr: 13, blockers: [1] })]]), conflictWait }));
    assert.deepEqual(
      decision.actions.map((a) => `${a.kind}#${a.issue}`),
      ["land#1"],
    );
    assert.equal(decision.conflictHolds.length, 1);
  });

  it("without conflicts.wait, or while stopping, the retry is at once", () => {
    const conflicts = new Map([[3, seen({ pr: 13 })]]);
    assert.deepEqual(
      decide(input([two, three], { conflicts, conflictWait: null })).actions.map((a) => `${a.kind}#${a.issue}`),
      ["retry#3"],
    );
    const stopping = decide(input([two, three], { conflicts, conflictWait, stopping: true }));
    assert.equal(stopping.conflictHolds.length, 0);
    assert.ok(stopping.actions.some((a) => a.kind === "retry" && a.issue === 3));
  });

  it("a conflict found at a landing's sync names the base merge in its evidence", () => {
    const [action] = decide(input([three], { conflicts: new Map([[3, seen({ pr: 13, source: "landing" })]]), conflictWait })).actions;
    assert.match(
      action?.kind === "retry" && action.evidence.kind === "gate" ? action.evidence.summary : "",
      /^merging the base into PR #13 conflicts in shared\.txt$/,
    );
  });

  it("conflicting pairs order the landings: the PR conflicting with fewer others lands first", () => {
    const a = mineClaim(1, { status: "awaiting_merge", pr: 11, head: "h1" });
    const b = mineClaim(2, { status: "awaiting_merge", pr: 12, head: "h2" });
    const c = mineClaim(3, { status: "awaiting_merge", pr: 13, head: "h3" });
    const lands = (pairs: PairConflict[]) =>
      decide(input([a, b, c], { pairs, oneLandingPerTick: true }))
        .actions.filter((x) => x.kind === "land")
        .map((x) => x.issue);
    assert.deepEqual(lands([]), [1, 2, 3]);
    assert.deepEqual(lands([pair(1, 2), pair(1, 3)]), [2, 3, 1]);
  });
});
