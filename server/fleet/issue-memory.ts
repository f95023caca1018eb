// What this host remembers about each issue it works on beyond GitHub: its worker, the kills
// and free re-dispatches so far, liveness, the last failure for the next brief. One record
// per issue, so forgetting an issue (a terminal move, a lost claim) is one delete.
import type { BriefFailure } from "../agent/brief.js";
import type { WorkerRun } from "./worker-runs.js";

export interface IssueMemory {
  /** The worker this host runs (or ran, until its exit is handled) for the issue. */
  run: WorkerRun | null;
  /** Times this host killed the issue's workers for hanging. */
  kills: number;
  /** Free re-dispatches after a blocked verdict whose blockers had closed. */
  redispatches: number;
  /** The last liveness state logged: one liveness record per change, not per tick. */
  liveness: string | null;
  /** The worktree activity (epoch ms: its newest file, its last commit) the last scan found while `run` ran. */
  scanned?: { run: WorkerRun; activity: number | null };
  /** Evidence of the last failure, for the next attempt's brief. */
  lastFailure: BriefFailure | null;
  /**
   * The last lines the issue's last worker printed (bounded, without terminal escapes), kept when
   * its run ends: a worker killed as stalled, crashed or stopped past its budget is gone by the
   * time its failure is written, and its last words are the evidence.
   */
  lastWords: readonly string[];
  /** What the runtime last set right for the issue without spending an attempt (status says it). */
  notice?: string;
  /** GitHub refused to re-run the failing checks on this head (state/decide/claims.ts): its failure counts as it is. */
  rerunRefused?: { head: string; why: string };
  /** The tip an earlier attempt pushed: a retry may replace it. */
  replaceable: string | null;
  /** Attempts whose verdict marker this host already posted. */
  verdictsPosted: Set<number>;
  /** The PR on which the "awaiting review" note is known to be posted. */
  reviewNoticePr: number | null;
  /**
   * The issue's labels in the last listing that showed it open while ours: a landing that ends
   * after GitHub closed the issue (a train, a background landing) still knows what to clear.
   */
  labels: readonly string[] | null;
}

export class IssueMemories {
  private readonly records = new Map<number, IssueMemory>();

  get(issue: number): IssueMemory | undefined {
    return this.records.get(issue);
  }

  /** What status says of the issue beside its claim: the last failure, and what the runtime set right without spending an attempt (its worker's, while it runs). */
  said(issue: number): { failed: BriefFailure | null; notice: string | null } {
    const record = this.records.get(issue);
    return { failed: record?.lastFailure ?? null, notice: record?.run?.handle.notices?.().at(-1) ?? record?.notice ?? null };
  }

  /** The issue's record, created empty on first use. */
  of(issue: number): IssueMemory {
    let record = this.records.get(issue);
    if (!record) {
      record = {
        run: null,
        kills: 0,
        redispatches: 0,
        liveness: null,
        lastFailure: null,
        lastWords: [],
        replaceable: null,
        verdictsPosted: new Set(),
        reviewNoticePr: null,
        labels: null,
      };
      this.records.set(issue, record);
    }
    return record;
  }

  forget(issue: number): void {
    this.records.delete(issue);
  }

  /** The last lines the issue's worker printed: the running (or exited, unhandled) one's, else the last ended one's. */
  lastWords(issue: number): readonly string[] {
    const record = this.records.get(issue);
    return record?.run?.tail.last() ?? record?.lastWords ?? [];
  }

  run(issue: number): WorkerRun | undefined {
    return this.records.get(issue)?.run ?? undefined;
  }

  /** The worker is gone (its exit handled, killed, or its result taken): the rest is kept. */
  endRun(issue: number): void {
    const record = this.records.get(issue);
    if (!record) return;
    if (record.run) record.lastWords = record.run.tail.last();
    record.run = null;
  }

  /** Every issue with a worker, running or exited and not yet handled. */
  runs(): WorkerRun[] {
    const runs: WorkerRun[] = [];
    for (const record of this.records.values()) if (record.run) runs.push(record.run);
    return runs;
  }

  hasRun(issue: number): boolean {
    return (this.records.get(issue)?.run ?? null) !== null;
  }
}
