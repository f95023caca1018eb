// Conflicts seen early, the fleet's side, all local git in the work repository (no request): the
// files each claim's work changes (its PR's head, or its worktree's HEAD before the PR exists: a
// worker that just exited opens its PR in the very pass that fills its slot), the paths issues
// name, merge tests of each in-flight head against the base and of each pair of in-flight heads
// whose files touch (git merge-tree, cached by the pair of shas, so a quiet pass tests nothing),
// and the PRs seen unmergeable whose retry waits. It feeds decide and keeps what status and the
// board show: the standing overlap holds, the conflicting pairs, the conflict holds.
import { changedFiles, conflictingFiles, treePaths } from "../landing/early-conflicts.js";
import { gitRaw } from "../gh/git.js";
import { RevCache } from "../worktrees/rev-cache.js";
import { namedPaths, standingHolds, type OverlapHold } from "../state/overlap.js";
import { conflictWaitsFor, pairsToTest, type ConflictWaitInput, type PairConflict, type PendingConflict } from "../state/conflicts.js";
import type { DecideInput, Decision } from "../state/decide.js";
import type { WorkingSet } from "../state/rebuild.js";
import type { SnapshotIssue } from "../state/snapshot.js";
import type { SupervisorLog } from "./supervisor-log.js";
import type { TickReport } from "./tick-report.js";

export interface ConflictSettings {
  early: boolean;
  overlap_dispatch: boolean;
  wait: boolean;
  hold_max_seconds: number;
}

interface Seen {
  pr: number;
  head: string;
  files: string[];
  source: PendingConflict["source"];
  sinceMs: number;
  blockers: number[] | null;
}

type Facts = Required<Pick<DecideInput, "overlap" | "conflicts" | "conflictWait" | "pairs">>;

/** Cache entries kept at most; past it a cache starts over (a pass then reads what it needs again). */
const CACHE = 1024;

export class ConflictWatch {
  private tree: { base: string; paths: Set<string> } | null = null;
  private readonly changed = new Map<string, string[]>();
  private readonly merges = new Map<string, string[] | null>();
  private readonly pending = new Map<number, Seen>();
  private readonly pairsSeen = new Set<string>();
  /** Issue → the files its in-flight work changes and the paths its body names, as of the last pass. */
  private pathsOf = new Map<number, string[]>();
  private overlapHolds: OverlapHold[] = [];
  private shown: Pick<TickReport, "conflict_held" | "conflict_pairs"> = { conflict_held: [], conflict_pairs: [] };
  /** Merge tests run (cache misses): what seeing conflicts early costs, in git runs. */
  readonly stats = { mergeTests: 0 };
  /** The base's tip and the worktrees' HEADs, read with git only when their files changed. */
  readonly revs = new RevCache();

  constructor(
    private readonly o: {
      repoDir: string;
      base: string;
      worktreeOf: (issue: number) => string;
      settings: () => ConflictSettings;
      timeScale: number;
      clock: () => Date;
      log: SupervisorLog;
    },
  ) {}

  /** A PR seen unmergeable this pass (after a landing): it takes no landing turn now. */
  has(issue: number): boolean {
    return this.pending.has(issue);
  }

  /** Notes a PR whose head does not merge with the base; the next pass decides (retry, or wait). */
  note(issue: number, pr: number, head: string, files: string[], source: Seen["source"]): void {
    const seen = this.pending.get(issue);
    if (seen && seen.head === head) seen.files = files;
    else this.pending.set(issue, { pr, head, files, source, sinceMs: this.o.clock().getTime(), blockers: null });
  }

  /**
   * A landing's sync found the conflict: whether its retry waits for in-flight work that changes
   * the same files (then it is noted and logged, and the retry comes once they landed).
   */
  waitsNow(issue: number, pr: number, head: string, files: string[], set: WorkingSet): boolean {
    if (!this.o.settings().wait) return false;
    this.note(issue, pr, head, files, "landing");
    const view = this.view();
    const waitingFor = conflictWaitsFor(issue, view.get(issue)!, set.mine, view, this.waitInput());
    if (waitingFor.length === 0) {
      this.pending.delete(issue);
      return false;
    }
    this.hold(issue, waitingFor);
    return true;
  }

