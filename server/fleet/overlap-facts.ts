// The facts overlap-aware dispatch needs, read from the work repository (no request): the base
// tree's paths, the paths each ready issue names, and the files the fleet's in-flight PRs change.
// Cached by base tip and by head, so a quiet pass reads nothing twice.
import { changedFiles, treePaths } from "../landing/early-conflicts.js";
import { gitRaw } from "../gh/git.js";
import { namedPaths } from "../state/overlap.js";
import type { WorkingSet } from "../state/rebuild.js";
import type { SnapshotIssue } from "../state/snapshot.js";

export class OverlapFacts {
  private tree: { base: string; paths: Set<string> } | null = null;
  private readonly changed = new Map<string, string[]>();

  constructor(
    private readonly repoDir: string,
    private readonly base: string,
  ) {}

  async read(set: WorkingSet, issues: ReadonlyMap<number, SnapshotIssue>): Promise<{ pathsOf: Map<number, string[]>; inFlight: Set<string> } | null> {
    const heads = set.mine.filter((m) => m.pr !== null && m.head !== null && m.issueOpen);
    if (set.frontier.dispatch.length < 2 || heads.length === 0) return null;
    const rev = await gitRaw(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${this.base}^{commit}`], { cwd: this.repoDir });
    const baseSha = rev.stdout.trim();
    if (rev.exitCode !== 0 || baseSha === "") return null; // no work repository yet
    if (this.tree?.base !== baseSha) this.tree = { base: baseSha, paths: await treePaths(this.repoDir, baseSha) };
    const inFlight = new Set<string>();
    for (const m of heads) {
      let files = this.changed.get(m.head!);
      if (!files) {
        files = (await changedFiles(this.repoDir, baseSha, m.head!)) ?? [];
        this.changed.set(m.head!, files);
      }
      for (const f of files) inFlight.add(f);
    }
    if (this.changed.size > 256) this.changed.clear();
    const pathsOf = new Map<number, string[]>();
    for (const item of set.frontier.dispatch) pathsOf.set(item.number, namedPaths(issues.get(item.number)?.body ?? "", this.tree.paths));
    return { pathsOf, inFlight };
  }
}
