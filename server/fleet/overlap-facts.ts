// The facts overlap-aware dispatch needs, read from the work repository (no request): the base
// tree's paths, the paths each ready issue names, and the files the fleet's in-flight work
// changes: each open PR's head, and for a claim with no PR yet its worktree's HEAD (a worker that
// just exited opens its PR in the very pass that fills its slot, so PRs alone come a pass late).
// Cached by base tip and by head, so a quiet pass reads nothing twice. Also keeps the standing
// holds the plan shows.
import { changedFiles, treePaths } from "../landing/early-conflicts.js";
import { gitRaw } from "../gh/git.js";
import { namedPaths, standingHolds, type OverlapHold } from "../state/overlap.js";
import type { WorkingSet } from "../state/rebuild.js";
import type { SnapshotIssue } from "../state/snapshot.js";

export class OverlapFacts {
  private tree: { base: string; paths: Set<string> } | null = null;
  private readonly changed = new Map<string, string[]>();
  private holds: OverlapHold[] = [];

  constructor(
    private readonly repoDir: string,
    private readonly base: string,
    private readonly worktreeOf: (issue: number) => string,
  ) {}

  async read(set: WorkingSet, issues: ReadonlyMap<number, SnapshotIssue>): Promise<{ pathsOf: Map<number, string[]>; inFlight: Set<string> } | null> {
    const claims = set.mine.filter((m) => m.issueOpen);
    if (set.frontier.dispatch.length === 0 || claims.length === 0) return null;
    const rev = await gitRaw(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${this.base}^{commit}`], { cwd: this.repoDir });
    const baseSha = rev.stdout.trim();
    if (rev.exitCode !== 0 || baseSha === "") return null; // no work repository yet
    if (this.tree?.base !== baseSha) this.tree = { base: baseSha, paths: await treePaths(this.repoDir, baseSha) };
    const inFlight = new Set<string>();
    for (const m of claims) {
      const head = m.pr !== null && m.head !== null ? m.head : await this.worktreeHead(m.issue);
      if (head === null) continue;
      let files = this.changed.get(head);
      if (!files) {
        files = (await changedFiles(this.repoDir, baseSha, head)) ?? [];
        this.changed.set(head, files);
      }
      for (const f of files) inFlight.add(f);
    }
    if (this.changed.size > 256) this.changed.clear();
    const pathsOf = new Map<number, string[]>();
    for (const item of set.frontier.dispatch) pathsOf.set(item.number, namedPaths(issues.get(item.number)?.body ?? "", this.tree.paths));
    return { pathsOf, inFlight };
  }

  private async worktreeHead(issue: number): Promise<string | null> {
    const r = await gitRaw(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: this.worktreeOf(issue) }).catch(() => null);
    return r && r.exitCode === 0 && r.stdout.trim() !== "" ? r.stdout.trim() : null;
  }

  /** This pass's holds and the earlier ones still true (see standingHolds), as the plan shows them. */
  standing(now: readonly OverlapHold[], set: WorkingSet, overlap: Parameters<typeof standingHolds>[3]): OverlapHold[] {
    this.holds = standingHolds(this.holds, now, set.frontier.dispatch, overlap);
    return this.holds.map((h) => ({ ...h }));
  }
}
