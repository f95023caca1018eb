// One worker run: prepare the issue's worktree (continuing any progress), write the brief,
// start the user's command there (or, for the review stage, the reviewer's command with a
// review brief: same path, same liveness, lanes and breaker), stream its output into the worker lane while watching for
// usage-limit messages, and, when it exits, read what it left (commits, a verdict).
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { FleetConfig } from "../../schemas/config.js";
import type { LaneWriter } from "../lanes/index.js";
import type { WorkRepo, PreparedWorktree } from "../worktrees/worktrees.js";
import { writeBrief, type BriefComment, type BriefFailure, type BriefInput } from "../agent/brief.js";
import { readReviewVerdict, renderReviewBrief, type ReviewBriefInput, type ReviewVerdict } from "../agent/review-brief.js";
import { workerEnv } from "../agent/env.js";
import {
  displayPid,
  type OutputSink,
  type OutputStream,
  type WorkerExit,
  type WorkerHandle,
  type WorkerRuntime,
  type WorkerSlot,
} from "../worker-port/port.js";
import { QuotaScanner, type QuotaDetection } from "../agent/quota.js";
import { OutputTail, type SaidLine } from "../agent/runtime-failures.js";
import { readVerdictFile, VerdictFileError, workerOutcome, type WorkerOutcome } from "../agent/outcome.js";
import type { Verdict } from "../state/markers.js";
import { SpendReader, usdText, type Spend } from "../agent/spend.js";
import { StageReader } from "../agent/stage.js";
import type { EngineChoice } from "./registration.js";

export interface BirthInput {
  repo: string;
  issue: { number: number; title: string; body: string; url: string; labels: string[] };
  base: string;
  attempt: number;
  maxAttempts: number;
  lastFailure: BriefFailure | null;
  /** The issue's comments for the brief (the fleet's markers left out). */
  comments?: readonly BriefComment[];
  /** "fresh": tear down and start from the base (a retry); "continue": tiers 1-3. */
  mode: "fresh" | "continue";
  command: string;
  /** The engine that command runs (how its usage is read, its shell); null: an opaque command. */
  engine?: EngineChoice | null;
  /** Set for a reviewer: the review brief's facts (the worktree is continued at the PR head). */
  review?: Omit<ReviewBriefInput, keyof BriefInput>;
}

export interface RunDeps {
  workRepo: WorkRepo;
  config: FleetConfig;
  lanes: LaneWriter;
  /** `<stateDir>/runs/<owner>/<name>`: briefs and verdict files, outside every worktree. */
  runDir: string;
  /** Where the workers run (config `runtime`). */
  runtime: WorkerRuntime;
  /** Called for each line that reads as a usage limit or an expired login, with the run's engine. */
  onQuota: (issue: number, detection: QuotaDetection, engine?: string) => void;
  /** Called once the worker has exited (wake the loop). */
  onExit: (issue: number) => void;
  /** Pushes the commits an exited worker left (its last checkpoint), before its exit is handled. */
  checkpoint?: (issue: number) => Promise<unknown>;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface ExitFacts {
  exit: WorkerExit;
  outcome: WorkerOutcome;
  verdict: Verdict | null;
  commitsAhead: number;
  /** The branch moved while it ran (commits of this attempt, not only earlier ones it continued). */
  moved: boolean;
  changes: boolean;
  /** The run hit a usage limit, a login or network failure: no attempt is spent, births pause. */
  quota: boolean;
  /** The last lines it printed, in order, with their streams, the runtime's own left out (for a breaker's comment and status). */
  lastLines: SaidLine[];
  /** A reviewer's verdict, or why it has none. */
  review?: ReviewVerdict | string;
  /** What the attempt spent, as its engine reported it (unknown figures are null). */
  spend: Spend;
  /** The fleet ended it past budget.usd_per_attempt: why, with its spend; null otherwise. */
  overBudget: string | null;
}

export class WorkerRun {
  readonly startedAt: number;
  quota = false;
  /** Set when the fleet ends the run past budget.usd_per_attempt. */
  overBudget: string | null = null;
  exitFacts: ExitFacts | null = null;
  /** Set while the exit is being read (commits, verdict). */
  settling: Promise<ExitFacts> | null = null;

