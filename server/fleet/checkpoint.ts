// Checkpoints: a running worker's new commits are pushed to its branch every
// `worker.checkpoint_seconds` and once more when it exits, each push fenced by the claim, so a
// host on another machine (the worktree is gone with this one) continues from the branch tip
// (tier 2) instead of starting over. A push never rewrites what origin holds (WorkRepo.push).
// Reviewers are not checkpointed: their fixes reach the branch only with their verdict.
import type { Lease } from "../gh/lease.js";
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
    const progress = await this.deps.workRepo.progress(issue, this.deps.base);
    if (!progress.worktree || progress.head === null || progress.commitsAhead === 0 || progress.head === previous) return null;
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
  }
}
