// Workers for the claims this fleet holds: a birth (fresh, continued, or a reviewer), fenced by
// the claim; adopting one a crashed host process left running; what an exit tells the breaker;
// and the checkpoints that push a running or exiting worker's commits to its branch.
import type { RebuildRouting, WorkingSet } from "../state/rebuild.js";
import type { SnapshotIssue } from "../state/snapshot.js";
import { FencedError } from "../state/claims.js";
import type { Board } from "../board/fleet-board.js";
import type { BirthGuard } from "./birth-guard.js";
import { Checkpoints } from "./checkpoint.js";
import type { IssueMemories } from "./issue-memory.js";
import type { EngineChoice, FleetDeps, Registration } from "./registration.js";
import { errorData, errorText, type SupervisorLog } from "./supervisor-log.js";
import type { FleetLedger } from "./fleet-ledger.js";
import { discussion, type BriefComment } from "../agent/brief-comments.js";
import { adopt, birth, type BirthInput, type RunDeps, type WorkerRun } from "./worker-runs.js";
import { SpendLedger } from "./spend-ledger.js";
import { FleetBudgets } from "./budgets.js";
import { routeFor } from "../state/route.js";
import { fleetRuntime } from "./fleet-parts.js";
import { engineCommand, engineProfile } from "../agent/engines.js";
import { queryLane } from "../lanes/index.js";
import type { Spend } from "../agent/spend.js";
import type { Spend as LedgerSpend } from "../lanes/index.js";

/** What births need of the fleet that owns them. */
export interface BirthsHost {
  readonly registration: Registration;
  readonly deps: FleetDeps;
  readonly memory: IssueMemories;
  readonly board: Board;
  readonly log: SupervisorLog;
  readonly ledger: FleetLedger;
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
  private selectorRoutes: WorkingSet["selector_routes"] | null = null;
  /** Every exited worker's spend, per issue and per UTC day. */
  readonly spend = new SpendLedger();
  /** The fleet's budgets and the host's. */
  readonly budgets: FleetBudgets;

  constructor(private readonly host: BirthsHost) {
    const { deps, registration } = host;
    const alive = (): number => host.memory.runs().filter((r) => !r.exitFacts).length;
    this.budgets = new FleetBudgets(() => host.registration.config.budget, this.spend, alive, deps.hostBudget ?? null);
    deps.hostBudget?.track(registration.repo.toLowerCase(), { spentOn: (at) => this.spend.day(at), alive });
    this.checkpoints = new Checkpoints({
      workRepo: deps.workRepo,
      lease: deps.lease,
      base: registration.base,
      everyMs: registration.config.worker.checkpoint_seconds * 1000 * deps.timeScale,
      clock: deps.clock,
      log: host.log,
    });
  }

  /**
   * The spend an earlier process of this fleet recorded (its supervisor lane's exit records):
   * a restart must not reset the day budget or an issue's. Records from before `until` only,
   * so an exit recorded here meanwhile is not counted twice.
   */
  async restoreSpend(until: Date): Promise<number> {
    const dir = this.host.deps.lanes.dir;
    const { records } = await queryLane({ dir, lane: "supervisor", tail: 5000 }).catch(() => ({ records: [] }));
    let restored = 0;
    for (const r of records) {
      const spend = (r.data as { spend?: Spend } | undefined)?.spend;
      if (r.event !== "worker_exited" || r.issue === undefined || !spend || typeof spend.engine !== "string") continue;
      const at = new Date(r.ts);
      if (!(at < until)) continue;
      this.spend.record(r.issue, spend, at);
      restored += 1;
    }
    return restored;
  }

  /** This tick's claims: their shas fence the exit checkpoints. And the routes its selectors name. */
  observe(set: WorkingSet): void {
    for (const claim of set.mine) this.claimShas.set(claim.issue, claim.sha);
    this.selectorRoutes = set.selector_routes ?? null;
  }

  /** The checkpoint facts of this host's runs, for the core to say which are due (state/decide/sweeps.ts). */
  checkpointFacts(): { everyMs: number; lastAt: (issue: number) => number | null } {
    return { everyMs: this.checkpoints.everyMs, lastAt: (n) => this.checkpoints.lastAt(n) };
  }

  /** A running worker's periodic checkpoint, which the core found due. */
  async checkpoint(issue: number, claimSha: string): Promise<void> {
    await this.checkpoints
      .push(issue, claimSha, "periodic")
      .catch((error: unknown) =>
        this.host.log("warn", "checkpoint_failed", `#${issue}: checkpoint not pushed (tried again next period): ${errorText(error)}`, issue, errorData(error)),
      );
  }

