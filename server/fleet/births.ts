// Workers for the claims this fleet holds: a birth (fresh, continued, or a reviewer), fenced by
// the claim; adopting one a crashed host process left running; what an exit tells the breaker;
// and the checkpoints that push a running or exiting worker's commits to its branch.
import type { WorkingSet } from "../state/rebuild.js";
import type { SnapshotIssue } from "../state/snapshot.js";
import { FencedError } from "../state/claims.js";
import type { Board } from "../board/fleet-board.js";
import type { BirthGuard } from "./birth-guard.js";
import { Checkpoints } from "./checkpoint.js";
import type { IssueMemories } from "./issue-memory.js";
import type { FleetDeps, Registration } from "./registration.js";
import { errorData, errorText, type SupervisorLog } from "./supervisor-log.js";
import { discussion, type BriefComment } from "../workers/brief-comments.js";
import { adopt, birth, type BirthInput, type RunDeps, type WorkerRun } from "./worker-runs.js";

/** What births need of the fleet that owns them. */
export interface BirthsHost {
  readonly registration: Registration;
  readonly deps: FleetDeps;
  readonly memory: IssueMemories;
  readonly board: Board;
  readonly log: SupervisorLog;
  readonly guard: BirthGuard;
  /** A stop is under way: nothing more is born. */
  stopping(): boolean;
  /** Wakes the loop (a worker exited, the breaker tripped). */
  nudge(): void;
}

export class Births {
  /** Our claims' shas as last seen or made: the fence of an exit checkpoint. */
  private readonly claimShas = new Map<number, string>();
  private readonly checkpoints: Checkpoints;

  constructor(private readonly host: BirthsHost) {
    const { deps, registration } = host;
    this.checkpoints = new Checkpoints({
      workRepo: deps.workRepo,
      lease: deps.lease,
      base: registration.base,
      everyMs: registration.config.worker.checkpoint_seconds * 1000 * deps.timeScale,
      clock: deps.clock,
      log: host.log,
    });
  }

  /** This tick's claims: their shas fence the exit checkpoints. */
  observe(set: WorkingSet): void {
    for (const claim of set.mine) this.claimShas.set(claim.issue, claim.sha);
  }

  /** The periodic checkpoint of each running worker (not reviewer) whose period is up. */
  async checkpointRunning(set: WorkingSet): Promise<void> {
    for (const run of this.host.memory.runs()) {
      if (run.role !== "worker" || run.exitFacts || !this.checkpoints.due(run.issue, run.startedAt)) continue;
      const claim = set.mine.find((m) => m.issue === run.issue);
      if (!claim) continue;
      await this.checkpoints
        .push(run.issue, claim.sha, "periodic")
        .catch((error: unknown) => this.host.log("warn", "checkpoint_failed", `#${run.issue}: checkpoint not pushed (tried again next period): ${errorText(error)}`, run.issue, errorData(error)));
    }
  }

  /** Starts a worker for a claim we hold. Returns false when it could not start. */
  async birthFor(issue: SnapshotIssue, attempt: number, mode: BirthInput["mode"], claimSha: string, review?: BirthInput["review"]): Promise<boolean> {
    const { memory, deps, registration, log } = this.host;
    const existing = memory.run(issue.number);
    if (existing && !existing.exitFacts) return true;
    // A tick already acting when a stop arrived must not start a worker after stop killed the rest.
    if (this.host.stopping()) return false;
    const cfg = registration.config;
    try {
      await deps.lease.fence(issue.number, claimSha);
      this.claimShas.set(issue.number, claimSha);
      const comments = review ? [] : await this.discussionOf(issue);
      const run = await birth(
        {
          repo: registration.repo,
          issue: { number: issue.number, title: issue.title, body: issue.body, url: `${deps.conn.info.htmlUrl.replace(/\/$/, "")}/issues/${issue.number}`, labels: issue.labels },
          base: registration.base,
          attempt,
          maxAttempts: cfg.retry + 1,
          lastFailure: memory.get(issue.number)?.lastFailure ?? null,
          comments,
          mode,
          command: review ? (cfg.review.command ?? "") : registration.workerCommand,
          ...(review ? { review } : {}),
        },
        this.runDeps(),
      );
      const record = memory.of(issue.number);
      record.run = run;
      record.busy = null;
      if (!review) this.host.board.enter(issue.number, "coding");
      return true;
    } catch (error) {
      if (error instanceof FencedError) {
        memory.forget(issue.number);
        log("warn", "fenced", error.message, issue.number);
        return false;
      }
      // A worker that cannot even start is a fast death: the breaker counts it.
      log("error", "birth_failed", `#${issue.number}: could not start a ${review ? "reviewer" : "worker"}: ${(error as Error).message}`, issue.number, errorData(error));
      if (this.host.guard.recordDeath(issue.number, attempt, 0, false, false, [(error as Error).message])) this.host.nudge();
      return false;
    }
  }

  /**
   * The issue's comments for the brief, the fleet's own markers left out. A lookup failure costs
   * the brief its discussion, never the birth.
   */
  private async discussionOf(issue: SnapshotIssue): Promise<BriefComment[]> {
    if (issue.comments === 0) return []; // the listing says there are none: no request
    const { deps } = this.host;
    try {
      // One conditional request per birth (a retry's answers 304 while nobody commented): the
      // discussion under the issue (a clarification, a maintainer's "do it this way") is the task too.
      const all = await deps.conn.forge.listComments(issue.number);
      return discussion(all, deps.conn.login).map((c) => ({ author: c.author, createdAt: c.createdAt, body: c.body }));
    } catch (error) {
      this.host.log("warn", "comments_unreadable", `#${issue.number}: the brief goes without the issue's comments: ${errorText(error)}`, issue.number, errorData(error));
      return [];
    }
  }

  /** A claim of ours with no worker here may have one a crashed host process left running: watch it. */
  async adoptOrphan(issue: number): Promise<WorkerRun | undefined> {
    const run = await adopt(issue, this.host.registration.base, this.runDeps()).catch(() => null);
    if (!run) return undefined;
    const record = this.host.memory.of(issue);
    record.run = run;
    record.busy = null;
    this.host.board.enter(issue, "coding");
    return run;
  }

  private runDeps(): RunDeps {
    const { deps, registration, guard } = this.host;
    return {
      workRepo: deps.workRepo,
      config: registration.config,
      lanes: deps.lanes,
      runDir: deps.runDir,
      onQuota: (n, detection) => guard.onQuota(n, detection),
      onExit: (n) => this.onExit(n),
      checkpoint: (n) => {
        const sha = this.claimShas.get(n);
        return sha ? this.checkpoints.push(n, sha, "exit") : Promise.resolve(null);
      },
      ...(deps.env ? { env: deps.env } : {}),
    };
  }

  private onExit(issue: number): void {
    const run = this.host.memory.run(issue);
    const facts = run?.exitFacts;
    if (run && facts) {
      this.host.guard.recordDeath(issue, run.attempt, facts.exit.durationMs, facts.quota, facts.exit.killReason !== null || facts.outcome.kind !== "nothing", facts.lastLines);
    }
    this.host.nudge();
  }
}
