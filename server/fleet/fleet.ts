// A running project: one registration's tick loop. Each tick gathers a snapshot, rebuilds
// the working set, adds what only this host knows (its workers, their exits, the breaker, a
// quota pause), decides, and acts — one action at a time, landings strictly serialized.
// Everything durable is written to GitHub as it happens, so a crash loses nothing.
import type { FleetConfig } from "../../schemas/config.js";
import type { Connection } from "../host/connection.js";
import type { LaneWriter } from "../lanes/index.js";
import { gatherSnapshot } from "../gh/gather.js";
import { ForgeError } from "../gh/errors.js";
import type { Issue } from "../gh/forge.js";
import { FencedError, type Lease } from "../state/claims.js";
import { decide, type Action, type FailureEvidence, type LocalClaim } from "../state/decide.js";
import { rebuild, type WorkingSet } from "../state/rebuild.js";
import { pace } from "../state/pace.js";
import { attemptLabel, formatVerdict, latestVerdict, parseAttemptLabel, type Verdict } from "../state/markers.js";
import type { Snapshot } from "../state/snapshot.js";
import { adopt, birth, type BirthInput, type RunDeps, type WorkerRun } from "./worker-runs.js";
import type { WorkRepo } from "../workers/worktrees.js";
import { CircuitBreaker, type CircuitTrip } from "../workers/breaker.js";
import { assessLiveness, activityAt, BusyTracker } from "../workers/liveness.js";
import { quotaPause, type QuotaDetection } from "../workers/quota.js";
import type { BriefFailure } from "../workers/brief.js";
import { Landing, type LandOutcome } from "../landing/fleet-landing.js";
import { Board, type BoardPhase } from "../board/fleet-board.js";
import { neutralizeMarkers, renderEscalation, renderRetryNote } from "../board/render.js";

export interface Registration {
  repo: string;
  instance: string;
  workerCommand: string;
  target: number;
  config: FleetConfig;
  base: string;
  autoMerge: boolean;
  startedAt: string;
}

export interface ProjectDeps {
  conn: Connection;
  lease: Lease;
  namespace: string;
  workRepo: WorkRepo;
  lanes: LaneWriter;
  runDir: string;
  clock: () => Date;
  /** Multiplies every duration of the loop (pacing, stall and kill thresholds): tests and the demo run faster. */
  timeScale: number;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface TickReport {
  at: string;
  merged: number[];
  escalated: number[];
  closed: number[];
  dispatched: number[];
  reclaimed: number[];
  released: number[];
  in_flight: number;
  frontier_remaining: number;
  workers: number;
  births_held: string | null;
  merges_held: number[];
  moved: boolean;
  error: string | null;
}

/** The second look at a worker's CPU when the first sample could not say (see localFacts). */
const BUSY_RESAMPLE_MS = 1_000;

interface Pause {
  until: Date | null;
  reason: string;
}

export class Project {
  readonly registration: Registration;
  private readonly workers = new Map<number, WorkerRun>();
  private readonly kills = new Map<number, number>();
  private readonly redispatches = new Map<number, number>();
  private readonly livenessState = new Map<number, string>();
  private readonly busy = new Map<number, BusyTracker>();
  /** Evidence of the last failure per issue, for the next attempt's brief. */
  private readonly lastFailure = new Map<number, BriefFailure>();
  /** The tip an earlier attempt pushed: a retry may replace it. */
  private readonly replaceable = new Map<number, string>();
  /** Issues whose verdict marker this host already posted. */
  private readonly verdictPosted = new Set<string>();
  private readonly breaker: CircuitBreaker;
  /** The issue whose PR was synced with the base and whose CI runs: it lands next. */
  private landingSlot: number | null = null;
  private trip: CircuitTrip | null = null;
  /**
   * Issues of a trip still to be put back. The sweep runs inside a tick, on that tick's fresh
   * snapshot: a trip during the tick that dispatched them would find none of their claims in an
   * older working set (leaving phantom locks), and a tick running beside it would retry them.
   */
  private readonly unswept = new Set<number>();
  /** Per issue, its attempt count before its first fast death since the breaker last closed. */
  private readonly attemptsBeforeDeaths = new Map<number, number>();
  private quota: Pause | null = null;
  private stopping = false;
  /** Claims released since the stop began, by whichever tick released them: the stop reports them all. */
  private readonly drained = new Set<number>();
  private stopped = false;
  private emptyTicks = 0;
  private lastReport: TickReport | null = null;
  private lastIssues = new Map<number, Snapshot["issues"][number]>();
  private wake: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;
  private ticking: Promise<TickReport> | null = null;
  private readonly landing: Landing;
  private readonly board: Board;

  constructor(
    registration: Registration,
    private readonly deps: ProjectDeps,
  ) {
    this.registration = registration;
    const c = registration.config.circuit;
    this.breaker = new CircuitBreaker({ k: c.k, windowSeconds: c.window_seconds * deps.timeScale, fastDeathSeconds: c.fast_death_seconds * deps.timeScale });
    this.landing = new Landing(deps, () => this.registration.config);
    this.board = new Board(deps.conn.forge, deps.conn.login, deps.clock, { instance: registration.instance, host: deps.conn.hostName });
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** Starts the loop in the background. */
  start(): void {
    if (this.loopDone) return;
    this.loopDone = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const report = await this.tick();
      // Draining: the project ends once no worker is left, each exit handled by a tick.
      if (this.stopping && (report.in_flight === 0 || this.workers.size === 0)) break;
      const seconds = pace({
        lastSummary: { moved: report.moved, inFlight: report.in_flight + this.workers.size },
        emptyTicks: this.emptyTicks,
        config: this.registration.config,
      });
      await this.sleep(seconds * 1000 * this.deps.timeScale);
    }
    this.stopped = true;
    if (this.stopping) await this.finish();
  }

