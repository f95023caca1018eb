// The forge's local Actions runner: a dispatched run goes queued -> in_progress -> completed.
// Each job gets a fresh clone of the repository at the run's commit, over the forge's own git
// HTTP, with a token minted for the run (like GITHUB_TOKEN: a `github-actions[bot]` that may
// push what the forge's push policy lets a writer push, valid while the run is in progress),
// then runs its `run:` steps in order, each in a process group of its own. Bounded: at most
// `concurrency` runs at once; a concurrency group holds one running run; cancel and close end
// the step's process group (SIGTERM, then SIGKILL) and leave no process behind. A paused runner
// (`POST /_forge/actions/runner {paused: true}`) picks up nothing: dispatched runs stay queued,
// as on GitHub when no runner serves the job's `runs-on`, until it is resumed.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ForgeEmulator } from "./core.js";
import { BOT_LOGIN, type JobRecord, type RunConclusion, type RunRecord } from "./actions-types.js";
import { collectExports, contexts, runEnvironment, stepProblem, type JobEnv } from "./actions-steps.js";
import { condition } from "./workflow-expr.js";
import { postJobChecks } from "./actions-checks.js";
import { actionsData, type Workflow, type WorkflowJob, type WorkflowStep } from "./workflows.js";
import { isoNow, type UserRecord } from "./state.js";

const BOT_ID = 41898282;
const DEFAULT_TIMEOUT_MINUTES = 360;
const LOG_CAP = 4 * 1024 * 1024;

export interface RunnerOptions {
  /** Runs in progress at once (default 2). */
  concurrency?: number;
  /** Between SIGTERM and SIGKILL when a step is cancelled (default 2,000 ms; GitHub waits 7.5 s). */
  killGraceMs?: number;
}

interface Live {
  run: RunRecord;
  workflow: Workflow;
  token: string;
  child: ChildProcess | null;
  /** Why the run is being stopped, once it is. */
  stop: "cancelled" | "timed_out" | null;
  done: Promise<void> | null;
}

const runners = new WeakMap<ForgeEmulator, ActionsRunner>();

/** The runner of a repository of the forge (attached by startForge). */
export function runnerOf(forge: ForgeEmulator): ActionsRunner {
  let r = runners.get(forge);
  if (!r) {
    r = new ActionsRunner(forge);
    runners.set(forge, r);
  }
  return r;
}

export function attachRunner(forge: ForgeEmulator, opts: RunnerOptions): ActionsRunner {
  const r = new ActionsRunner(forge, opts);
  runners.set(forge, r);
  return r;
}

/** The run-token user, if `token` is a run's token (looked up without creating a runner). */
export function runTokenUser(forge: ForgeEmulator, token: string): UserRecord | undefined {
  return runners.get(forge)?.tokenUser(token);
}

export class ActionsRunner {
  private readonly live = new Map<number, Live>();
  private readonly tokens = new Map<string, UserRecord>();
  private readonly logs = new Map<number, string>();
  private readonly concurrency: number;
  private readonly grace: number;
  private closing = false;
  private paused = false;

  constructor(
    private readonly forge: ForgeEmulator,
    opts: RunnerOptions = {},
  ) {
    this.concurrency = Math.max(1, opts.concurrency ?? 2);
    this.grace = opts.killGraceMs ?? 2_000;
    // Runs a previous forge process left unfinished have no runner any more: they failed.
    for (const run of forge.state.data.actions?.runs ?? []) {
      if (run.status !== "completed") this.conclude(run, "failure", "the forge stopped while this run was unfinished");
    }
  }

  private get logDir(): string {
    return join(this.forge.dir, "actions", "logs");
  }

  /** The user a run token stands for, while its run is in progress. */
  tokenUser(token: string): UserRecord | undefined {
    return this.tokens.get(token);
  }

