// The fleet's conflict watch over a real repository: pairs of in-flight heads are merge-tested
// only when their files touch, each pair once (a quiet pass runs no merge test), and a base that
// moved under the fleet's PRs is seen without a landing of ours.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConflictWatch } from "../server/fleet/conflict-watch.js";
import type { WorkingSet } from "../server/state/rebuild.js";
import type { SnapshotIssue } from "../server/state/snapshot.js";
import { emptyReport } from "../server/fleet/tick-report.js";
import { decide } from "../server/state/decide.js";
import { commitFile, git, tempDir } from "./support/forge-fixtures.js";
import { mineClaim } from "./support/snapshots.js";

describe("ConflictWatch, in a real repository", () => {
  it("tests each touching pair once, shows the conflicting ones, and sees a base that moved", async () => {
    const dir = await tempDir("afk-watch-");
    await git(dir, "init", "--quiet", "-b", "main");
    await commitFile(dir, "README.md", "readme\n");
    const base = await commitFile(dir, "shared.txt", "base\n");
    await git(dir, "update-ref", "refs/remotes/origin/main", base);
    const branch = async (name: string, file: string, text: string): Promise<string> => {
      await git(dir, "checkout", "--quiet", "-b", name, base);
      return commitFile(dir, file, text);
    };
    const h1 = await branch("one", "shared.txt", "one\n");
    const h2 = await branch("two", "shared.txt", "two\n");
    const h3 = await branch("three", "other.txt", "three\n");
    const claims = [
      mineClaim(1, { status: "awaiting_ci", pr: 11, head: h1 }),
      mineClaim(2, { status: "awaiting_ci", pr: 12, head: h2 }),
      mineClaim(3, { status: "awaiting_ci", pr: 13, head: h3 }),
    ];
    const set = { mine: claims, frontier: { dispatch: [], excluded: [] }, stale: [], peer_live: [] } as unknown as WorkingSet;
    const issues = new Map<number, SnapshotIssue>();
    const logged: string[] = [];
    let now = Date.parse("2026-01-01T00:00:00Z");
    const watch = new ConflictWatch({
      repoDir: dir,
      base: "main",
      worktreeOf: (n) => join(dir, "none", String(n)),
      settings: () => ({ early: true, overlap_dispatch: true, wait: true, hold_max_seconds: 600 }),
      timeScale: 1,
      clock: () => new Date(now),
      log: (_level, event) => void logged.push(event),
    });

    const first = await watch.read(set, issues);
    assert.deepEqual(
      first.pairs.map((p) => [p.a, p.b, p.files]),
      [[1, 2, ["shared.txt"]]],
    );
    // Each head against the base (3), and the one pair whose files touch (#3 changes other.txt).
    assert.equal(watch.stats.mergeTests, 4);
    assert.equal(first.conflicts.size, 0, "every head still merges with the base");
    const again = await watch.read(set, issues);
    assert.deepEqual(again.pairs, first.pairs);
    assert.equal(watch.stats.mergeTests, 4, "nothing moved: no merge test ran");
    assert.deepEqual(logged, ["pair_conflict"], "the pair is logged once");
    const report = emptyReport(new Date(now));
    watch.after(
      decide({ set, local: new Map(), target: 3, retry: 2, autoMerge: true, birthsPaused: false, stopping: false, idleGraceSeconds: 60, ...again }),
      set,
      again.overlap,
      report,
    );
    assert.deepEqual(report.conflict_pairs, [{ a: 1, b: 2, pr_a: 11, pr_b: 12, files: ["shared.txt"] }]);
    assert.match(watch.boardNote(1) ?? "", /Conflicts with in-flight work: #2 in shared\.txt/);
    assert.equal(watch.boardNote(3), null);

    // Somebody else moves the base: both shared-file PRs are seen unmergeable now, no landing of ours.
    await git(dir, "checkout", "--quiet", "main");
    await git(dir, "update-ref", "refs/remotes/origin/main", await commitFile(dir, "shared.txt", "human\n"));
    now += 5_000;
    const moved = await watch.read(set, issues);
    assert.deepEqual([...moved.conflicts.keys()], [1, 2]);
    assert.deepEqual(moved.conflicts.get(1)?.source, "base");
    assert.equal(watch.stats.mergeTests, 4 + 3, "the three heads against the new base; the pair was tested already");
    // The first seen retries now; the second waits for it, and the board and report say so.
    now += 1_000;
    const decision = decide({
      set,
      local: new Map(),
      target: 3,
      retry: 2,
      autoMerge: true,
      birthsPaused: false,
      stopping: false,
      idleGraceSeconds: 60,
      ...(await watch.read(set, issues)),
    });
    assert.deepEqual(
      decision.actions.filter((a) => a.kind === "retry").map((a) => a.issue),
      [1],
    );
    const after = emptyReport(new Date(now));
    watch.after(decision, set, null, after);
    assert.deepEqual(
      after.conflict_held.map((h) => [h.issue, h.waiting_for, h.max_seconds]),
      [[2, [1], 600]],
    );
    assert.match(watch.boardNote(2) ?? "", /its retry waits until #1 landed or was abandoned \(at most 10 min\)/);
    assert.ok(logged.includes("conflict_held"));
    assert.equal(watch.has(1), false, "the retried one is no longer noted");
    assert.equal(watch.has(2), true);
  });
});