  /** The end of a stop: with no claim left, the lease goes too. */
  private async finish(): Promise<void> {
    const last = this.lastReport;
    if (last && last.error === null && last.in_flight === 0) await this.deps.lease.retire().catch(() => undefined);
    this.log("info", "stopped", `stopped; ${last?.in_flight ?? 0} claim(s) with a PR kept for a later run or a peer`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(10, ms));
      timer.unref?.();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  /** Wakes the loop now (a worker exited, a resize, a stop). */
  nudge(): void {
    this.wake?.();
  }

  resize(change: { target?: number | undefined; workerCommand?: string | undefined; selectors?: FleetConfig["selectors"] | undefined }): void {
    if (change.target !== undefined) this.registration.target = change.target;
    if (change.workerCommand !== undefined) this.registration.workerCommand = change.workerCommand;
    if (change.selectors !== undefined) this.registration.config = { ...this.registration.config, selectors: change.selectors };
    this.log("info", "resized", `target ${this.registration.target}; applied at the next birth`);
    this.nudge();
  }

  /** Clears the circuit breaker and any quota pause. */
  reset(): void {
    this.breaker.reset();
    this.trip = null;
    this.attemptsBeforeDeaths.clear();
    this.quota = null;
    this.log("info", "reset", "births resumed: breaker reset and quota pause cleared");
    this.nudge();
  }

  /**
   * Drain: start nothing, release claims that have no PR, keep those with one (a peer or a
   * later run lands them). With stopWorkers, running workers are killed first; without, the
   * loop goes on until each has exited and its result is handled (a finished worker's commits
   * still become a PR), and only then does the project end. Returning earlier and leaving them
   * running unwatched would let a new start on this host put a second worker in their worktrees.
   */
  async stop(stopWorkers: boolean): Promise<TickReport> {
    this.stopping = true;
    if (stopWorkers) {
      await Promise.all([...this.workers.values()].map((run) => run.handle.kill("project stopped")));
      await Promise.all([...this.workers.values()].map((run) => run.settling));
    }
    this.nudge();
    const report = await this.tick();
    if (this.workers.size > 0 && this.loopDone && !this.stopped) {
      this.log("info", "draining", `stopping: ${this.workers.size} worker(s) still running; the project ends once they have exited`);
    } else {
      this.stopped = true;
      this.nudge();
      if (this.loopDone) await this.loopDone;
      else await this.finish();
    }
    // The loop's own tick, woken by the workers' exits, may have done the releasing.
    return { ...report, released: [...this.drained].sort((a, b) => a - b) };
  }

  /** Workers a stopping project still waits for (0 once it has ended, or when it is not stopping). */
  draining(): number {
    return this.stopping && !this.stopped ? this.workers.size : 0;
  }

  isStopped(): boolean {
    return this.stopped;
  }

  // ---- views ----------------------------------------------------------------------------------

  mergesHeld(): boolean {
    return !this.registration.autoMerge;
  }

  workerRows(): { issue: number; state: string; pid: number | null; attempt: number; started_at: string }[] {
    return [...this.workers.values()].map((run) => ({
      issue: run.issue,
      state: run.exitFacts ? `exited (${run.exitFacts.outcome.kind})` : run.quota ? "usage limit" : "running",
      pid: run.exitFacts ? null : run.handle.pid,
      attempt: run.attempt,
      started_at: new Date(run.startedAt).toISOString(),
    }));
  }

  births(): { paused: boolean; reason: string | null; until: string | null } {
    const paused = this.birthsPaused();
    return { paused: paused !== null, reason: paused?.reason ?? null, until: paused?.until?.toISOString() ?? null };
  }

  report(): TickReport | null {
    return this.lastReport;
  }

  // ---- one tick -------------------------------------------------------------------------------

  /** One reconciliation pass. Ticks never overlap: a second caller waits for the first. */
  async tick(): Promise<TickReport> {
    while (this.ticking) await this.ticking.catch(() => undefined);
    // An ended project touches nothing more (its lease may already be retired).
    if (this.stopped && this.lastReport) return this.lastReport;
    this.ticking = this.runTick();
    try {
      return await this.ticking;
    } finally {
      this.ticking = null;
    }
  }

  private async runTick(): Promise<TickReport> {
    const now = this.deps.clock();
    const report: TickReport = {
      at: now.toISOString(),
      merged: [],
      escalated: [],
      closed: [],
      dispatched: [],
      reclaimed: [],
      released: [],
      in_flight: 0,
      frontier_remaining: 0,
      workers: 0,
      births_held: null,
      merges_held: [],
      moved: false,
      error: null,
    };
    try {
      await this.deps.lease.heartbeat();
      const snapshot = await this.snapshot(now);
      this.deps.lease.observe(snapshot.heartbeats);
      let set = rebuild(snapshot, this.registration.config, this.registration.instance, now);
      if (this.unswept.size > 0) {
        // The breaker owns these issues now: no decision of this tick may retry or continue them.
        const owned = new Set(this.unswept);
        await this.sweep(set, snapshot);
        set = { ...set, mine: set.mine.filter((m) => !owned.has(m.issue)) };
      }
      await this.dropOrphans(set);
      const local = await this.localFacts(set, snapshot, now);
      const paused = this.birthsPaused();
      const decision = decide({
        set,
        local,
        target: this.registration.target,
        retry: this.registration.config.retry,
        autoMerge: this.registration.autoMerge,
        birthsPaused: paused !== null,
        stopping: this.stopping,
        idleGraceSeconds: this.registration.config.idle_grace_seconds * this.deps.timeScale,
      });
      report.births_held = decision.birthsHeld ?? (paused ? paused.reason : null);
      const issues = new Map(snapshot.issues.map((i) => [i.number, i]));
      this.lastIssues = issues;
      for (const action of decision.actions) {
        if (this.stopped) break;
        try {
          await this.act(action, set, issues, report);
        } catch (error) {
          this.actionFailed(action, error);
        }
      }
      await this.renderBoards(set, report);
      report.in_flight = set.mine.length + report.dispatched.length + report.reclaimed.length - report.merged.length - report.escalated.length - report.closed.length - report.released.length;
      report.frontier_remaining = Math.max(0, set.frontier.dispatch.length - report.dispatched.length);
      report.workers = [...this.workers.values()].filter((r) => !r.exitFacts).length;
      report.moved =
        report.merged.length + report.escalated.length + report.closed.length + report.dispatched.length + report.reclaimed.length + report.released.length > 0;
      this.emptyTicks = report.frontier_remaining === 0 && report.in_flight <= 0 ? this.emptyTicks + 1 : 0;
    } catch (error) {
      report.error = error instanceof Error ? error.message : String(error);
      this.log("error", "tick_failed", `tick failed: ${report.error}`, undefined, errorData(error));
    }
    report.in_flight = Math.max(0, report.in_flight);
    if (this.stopping) for (const n of report.released) this.drained.add(n);
    this.lastReport = report;
    this.deps.lanes.append("monitor", { event: "tick", msg: summaryLine(report), data: { ...report } });
    return report;
  }

  private snapshot(now: Date): Promise<Snapshot> {
    const { conn } = this.deps;
    return gatherSnapshot(conn.forge, conn.refs, {
      login: conn.login,
      defaultBranch: conn.info.defaultBranch,
      base: this.registration.base,
      namespace: this.deps.namespace,
      gateMode: this.registration.config.gate.ci,
      branchPrefix: this.registration.config.worktree.branch_prefix,
      now,
    });
  }

  /**
   * A worker whose claim is no longer ours (taken over by another instance, or gone) must not
   * work on: the issue may already have its next worker elsewhere (invariant 1). Every worker
   * here was born before this snapshot, after its claim was made, so absence means loss.
   */
  private async dropOrphans(set: WorkingSet): Promise<void> {
    const mine = new Set(set.mine.map((m) => m.issue));
    for (const [n, run] of [...this.workers]) {
      if (mine.has(n)) continue;
      if (!run.exitFacts) {
        this.log("warn", "claim_lost", `#${n}: our claim is gone (taken over or deleted); ending its worker`, n);
        await run.handle.kill("the claim was lost");
      }
      this.forget(n);
    }
  }

  private birthsPaused(): Pause | null {
    if (this.stopping) return { until: null, reason: "stopping" };
    if (this.trip) return { until: null, reason: `circuit breaker tripped after ${this.trip.deaths.length} fast worker deaths: fix the worker command, then project_reset` };
    if (this.quota) {
      if (this.quota.until && this.quota.until.getTime() <= this.deps.clock().getTime()) {
        this.quota = null;
        return null;
      }
      return this.quota;
    }
    return null;
  }

  /** What this host knows about each of its claims beyond GitHub. */
  private async localFacts(set: WorkingSet, snapshot: Snapshot, now: Date): Promise<Map<number, LocalClaim>> {
    const local = new Map<number, LocalClaim>();
    const cfg = this.registration.config;
    const scale = this.deps.timeScale;
    for (const claim of set.mine) {
      const run = this.workers.get(claim.issue) ?? (claim.status === "no_pr" ? await this.adoptOrphan(claim.issue) : undefined);
      const facts: LocalClaim = { worker: "none", kills: this.kills.get(claim.issue) ?? 0, redispatches: this.redispatches.get(claim.issue) ?? 0 };
      let verdict: Verdict | null = null;
      if (run && !run.exitFacts) {
        facts.worker = "running";
        // Output is the cheapest sign of life: while it is recent, the worktree scan (git
        // processes and a file walk per worker per tick) cannot change the verdict, so skip it.
        const quietMs = now.getTime() - run.handle.lastOutputAt();
        const progress =
          quietMs < (cfg.stall.quiet_seconds * scale * 1000) / 2
            ? null
            : await this.deps.workRepo.progress(claim.issue, this.registration.base).catch(() => null);
        const activity = activityAt(run.handle.lastOutputAt(), progress?.worktreeMtime ?? null, progress?.lastCommitAt ?? null) ?? run.startedAt;
        let tracker = this.busy.get(claim.issue);
        if (!tracker) {
          tracker = new BusyTracker();
          this.busy.set(claim.issue, tracker);
        }
        let reading = await tracker.sample(run.handle.pid);
        const assess = () =>
          assessLiveness({
            now: now.getTime(),
            activityAt: activity,
            startedAt: run.startedAt,
            stallSeconds: cfg.stall.quiet_seconds * scale,
            killSeconds: cfg.stall.kill_seconds * scale,
            maxRuntimeSeconds: cfg.worker.max_runtime_seconds * scale,
            busyDescendant: reading.busy === true,
          });
        let decision = assess();
        if (decision.state === "kill" && decision.cause === "quiet" && reading.busy === "unknown") {
          // A first sample cannot tell busy from idle (the tick cadence can be slower than the
          // kill threshold): look again before ending a tree that may be compiling.
          await new Promise((resolve) => setTimeout(resolve, BUSY_RESAMPLE_MS));
          reading = await tracker.sample(run.handle.pid);
          decision = assess();
        }
        facts.liveness = decision.state === "kill" ? "kill" : decision.state === "busy" ? "busy" : decision.state === "stall_candidate" ? "stall_candidate" : "active";
        facts.idleSeconds = (now.getTime() - activity) / 1000;
        // One record per change of state, not one per tick: a worker quiet for an hour would
        // otherwise fill the lane with the same line.
        const previous = this.livenessState.get(claim.issue);
        this.livenessState.set(claim.issue, decision.state);
        if (decision.state !== "active" && decision.state !== previous) {
          this.deps.lanes.append("liveness", { event: decision.state, msg: `#${claim.issue}: ${decision.state} after ${Math.round(decision.quietSeconds)}s quiet${decision.cause ? ` (${decision.cause})` : ""}${reading.busy ? `; ${reading.why}` : ""}`, issue: claim.issue, pid: run.handle.pid });
        }
      } else if (run?.exitFacts) {
        const exit = run.exitFacts;
        if (exit.quota) {
          // A usage limit is a pause, not a failure: the claim waits (no attempt spent) and
          // is continued once births resume.
          facts.worker = "none";
          this.workers.delete(claim.issue);
        } else {
          facts.worker = "exited";
          facts.outcome = exit.outcome.kind;
          facts.killed = exit.exit.killReason !== null;
          facts.commitsAhead = exit.commitsAhead;
          facts.changes = exit.changes;
          facts.verdict = exit.verdict ? { kind: exit.verdict.kind, reason: exit.verdict.reason } : null;
          facts.idleSeconds = Number.POSITIVE_INFINITY;
          verdict = exit.verdict;
          if (exit.verdict) await this.postVerdict(claim.issue, run.attempt, exit.verdict);
        }
      } else if (claim.status === "no_pr") {
        // No worker here (a restart, a reclaim, a takeover): a verdict this fleet posted earlier
        // still speaks for the claim; otherwise it is dead and continued.
        const comments = await this.deps.conn.forge.listComments(claim.issue);
        verdict = latestVerdict(comments, this.deps.conn.login);
        facts.verdict = verdict ? { kind: verdict.kind, reason: verdict.reason } : null;
        if (verdict) facts.worker = "exited";
        facts.outcome = verdict ? "verdict" : "nothing";
        facts.idleSeconds = Number.POSITIVE_INFINITY;
      }
      if (verdict?.kind === "blocked") {
        // The worker's own word counts next to the graph's links: a blocker it found that nobody
        // had linked is exactly the gap a human must hear about (not a reason to run it again).
        const blockers = blockersOf(snapshot, claim.issue, verdict.blockedBy ?? []);
        facts.blockers = blockers.all;
        facts.blockersOpen = blockers.open;
      }
      local.set(claim.issue, facts);
    }
    return local;
  }

  // ---- acting ---------------------------------------------------------------------------------

  private async act(action: Action, set: WorkingSet, issues: Map<number, Snapshot["issues"][number]>, report: TickReport): Promise<void> {
    const { forge } = this.deps.conn;
    const cfg = this.registration.config;
    switch (action.kind) {
      case "release": {
        const run = this.workers.get(action.issue);
        if (action.killWorker && run) await run.handle.kill(action.why);
        await this.deps.lease.release(action.issue, action.sha);
        this.forget(action.issue);
        report.released.push(action.issue);
        this.log("info", "released", `#${action.issue}: claim released (${action.why})`, action.issue);
        return;
      }
      case "kill": {
        const run = this.workers.get(action.issue);
        if (!run) return;
        this.kills.set(action.issue, (this.kills.get(action.issue) ?? 0) + 1);
        this.deps.lanes.append("liveness", { level: "warn", event: "killed", msg: `#${action.issue}: ${action.why}`, issue: action.issue, pid: run.handle.pid });
        await run.handle.kill(action.why);
        await run.settling;
        this.workers.delete(action.issue);
        return;
      }
      case "hold":
        report.merges_held.push(action.issue);
        return;
      case "land": {
        // One landing slot (required CI): once a PR was synced with the base and waits for its
        // CI, other green PRs wait too, and after a landing the rest wait for the next tick. Syncing
        // every waiting PR after each landing would restart CI on all of them for nothing.
        const slot = this.landingSlot;
        const slotBusy = slot !== null && slot !== action.issue && set.mine.some((m) => m.issue === slot && m.issueOpen && m.status !== "failure");
        // A local gate syncs and gates inside the landing, so several may land in one tick.
        if (slotBusy || (report.merged.length > 0 && cfg.gate.ci === "required")) return;
        if (slot !== null && !slotBusy) this.landingSlot = null;
        const issue = issues.get(action.issue);
        const outcome = await this.landing.land({ issue: action.issue, title: issue?.title ?? `#${action.issue}`, claimSha: action.sha, pr: action.pr, head: action.head });
        if (outcome.outcome === "synced") this.landingSlot = action.issue;
        else if (this.landingSlot === action.issue && outcome.outcome !== "busy" && outcome.outcome !== "retry_later") this.landingSlot = null;
        await this.afterLanding(action, outcome, set, report);
        return;
      }
      case "retry": {
        await this.retry(action.issue, action.sha, action.attempt, action.pr, action.evidence, issues);
        return;
      }
      case "escalate": {
        await this.escalate(action.issue, action.sha, action.pr, action.why, action.evidence, issues.get(action.issue));
        report.escalated.push(action.issue);
        return;
      }
      case "open_pr": {
        await this.openPull(action.issue, action.sha, issues.get(action.issue));
        return;
      }
      case "close_done": {
        const changes = await this.deps.workRepo.hasChangesAgainstBase(action.issue, this.registration.base).catch(() => false);
        if (changes) {
          await this.failure(action.issue, action.sha, null, { kind: "verdict", verdict: "already-satisfied", reason: "the branch changes files, which refutes already-satisfied" }, set, issues);
          return;
        }
        await this.deps.lease.fence(action.issue, action.sha);
        await forge.createComment(action.issue, `Closing: the fleet's worker found this already satisfied.\n\n> ${neutralizeMarkers(oneLine(action.reason))}`);
        await forge.closeIssue(action.issue, "completed");
        await this.board.terminal(action.issue, "merged", this.attemptOf(issues.get(action.issue)), cfg.retry + 1, { note: "closed as already satisfied" });
        await this.deps.lease.release(action.issue, action.sha);
        await this.deps.workRepo.remove(action.issue, { deleteBranch: true }).catch(() => undefined);
        this.forget(action.issue);
        await this.clearRunnerError(action.issue);
        report.closed.push(action.issue);
        this.log("info", "closed_done", `#${action.issue}: closed as already satisfied`, action.issue);
        return;
      }
      case "redispatch":
      case "recover": {
        const issue = issues.get(action.issue);
        if (!issue) return;
        if (action.kind === "redispatch") this.redispatches.set(action.issue, (this.redispatches.get(action.issue) ?? 0) + 1);
        await this.birthFor(issue, this.attemptOf(issue) + 1, "continue", action.sha);
        return;
      }
      case "reclaim": {
        const outcome = await this.deps.lease.reclaim(action.issue, action.sha);
        if (!outcome.won) return;
        this.log("info", "reclaimed", `#${action.issue}: reclaimed a stale claim from ${action.from ?? "an unknown instance"}`, action.issue);
        if (action.thenRelease) {
          await this.deps.lease.release(action.issue, outcome.sha);
          report.released.push(action.issue);
          return;
        }
        report.reclaimed.push(action.issue);
        const issue = issues.get(action.issue);
        if (issue && (await this.birthFor(issue, this.attemptOf(issue) + 1, "continue", outcome.sha))) return;
        return;
      }
      case "dispatch": {
        const issue = issues.get(action.issue);
        if (!issue) return;
        const claimed = await this.deps.lease.claim(action.issue);
        if (!claimed.won) {
          this.log("info", "claim_lost", `#${action.issue}: a peer claimed it first`, action.issue);
          return;
        }
        report.dispatched.push(action.issue);
        this.board.enter(action.issue, "claimed");
        await this.birthFor(issue, action.attempt + 1, "continue", claimed.sha);
        return;
      }
    }
  }

  private attemptOf(issue: { labels: string[] } | undefined): number {
    if (!issue) return 0;
    let n = 0;
    for (const label of issue.labels) n = Math.max(n, parseAttemptLabel(label, this.registration.config.labels.attempt_prefix) ?? 0);
    return n;
  }

  /** Starts a worker for a claim we hold. Returns false when it could not start. */
  private async birthFor(issue: Snapshot["issues"][number], attempt: number, mode: BirthInput["mode"], claimSha: string): Promise<boolean> {
    const existing = this.workers.get(issue.number);
    if (existing && !existing.exitFacts) return true;
    // A tick already acting when a stop arrived must not start a worker after stop killed the rest.
    if (this.stopping) return false;
    const cfg = this.registration.config;
    try {
      await this.deps.lease.fence(issue.number, claimSha);
      const run = await birth(
        {
          repo: this.registration.repo,
          issue: { number: issue.number, title: issue.title, body: issue.body, url: issueUrl(this.deps.conn.info.htmlUrl, issue.number), labels: issue.labels },
          base: this.registration.base,
          attempt,
          maxAttempts: cfg.retry + 1,
          lastFailure: this.lastFailure.get(issue.number) ?? null,
          mode,
          command: this.registration.workerCommand,
        },
        this.runDeps(),
      );
      this.workers.set(issue.number, run);
      this.busy.delete(issue.number);
      this.board.enter(issue.number, "coding");
      return true;
    } catch (error) {
      if (error instanceof FencedError) {
        this.forget(issue.number);
        this.log("warn", "fenced", error.message, issue.number);
        return false;
      }
      // A worker that cannot even start is a fast death: the breaker counts it.
      this.log("error", "birth_failed", `#${issue.number}: could not start a worker: ${(error as Error).message}`, issue.number, errorData(error));
      this.recordDeath(issue.number, attempt, 0, false, false);
      return false;
    }
  }

  private runDeps(): RunDeps {
    return {
      workRepo: this.deps.workRepo,
      config: this.registration.config,
      lanes: this.deps.lanes,
      runDir: this.deps.runDir,
      onQuota: (n, detection) => this.onQuota(n, detection),
      onExit: (n) => this.onExit(n),
      ...(this.deps.env ? { env: this.deps.env } : {}),
    };
  }

  /** A claim of ours with no worker here may still have one a crashed host process left running. */
  private async adoptOrphan(issue: number): Promise<WorkerRun | undefined> {
    const run = await adopt(issue, this.registration.base, this.runDeps()).catch(() => null);
    if (!run) return undefined;
    this.workers.set(issue, run);
    this.board.enter(issue, "coding");
    return run;
  }

  private onExit(issue: number): void {
    const run = this.workers.get(issue);
    const facts = run?.exitFacts;
    if (run && facts) {
      this.recordDeath(issue, run.attempt, facts.exit.durationMs, facts.quota, facts.exit.killReason !== null || facts.outcome.kind !== "nothing");
    }
    this.nudge();
  }

  private recordDeath(issue: number, attempt: number, durationMs: number, quota: boolean, productive: boolean): void {
    const exit = { issue, durationMs, at: this.deps.clock().getTime(), quota, productive, killed: false };
    if (this.breaker.isFastDeath(exit) && !this.attemptsBeforeDeaths.has(issue)) this.attemptsBeforeDeaths.set(issue, attempt - 1);
    const trip = this.breaker.recordExit(exit);
    if (trip && !this.trip) {
      this.trip = trip;
      for (const death of trip.deaths) this.unswept.add(death.issue);
      this.log("error", "breaker_tripped", `circuit breaker tripped: ${trip.deaths.length} fast worker deaths; births parked until project_reset`);
      this.nudge();
    }
  }

  /**
   * After a trip: every affected issue goes back to the backlog with a note and a runner-error
   * label, its claim released and any attempt the fast deaths spent given back — the command
   * failed, not the issue. An issue whose sweep fails stays pending for the next tick.
   */
  private async sweep(set: WorkingSet, snapshot: Snapshot): Promise<void> {
    const { forge } = this.deps.conn;
    const cfg = this.registration.config;
    const deaths = this.trip?.deaths.length ?? 0;
    const swept: number[] = [];
    try {
      await forge.ensureLabel({ name: cfg.labels.runner_error, color: "b60205", description: "afk-mcp: the worker command failed to run" });
      for (const n of [...this.unswept].sort((a, b) => a - b)) {
        const claim = set.mine.find((m) => m.issue === n);
        const issue = snapshot.issues.find((i) => i.number === n);
        const run = this.workers.get(n);
        if (run && !run.exitFacts) await run.handle.kill("circuit breaker tripped");
        if (claim) await this.deps.lease.release(n, claim.sha).catch(() => false);
        if (issue) {
          await forge.createComment(
            n,
            `The fleet stopped starting workers: the worker command died within seconds ${deaths} times in a row ` +
              `(circuit breaker). This issue goes back to the backlog untouched by this run; fix the command, then call project_reset.`,
          );
          const before = this.attemptsBeforeDeaths.get(n) ?? 0;
          for (const label of issue.labels) {
            const k = parseAttemptLabel(label, cfg.labels.attempt_prefix);
            if (k !== null && k > before) await forge.removeLabel(n, label);
          }
          const restore = before > 0 ? [attemptLabel(before, cfg.labels.attempt_prefix)] : [];
          await forge.addLabels(n, [cfg.labels.ready, cfg.labels.runner_error, ...restore]);
          await forge.removeLabel(n, cfg.labels.escalate);
        }
        this.forget(n);
        this.attemptsBeforeDeaths.delete(n);
        this.unswept.delete(n);
        swept.push(n);
      }
    } catch (error) {
      this.log("error", "sweep_failed", `breaker sweep failed (retried next tick): ${(error as Error).message}`, undefined, errorData(error));
    }
    if (swept.length > 0) this.log("warn", "breaker_swept", `swept ${swept.length} issue(s) after the breaker tripped: ${swept.map((n) => `#${n}`).join(", ")}`);
  }

  private onQuota(issue: number, detection: QuotaDetection): void {
    const pause = quotaPause(detection, this.deps.clock(), { backoffSeconds: 900 * this.deps.timeScale });
    const reason =
      detection.kind === "auth"
        ? `the worker's login expired or is missing (${oneLine(detection.text)}): sign the agent in again, then project_reset`
        : `usage limit reached (${oneLine(detection.text)})${pause.until ? `: births paused until ${pause.until.toISOString()}` : ""}`;
    if (!this.quota || (pause.until && this.quota.until && pause.until > this.quota.until) || pause.until === null) {
      this.quota = { until: pause.until, reason };
    }
    this.log("warn", detection.kind === "auth" ? "auth_expired" : "quota", `#${issue}: ${reason}`, issue);
  }

  private async postVerdict(issue: number, attempt: number, verdict: Verdict): Promise<void> {
    const key = `${issue}:${attempt}`;
    if (this.verdictPosted.has(key)) return;
    this.verdictPosted.add(key);
    await this.deps.conn.forge.createComment(issue, formatVerdict(verdict));
  }

  private async openPull(n: number, claimSha: string, issue: Issue | Snapshot["issues"][number] | undefined): Promise<void> {
    const { forge } = this.deps.conn;
    await this.deps.lease.fence(n, claimSha);
    const pushed = await this.deps.workRepo.push(n, { expectedRemoteSha: this.replaceable.get(n) ?? null });
    const title = issue?.title ?? `Issue #${n}`;
    const open = (await forge.listOpenPulls()).find((p) => p.head.ref === pushed.branch && p.head.repoFullName?.toLowerCase() === this.registration.repo.toLowerCase());
    if (!open) {
      const body = [`Closes #${n}`, "", `Opened by afk-mcp for #${n} (instance \`${this.registration.instance}\`).`, "", `Head: ${pushed.sha}`].join("\n");
      const pr = await forge.createPull({ title, body, head: pushed.branch, base: this.registration.base });
      this.log("info", "pr_opened", `#${n}: opened PR #${pr.number}`, n, { pr: pr.number, head: pushed.sha });
    }
    this.workers.delete(n);
    this.replaceable.delete(n);
    this.board.enter(n, "pr_open");
  }

  private async failure(
    n: number,
    claimSha: string,
    pr: number | null,
    evidence: FailureEvidence,
    set: WorkingSet,
    issues: Map<number, Snapshot["issues"][number]>,
  ): Promise<void> {
    const claim = set.mine.find((m) => m.issue === n);
    const attempt = claim?.attempt ?? this.attemptOf(issues.get(n));
    if (attempt < this.registration.config.retry) await this.retry(n, claimSha, attempt + 1, pr, evidence, issues);
    else await this.escalate(n, claimSha, pr, `failed ${attempt + 1} attempt(s) (retry limit ${this.registration.config.retry})`, evidence, issues.get(n));
  }

  /** The retry ladder: the attempt label moves on, the PR closes, the next worker starts fresh. */
  private async retry(n: number, claimSha: string, attempt: number, pr: number | null, evidence: FailureEvidence, issues: Map<number, Snapshot["issues"][number]>): Promise<void> {
    const { forge } = this.deps.conn;
    const cfg = this.registration.config;
    await this.deps.lease.fence(n, claimSha);
    const brief = await this.evidenceForBrief(evidence);
    this.lastFailure.set(n, brief);
    const issue = issues.get(n);
    await forge.ensureLabel({ name: attemptLabel(attempt, cfg.labels.attempt_prefix), color: "fbca04", description: "afk-mcp: retry count" });
    await forge.addLabels(n, [attemptLabel(attempt, cfg.labels.attempt_prefix)]);
    for (const label of issue?.labels ?? []) {
      const k = parseAttemptLabel(label, cfg.labels.attempt_prefix);
      if (k !== null && k !== attempt) await forge.removeLabel(n, label);
    }
    if (pr) {
      const detail = await forge.getPull(pr).catch(() => null);
      if (detail?.head.sha) this.replaceable.set(n, detail.head.sha);
      await forge.createComment(
        pr,
        renderRetryNote({ issue: n, attempt, maxAttempts: cfg.retry + 1, why: brief.summary, evidence: { kind: brief.kind, summary: brief.summary, excerpt: brief.excerpt }, pr: null }),
      );
      await forge.closePull(pr);
    }
    const run = this.workers.get(n);
    if (run && !run.exitFacts) await run.handle.kill("retrying");
    this.workers.delete(n);
    this.board.enter(n, "ci_failed");
    this.log("info", "retry", `#${n}: attempt ${attempt + 1} of ${cfg.retry + 1} after: ${brief.summary}`, n, { attempt: attempt + 1 });
    if (issue) {
      const withLabel = { ...issue, labels: [...issue.labels.filter((l) => parseAttemptLabel(l, cfg.labels.attempt_prefix) === null), attemptLabel(attempt, cfg.labels.attempt_prefix)] };
      if (!this.birthsPaused()) await this.birthFor(withLabel, attempt + 1, "fresh", claimSha);
    }
  }

  private async escalate(n: number, claimSha: string, pr: number | null, why: string, evidence: FailureEvidence | null, issue: Snapshot["issues"][number] | undefined): Promise<void> {
    const { forge } = this.deps.conn;
    const cfg = this.registration.config;
    const run = this.workers.get(n);
    if (run && !run.exitFacts) await run.handle.kill("escalated");
    const brief = evidence ? await this.evidenceForBrief(evidence) : null;
    await this.board.terminal(n, "escalated", this.attemptOf(issue), cfg.retry + 1, { note: why });
    await this.deps.lease.release(n, claimSha);
    await forge.removeLabel(n, cfg.labels.ready);
    for (const label of issue?.labels ?? []) if (parseAttemptLabel(label, cfg.labels.attempt_prefix) !== null) await forge.removeLabel(n, label);
    await forge.ensureLabel({ name: cfg.labels.escalate, color: "d93f0b", description: "afk-mcp: needs a human" });
    await forge.addLabels(n, [cfg.labels.escalate]);
    if (cfg.board.escalate_comment) {
      // Rendered by board.ts, which neutralizes markers: quoted CI output must never read as
      // a verdict or a board written by the fleet's own login.
      const body = renderEscalation({
        issue: n,
        why,
        attempts: this.attemptOf(issue) + 1,
        evidence: brief ? { kind: brief.kind, summary: brief.summary, excerpt: brief.excerpt } : null,
        pr: pr ? { number: pr, url: `${this.deps.conn.info.htmlUrl.replace(/\/$/, "")}/pull/${pr}` } : null,
        links: [],
        labels: { ready: cfg.labels.ready, escalate: cfg.labels.escalate },
      });
      await forge.createComment(n, `${body}\n\nBranch \`${this.deps.workRepo.branchName(n, issue?.title ?? "")}\` keeps the last attempt's work; logs: \`logs {lane: "supervisor", issue: ${n}}\`.`);
    }
    this.forget(n);
    this.log("warn", "escalated", `#${n}: escalated to ${cfg.labels.escalate}: ${why}`, n);
  }

  private async afterLanding(action: Extract<Action, { kind: "land" }>, outcome: LandOutcome, set: WorkingSet, report: TickReport): Promise<void> {
    const n = action.issue;
    const issues = this.lastIssues;
    switch (outcome.outcome) {
      case "merged":
        await this.board.terminal(n, "merged", set.mine.find((m) => m.issue === n)?.attempt ?? 0, this.registration.config.retry + 1, { pr: action.pr });
        await this.deps.lease.release(n, action.sha);
        if (this.registration.config.worktree.cleanup) await this.deps.workRepo.remove(n, { deleteBranch: true }).catch(() => undefined);
        await this.clearRunnerError(n);
        this.forget(n);
        report.merged.push(n);
        this.log("info", "merged", `#${n}: landed PR #${action.pr} as ${outcome.mergeSha?.slice(0, 12) ?? "?"}`, n, { ...outcome });
        if (outcome.verified === false) {
          this.log("error", "base_moved_during_merge", `#${n}: the base moved inside the merge call, so the landed tree was not the gated one; use landing.strategy "push" or require up-to-date branches`, n);
        }
        return;
      case "conflict":
        await this.failure(
          n,
          action.sha,
          action.pr,
          { kind: "gate", summary: `merging ${this.registration.base} into the branch conflicts in ${outcome.files.join(", ")}`, excerpt: outcome.files.join("\n") },
          set,
          issues,
        );
        return;
      case "gate_red":
        await this.failure(n, action.sha, action.pr, { kind: "gate", summary: `${outcome.evidence.kind === "local" ? "the local gate" : "CI"} failed on the synced head: ${outcome.evidence.summary}`, excerpt: outcome.evidence.excerpt }, set, issues);
        return;
      case "fenced":
        this.forget(n);
        this.log("warn", "fenced", `#${n}: our claim was taken over; nothing landed`, n);
        return;
      default:
        this.log("info", `land_${outcome.outcome}`, `#${n}: ${outcome.why ?? outcome.outcome}`, n);
    }
  }

  private async evidenceForBrief(evidence: FailureEvidence): Promise<BriefFailure> {
    switch (evidence.kind) {
      case "ci":
        return this.landing.ciEvidence(evidence.pr, evidence.failing);
      case "verdict":
        return { kind: evidence.verdict === "giving-up" ? "giving-up" : evidence.verdict, summary: `the worker's verdict was ${evidence.verdict}: ${oneLine(evidence.reason)}`, excerpt: "" };
      case "no_result":
        return { kind: "no-result", summary: evidence.why, excerpt: "" };
      case "hung":
        return { kind: "stalled", summary: `the worker went quiet past the kill threshold ${evidence.kills} time(s)`, excerpt: "" };
      case "gate":
        return { kind: "gate", summary: evidence.summary, excerpt: evidence.excerpt };
    }
  }

  private async renderBoards(set: WorkingSet, _report: TickReport): Promise<void> {
    if (!this.registration.config.board.enabled) return;
    for (const claim of set.mine) {
      if (!claim.issueOpen) continue;
      const phase: BoardPhase =
        claim.status === "awaiting_merge" ? "awaiting_merge" : claim.status === "awaiting_ci" ? "pr_open" : claim.status === "failure" ? "ci_failed" : this.workers.has(claim.issue) ? "coding" : "claimed";
      await this.board
        .show(claim.issue, phase, claim.attempt, this.registration.config.retry + 1, claim.pr, this.registration.instance, this.deps.conn.hostName)
        .catch((error: unknown) => this.log("warn", "board_failed", `#${claim.issue}: board not updated: ${(error as Error).message}`, claim.issue));
    }
  }

  /** A breaker sweep's runner-error label is stale once the issue got done after all. */
  private async clearRunnerError(n: number): Promise<void> {
    const label = this.registration.config.labels.runner_error;
    const labels = this.lastIssues.get(n)?.labels ?? [];
    if (labels.some((l) => l.toLowerCase() === label.toLowerCase())) {
      await this.deps.conn.forge.removeLabel(n, label).catch(() => undefined);
    }
  }

  private forget(n: number): void {
    this.workers.delete(n);
    this.kills.delete(n);
    this.redispatches.delete(n);
    this.livenessState.delete(n);
    this.busy.delete(n);
    this.lastFailure.delete(n);
  }

  private actionFailed(action: Action, error: unknown): void {
    if (error instanceof FencedError) {
      this.forget(action.issue);
      this.log("warn", "fenced", error.message, action.issue);
      return;
    }
    const message = error instanceof ForgeError ? `${error.message} (${error.hint})` : error instanceof Error ? error.message : String(error);
    this.log("error", "action_failed", `#${action.issue}: ${action.kind} failed: ${message}`, action.issue, errorData(error));
  }

  private log(level: "debug" | "info" | "warn" | "error", event: string, msg: string, issue?: number, data?: Record<string, unknown>): void {
    this.deps.lanes.append("supervisor", {
      level,
      event,
      msg,
      instance: this.registration.instance,
      ...(issue !== undefined ? { issue } : {}),
      ...(data ? { data } : {}),
    });
  }
}

/** The issues `n` waits on (linked in GitHub, or named by its worker's verdict), and the open ones. */
function blockersOf(snapshot: Snapshot, n: number, named: readonly number[]): { all: number[]; open: number[] } {
  const open = new Set(snapshot.issues.map((i) => i.number));
  const issue = snapshot.issues.find((i) => i.number === n);
  const linked = issue?.blockedBy ?? [];
  const closedLinks = new Set(linked.filter((b) => b.state !== "open").map((b) => b.number));
  const all = [...new Set([...linked.map((b) => b.number), ...named])].filter((b) => b !== n).sort((a, b) => a - b);
  return { all, open: all.filter((b) => open.has(b) && !closedLinks.has(b)) };
}

function issueUrl(htmlUrl: string, n: number): string {
  return `${htmlUrl.replace(/\/$/, "")}/issues/${n}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

function errorData(error: unknown): Record<string, unknown> {
  if (error instanceof ForgeError) return { kind: error.kind, status: error.status, hint: error.hint };
  if (error instanceof Error) return { name: error.name };
  return {};
}

export function summaryLine(r: TickReport): string {
  const parts = [
    r.merged.length ? `merged ${r.merged.map((n) => `#${n}`).join(" ")}` : "",
    r.dispatched.length ? `dispatched ${r.dispatched.map((n) => `#${n}`).join(" ")}` : "",
    r.escalated.length ? `escalated ${r.escalated.map((n) => `#${n}`).join(" ")}` : "",
    r.closed.length ? `closed ${r.closed.map((n) => `#${n}`).join(" ")}` : "",
    r.reclaimed.length ? `reclaimed ${r.reclaimed.map((n) => `#${n}`).join(" ")}` : "",
    `${r.in_flight} in flight`,
    `${r.workers} worker(s)`,
    `${r.frontier_remaining} ready`,
    r.births_held ? `births held: ${r.births_held}` : "",
    r.merges_held.length ? `merges held for ${r.merges_held.map((n) => `#${n}`).join(" ")}` : "",
    r.error ? `error: ${r.error}` : "",
  ];
  return parts.filter(Boolean).join("; ");
}

