// Checkpoints: a running worker's new commits are pushed to its branch every
// `worker.checkpoint_seconds` and once more when it exits, each push fenced by the claim, so a
// host on another machine (the worktree is gone with this one) continues from the branch tip
// (tier 2) instead of starting over. A push never rewrites what origin holds (WorkRepo.push).
// Reviewers are not checkpointed: their fixes reach the branch only with their verdict.
import type { Lease } from "../gh/lease.js";
import { RevCache } from "../worktrees/rev-cache.js";
import type { WorkRepo } from "../worktrees/worktrees.js";
import type { SupervisorLog } from "./supervisor-log.js";

export interface CheckpointDeps {
  workRepo: WorkRepo;
  lease: Lease;
  base: string;
  /** The period of periodic checkpoints (ms). */
  everyMs: number;
  clock: () => Date;
  log: SupervisorLog;
}

export class Checkpoints {
  /** Per issue: when the last checkpoint was considered, and the tip it pushed. */
  private readonly last = new Map<number, { at: number; sha: string | null }>();
  /** Per issue: the worktree's HEAD and the base's tip when a periodic checkpoint last found nothing to push. */
  private readonly nothingAt = new Map<number, string>();
  /** Those two read with git only when their files changed. */
  readonly revs = new RevCache();

  constructor(private readonly deps: CheckpointDeps) {}

  /** When the last checkpoint of `issue` was considered (epoch ms), or null: none yet (state/decide/sweeps.ts says when one is due). */
  lastAt(issue: number): number | null {
    return this.last.get(issue)?.at ?? null;
  }

  /** The period of periodic checkpoints (ms). */
  get everyMs(): number {
    return this.deps.everyMs;
  }

  /**
   * Pushes the branch's new commits, if any, while the claim still holds `claimSha` (a
   * FencedError otherwise). Returns the sha pushed, or null when there was nothing new.
   */
  async push(issue: number, claimSha: string, why: "periodic" | "exit"): Promise<string | null> {
    const previous = this.last.get(issue)?.sha ?? null;
    this.last.set(issue, { at: this.deps.clock().getTime(), sha: previous });
    // What a checkpoint pushes is a function of the worktree's HEAD and the base's tip: a HEAD
    // at the base's tip has nothing ahead of it, and while neither moved since a checkpoint found
    // nothing, the next finds nothing too. A quiet worker's periodic checkpoint then costs a few
    // file reads instead of the progress scan's six git runs.
    const tips = why === "periodic" ? await this.tips(issue).catch(() => null) : null;
    if (tips !== null && (tips.head === tips.tip || this.nothingAt.get(issue) === tips.key)) return null;
    this.nothingAt.delete(issue);
    const progress = await this.deps.workRepo.progress(issue, this.deps.base);
    if (!progress.worktree || progress.head === null || progress.commitsAhead === 0 || progress.head === previous) {
      if (tips !== null && progress.worktree) this.nothingAt.set(issue, tips.key);
      return null;
    }
    await this.deps.lease.fence(issue, claimSha);
    const pushed = await this.deps.workRepo.push(issue);
    this.last.set(issue, { at: this.deps.clock().getTime(), sha: pushed.sha });
    if (!pushed.pushed) return null;
    this.deps.log(
      "info",
      "checkpoint",
      `#${issue}: pushed ${progress.commitsAhead} commit(s) to ${pushed.branch} at ${pushed.sha.slice(0, 12)} (${why === "exit" ? "the worker exited" : "periodic checkpoint"})`,
      issue,
      {
        sha: pushed.sha,
        branch: pushed.branch,
        why,
      },
    );
    return pushed.sha;
  }

  forget(issue: number): void {
    this.last.delete(issue);
    this.nothingAt.delete(issue);
  }

  /** The worktree's HEAD and the base's tip (and the two as one key); null when either cannot be read. */
  private async tips(issue: number): Promise<{ head: string; tip: string; key: string } | null> {
    const { workRepo, base } = this.deps;
    const worktree = workRepo.worktreePath(issue);
    const baseRef = `refs/remotes/origin/${base}`;
    const head = await this.revs.head(worktree, () => workRepo.git.revParse("HEAD", worktree));
    const tip = head === null ? null : await this.revs.ref(workRepo.repoDir, baseRef, () => workRepo.git.revParse(baseRef));
    return head === null || tip === null ? null : { head, tip, key: `${head} ${tip}` };
  }
}