  /** Starts a worker for a claim we hold. Returns false when it could not start. */
  async birthFor(issue: SnapshotIssue, attempt: number, mode: BirthInput["mode"], claimSha: string, review?: BirthInput["review"]): Promise<boolean> {
    const { memory, deps, registration, log } = this.host;
    const existing = memory.run(issue.number);
    if (existing && !existing.exitFacts) return true;
    // A tick already acting when a stop arrived must not start a worker after stop killed the rest.
    if (this.host.stopping()) return false;
    // The host's max_workers: a slot is taken before the first await, so two fleets of the host
    // cannot both take the last one. None free: no worker, no death counted; a later tick recovers the claim.
    const slot = this.budgets.reserve();
    if (slot === null) {
      log(
        "info",
        "birth_held",
        `#${issue.number}: not started: ${this.host.deps.hostBudget?.workersHold()?.reason ?? "the host's max_workers is reached"}`,
        issue.number,
      );
      return false;
    }
    const cfg = registration.config;
    try {
      const routed = review ? null : this.routed(issue, attempt);
      await deps.lease.fence(issue.number, claimSha);
      this.claimShas.set(issue.number, claimSha);
      const comments = review ? [] : await this.discussionOf(issue);
      const run = await birth(
        {
          repo: registration.repo,
          issue: {
            number: issue.number,
            title: issue.title,
            body: issue.body,
            url: `${deps.conn.info.htmlUrl.replace(/\/$/, "")}/issues/${issue.number}`,
            labels: issue.labels,
          },
          base: registration.base,
          attempt,
          maxAttempts: cfg.retry + 1,
          // Forgotten by this host (a restart since the retry): the ledger kept it.
          lastFailure: memory.get(issue.number)?.lastFailure ?? (attempt > 1 ? this.host.ledger.failureBefore(issue.number, attempt) : null),
          comments,
          mode,
          command: review ? (cfg.review.command ?? "") : (routed?.command ?? registration.workerCommand),
          engine: review ? null : (routed?.engine ?? registration.engine),
          ...(review ? { review } : {}),
        },
        this.runDeps(),
      );
      const record = memory.of(issue.number);
      record.run = run;
      if (!review) this.host.board.enter(issue.number, "coding");
      const engine = review ? null : (routed?.engine ?? registration.engine);
      this.host.ledger.attemptStart(
        issue.number,
        attempt,
        review ? "reviewer" : "worker",
        mode,
        engine ? { engine: engine.name, model: engine.model } : undefined,
      );
      return true;
    } catch (error) {
      if (error instanceof FencedError) {
        memory.forget(issue.number);
        log("warn", "fenced", error.message, issue.number);
        return false;
      }
      // A worker that cannot even start is a fast death: the breaker counts it.
      log(
        "error",
        "birth_failed",
        `#${issue.number}: could not start a ${review ? "reviewer" : "worker"}: ${(error as Error).message}`,
        issue.number,
        errorData(error),
      );
      if (this.host.guard.recordDeath(issue.number, attempt, 0, false, false, [{ stream: "stderr", line: (error as Error).message }])) this.host.nudge();
      return false;
    } finally {
      slot();
    }
  }

  /**
   * The command and engine of this attempt by its route (server/state/route.ts): the issue's
   * labels, the ladder rung, its selector's, else the start's. A label naming an engine the start did not verify
   * is not followed: the start's engine runs, and the supervisor lane says why and how to fix it.
   */
  private routed(issue: SnapshotIssue, attempt: number): { command: string; engine: EngineChoice } | null {
    const { registration, log } = this.host;
    const start = registration.engine;
    if (start === null) return null;
    const ladder = registration.config.routing.ladder;
    let route = routeFor({ start: { engine: start.name, model: start.model }, ladder }, issue.labels, attempt, this.selectorRoutes?.get(issue.number));
    const paused = this.host.guard.enginePaused(route.engine);
    if (paused) {
      // Failover: the next healthy engine of the route (the start's, then the ladder's). No attempt is spent.
      const order = [...new Set([start.name, ...ladder.map((r) => r.engine ?? start.name), ...Object.keys(registration.engines ?? {})])];
      const next = order.find((name) => name !== route.engine && registration.engines?.[name] && this.host.guard.enginePaused(name) === null);
      if (next !== undefined) {
        log("info", "failover", `#${issue.number}: attempt ${attempt} fails over from ${route.engine} to ${next}: ${paused.reason}`, issue.number, {
          from: route.engine,
          to: next,
        });
        route = { engine: next, model: next === start.name ? start.model : null, from: `failover from ${route.engine}` };
      }
    }
    if (route.engine === start.name && route.model === start.model) return null;
    const verified = registration.engines?.[route.engine];
    if (!verified) {
      log(
        "warn",
        "route_ignored",
        `#${issue.number}: ${route.from} names engine ${JSON.stringify(route.engine)}, which this start did not verify: running ${start.name}; define it under config "engines" and add it to routing.ladder (verified at start), or fix the label`,
        issue.number,
      );
      return null;
    }
    const model = route.model ?? verified.model;
    try {
      const profile = engineProfile(registration.config, route.engine);
      const command = engineCommand(profile, { model, budgetUsd: registration.config.budget.usd_per_attempt });
      log("info", "routed", `#${issue.number}: attempt ${attempt} runs ${route.engine}${model ? ` ${model}` : ""} (${route.from})`, issue.number);
      return { command, engine: { ...verified, model } };
    } catch (error) {
      log("warn", "route_ignored", `#${issue.number}: ${route.from}: ${(error as Error).message}: running ${start.name}`, issue.number);
      return null;
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
      this.host.log(
        "warn",
        "comments_unreadable",
        `#${issue.number}: the brief goes without the issue's comments: ${errorText(error)}`,
        issue.number,
        errorData(error),
      );
      return [];
    }
  }

