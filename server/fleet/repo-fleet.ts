// A running fleet on one repository: one registration's tick loop. Each tick is four steps:
// the heartbeat; the gather (the snapshot, the working set rebuilt from it, and what only this
// host knows: its workers, their exits, the breaker, merged issues waiting for GitHub's close,
// landings under way: tick-gather.ts); decide (pure, server/state/decide.ts); apply (the
// housekeeping sweeps, then the actions, one handler each: server/fleet/effects), landings
// strictly serialized (one that waits for a gate runs beside the loop: landings-in-flight.ts).
// Then the boards and the report. Everything durable is written to GitHub as it happens, so a
// crash loses nothing.
import type { FleetConfig } from "../../schemas/config.js";
import { gatherFor } from "./gather-for.js";
import type { ConflictWatch } from "./conflict-watch.js";
import { FencedError } from "../state/claims.js";
import { decide, type Action } from "../state/decide.js";
import { loopPacing, pace } from "../state/pace.js";
import type { WorkingSet } from "../state/rebuild.js";
import type { Snapshot, SnapshotIssue } from "../state/snapshot.js";
import type { Board } from "../board/fleet-board.js";
import { renderBoards } from "./boards.js";
import { Landing } from "../landing/fleet-landing.js";
import { BirthGuard } from "./birth-guard.js";
import { applyAction, applySweep, type FleetRuntime, type TickScope } from "./effects/index.js";
import { Waiter } from "./waiter.js";
import { LandingsInFlight } from "./landings-in-flight.js";
import { planWake, type WakePlan } from "../state/wake.js";
import type { RequiredChecks } from "../gh/forge.js";
import { IssueMemories } from "./issue-memory.js";
import type { FleetDeps, Registration } from "./registration.js";
import { errorData, errorText, supervisorLog, type SupervisorLog } from "./supervisor-log.js";
import { afterTick, closeCounts, emptyReport, PhaseTimer, summaryLine, type TickReport } from "./tick-report.js";
import { workerRows, type BirthInput, type WorkerRow } from "./worker-runs.js";
import { Births } from "./births.js";
import type { SpendView } from "./spend-ledger.js";
import { RunLimits } from "./run-limits.js";
import { drainClaims } from "./drain.js";
import type { GarbageCollector } from "./garbage.js";
import { boardFor, ciSilenceFor, conflictWatchFor, garbageFor, headVetFor, mergeClosesFor, notifierFor } from "./fleet-parts.js";
import { redactText } from "../text/redact.js";
import { MERGE_CLOSE_GRACE_SECONDS, type MergeCloses } from "./merge-closes.js";
import type { CiSilence } from "./ci-silence.js";
import { FleetLedger } from "./fleet-ledger.js";
import type { Notifier } from "./notify.js";
import { finalReport } from "./final-report.js";
import { decideInput, gatherTick, type GatherParts } from "./tick-gather.js";
import { applyLandingEvents, applyTrainsOff } from "./landing-events.js";

export type { FleetDeps, Registration } from "./registration.js";
export { summaryLine, type TickReport } from "./tick-report.js";

export class RepoFleet implements FleetRuntime {
  readonly registration: Registration;
  readonly memory = new IssueMemories();
  readonly board: Board;
  readonly landing: Landing;
  readonly log: SupervisorLog;
  readonly ledger: FleetLedger;
  readonly notifier: Notifier;
  landingSlot: number | null = null;
  trainsOff: string | null = null;
  landingWait: { holder: string; since: Date } | null = null;
  readonly inFlight = new LandingsInFlight<TickScope>({
    inline: () => this.stopping,
    wake: () => this.nudge(),
    failed: (issues, error) =>
      this.log(
        "error",
        "action_failed",
        `${issues.map((n) => `#${n}`).join(", ") || "a landing"}: landing failed (tried again later): ${errorText(error)}`,
        issues[0],
        errorData(error),
      ),
  });
  readonly conflicts: ConflictWatch;
  readonly closes: MergeCloses;
  private readonly silence: CiSilence;
  readonly guard: BirthGuard;
  readonly garbage: GarbageCollector;
  private readonly birthing: Births;
  private readonly limits: RunLimits;
  private stopping = false;
  /** Claims released since the stop began, by whichever tick released them: the stop reports them all. */
  private readonly drained = new Set<number>();
  private stopped = false;
  /** The stop's own end (finish) is done too: nothing of this fleet talks to GitHub any more. */
  private ended = false;
  private emptyTicks = 0;
  private lastReport: TickReport | null = null;
  /** The last tick's working set, so status can answer from it instead of gathering again. */
  private lastSet: { set: WorkingSet; at: Date } | null = null;
  private nextTickAt: Date | null = null;
  private readonly waiter = new Waiter();
  /** What the last tick asks the wait to watch (null after a failed tick: sleep, watch nothing). */
  private wakePlan: WakePlan | null = null;
  /** The base's required checks as the last snapshot read them (the watch evaluates heads against them). */
  private required: RequiredChecks = { contexts: [], strict: false, source: "none", readable: true };
  /** Claims this instance holds as of its last tick (what an abrupt exit would leave behind). */
  private held = new Set<number>();
  private loopDone: Promise<void> | null = null;
  private ticking: Promise<TickReport> | null = null;

