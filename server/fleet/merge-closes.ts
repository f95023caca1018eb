// Issues whose PR merged through the merge API with "Closes #n" onto the default branch: GitHub
// closes them itself, a moment after the merge, so the fleet spends no request closing them. The
// claim is kept until a listing shows the issue closed, so neither a peer nor a later tick takes
// a merged issue for ready work; one still open after the grace (a repository that does not
// close linked issues, or a slow GitHub) is closed by the fleet, as every landing did before.
import type { Forge } from "../gh/forge.js";
import type { Lease } from "../gh/lease.js";
import type { LandedPull } from "../state/snapshot.js";
import type { SupervisorLog } from "./supervisor-log.js";
import { errorText } from "./supervisor-log.js";
import { recoveredLandings, settleMerged, type Sweep, type WaitingClose } from "../state/decide/sweeps.js";

/** How long GitHub may take to close a merged PR's issue before the fleet closes it, in loop seconds. */
export const MERGE_CLOSE_GRACE_SECONDS = 30;

type Waiting = WaitingClose;
type SettleStepOf = Extract<Sweep, { kind: "settle_merged" }>;

export interface MergeClosesDeps {
  forge: Pick<Forge, "closeIssue">;
  lease: Pick<Lease, "release">;
  clock: () => Date;
  /** Real milliseconds of the grace (scaled like every duration of the loop). */
  graceMs: number;
  log: SupervisorLog;
}

export class MergeCloses {
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly deps: MergeClosesDeps) {}

  /** `issue`'s PR merged and GitHub closes the issue: our claim (`claimSha`) waits for it. */
  expect(issue: number, pr: number, claimSha: string): void {
    this.waiting.set(issue, { pr, claimSha, mergedAt: this.deps.clock().getTime() });
  }

  /**
   * Landings a crash kept from their wrap-up, as a restart's first gather found them
   * (Snapshot.landed): the claim waits here as if this process had merged the PR, with the grace
   * over (GitHub would have closed the issue by now), so the next settle closes the issue and
   * releases the claim, and no tick sends a worker to redo landed work. Returns the issues taken.
   */
  recover(landed: readonly LandedPull[], mine: ReadonlyArray<{ issue: number; sha: string; attempt?: number }>): LandedPull[] {
    const taken = recoveredLandings({
      landed,
      mine: mine.map((m) => ({ attempt: 0, ...m })),
      breakerOwned: new Set(),
      closing: this.waiting,
      now: this.deps.clock().getTime(),
      graceMs: this.deps.graceMs,
    });
    for (const r of taken) this.recovered(r.landed, r.claimSha, r.mergedAt);
    return taken.map((r) => r.landed);
  }

  /** One landing a crash kept from its wrap-up (see recover): its claim waits from `mergedAt`. */
  recovered(l: LandedPull, claimSha: string, mergedAt: number): void {
    this.waiting.set(l.issue, { pr: l.pr, claimSha, mergedAt });
    this.deps.log(
      "info",
      "landed_unsettled",
      `#${l.issue}: its PR #${l.pr} merged at ${l.mergedAt}, but the issue is still open and its claim held (a host stopped between the merge and its wrap-up): closing it and releasing the claim (no worker)`,
      l.issue,
      { pr: l.pr },
    );
  }

  /** The claims waiting for GitHub's close, in the order they began to wait. */
  waitingNow(): ReadonlyMap<number, WaitingClose> {
    return this.waiting;
  }

  /**
   * Issues the gather need not read one by one when the open listing lacks them: their absence is
   * what their merge announced. (The read guards against a paged listing hiding an open issue;
   * should that coincide with GitHub not closing one of these, the issue comes back open and
   * unclaimed with its work on the base, and a worker sent to it finds it already satisfied.)
   */
  expected(): ReadonlySet<number> {
    return new Set(this.waiting.keys());
  }

  /**
   * Settles the waiting claims against this tick's snapshot: released once the issue is no longer
   * listed open; closed by us, then released, once the grace is over (at once when `force`d: a
   * stop, which also tries each only once). Returns every issue this tick must leave alone (the claim is not decide's).
   */
  async settle(mine: ReadonlyArray<{ issue: number; sha: string }>, open: ReadonlySet<number>, force: boolean): Promise<Set<number>> {
    const hold = new Set([...this.waiting].filter(([n, w]) => mine.some((m) => m.issue === n && m.sha === w.claimSha)).map(([n]) => n));
    for (const step of settleMerged(this.waiting, mine, open, this.deps.clock().getTime(), this.deps.graceMs, force)) await this.step(step);
    return hold;
  }

  /** One waiting claim's step, as the core chose it (state/decide/sweeps.ts settleMerged). */
  async step(s: Pick<SettleStepOf, "issue" | "pr" | "claimSha" | "step" | "waitedMs" | "force">): Promise<void> {
    const { issue: n, pr, claimSha, force } = s;
    if (s.step === "forget") {
      this.waiting.delete(n); // taken over or released elsewhere: not ours to settle
      return;
    }
    if (s.step === "close") {
      try {
        // One request, only when GitHub did not close the issue within the grace (see above).
        await this.deps.forge.closeIssue(n, "completed");
      } catch (error) {
        this.deps.log(
          "warn",
          "close_failed",
          `#${n}: still open after PR #${pr} merged, and closing it failed${force ? "" : " (tried again next tick)"}: ${errorText(error)}`,
          n,
        );
        // A stop tries once: the claim stays, and lapses with the lease.
        if (force) this.waiting.delete(n);
        return;
      }
      this.deps.log("info", "closed_after_merge", `#${n}: GitHub had not closed it ${Math.round(s.waitedMs / 1000)} s after PR #${pr} merged: closed it`, n, {
        pr,
      });
    }
    try {
      await this.deps.lease.release(n, claimSha);
    } catch (error) {
      this.deps.log("warn", "release_failed", `#${n}: claim not released after its merge${force ? "" : " (tried again next tick)"}: ${errorText(error)}`, n);
      if (force) this.waiting.delete(n);
      return;
    }
    this.waiting.delete(n);
  }

  /** Merged issues whose claims still wait for GitHub's close. */
  pending(): boolean {
    return this.waiting.size > 0;
  }

  /** The end of a stop with no tick to look: what still waits is closed by us and released now. */
  async flush(): Promise<void> {
    if (this.waiting.size === 0) return;
    const all = [...this.waiting].map(([issue, w]) => ({ issue, sha: w.claimSha }));
    await this.settle(all, new Set(all.map((w) => w.issue)), true);
  }
}