  /** A job's log so far (secrets masked), or null when the job is unknown. */
  async log(jobId: number): Promise<string | null> {
    const mem = this.logs.get(jobId);
    if (mem !== undefined) return mem;
    return readFile(join(this.logDir, `${jobId}.log`), "utf8").catch(() => null);
  }

  /** Queues a dispatched run; applies its concurrency group to the runs already there. */
  enqueue(run: RunRecord, workflow: Workflow): void {
    const token = `ghs_${randomBytes(18).toString("hex")}`;
    this.live.set(run.id, { run, workflow, token, child: null, stop: null, done: null });
    if (run.concurrencyGroup !== null) {
      for (const other of this.live.values()) {
        if (other.run === run || other.run.concurrencyGroup !== run.concurrencyGroup) continue;
        // GitHub keeps one pending run per group (the newest) and, with cancel-in-progress,
        // cancels the running one too.
        if (other.run.status === "queued" || run.cancelInProgress) this.cancel(other.run.id);
      }
    }
    this.pump();
  }

  /** Cancels a run; false when it is not running here (completed, or unknown). */
  cancel(runId: number): boolean {
    const l = this.live.get(runId);
    if (!l || l.run.status === "completed") return false;
    if (l.run.status === "queued") {
      this.live.delete(runId);
      this.conclude(l.run, "cancelled", null);
      this.pump();
      return true;
    }
    this.stop(l, "cancelled");
    return true;
  }

  /**
   * Pauses or resumes picking up runs (what is in progress goes on); resuming picks up the
   * queued runs at once. Returns the runner's state.
   */
  setPaused(paused: boolean): { paused: boolean; queued: number; in_progress: number } {
    this.paused = paused;
    this.pump();
    const live = [...this.live.values()];
    return { paused: this.paused, queued: live.filter((l) => l.done === null).length, in_progress: live.filter((l) => l.done !== null).length };
  }

  /** Stops every run and waits until their processes are gone. */
  async close(): Promise<void> {
    this.closing = true;
    const running = [...this.live.values()];
    for (const l of running) {
      if (l.run.status === "queued") {
        this.live.delete(l.run.id);
        this.conclude(l.run, "cancelled", null);
      } else this.stop(l, "cancelled");
    }
    await Promise.all(running.map((l) => l.done));
  }

  private stop(l: Live, why: "cancelled" | "timed_out"): void {
    l.stop ??= why;
    if (l.child) this.killGroup(l.child);
  }

  private killGroup(child: ChildProcess): void {
    const pid = child.pid;
    if (pid === undefined) return;
    const signal = (sig: NodeJS.Signals): void => {
      try {
        process.kill(-pid, sig);
      } catch {
        // ESRCH: the group is gone already.
      }
    };
    signal("SIGTERM");
    setTimeout(() => signal("SIGKILL"), this.grace).unref();
  }

  private pump(): void {
    if (this.closing || this.paused) return;
    const running = [...this.live.values()].filter((l) => l.done !== null);
    let free = this.concurrency - running.length;
    for (const l of this.live.values()) {
      if (free <= 0) break;
      if (l.done !== null) continue;
      const busy = l.run.concurrencyGroup !== null && running.some((r) => r.run.concurrencyGroup === l.run.concurrencyGroup);
      if (busy) continue;
      free--;
      running.push(l);
      l.done = this.execute(l).finally(() => {
        this.live.delete(l.run.id);
        this.tokens.delete(l.token);
        this.pump();
      });
    }
  }

  private changed(run: RunRecord): void {
    run.updatedAt = isoNow();
    postJobChecks(this.forge, run);
    this.forge.state.changed();
  }

