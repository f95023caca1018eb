// What may stop births: the circuit breaker (the worker command keeps dying within seconds)
// and a usage-limit or expired-login pause. After a trip, the breaker's sweep puts the issues
// of the fast deaths back in the backlog, giving back the attempts those deaths spent.
import type { FleetConfig } from "../../schemas/config.js";
import type { Forge } from "../gh/forge.js";
import type { Lease } from "../gh/lease.js";
import { attemptLabel, parseAttemptLabel } from "../state/markers.js";
import type { Snapshot } from "../state/snapshot.js";
import { CircuitBreaker, type CircuitTrip } from "../agent/breaker.js";
import { quotaPause, type QuotaDetection } from "../agent/quota.js";
import { pauseReason, stderrFirst, type SaidLine } from "../agent/runtime-failures.js";
import { fenced } from "../text/fenced.js";
import { neutralizeMarkers } from "../board/render.js";
import type { IssueMemories } from "./issue-memory.js";
import { errorData, type SupervisorLog } from "./supervisor-log.js";
import { oneLine } from "../text/text.js";

/** The most lines of a dead worker's output a note or a lane record quotes. */
const QUOTED_LINES = 12;

export interface Pause {
  until: Date | null;
  reason: string;
}

export interface SweepDeps {
  forge: Forge;
  lease: Lease;
  config: FleetConfig;
  memory: IssueMemories;
  log: SupervisorLog;
  /** Called once an issue's claim is let go (its board is marked released). */
  onReleased?: (issue: number) => Promise<void>;
}

export class BirthGuard {
  private readonly breaker: CircuitBreaker;
  private trip: CircuitTrip | null = null;
  /**
   * Issues of a trip still to be put back. The sweep runs inside a tick, on that tick's fresh
   * snapshot: a trip during the tick that dispatched them would find none of their claims in an
   * older working set (leaving phantom locks), and a tick running beside it would retry them.
   */
  private readonly unswept = new Set<number>();
  /** Per issue, its attempt count before its first fast death since the breaker last closed. */
  private readonly attemptsBeforeDeaths = new Map<number, number>();
  /** Per issue, the last lines its worker printed before a fast death (the runtime's own left out): the breaker quotes them, stderr first. */
  private readonly deathLines = new Map<number, SaidLine[]>();
  /** Per issue, the runtime's fault of its last fast death (a sandbox that could not start), if it was one: the breaker names it. */
  private readonly deathFaults = new Map<number, string>();
  private quota: Pause | null = null;
  /** With two or more verified engines, a usage limit or a login failure pauses its engine only. */
  private failover: readonly string[] = [];
  private readonly enginePauses = new Map<string, Pause>();

  constructor(
    circuit: FleetConfig["circuit"],
    private readonly timeScale: number,
    private readonly clock: () => Date,
    private readonly log: SupervisorLog,
    /** Worker output bound for GitHub or status: the fleet's token and every known key shape removed. */
    private readonly redacted: (lines: readonly string[]) => string[],
  ) {
    this.breaker = new CircuitBreaker({
      k: circuit.k,
      windowSeconds: circuit.window_seconds * timeScale,
      fastDeathSeconds: circuit.fast_death_seconds * timeScale,
    });
  }

  /** Why births are held now (a stop, a trip, a pause not yet over), or null. */
  paused(stopping: boolean): Pause | null {
    if (stopping) return { until: null, reason: "stopping" };
    if (this.trip)
      return {
        until: null,
        reason: `circuit breaker tripped after ${this.trip.deaths.length} fast worker deaths${this.tripQuote()}: ${this.tripFault() === null ? "fix the worker command" : "fix that"}, then project_reset`,
      };
    if (this.quota) {
      if (this.quota.until && this.quota.until.getTime() <= this.clock().getTime()) {
        this.quota = null;
        return null;
      }
      return this.quota;
    }
    return null;
  }

  /** The engines births can fail over between (the start's and the ladder's, verified at start). */
  failoverAmong(engines: readonly string[]): void {
    this.failover = [...engines];
  }

  /** Why `engine` takes no birth now (its own usage limit or login), or null. */
  enginePaused(engine: string): Pause | null {
    const pause = this.enginePauses.get(engine);
    if (pause?.until && pause.until.getTime() <= this.clock().getTime()) {
      this.enginePauses.delete(engine);
      return null;
    }
    return pause ?? null;
  }