  /** The decide inputs of this pass. Never throws: a git failure only means no opinion. */
  async read(set: WorkingSet, issues: ReadonlyMap<number, SnapshotIssue>): Promise<Facts> {
    const claims = set.mine.filter((m) => m.issueOpen);
    for (const [n, seen] of this.pending) {
      const c = claims.find((m) => m.issue === n);
      // Gone, or its head moved (a push, a sync): the new head is judged afresh.
      if (!c || c.pr !== seen.pr || c.head !== seen.head) this.pending.delete(n);
    }
    const s = this.o.settings();
    const facts: Facts = { overlap: null, conflicts: this.view(), conflictWait: s.wait ? this.waitInput() : null, pairs: [] };
    if (claims.length === 0 || !(s.early || s.overlap_dispatch || s.wait)) {
      this.shown.conflict_pairs = [];
      return facts;
    }
    try {
      const baseRef = `refs/remotes/origin/${this.o.base}`;
      const baseSha = await this.revs.ref(this.o.repoDir, baseRef, () => this.revParse(`${baseRef}^{commit}`, this.o.repoDir));
      if (baseSha === null) return facts; // no work repository yet
      if (this.tree?.base !== baseSha) this.tree = { base: baseSha, paths: await treePaths(this.o.repoDir, baseSha) };
      const heads: Array<{ issue: number; pr: number | null; head: string; files: string[] }> = [];
      const pathsOf = new Map<number, string[]>();
      for (const m of claims) {
        const head = m.pr !== null && m.head !== null ? m.head : await this.worktreeHead(m.issue);
        const files = head === null ? [] : await this.changedFiles(baseSha, head);
        if (head !== null && files.length > 0) heads.push({ issue: m.issue, pr: m.pr, head, files });
        pathsOf.set(m.issue, [...new Set([...files, ...namedPaths(issues.get(m.issue)?.body ?? "", this.tree.paths)])].sort());
        if (s.early && m.pr !== null && m.head !== null && !this.pending.has(m.issue) && !["failure", "changes_requested", "no_pr"].includes(m.status)) {
          // The base moved, by anyone: a PR that no longer merges with it is seen now, not at its landing turn.
          const conflicts = await this.merge(baseSha, m.head);
          if (conflicts && conflicts.length > 0) {
            this.note(m.issue, m.pr, m.head, conflicts, "base");
            this.o.log(
              "info",
              "early_conflict",
              `#${m.issue}: PR #${m.pr} no longer merges with ${this.o.base}: conflicts in ${conflicts.join(", ")}`,
              m.issue,
              { pr: m.pr, files: conflicts, source: "base" },
            );
          }
        }
      }
      this.pathsOf = pathsOf;
      if (s.early) facts.pairs = await this.pairs(heads);
      facts.conflicts = this.view();
      if (s.wait) facts.conflictWait = this.waitInput();
      if (s.overlap_dispatch && set.frontier.dispatch.length > 0) {
        const inFlight = new Set(heads.flatMap((h) => h.files));
        const named = new Map(set.frontier.dispatch.map((item) => [item.number, namedPaths(issues.get(item.number)?.body ?? "", this.tree!.paths)]));
        facts.overlap = { pathsOf: named, inFlight };
      }
    } catch {
      // No opinion this pass.
    }
    this.shown.conflict_pairs = facts.pairs.map((p) => ({ a: p.a, b: p.b, pr_a: p.prA, pr_b: p.prB, files: p.files }));
    return facts;
  }

  /**
   * After decide: the conflict retries that wait stay noted (with what they wait for, fixed at
   * the first pass), the others were decided and are dropped; the report shows the holds.
   */
  after(decision: Decision, set: WorkingSet, overlap: Facts["overlap"], report: TickReport): void {
    const held = new Map(decision.conflictHolds.map((h) => [h.issue, h]));
    for (const n of [...this.pending.keys()]) {
      const h = held.get(n);
      if (!h) this.pending.delete(n);
      else if (this.pending.get(n)!.blockers === null) this.hold(n, h.waitingFor);
    }
    this.shown.conflict_held = decision.conflictHolds.map((h) => ({
      issue: h.issue,
      pr: h.pr,
      files: h.files,
      waiting_for: h.waitingFor,
      held_seconds: Math.round(h.heldSeconds),
      max_seconds: Math.round(h.maxSeconds),
    }));
    report.conflict_held = this.shown.conflict_held;
    report.conflict_pairs = this.shown.conflict_pairs;
    this.overlapHolds = standingHolds(this.overlapHolds, decision.overlapHolds, set.frontier.dispatch, overlap);
    report.overlap_held = this.overlapHolds.map((h) => ({ ...h }));
    for (const h of decision.overlapHolds) {
      this.o.log(
        "info",
        "overlap_held",
        `#${h.issue}: started #${h.instead} first: in-flight work changes ${h.paths.join(", ")}, which #${h.issue} names`,
        h.issue,
        { ...h },
      );
    }
  }