  private conclude(run: RunRecord, conclusion: RunConclusion, note: string | null): void {
    const now = isoNow();
    for (const job of run.jobs) {
      if (job.status === "completed") continue;
      for (const s of job.steps)
        if (s.status !== "completed") Object.assign(s, { status: "completed", conclusion: s.status === "queued" ? "skipped" : conclusion, completedAt: now });
      // A job that never started after a failing one is skipped (jobs run in file order).
      Object.assign(job, { status: "completed", conclusion: job.status === "queued" && conclusion === "failure" ? "skipped" : conclusion, completedAt: now });
      if (note) this.logs.set(job.id, `${this.logs.get(job.id) ?? ""}${note}\n`);
    }
    run.status = "completed";
    run.conclusion = conclusion;
    this.changed(run);
  }

  private async execute(l: Live): Promise<void> {
    const { run } = l;
    run.status = "in_progress";
    run.startedAt = isoNow();
    this.changed(run);
    this.tokens.set(l.token, { login: BOT_LOGIN, id: BOT_ID, token: l.token, admin: false, createdAt: run.createdAt });
    await mkdir(this.logDir, { recursive: true });
    let failed: RunConclusion | null = null;
    for (const [i, job] of run.jobs.entries()) {
      if (failed !== null || l.stop !== null) break;
      if (job.status === "completed") continue; // passed in an earlier attempt: a re-run keeps it
      const outcome = await this.runJob(l, job, l.workflow.jobs[i]!);
      if (outcome !== "success") failed = outcome;
      // Each job concludes as it ends (a job that passed stays passed when a later one fails);
      // a stopped one is concluded with its steps below.
      if (l.stop === null) {
        Object.assign(job, { status: "completed", conclusion: outcome, completedAt: isoNow() });
        this.changed(run);
      }
      await writeFile(join(this.logDir, `${job.id}.log`), this.logs.get(job.id) ?? "");
      this.logs.delete(job.id);
    }
    this.conclude(run, l.stop ?? failed ?? "success", null);
    for (const job of run.jobs) await appendFile(join(this.logDir, `${job.id}.log`), this.logs.get(job.id) ?? "");
    for (const job of run.jobs) this.logs.delete(job.id);
  }

  private write(job: JobRecord, secrets: string[], text: string): void {
    let masked = text;
    for (const s of secrets) if (s.length > 0) masked = masked.split(s).join("***");
    const prev = this.logs.get(job.id) ?? "";
    if (prev.length < LOG_CAP) this.logs.set(job.id, prev + masked);
  }