  /** Clears the breaker and any quota pause; says which of them there was to clear. */
  reset(): { breaker: boolean; quota: boolean } {
    const quota = this.quota !== null && (this.quota.until === null || this.quota.until.getTime() > this.clock().getTime());
    const was = { breaker: this.trip !== null, quota };
    this.breaker.reset();
    this.deathLines.clear();
    this.deathFaults.clear();
    this.trip = null;
    this.attemptsBeforeDeaths.clear();
    this.quota = null;
    this.enginePauses.clear();
    return was;
  }

  /** Issues a trip handed to the breaker that are not swept yet. */
  owned(): ReadonlySet<number> {
    return new Set(this.unswept);
  }

  /** Counts a worker's end (`fault`: the runtime's, when it failed the attempt); true when it tripped the breaker just now. */
  recordDeath(
    issue: number,
    attempt: number,
    durationMs: number,
    quota: boolean,
    productive: boolean,
    lastLines: readonly SaidLine[],
    fault: string | null = null,
  ): boolean {
    const exit = { issue, durationMs, at: this.clock().getTime(), quota, productive, killed: false };
    if (this.breaker.isFastDeath(exit) && !this.attemptsBeforeDeaths.has(issue)) this.attemptsBeforeDeaths.set(issue, attempt - 1);
    if (this.breaker.isFastDeath(exit)) {
      const said = this.redacted(lastLines.map((l) => l.line));
      this.deathLines.set(
        issue,
        lastLines.map((l, i) => ({ stream: l.stream, line: said[i] ?? "" })),
      );
      if (fault === null) this.deathFaults.delete(issue);
      else this.deathFaults.set(issue, this.redacted([fault])[0]!);
    }
    const trip = this.breaker.recordExit(exit);
    if (!trip || this.trip) return false;
    this.trip = trip;
    for (const death of trip.deaths) this.unswept.add(death.issue);
    this.log(
      "error",
      "breaker_tripped",
      `circuit breaker tripped: ${trip.deaths.length} fast worker deaths${this.tripQuote()}; births parked until project_reset`,
      trip.deaths.at(-1)?.issue,
      {
        last_output: Object.fromEntries(trip.deaths.map((d) => [d.issue, stderrFirst(this.deathLines.get(d.issue) ?? [], QUOTED_LINES)])),
      },
    );
    return true;
  }

  onQuota(issue: number, detection: QuotaDetection, engine?: string): void {
    // A lost network usually comes back within minutes; a usage limit without a reset time, later.
    const backoffSeconds = detection.kind === "network" ? 300 : 900;
    const pause = quotaPause(detection, this.clock(), { backoffSeconds: backoffSeconds * this.timeScale });
    const reason = pauseReason({ ...detection, text: this.redacted([detection.text])[0]! }, pause.until);
    const own =
      engine !== undefined && this.failover.length >= 2 && this.failover.includes(engine) && (detection.kind === "quota" || detection.kind === "auth");
    if (own) {
      // That engine only: births go on with the next healthy engine of each route (births.ts).
      const was = this.enginePaused(engine);
      if (!was || (pause.until && was.until && pause.until > was.until) || pause.until === null)
        this.enginePauses.set(engine, { until: pause.until, reason: `engine ${engine}: ${reason}` });
      const healthy = this.failover.filter((name) => this.enginePaused(name) === null);
      this.log(
        "warn",
        "engine_paused",
        `#${issue}: engine ${engine} paused (${reason}); ${healthy.length > 0 ? `births go on with ${healthy.join(", ")}` : "no engine is healthy: births paused"}`,
        issue,
        { engine, kind: detection.kind, healthy },
      );
      if (healthy.length > 0) return;
    }
    if (!this.quota || (pause.until && this.quota.until && pause.until > this.quota.until) || pause.until === null) {
      this.quota = { until: pause.until, reason };
    }
    const event = { auth: "auth_expired", refusal: "runtime_refused", network: "network_down", quota: "quota" }[detection.kind];
    this.log("warn", event, `#${issue}: ${reason}`, issue, { kind: detection.kind, runtime: detection.runtime });
  }

  /** The last lines of the death that tripped the breaker, or the runtime's fault that ended it, for its reason: bounded, one line. */
  private tripQuote(): string {
    const last = this.trip?.deaths.at(-1);
    const fault = this.tripFault();
    if (fault !== null) return `; the last, #${last!.issue}, never ran: ${oneLine(fault)}`;
    const lines = last ? stderrFirst(this.deathLines.get(last.issue) ?? [], 3) : [];
    return lines.length > 0 ? `; the last, #${last!.issue}, printed: ${oneLine(lines.join(" ⏎ "))}` : "";
  }