  /** The line the issue's board adds: its conflict hold, else the conflicting pairs it is in. */
  boardNote(issue: number): string | null {
    const h = this.shown.conflict_held.find((x) => x.issue === issue);
    if (h) {
      return `PR #${h.pr} no longer merges with the base (conflicts in ${h.files.join(", ")}); its retry waits until ${h.waiting_for.map((n) => `#${n}`).join(", ")} landed or was abandoned (at most ${Math.round(h.max_seconds / 60)} min), so it is redone once, on top of them`;
    }
    const pairs = this.shown.conflict_pairs.filter((p) => p.a === issue || p.b === issue);
    if (pairs.length === 0) return null;
    return `Conflicts with in-flight work: ${pairs.map((p) => (p.a === issue ? `#${p.b}` : `#${p.a}`) + ` in ${p.files.join(", ")}`).join("; ")}. Whichever lands second is redone.`;
  }

  private view(): Map<number, PendingConflict> {
    const now = this.o.clock().getTime();
    return new Map(
      [...this.pending].map(([n, s]) => [n, { pr: s.pr, files: s.files, source: s.source, heldSeconds: (now - s.sinceMs) / 1000, blockers: s.blockers }]),
    );
  }

  private waitInput(): ConflictWaitInput {
    return { pathsOf: this.pathsOf, maxSeconds: this.o.settings().hold_max_seconds * this.o.timeScale };
  }

  private hold(issue: number, waitingFor: number[]): void {
    const seen = this.pending.get(issue)!;
    seen.blockers = waitingFor;
    const max = this.o.settings().hold_max_seconds * this.o.timeScale;
    this.o.log(
      "info",
      "conflict_held",
      `#${issue}: PR #${seen.pr} conflicts with ${this.o.base} in ${seen.files.join(", ")}; its retry waits until ${waitingFor.map((n) => `#${n}`).join(", ")} landed or was abandoned (at most ${Math.round(max)} s)`,
      issue,
      { pr: seen.pr, files: seen.files, waiting_for: waitingFor, source: seen.source, max_seconds: max },
    );
  }

  private async pairs(heads: ReadonlyArray<{ issue: number; pr: number | null; head: string; files: string[] }>): Promise<PairConflict[]> {
    const out: PairConflict[] = [];
    for (const [x, y] of pairsToTest(heads)) {
      const files = await this.merge(x.head, y.head);
      if (!files || files.length === 0) continue;
      out.push({ a: x.issue, b: y.issue, prA: x.pr, prB: y.pr, files });
      const key = `${x.head}:${y.head}`;
      if (this.pairsSeen.has(key)) continue;
      if (this.pairsSeen.size >= CACHE) this.pairsSeen.clear();
      this.pairsSeen.add(key);
      this.o.log(
        "info",
        "pair_conflict",
        `#${x.issue} and #${y.issue}: their work does not merge (conflicts in ${files.join(", ")}); whichever lands second is redone`,
        x.issue,
        { a: x.issue, b: y.issue, files },
      );
    }
    return out;
  }

  /** Files that conflict when `a` and `b` are merged (git merge-tree), cached by the two shas. */
  private async merge(a: string, b: string): Promise<string[] | null> {
    const key = `${a}:${b}`;
    if (this.merges.has(key)) return this.merges.get(key)!;
    this.stats.mergeTests += 1;
    const files = await conflictingFiles(this.o.repoDir, a, b).catch(() => null);
    if (this.merges.size >= CACHE) this.merges.clear();
    this.merges.set(key, files);
    return files;
  }

  private async changedFiles(base: string, head: string): Promise<string[]> {
    let files = this.changed.get(head);
    if (!files) {
      files = (await changedFiles(this.o.repoDir, base, head)) ?? [];
      if (this.changed.size >= CACHE) this.changed.clear();
      this.changed.set(head, files);
    }
    return files;
  }

  private worktreeHead(issue: number): Promise<string | null> {
    const dir = this.o.worktreeOf(issue);
    return this.revs.head(dir, () => this.revParse("HEAD^{commit}", dir).catch(() => null));
  }

  private async revParse(rev: string, cwd: string): Promise<string | null> {
    const r = await gitRaw(["rev-parse", "--verify", "--quiet", rev], { cwd });
    const sha = r.stdout.trim();
    return r.exitCode === 0 && sha !== "" ? sha : null;
  }
}