  private async runJob(l: Live, job: JobRecord, spec: WorkflowJob): Promise<RunConclusion> {
    const base = join(this.forge.dir, "actions", "runs", String(l.run.id), job.key);
    const env: JobEnv = { workspace: join(base, "work"), temp: join(base, "tmp"), home: join(base, "home"), exported: {}, paths: [] };
    job.status = "in_progress";
    job.startedAt = isoNow();
    this.changed(l.run);
    const timer = setTimeout(() => this.stop(l, "timed_out"), (spec.timeoutMinutes ?? DEFAULT_TIMEOUT_MINUTES) * 60_000);
    timer.unref();
    const secrets = [...Object.values(actionsData(this.forge).secrets), l.token];
    const log = (text: string): void => this.write(job, secrets, text);
    try {
      await mkdir(env.temp, { recursive: true });
      await mkdir(env.home, { recursive: true });
      // The clone sees the job's HOME, not the forge host's git configuration or credentials.
      const gitEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: env.home, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", LC_ALL: "C" };
      const cloneCode = await this.spawnLogged(l, ["git", "clone", "--quiet", "--no-checkout", this.forge.urls.gitUrl, env.workspace], gitEnv, base, log);
      const checkout = l.run.headBranch ? ["checkout", "-q", "-B", l.run.headBranch, l.run.headSha] : ["checkout", "-q", "--detach", l.run.headSha];
      const coCode = cloneCode === 0 ? await this.spawnLogged(l, ["git", ...checkout], gitEnv, env.workspace, log) : cloneCode;
      if (coCode !== 0) {
        log("could not clone the repository at the run's commit\n");
        return l.stop ?? "failure";
      }
      // As actions/checkout does: the clone's origin pushes with the run's token.
      const basic = Buffer.from(`x-access-token:${l.token}`).toString("base64");
      await appendFile(join(env.workspace, ".git", "config"), `[http "${this.forge.urls.gitUrl}"]\n\textraheader = AUTHORIZATION: basic ${basic}\n`);
      const status = { failed: false };
      for (const [i, step] of spec.steps.entries()) {
        const rec = job.steps[i]!;
        if (l.stop !== null) break;
        Object.assign(rec, { status: "in_progress", startedAt: isoNow() });
        this.changed(l.run);
        // null: the condition cannot be evaluated, which fails the step.
        let wanted: boolean | null;
        try {
          wanted = step.if === undefined ? !status.failed : condition(step.if, { ...contexts(this.forge, l.run, "", env.workspace, {}), secrets: {} }, status);
        } catch (err) {
          log(`##[error]${step.name}: if: ${(err as Error).message}\n`);
          wanted = null;
        }
        const conclusion: RunConclusion =
          wanted === null ? "failure" : !wanted ? "skipped" : (l.stop ?? ((await this.runStep(l, spec, step, rec.number, env, log)) ? "success" : "failure"));
        Object.assign(rec, { status: "completed", conclusion: l.stop ?? conclusion, completedAt: isoNow() });
        this.changed(l.run);
        if (conclusion === "failure") status.failed = true;
      }
      return l.stop ?? (status.failed ? "failure" : "success");
    } finally {
      clearTimeout(timer);
      await rm(base, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
    }
  }

  /** One step: a `uses:` the subset accepts, or a `run:` script; true when it succeeded. */
  private async runStep(l: Live, spec: WorkflowJob, step: WorkflowStep, number: number, env: JobEnv, log: (t: string) => void): Promise<boolean> {
    log(`##[group]${step.name}\n`);
    const problem = stepProblem(step);
    if (problem !== null) {
      log(`##[error]${problem}\n`);
      return false;
    }
    if (step.run === undefined) {
      log(`${step.uses}: accepted as a no-op by the local runner\n`);
      return true;
    }
    let stepEnv: Record<string, string>;
    try {
      stepEnv = runEnvironment(this.forge, l.run, l.workflow, spec, step, number, env, l.token);
    } catch (err) {
      log(`##[error]${(err as Error).message}\n`);
      return false;
    }
    const script = join(env.temp, `step-${number}.sh`);
    await writeFile(script, step.run);
    const shell =
      step.shell === "bash"
        ? ["bash", "--noprofile", "--norc", "-eo", "pipefail", script]
        : step.shell === "sh"
          ? ["sh", "-e", script]
          : ["bash", "-e", script];
    const cwd = step.workingDirectory ? join(env.workspace, step.workingDirectory) : env.workspace;
    const code = await this.spawnLogged(l, shell, stepEnv, cwd, log);
    await collectExports(env, number);
    if (code !== 0 && l.stop === null) log(`##[error]Process completed with exit code ${code}.\n`);
    return code === 0;
  }

  /** Runs one process in a group of its own, its output into the log; resolves with its exit code. */
  private spawnLogged(l: Live, argv: string[], env: NodeJS.ProcessEnv, cwd: string, log: (t: string) => void): Promise<number> {
    if (l.stop !== null) return Promise.resolve(-1);
    return new Promise((resolve) => {
      const child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
      l.child = child;
      child.stdout!.setEncoding("utf8").on("data", log);
      child.stderr!.setEncoding("utf8").on("data", log);
      child.on("error", (err) => log(`##[error]${err.message}\n`));
      child.on("exit", () => {
        // Whatever the step left running in its group goes with it, as on a hosted runner
        // (and its pipes close, so "close" follows).
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // ESRCH: nothing left.
        }
      });
      child.on("close", (code, signal) => {
        l.child = null;
        resolve(code ?? (signal ? 128 : -1));
      });
    });
  }
}