  /** The runtime's fault that ended the death that tripped the breaker (a sandbox that could not start), or null. */
  private tripFault(): string | null {
    const last = this.trip?.deaths.at(-1);
    return last ? (this.deathFaults.get(last.issue) ?? null) : null;
  }

  /** Why a swept issue's claim was let go, for its board. */
  releasedNote(issue: number): string {
    const fault = this.deathFaults.get(issue) ?? null;
    return fault === null ? "the circuit breaker tripped: the worker command kept dying within seconds" : `the circuit breaker tripped: ${oneLine(fault)}`;
  }

  /**
   * After a trip: every affected issue goes back to the backlog with a note and a runner-error
   * label, its claim released and any attempt the fast deaths spent given back — the command
   * failed, not the issue. An issue whose sweep fails stays pending for the next tick.
   */
  async sweep(set: { mine: ReadonlyArray<{ issue: number; sha: string }> }, snapshot: Pick<Snapshot, "issues">, deps: SweepDeps): Promise<void> {
    const { forge, lease, config: cfg, memory } = deps;
    const deaths = this.trip?.deaths.length ?? 0;
    const swept: number[] = [];
    try {
      // Requests only after a trip (rare): the label, made once per client.
      await forge.ensureLabel({ name: cfg.labels.runner_error, color: "b60205", description: "afk-mcp: the worker command failed to run" });
      for (const n of [...this.unswept].sort((a, b) => a - b)) {
        const claim = set.mine.find((m) => m.issue === n);
        const issue = snapshot.issues.find((i) => i.number === n);
        const run = memory.run(n);
        if (run && !run.exitFacts) await run.handle.stop("circuit breaker tripped");
        if (claim) await lease.release(n, claim.sha).catch(() => false);
        await deps.onReleased?.(n);
        if (issue) {
          const lines = stderrFirst(this.deathLines.get(n) ?? [], QUOTED_LINES);
          // Its worker never ran (a sandbox that could not start): the note names why, not the command.
          const fault = this.deathFaults.get(n) ?? null;
          const what =
            fault === null
              ? `the worker command died within seconds ${deaths} times in a row (circuit breaker). This issue goes back to the backlog untouched by this run; fix the command`
              : `workers ended within seconds ${deaths} times in a row (circuit breaker), this issue's because ${neutralizeMarkers(oneLine(fault))}. It goes back to the backlog untouched by this run; fix that`;
          // Requests per swept issue, each durable state a human or the next run reads: the note,
          // the attempts the fast deaths spent given back, the labels that send it back to the
          // backlog marked as a command failure (one add, one remove per label: see failure.ts).
          await forge.createComment(
            n,
            `The fleet stopped starting workers: ${what}, then reset the breaker (\`afk-mcp reset\` in a terminal, the project_reset tool in an MCP session).` +
              (lines.length > 0
                ? `\n\nThe last lines its worker printed:\n\n${fenced(lines.map((l) => neutralizeMarkers(l)).join("\n"), "text")}`
                : "\n\nIts worker printed nothing."),
          );
          const before = this.attemptsBeforeDeaths.get(n) ?? 0;
          for (const label of issue.labels) {
            const k = parseAttemptLabel(label, cfg.labels.attempt_prefix);
            if (k !== null && k > before) await forge.removeLabel(n, label);
          }
          // Two requests: back in the backlog marked as a command failure, and out of escalation.
          const restore = before > 0 ? [attemptLabel(before, cfg.labels.attempt_prefix)] : [];
          await forge.addLabels(n, [cfg.labels.ready, cfg.labels.runner_error, ...restore]);
          await forge.removeLabel(n, cfg.labels.escalate);
        }
        memory.forget(n);
        this.attemptsBeforeDeaths.delete(n);
        this.unswept.delete(n);
        swept.push(n);
      }
    } catch (error) {
      deps.log("error", "sweep_failed", `breaker sweep failed (retried next tick): ${(error as Error).message}`, undefined, errorData(error));
    }
    if (swept.length > 0)
      deps.log("warn", "breaker_swept", `swept ${swept.length} issue(s) after the breaker tripped: ${swept.map((n) => `#${n}`).join(", ")}`);
  }

  hasUnswept(): boolean {
    return this.unswept.size > 0;
  }
}