  constructor(
    registration: Registration,
    readonly deps: FleetDeps,
  ) {
    this.registration = registration;
    const log = supervisorLog(deps.lanes, registration.instance);
    const config = () => this.registration.config;
    this.notifier = notifierFor(registration, deps, config, (level, event, msg) => log(level, event, msg));
    this.ledger = new FleetLedger(deps.lanes.ledger(), {
      instance: registration.instance,
      runDir: deps.runDir,
      clock: deps.clock,
      notify: (entry) => this.notifier.notify(entry),
    });
    this.log = this.ledger.tap(log);
    this.guard = new BirthGuard(registration.config.circuit, deps.timeScale, deps.clock, this.log, (lines) =>
      lines.map((line) => redactText(line, [deps.conn.token])),
    );
    this.guard.failoverAmong(Object.keys(registration.engines ?? {}));
    this.landing = new Landing(
      deps,
      () => this.registration.config,
      headVetFor(registration, deps, { board: () => this.board, memory: this.memory, log: this.log }),
      () => this.stopping,
    );
    this.garbage = garbageFor(registration, deps, this.log);
    this.conflicts = conflictWatchFor(registration, deps, config, this.log);
    this.closes = mergeClosesFor(deps, this.log);
    this.silence = ciSilenceFor(registration, deps, this.log);
    this.board = boardFor(registration, deps, config);
    this.limits = new RunLimits({ once: registration.once === true, maxIssues: registration.maxIssues ?? null });
    this.birthing = new Births({
      registration,
      deps,
      memory: this.memory,
      board: this.board,
      log: this.log,
      ledger: this.ledger,
      guard: this.guard,
      stopping: () => this.stopping,
      nudge: () => this.nudge(),
    });
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** Starts the loop in the background. */
  start(): void {
    if (this.loopDone) return;
    this.loopDone = this.loop();
  }

  private async loop(): Promise<void> {
    await this.birthing.restoreSpend(this.deps.clock());
    const stopBeating = this.deps.lease.keepAlive((error) =>
      this.log("warn", "heartbeat_failed", `heartbeat failed (tried again within a period): ${errorText(error)}`, undefined, errorData(error)),
    );
    await this.run().finally(stopBeating);
    this.stopped = true;
    try {
      if (this.stopping) await this.finish();
    } finally {
      this.ended = true;
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const report = await this.tick();
      const limit = this.limits.after(report);
      if (limit !== null && !this.stopping) {
        this.drainFor(limit);
        continue;
      }
      // Draining: the fleet ends once no worker is left, each exit handled by a tick.
      const workers = this.memory.runs().length;
      if (this.stopping && !this.inFlight.pending() && (report.in_flight === 0 || workers === 0)) {
        // Merged issues GitHub closes itself: the next tick settles their claims (a stop waits for no grace).
        if (this.closes.pending() && !report.error) continue;
        break;
      }
      if (this.wakePlan?.now) continue;
      // A merged issue's claim waiting for GitHub's close wakes nothing: the next tick, whenever it
      // comes, settles it (an earlier one would pay for its listings only to let a claim go).
      const seconds = pace({
        lastSummary: { moved: report.moved, inFlight: report.in_flight + workers },
        emptyTicks: this.emptyTicks,
        config: loopPacing(this.registration.config, this.deps.timeScale),
      });
      this.nextTickAt = new Date(this.deps.clock().getTime() + seconds * 1000 * this.deps.timeScale);
      await this.waitForEvent(seconds);
    }
  }

  /**
   * The end of a stop: every claim without an open PR is released (read from GitHub now, see
   * drain.ts), and with no claim left the lease goes too.
   */
  private async finish(): Promise<void> {
    await this.closes.flush().catch(() => undefined);
    const busy = new Set(
      this.memory
        .runs()
        .filter((run) => !run.exitFacts)
        .map((run) => run.issue),
    );
    const kept = await drainClaims(this, busy, (n) => {
      this.drained.add(n);
      this.held.delete(n);
    });
    if (kept !== null && kept.length === 0) await this.deps.lease.retire().catch(() => undefined);
    this.log("info", "stopped", `stopped; ${kept?.length ?? this.held.size} claim(s) with a PR kept for a later run or a peer`);
    await finalReport(this, "stop").catch((error: unknown) => this.log("warn", "report_failed", `the final report was not written: ${errorText(error)}`));
  }

  /** A run limit was reached (run-limits.ts): drain as a stop without ending workers does. */
  private drainFor(why: string): void {
    this.stopping = true;
    this.log("info", "limit_reached", `${why}: nothing more is born; the project ends once its workers and landings under way are done`, undefined, {
      ended: this.limits.endedCount(),
    });
  }

  /** Wakes the loop now (a worker exited, a resize, a stop). */
  nudge(): void {
    this.waiter.nudge();
  }

  /** Sleeps until the next tick is due or an event the wake plan watches comes first. */
  private async waitForEvent(seconds: number): Promise<void> {
    const { conn, timeScale, lanes } = this.deps;
    const source = {
      forge: conn.forge,
      refs: conn.refs,
      base: this.registration.base,
      required: this.required,
      pacing: this.registration.config.pacing,
      timeScale,
    };
    const cause = await this.waiter.wait(seconds * 1000 * timeScale, this.wakePlan, source);
    if (cause === "checks" || cause === "base")
      lanes.append("monitor", { event: "wake", msg: cause === "checks" ? "a watched check concluded" : "the base moved", data: { cause } });
  }

  resize(change: { target?: number | undefined; workerCommand?: string | undefined; selectors?: FleetConfig["selectors"] | undefined }): void {
    if (change.target !== undefined) this.registration.target = change.target;
    if (change.workerCommand !== undefined) {
      this.registration.workerCommand = change.workerCommand;
      this.registration.engine = null;
    }
    if (change.selectors !== undefined) this.registration.config = { ...this.registration.config, selectors: change.selectors };
    this.log("info", "resized", `target ${this.registration.target}; applied at the next birth`);
    this.nudge();
  }

  /** Clears the circuit breaker and any quota pause; says which of them there was to clear. */
  reset(): { breaker: boolean; quota: boolean } {
    const was = this.guard.reset();
    this.log("info", "reset", "births resumed: breaker reset and quota pause cleared");
    this.nudge();
    return was;
  }

  /**
   * Drain: start nothing, release claims that have no PR, keep those with one (a peer or a
   * later run lands them). With stopWorkers, running workers are killed first; without, the
   * loop goes on until each has exited and its result is handled (a finished worker's commits
   * still become a PR), and only then does the fleet end. Returning earlier and leaving them
   * running unwatched would let a new start on this host put a second worker in their worktrees.
   */
  async stop(stopWorkers: boolean): Promise<TickReport> {
    this.stopping = true;
    if (stopWorkers) {
      const runs = this.memory.runs();
      await Promise.all(runs.map((run) => run.handle.stop("project stopped")));
      await Promise.all(runs.map((run) => run.settling));
    }
    this.nudge();
    await this.inFlight.idle(); // a landing under way ends first; the stop's tick takes it
    const report = await this.tick();
    const workers = this.memory.runs().length;
    if (workers > 0 && this.loopDone && !this.stopped) {
      this.log("info", "draining", `stopping: ${workers} worker(s) still running; the project ends once they have exited`);
    } else {
      this.stopped = true;
      this.nudge();
      if (this.loopDone) await this.loopDone;
      else await this.finish().finally(() => (this.ended = true));
    }
    // The loop's own tick, woken by the workers' exits, may have done the releasing; or the end of
    // the stop did, after the tick whose report this is: then what is still held is what it kept.
    const released = [...this.drained].sort((a, b) => a - b);
    return { ...report, released, ...(this.stopped ? { in_flight: this.held.size } : {}) };
  }

  /** Workers a stopping fleet still waits for (0 once it has ended, or when it is not stopping). */
  draining(): number {
    return this.stopping && !this.stopped ? this.memory.runs().length : 0;
  }

  /** A hand-over to the next daemon: the loop ends after its tick under way; nothing is released, workers run on. */
  async suspend(): Promise<void> {
    this.stopped = true;
    this.nudge();
    await this.loopDone;
    // The next daemon does not know which merged issues GitHub was to close: settle them now.
    await this.closes.flush().catch(() => undefined);
  }

  isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Stopping and not yet ended: its loop may be over, but the end of the stop (claims released,
   * the lease retired) still talks to GitHub, so the project is still listed, as draining.
   */
  finishing(): boolean {
    return this.stopping && !this.ended;
  }

  // ---- views ----------------------------------------------------------------------------------

  mergesHeld(): boolean {
    return !this.registration.autoMerge;
  }

  workerRows(): WorkerRow[] {
    return workerRows(this.memory.runs(), this.deps.clock(), (text) => this.deps.lanes.redact(text));
  }

  births(): { paused: boolean; reason: string | null; until: string | null } {
    const paused = this.guard.paused(this.stopping) ?? this.birthing.budgets.hold(this.deps.clock());
    return { paused: paused !== null, reason: paused?.reason ?? null, until: paused?.until?.toISOString() ?? null };
  }

  spend(): SpendView {
    return this.birthing.budgets.view(this.deps.clock());
  }

  report(): TickReport | null {
    return this.lastReport;
  }

  /** The last tick's working set and when it was gathered; when the next tick is due. */
  view(): { set: WorkingSet; at: Date; nextTickAt: Date | null } | null {
    return this.lastSet ? { ...this.lastSet, nextTickAt: this.nextTickAt } : null;
  }

  /** The claims this instance held at its last tick, ascending. */
  heldClaims(): number[] {
    return [...this.held].sort((a, b) => a - b);
  }

  birthsHeld(): boolean {
    return this.guard.paused(this.stopping) !== null;
  }

  // ---- one tick -------------------------------------------------------------------------------

  /** One reconciliation pass. Ticks never overlap: a second caller waits for the first. */
  async tick(): Promise<TickReport> {
    while (this.ticking) await this.ticking.catch(() => undefined);
    // An ended fleet touches nothing more (its lease may already be retired).
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
    const report = emptyReport(now);
    const timer = new PhaseTimer();
    timer.watchdog((this.registration.config.pacing.slow_tick_seconds ?? 120) * 1000, (seconds, doing) =>
      this.log(
        "warn",
        "tick_slow",
        `a tick has been under way for ${seconds}s, now in ${doing}: a git or GitHub call may be hanging until its timeout; the loop goes on when it returns`,
        undefined,
        { seconds, doing },
      ),
    );
    try {
      // 1. The heartbeat: our claims stay ours while we work on them.
      await this.deps.lease.heartbeat();
      timer.mark("heartbeat");
      // 2. The gather: the snapshot, then what only this host knows (tick-gather.ts).
      timer.doing("the gather (reading GitHub)");
      const snapshot = await this.snapshot(now);
      timer.mark("gather");
      timer.doing("reading local facts (worktrees, workers)");
      const g = await gatherTick(this, this.parts(), snapshot, now, report);
      const { set, scope, events } = g;
      applyLandingEvents(this, events); // what the landings the gather took did, before decide reads it
      const issues = scope.issues;
      timer.mark("local");
      // 3. Decide: pure (server/state/decide.ts), once a run limit the landings just taken reached turned this tick into a drain.
      timer.doing("deciding");
      const capped = this.stopping ? null : this.limits.capReached(report);
      if (capped !== null) this.drainFor(capped);
      const paused = this.guard.paused(this.stopping);
      const decision = decide(decideInput(this, this.parts(), g, paused !== null, now));
      timer.mark("decide");
      this.conflicts.after(decision, set, g.conflicts.overlap ?? null, report);
      this.landingSlot = decision.landingSlot;
      applyTrainsOff(this, decision.trainsOff, g.trainsEnded[0]?.issue);
      report.births_held = decision.birthsHeld ?? (paused ? paused.reason : null);
      this.lastSet = { set, at: now };
      // 4. Apply: the housekeeping sweeps, then the actions, one handler each (server/fleet/effects).
      for (const sweep of decision.sweeps) {
        timer.doing(sweep.kind);
        await applySweep(this, scope, sweep).catch((error: unknown) =>
          this.actionFailed({ kind: sweep.kind, issue: "issue" in sweep ? sweep.issue : 0 }, error),
        );
      }
      timer.mark("sweeps");
      for (const action of decision.actions) {
        if (this.stopped) break;
        timer.doing(`${action.kind} #${action.issue}`);
        try {
          await applyAction(this, scope, action);
        } catch (error) {
          this.actionFailed(action, error);
        }
        timer.mark(action.kind);
      }
      timer.doing("the landings' wrap-up");
      for (const { issue, job } of scope.later!.splice(0)) await job().catch((error: unknown) => this.actionFailed({ kind: "land", issue }, error));
      timer.mark("later");
      applyLandingEvents(this, events); // what the pass's landings did (the slot a sync took, the lock's waits)
      timer.doing("the boards");
      await renderBoards(this, { set, issues, report, events });
      timer.mark("boards");
      // Status reads this tick's set until the next: as the tick left it, not as its snapshot found it.
      this.lastSet = { set: afterTick(set, report), at: now };
      this.held = closeCounts(set, report, this.memory.runs().filter((r) => !r.exitFacts).length);
      this.emptyTicks = report.frontier_remaining === 0 && report.in_flight <= 0 ? this.emptyTicks + 1 : 0;
      this.required = snapshot.requiredChecks;
      this.wakePlan = planWake({
        gateMode: this.registration.config.gate.ci,
        autoMerge: this.registration.autoMerge,
        claims: set.mine,
        pushed: events.pushed,
        settled: [...report.merged, ...report.escalated, ...report.closed, ...report.released, ...events.settled],
        blocked: events.blocked,
        landed: report.merged.length > 0,
        slotHeld: this.landingSlot !== null,
        landingInFlight: this.inFlight.pending(),
        stopping: this.stopping,
      });
    } catch (error) {
      this.wakePlan = null;
      report.error = error instanceof Error ? error.message : String(error);
      this.log("error", "tick_failed", `tick failed: ${report.error}`, undefined, errorData(error));
    }
    timer.done();
    report.in_flight = Math.max(0, report.in_flight);
    if (this.stopping) for (const n of report.released) this.drained.add(n);
    this.lastReport = report;
    this.deps.lanes.append("monitor", { event: "tick", msg: summaryLine(report), data: { ...report, phase_ms: timer.phases() } });
    return report;
  }

  private snapshot(now: Date): Promise<Snapshot> {
    return gatherFor(this.deps, this.registration, now, this.closes.expected());
  }

  apply(tick: TickScope, action: Action): Promise<void> {
    return applyAction(this, tick, action);
  }

  /** The parts only the gather reads (tick-gather.ts). */
  private parts(): GatherParts {
    return { birthing: this.birthing, silence: this.silence, stopping: this.stopping, graceMs: MERGE_CLOSE_GRACE_SECONDS * 1000 * this.deps.timeScale };
  }

  checkpoint(issue: number, claimSha: string): Promise<void> {
    return this.birthing.checkpoint(issue, claimSha);
  }

  private actionFailed(action: { kind: string; issue: number }, error: unknown): void {
    if (error instanceof FencedError) {
      this.memory.forget(action.issue);
      this.log("warn", "fenced", error.message, action.issue);
      return;
    }
    this.log("error", "action_failed", `#${action.issue}: ${action.kind} failed: ${errorText(error)}`, action.issue, errorData(error));
  }

  // ---- births (births.ts) ----------------------------------------------------------------------

  birthFor(issue: SnapshotIssue, attempt: number, mode: BirthInput["mode"], claimSha: string, review?: BirthInput["review"]): Promise<boolean> {
    return this.birthing.birthFor(issue, attempt, mode, claimSha, review);
  }
}