  /** A claim of ours with no worker here may have one a crashed host process left running: watch it. */
  async adoptOrphan(issue: number): Promise<WorkerRun | undefined> {
    const run = await adopt(issue, this.host.registration.base, this.runDeps()).catch(() => null);
    if (!run) return undefined;
    const record = this.host.memory.of(issue);
    record.run = run;
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
      runtime: fleetRuntime(registration, deps),
      onQuota: (n, detection, engine) => guard.onQuota(n, detection, engine),
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
      if (run.role === "worker") this.spend.record(issue, facts.spend, this.host.deps.clock());
      this.host.ledger.attemptEnd(issue, run.attempt, run.role, {
        durationMs: facts.exit.durationMs,
        code: facts.exit.code,
        killReason: facts.exit.killReason,
        outcome: facts.verdict ? `verdict ${facts.verdict.kind}` : facts.quota ? "quota" : facts.outcome.kind,
        quota: facts.quota,
        spend: ledgerSpend(facts.spend),
        engine: facts.spend.engine,
        ...(facts.spend.model ? { model: facts.spend.model } : {}),
      });
      // A runtime's fault (a sandbox that could not start) is no good run for the commits an
      // earlier attempt left: only what this one committed makes it productive.
      const fault = facts.exit.fault ?? null;
      this.host.guard.recordDeath(
        issue,
        run.attempt,
        facts.exit.durationMs,
        facts.quota,
        facts.exit.killReason !== null || (facts.outcome.kind !== "nothing" && (fault === null || facts.moved)),
        facts.lastLines,
        fault?.why ?? null,
      );
      // What the runtime set right without spending the attempt (a foreign push into the branch, put back).
      for (const text of facts.exit.notices ?? []) {
        this.host.board.noted(issue, text);
        this.host.memory.of(issue).notice = text;
        this.host.log("warn", "runtime_notice", `#${issue}: ${text}`, issue, { attempt: run.attempt });
      }
    }
    this.host.nudge();
  }
}

/** The engines an `afk-engine/` label may name in this fleet's frontier: those verified at its start (none for an opaque command). */
export function routableEngines(registration: Pick<Registration, "engine" | "engines" | "config">): Pick<RebuildRouting, "engines" | "policy"> {
  if (registration.engine === null) return { engines: [] };
  return {
    engines: Object.keys(registration.engines ?? { [registration.engine.name]: registration.engine }).sort(),
    // Each dispatched issue's route, as a birth computes it (status shows it).
    policy: { start: { engine: registration.engine.name, model: registration.engine.model }, ladder: registration.config.routing.ladder },
  };
}

/** An attempt's spend in the ledger's shape: what is unknown stays out ("unknown" when nothing is known). */
function ledgerSpend(spend: Spend): LedgerSpend {
  const tokens = {
    ...(spend.input_tokens !== null ? { input: spend.input_tokens } : {}),
    ...(spend.output_tokens !== null ? { output: spend.output_tokens } : {}),
    ...(spend.cached_input_tokens !== null ? { cache_read: spend.cached_input_tokens } : {}),
  };
  if (spend.usd === null && Object.keys(tokens).length === 0) return "unknown";
  return { ...(spend.usd !== null ? { usd: spend.usd } : {}), ...(Object.keys(tokens).length > 0 ? { tokens } : {}) };
}
