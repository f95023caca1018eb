// Conflicts seen early, table-tested: the paths an issue names, overlap-aware dispatch order
// (an equally ranked alternative first, nothing skipped), the in-flight PRs a landing left
// unmergeable, and what decide does with both; plus the git facts in a real repository.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { changedFiles, conflictingFiles, treePaths } from "../server/landing/early-conflicts.js";
import { decide, type DecideInput } from "../server/state/decide.js";
import type { DispatchItem } from "../server/state/frontier.js";
import type { MineClaim } from "../server/state/inflight.js";
import { earlyConflicts, namedPaths, overlapOrder, standingHolds } from "../server/state/overlap.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import { commitFile, git, tempDir } from "./support/forge-fixtures.js";
import { mineClaim } from "./support/snapshots.js";

const TREE = new Set(["src/app.ts", "src/util/strings.ts", "README.md", "package.json"]);

const pathRows: { name: string; body: string; paths: string[] }[] = [
  { name: "a code span naming a file in the tree", body: "Fix the bug in `src/app.ts`.", paths: ["src/app.ts"] },
  { name: "a bare path in prose, with trailing punctuation", body: "See src/util/strings.ts, and README.md.", paths: ["README.md", "src/util/strings.ts"] },
  { name: "a ./ prefix", body: "Edit `./package.json`", paths: ["package.json"] },
  { name: "paths not in the tree are ignored", body: "Create `src/new.ts` next to lib/other.ts", paths: [] },
  { name: "no paths at all", body: "Make it faster.", paths: [] },
];

describe("namedPaths", () => {
  for (const row of pathRows) it(row.name, () => assert.deepEqual(namedPaths(row.body, TREE), row.paths));
});

const item = (number: number, selector = 0, high = false): DispatchItem => ({ number, title: `#${number}`, selector, high, attempt: 0 });
const paths = (entries: Record<number, string[]>) => new Map(Object.entries(entries).map(([k, v]) => [Number(k), v]));

const orderRows: {
  name: string;
  dispatch: DispatchItem[];
  room: number;
  named: Record<number, string[]>;
  inFlight: string[];
  order: number[];
  held: number[];
}[] = [
  { name: "nothing in flight: plain order", dispatch: [item(1), item(2)], room: 1, named: { 1: ["a.ts"] }, inFlight: [], order: [1, 2], held: [] },
  {
    name: "the first overlaps, an equal one does not: it goes first",
    dispatch: [item(1), item(2)],
    room: 1,
    named: { 1: ["a.ts"] },
    inFlight: ["a.ts"],
    order: [2, 1],
    held: [1],
  },
  {
    name: "room for both: both start, nobody is held",
    dispatch: [item(1), item(2)],
    room: 2,
    named: { 1: ["a.ts"] },
    inFlight: ["a.ts"],
    order: [2, 1],
    held: [],
  },
  {
    name: "no equally ranked alternative: the overlapping one still starts",
    dispatch: [item(1, 0), item(2, 1)],
    room: 1,
    named: { 1: ["a.ts"] },
    inFlight: ["a.ts"],
    order: [1, 2],
    held: [],
  },
  {
    name: "a high-priority issue is not passed by a normal one",
    dispatch: [item(1, 0, true), item(2, 0)],
    room: 1,
    named: { 1: ["a.ts"] },
    inFlight: ["a.ts"],
    order: [1, 2],
    held: [],
  },
  { name: "all overlap: plain order", dispatch: [item(1), item(2)], room: 1, named: { 1: ["a.ts"], 2: ["a.ts"] }, inFlight: ["a.ts"], order: [1, 2], held: [] },
];

describe("overlapOrder", () => {
  for (const row of orderRows) {
    it(row.name, () => {
      const { order, holds } = overlapOrder(row.dispatch, row.room, paths(row.named), new Set(row.inFlight));
      assert.deepEqual(
        order.map((x) => x.number),
        row.order,
      );
      assert.deepEqual(
        holds.map((h) => h.issue),
        row.held,
      );
    });
  }

  it("says which paths held it and what started instead", () => {
    const { holds } = overlapOrder([item(1), item(2)], 1, paths({ 1: ["a.ts", "b.ts"] }), new Set(["b.ts"]));
    assert.deepEqual(holds, [{ issue: 1, paths: ["b.ts"], instead: 2 }]);
  });
});