  constructor(
    readonly issue: number,
    readonly attempt: number,
    readonly prepared: PreparedWorktree,
    readonly handle: WorkerHandle,
    readonly verdictPath: string,
    readonly tail: OutputTail,
    readonly role: "worker" | "reviewer" = "worker",
    /** For a reviewer: the head it reviews and its round. */
    readonly reviewOf: { head: string; round: number } | null = null,
    readonly spend: SpendReader = new SpendReader("command", "none", null, {}),
    /** What it is doing, as its output says (status and the board). */
    readonly stage: StageReader = new StageReader(),
  ) {
    this.startedAt = handle.startedAt;
  }

  running(): boolean {
    return this.handle.running() || this.exitFacts === null;
  }
}

export async function birth(input: BirthInput, deps: RunDeps): Promise<WorkerRun> {
  const n = input.issue.number;
  const prepare = { issue: n, title: input.issue.title, base: input.base, attempt: input.attempt };
  const dir = join(deps.runDir, `issue-${n}`);
  const slot: WorkerSlot = { issue: n, dir };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // A worker that outlived an earlier host process may still be in this worktree: never two.
  const ended = await deps.runtime.evict(slot);
  if (ended !== null) {
    deps.lanes.append("supervisor", {
      level: "warn",
      event: "orphan_ended",
      msg: `#${n}: ended orphan worker ${ended.label} left by an earlier host process before reusing its worktree`,
      issue: n,
      ...ended.tags,
    });
  }
  let prepared = input.mode === "fresh" ? await deps.workRepo.fresh(prepare) : await deps.workRepo.prepare(prepare);
  if (input.review && prepared.head !== input.review.head) {
    // The worktree continues where this host left it; a reviewer reviews the PR head, which may
    // have been pushed from elsewhere (a human, another host) since.
    prepared = { ...prepared, head: await deps.workRepo.checkoutAt(n, input.review.head) };
  }
  const verdictPath = join(dir, "verdict.json");
  // A verdict from an earlier run must not speak for this one.
  await rm(verdictPath, { force: true });
  const briefInput: BriefInput = {
    repo: input.repo,
    issue: input.issue,
    branch: prepared.branch,
    base: input.base,
    worktree: prepared.path,
    attempt: input.attempt,
    maxAttempts: input.maxAttempts,
    lastFailure: input.lastFailure,
    ...(input.comments ? { comments: input.comments } : {}),
    verdictPath,
  };
  const briefPath = await writeBrief(dir, briefInput, input.review ? renderReviewBrief({ ...briefInput, ...input.review }) : undefined);
  const role = input.review ? "reviewer" : "worker";
  const env = workerEnv({
    ...(deps.env ? { base: deps.env } : {}),
    passthrough: deps.config.worker.env_passthrough,
    deny: deps.config.worker.env_deny,
    facts: {
      AFK_ISSUE: n,
      AFK_BRIEF: briefPath,
      AFK_BRANCH: prepared.branch,
      AFK_BASE: input.base,
      AFK_WORKTREE: prepared.path,
      AFK_REPO: input.repo,
      AFK_ATTEMPT: input.attempt,
      AFK_VERDICT_FILE: verdictPath,
    },
  });
  const tail = new OutputTail();
  const stage = new StageReader();
  const engine = input.engine ?? null;
  const spend = new SpendReader(engine?.name ?? "command", engine?.usage ?? "none", engine?.model ?? null, deps.config.prices);
  const budget = role === "worker" ? deps.config.budget.usd_per_attempt : null;
  let run: WorkerRun | null = null;
  // A limit printed before the run object exists still marks the run (not a failed attempt).
  let quotaSeen = false;
  let overBudget: string | null = null;
  // An agent retrying without a network would do so until the max runtime: end it.
  let endFor: string | null = null;
  const handle = await deps.runtime.start({
    slot,
    attempt: input.attempt,
    command: input.command,
    worktree: prepared.path,
    branch: prepared.branch,
    verdictPath,
    engine: engine?.name ?? null,
    config: deps.config,
    ...(deps.env ? { hostEnv: deps.env } : {}),
    env,
    briefPath,
    loginShell: engine?.loginShell ?? false,
    output: {
      maxBytes: deps.config.worker.output_max_bytes,
      onTruncated: truncationSink(n, input.attempt, deps),
      onLine: lineSink(
        n,
        input.attempt,
        deps,
        tail,
        stage,
        spend,
        budget,
        (reason) => {
          // Past the per-attempt budget (an engine whose CLI takes no budget flag): checkpoint what
          // it committed, then stop it. The attempt ends as over budget (decide), its spend in the comment.
          if (endFor !== null) return;
          endFor = reason;
          overBudget = reason;
          if (run) run.overBudget = reason;
          const stop = (): void => void run?.handle.stop(reason).catch(() => undefined);
          if (run)
            void Promise.resolve(deps.checkpoint?.(n))
              .catch(() => undefined)
              .then(stop);
        },
        (detection) => {
          quotaSeen = true;
          if (run) run.quota = true;
          deps.onQuota(n, detection, engine?.name);
          if (detection.kind === "network" && endFor === null) {
            endFor = "the agent cannot reach its API";
            if (run) void run.handle.stop(endFor).catch(() => undefined);
          }
        },
      ),
    },
  });
  run = new WorkerRun(
    n,
    input.attempt,
    prepared,
    handle,
    verdictPath,
    tail,
    role,
    input.review ? { head: input.review.head, round: input.review.round } : null,
    spend,
    stage,
  );
  run.quota = quotaSeen;
  run.overBudget = overBudget;
  if (endFor !== null) void handle.stop(endFor).catch(() => undefined);
  deps.lanes.append("supervisor", {
    event: `${role}_born`,
    msg: input.review
      ? `#${n}: reviewer started on PR #${input.review.pr.number} at ${input.review.head.slice(0, 12)} (round ${input.review.round} of ${input.review.maxRounds}) in ${prepared.path}`
      : `#${n}: worker started (attempt ${input.attempt}, tier ${prepared.tier}) in ${prepared.path}`,
    issue: n,
    attempt: input.attempt,
    ...handle.tags,
    data: { tier: prepared.tier, branch: prepared.branch, head: prepared.head, base_sha: prepared.baseSha },
  });
  settle(run, deps, input.base, slot);
  return run;
}

/** A cut output file is a supervisor fact: its lines are all in the worker lane already. */
function truncationSink(n: number, attempt: number, deps: RunDeps): (stream: OutputStream, dropped: number) => void {
  return (stream, dropped) =>
    deps.lanes.append("supervisor", {
      event: "worker_output_truncated",
      msg: `#${n}: ${stream}.log passed worker.output_max_bytes and was cut by ${dropped} bytes, all of them already in the worker lane`,
      issue: n,
      attempt,
      data: { stream, dropped },
    });
}

/**
 * Where a worker's lines go: its lane, the run's tail, the spend reader, the quota scanner. A
 * per-attempt budget the CLI does not enforce itself is enforced here: past it, the run is ended
 * (its commits are checkpointed on exit like any other).
 */
function lineSink(
  n: number,
  attempt: number,
  deps: RunDeps,
  tail: OutputTail,
  stage: StageReader,
  spend: SpendReader,
  budgetUsd: number | null,
  end: (reason: string) => void,
  onDetection: (detection: QuotaDetection) => void,
): OutputSink["onLine"] {
  const w = deps.config.worker;
  const scanner = new QuotaScanner({
    quotaPatterns: w.quota_patterns,
    authPatterns: w.auth_patterns,
    refusalPatterns: w.refusal_patterns,
    networkPatterns: w.network_patterns,
  });
  return (stream, line, source) => {
    deps.lanes.append("worker", { event: "output", msg: line, issue: n, attempt, data: { stream, ...(source === "runtime" ? { source } : {}) } });
    // The runtime's own lines (a sandbox's banner) are not what the worker said, nor what it does.
    if (source !== "runtime") {
      tail.push(line, stream);
      stage.push(line);
    }
    if (stream === "stdout") {
      spend.push(line);
      const usd = budgetUsd === null ? null : spend.spend().usd;
      if (usd !== null && budgetUsd !== null && usd > budgetUsd)
        end(
          `over budget: the attempt spent ${usdText(usd)} (${spend.spend().input_tokens ?? "unknown"} input and ${spend.spend().output_tokens ?? "unknown"} output tokens), past budget.usd_per_attempt (${usdText(budgetUsd)}); the fleet stopped it after a checkpoint`,
        );
    }
    const detection = scanner.push(line, new Date());
    if (detection) onDetection(detection);
  };
}

function settle(run: WorkerRun, deps: RunDeps, base: string, slot: WorkerSlot): void {
  run.settling = run.handle.exited.then(async (exit) => {
    await deps.runtime.forget(slot);
    const facts = await readExit(run, exit, deps, base);
    // Pushed before anything else happens to the claim (a stop releases it right after). Not a
    // reviewer's: its fixes are pushed by its verdict alone (a push here would move the PR head
    // under the verdict, which then speaks for a head nobody reviewed).
    if (run.role === "worker" && facts.commitsAhead > 0 && deps.checkpoint) {
      await deps.checkpoint(run.issue).catch((error: unknown) =>
        deps.lanes.append("supervisor", {
          level: "warn",
          event: "checkpoint_failed",
          msg: `#${run.issue}: the exit checkpoint failed: ${(error as Error).message}`,
          issue: run.issue,
        }),
      );
    }
    run.exitFacts = facts;
    deps.onExit(run.issue);
    return facts;
  });
}

/**
 * Takes over the live worker an earlier host process left for this issue (a daemon restarted
 * after a crash): watched from here like one of ours, so the claim is continued at once and the
 * worktree never gets a second worker. Null when there is none.
 */
export async function adopt(issue: number, base: string, deps: RunDeps): Promise<WorkerRun | null> {
  const dir = join(deps.runDir, `issue-${issue}`);
  const slot: WorkerSlot = { issue, dir };
  const tail = new OutputTail();
  const stage = new StageReader();
  let run: WorkerRun | null = null;
  const output = (attempt: number): OutputSink => ({
    maxBytes: deps.config.worker.output_max_bytes,
    onTruncated: truncationSink(issue, attempt, deps),
    onLine: lineSink(
      issue,
      attempt,
      deps,
      tail,
      stage,
      new SpendReader("command", "none", null, {}),
      null,
      () => undefined,
      (detection) => {
        if (run) run.quota = true;
        deps.onQuota(issue, detection);
      },
    ),
  });
  const adopted = await deps.runtime.adopt(slot, output);
  if (!adopted) return null;
  const { handle, attempt } = adopted;
  const branch = await deps.workRepo.progress(issue, base).then(
    (p) => p.branch ?? "",
    () => "",
  );
  const prepared: PreparedWorktree = {
    path: adopted.worktree,
    branch,
    tier: 1,
    head: "",
    baseSha: "",
    baseContained: true,
    remoteSha: null,
    remoteContained: null,
    backupRefs: [],
    displaced: null,
  };
  run = new WorkerRun(issue, attempt, prepared, handle, join(dir, "verdict.json"), tail, "worker", null, undefined, stage);
  deps.lanes.append("supervisor", {
    event: "worker_adopted",
    msg: `#${issue}: adopted worker ${handle.label} (attempt ${attempt}) left running by an earlier host process`,
    issue,
    attempt,
    ...handle.tags,
  });
  settle(run, deps, base, slot);
  return run;
}

async function readExit(run: WorkerRun, exit: WorkerExit, deps: RunDeps, base: string): Promise<ExitFacts> {
  const n = run.issue;
  let verdict: Verdict | null = null;
  const review = run.role === "reviewer" ? await readReviewVerdict(run.verdictPath) : undefined;
  const read = run.role === "reviewer" ? null : await readVerdictFile(run.verdictPath);
  if (read instanceof VerdictFileError) {
    deps.lanes.append("supervisor", { level: "warn", event: "verdict_unreadable", msg: `#${n}: ${read.message}`, issue: n });
  } else {
    verdict = read;
  }
  let commitsAhead = 0;
  let moved = false;
  let dirty = false;
  let changes = false;
  try {
    const progress = await deps.workRepo.progress(n, base);
    commitsAhead = progress.commitsAhead;
    // An adopted run's start head is unknown: its commits ahead count as its own.
    moved = run.prepared.head === "" ? commitsAhead > 0 : progress.head !== null && progress.head !== run.prepared.head;
    dirty = progress.dirty;
    changes = commitsAhead > 0 ? await deps.workRepo.hasChangesAgainstBase(n, base) : false;
  } catch (error) {
    deps.lanes.append("supervisor", { level: "warn", event: "progress_unreadable", msg: `#${n}: ${(error as Error).message}`, issue: n });
  }
  const outcome = workerOutcome({ commitsAhead, dirty, verdict, prOpened: false });
  const spent = run.spend.spend();
  deps.lanes.append("supervisor", {
    event: `${run.role}_exited`,
    msg: `#${n}: ${run.role} exited (code ${exit.code ?? "none"}${exit.signal ? `, ${exit.signal}` : ""}) after ${Math.round(exit.durationMs / 1000)}s: ${exit.fault ? `fault: ${exit.fault.why}` : outcome.kind}`,
    issue: n,
    attempt: run.attempt,
    data: {
      code: exit.code,
      signal: exit.signal,
      duration_ms: exit.durationMs,
      kill_reason: exit.killReason,
      ...(exit.fault ? { fault: exit.fault.why } : {}),
      commits_ahead: commitsAhead,
      verdict: review === undefined ? (verdict?.kind ?? null) : typeof review === "string" ? null : review.verdict,
      notes: outcome.notes,
      quota: run.quota,
      spend: spent,
    },
  });
  deps.lanes.append("worker", {
    event: "spend",
    msg: `#${n}: attempt ${run.attempt} (${spent.engine}${spent.model ? ` ${spent.model}` : ""}) spent ${usdText(spent.usd)}, ${spent.input_tokens ?? "unknown"} input and ${spent.output_tokens ?? "unknown"} output tokens`,
    issue: n,
    attempt: run.attempt,
    data: { ...spent },
  });
  return {
    exit,
    outcome,
    verdict,
    commitsAhead,
    moved,
    changes,
    quota: run.quota,
    lastLines: run.tail.said(),
    spend: spent,
    overBudget: run.overBudget,
    ...(review !== undefined ? { review } : {}),
  };
}

export interface WorkerRow {
  issue: number;
  state: string;
  pid: number | null;
  attempt: number;
  started_at: string;
  /** The engine and model of this attempt ("command": an opaque worker command; model null: unknown or the CLI's default). */
  engine: string;
  model: string | null;
  /** What it is doing: the tool its engine's stream says it runs, else its last line (null: nothing printed yet). */
  stage: string | null;
  last_line: string | null;
  /** Seconds since its last output (its start before any); null once it exited. */
  quiet_seconds: number | null;
}

/** The status rows of a fleet's workers at `now`; `redact` takes the fleet's tokens out of what they printed. */
export function workerRows(runs: readonly WorkerRun[], now: Date, redact: (text: string) => string): WorkerRow[] {
  return runs.map((run) => ({
    issue: run.issue,
    state: run.exitFacts ? `exited (${run.exitFacts.outcome.kind})` : run.quota ? "usage limit" : "running",
    pid: run.exitFacts ? null : displayPid(run.handle.tags),
    attempt: run.attempt,
    started_at: new Date(run.startedAt).toISOString(),
    engine: run.spend.spend().engine,
    model: run.spend.spend().model,
    ...run.stage.facts(redact),
    quiet_seconds: run.exitFacts ? null : Math.max(0, Math.round((now.getTime() - run.handle.lastOutputAt()) / 1000)),
  }));
}

/** How many of these rows are workers still running (an exited one is kept until its exit is handled). */
export function runningWorkerCount(rows: readonly WorkerRow[]): number {
  return rows.filter((row) => !row.state.startsWith("exited")).length;
}