describe("standingHolds", () => {
  const held = { issue: 1, paths: ["a.ts"], instead: 2 };
  const facts = (named: Record<number, string[]>, inFlight: string[]) => ({ pathsOf: paths(named), inFlight: new Set(inFlight) });
  it("keeps an earlier hold while the issue waits and still overlaps, with the paths of now", () => {
    assert.deepEqual(standingHolds([held], [], [item(1)], facts({ 1: ["a.ts", "b.ts"] }, ["a.ts", "b.ts"])), [
      { issue: 1, paths: ["a.ts", "b.ts"], instead: 2 },
    ]);
  });
  it("drops it once the issue started, or nothing in flight changes its paths any more", () => {
    assert.deepEqual(standingHolds([held], [], [item(3)], facts({ 1: ["a.ts"] }, ["a.ts"])), [], "dispatched: gone from the frontier");
    assert.deepEqual(standingHolds([held], [], [item(1)], facts({ 1: ["a.ts"] }, ["c.ts"])), [], "the overlapping PR landed");
    assert.deepEqual(standingHolds([held], [], [item(1)], null), [], "no in-flight PR at all");
  });
  it("this pass's holds come first-hand and are not doubled", () => {
    const now = { issue: 1, paths: ["a.ts"], instead: 4 };
    assert.deepEqual(standingHolds([held], [now], [item(1)], facts({ 1: ["a.ts"] }, ["a.ts"])), [now]);
  });
});

describe("earlyConflicts", () => {
  const claims = [
    { issue: 1, pr: 10, status: "awaiting_ci" },
    { issue: 2, pr: 11, status: "failure" },
    { issue: 3, pr: null, status: "no_pr" },
    { issue: 4, pr: 12, status: "awaiting_merge" },
  ];
  it("fails the open PRs that conflict, not those already failing or without a PR", () => {
    const out = earlyConflicts(
      claims,
      new Map([
        [1, ["x.ts"]],
        [2, ["x.ts"]],
        [3, ["x.ts"]],
        [4, []],
      ]),
    );
    assert.deepEqual(out, [{ issue: 1, pr: 10, files: ["x.ts"] }]);
  });
});

function input(mine: MineClaim[], dispatch: DispatchItem[], over: Partial<DecideInput> = {}): DecideInput {
  const set = {
    repo: "o/r",
    instance: "me",
    now: "",
    frontier: { dispatch, excluded: [] },
    mine,
    peer_live: [],
    stale: [],
    lease: { fresh: true, heartbeatAt: null },
    cycles: [],
  } as unknown as WorkingSet;
  return { set, local: new Map(), target: 2, retry: 1, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...over };
}

describe("decide, conflicts seen early", () => {
  it("a PR a landing left unmergeable is retried now, with the paths as evidence", () => {
    const claim = mineClaim(1, { status: "awaiting_ci", pr: 10, head: "h" });
    const [action] = decide(
      input([claim], [], { conflicts: new Map([[1, { pr: 10, files: ["shared.txt"], source: "early" as const, heldSeconds: 0, blockers: null }]]) }),
    ).actions;
    assert.equal(action?.kind, "retry");
    assert.match(action?.kind === "retry" && action.evidence.kind === "gate" ? action.evidence.summary : "", /conflicts in shared\.txt \(seen early/);
  });

  it("overlap-aware dispatch starts the non-overlapping issue and reports the hold", () => {
    const claim = mineClaim(1, { status: "awaiting_ci", pr: 10, head: "h" });
    const decision = decide(
      input([claim], [item(2), item(3)], { target: 1, overlap: { pathsOf: paths({ 2: ["shared.txt"] }), inFlight: new Set(["shared.txt"]) } }),
    );
    assert.deepEqual(
      decision.actions.map((a) => (a.kind === "dispatch" ? a.issue : a.kind)),
      [3],
    );
    assert.deepEqual(decision.overlapHolds, [{ issue: 2, paths: ["shared.txt"], instead: 3 }]);
  });
});

describe("git facts for early conflicts, in a real repository", () => {
  it("merge-tree names the conflicting files; diffs and the tree list paths", async () => {
    const dir = await tempDir("afk-overlap-");
    await git(dir, "init", "--quiet", "-b", "main");
    const base = await commitFile(dir, "shared.txt", "base\n");
    await git(dir, "checkout", "--quiet", "-b", "one");
    await commitFile(dir, "shared.txt", "one\n");
    const one = (await git(dir, "rev-parse", "HEAD")).stdout;
    await git(dir, "checkout", "--quiet", "-b", "two", base);
    await commitFile(dir, "other.txt", "two\n");
    const two = await commitFile(dir, "shared.txt", "two\n");
    assert.deepEqual(await conflictingFiles(dir, one, two), ["shared.txt"]);
    assert.deepEqual(await conflictingFiles(dir, base, two), []);
    assert.equal(await conflictingFiles(dir, base, "f".repeat(40)), null, "an unknown head: no opinion");
    assert.deepEqual((await changedFiles(dir, base, two))?.sort(), ["other.txt", "shared.txt"]);
    assert.deepEqual([...(await treePaths(dir, two))].sort(), ["other.txt", "shared.txt"]);
  });
});
