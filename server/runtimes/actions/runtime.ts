// The `actions` runtime behind the WorkerRuntime port: a worker is a workflow run. A birth
// dispatches `actions.workflow` on the base with inputs naming the issue, its branch, the
// attempt, the engine's command and the brief; the handle (handle.ts) follows the run and the
// runner's beats. Its durable record is the run id in the issue's run directory, so a restarted
// host adopts the run (GitHub keeps it) and never dispatches a second one into the same slot
// without cancelling the first. Nothing runs on this host: `endAllNow` has nothing to end.
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { UsageError } from "../../gh/errors.js";
import type { AdoptedWorker, HeadToLand, OutputSink, RecordedWorker, StartRequest, WorkerHandle, WorkerRuntime, WorkerSlot } from "../../worker-port/port.js";
import { BranchGuard } from "./guard.js";
import { vetHeadPush } from "./head-vet.js";
import { RunHandle, type RunTimes } from "./handle.js";
import { RunRefReader, runRefOf, type ActionsReach } from "./reach.js";
import { INPUTS_MAX_CHARS, type WorkflowInput } from "./workflow-file.js";
import { Serial } from "../../kit/serial.js";
import { writeAtomic } from "../../kit/atomic-file.js";

const RECORD = "actions-run.json";
const BRIEF_CUT_NOTE = "\n\n[afk: the brief was cut here to fit GitHub's 65,535-character limit on a dispatch's inputs]\n";

interface RunRecord {
  run_id: number;
  html_url: string;
  attempt: number;
  branch: string;
  worktree: string;
  verdict_path: string;
  run_ref: string;
  command_line: string;
  started_at: number;
  seen: string | null;
  /** The start's timing (config `actions`), for an adopter that has no config at hand. */
  times: RunTimes;
}

export interface ActionsRuntimeOptions {
  /** Poll period of a run's status (ms; default a quarter of a beat, 2 to 15 s). */
  pollMs?: number;
  /** How long a cancelled run may take to complete (ms, default 90 s). */
  cancelWaitMs?: number;
}

/** The variables of the worker's environment a run gets as its `env` input: the names config `actions.env` lists and any *_BASE_URL. */
export function handedEnv(env: Readonly<Record<string, string>>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (names.includes(k) || /_BASE_URL$/.test(k)) out[k] = v;
  return out;
}

/** The brief cut to what the other inputs leave of GitHub's limit (whole characters, with a note). */
export function fitBrief(brief: string, otherChars: number): string {
  const room = INPUTS_MAX_CHARS - otherChars - 64;
  if (brief.length <= room) return brief;
  return brief.slice(0, Math.max(0, room - BRIEF_CUT_NOTE.length)) + BRIEF_CUT_NOTE;
}

export class ActionsRuntime implements WorkerRuntime {
  readonly name = "actions";
  private readonly live = new Map<number, { handle: RunHandle; branch: string; runRef: string }>();
  /** Each issue's latest run's branch guard, kept past its end: the others' ends ask it whose a push onto its branch was. */
  private readonly guards = new Map<number, BranchGuard>();
  /**
   * When each run of this host was in flight (`to` null while it is): a push is pinned on a lone
   * run only if no other run was in flight when it was made, not merely when it is judged.
   */
  private spans: Array<{ issue: number; from: number; to: number | null }> = [];
  private reader: { reader: RunRefReader; beatMs: number } | null = null;
  /** The record writes, one at a time so they land in order (save). */
  private readonly saving = new Serial();

  constructor(
    private reach: ActionsReach | null,
    private readonly options: ActionsRuntimeOptions = {},
  ) {}

  /**
   * The fleet's reach as of now (registry.ts passes it at every birth and adoption): a fleet
   * restarted in this process with a new connection, base or namespace dispatches with those.
   * Runs in flight keep the reach they started with.
   */
  rebind(reach: ActionsReach): void {
    if (this.reach?.namespace !== reach.namespace) this.reader = null;
    this.reach = reach;
  }

  private need(): ActionsReach {
    if (!this.reach) throw new UsageError('runtime "actions" needs the repository\'s connection: it is made per fleet (server/runtimes/registry.ts)');
    return this.reach;
  }

  private times(config: StartRequest["config"]): RunTimes {
    return {
      // A quarter of a beat, within 2 to 15 s: each poll is one conditional request, free while the run is unchanged.
      pollMs: this.options.pollMs ?? Math.min(15_000, Math.max(2_000, (config.actions.beat_seconds * 1000) / 4)),
      beatMs: config.actions.beat_seconds * 1000,
      pickupMs: config.actions.pickup_seconds * 1000,
      cancelWaitMs: this.options.cancelWaitMs ?? 90_000,
    };
  }

  private readerFor(beatMs: number): RunRefReader {
    if (this.reader?.beatMs !== beatMs) this.reader = { reader: new RunRefReader(this.need(), beatMs / 2), beatMs };
    return this.reader.reader;
  }

  async start(request: StartRequest): Promise<WorkerHandle> {
    const reach = this.need();
    const { config, slot } = request;
    const workflow = config.actions.workflow;
    const runRef = runRefOf(reach.namespace, slot.issue);
    const brief = await readFile(request.briefPath, "utf8");
    const inputs: Record<WorkflowInput, string> = {
      issue: String(slot.issue),
      branch: request.branch,
      base: reach.base,
      attempt: String(request.attempt),
      engine: request.engine ?? "",
      command: request.command,
      brief: "",
      run_ref: runRef,
      beat_seconds: String(config.actions.beat_seconds),
      env: JSON.stringify(handedEnv(request.env, config.actions.env)),
    };
    inputs.brief = fitBrief(
      brief,
      Object.values(inputs).reduce((n, v) => n + v.length, 0),
    );
    await this.publishStart(reach, request.worktree, request.branch);
    // One request: the dispatch, answered with the new run's id.
    const dispatched = await reach.api.dispatch(workflow, reach.base, inputs).catch((error: unknown) => {
      const status = (error as { status?: number }).status;
      const fix =
        status === 404
          ? `no workflow ${workflow} on ${reach.repo}'s default branch: run \`afk-mcp actions init\` and merge its PR, or set actions.workflow`
          : status === 422
            ? `workflow ${workflow} refused the dispatch: ${(error as Error).message} (is it the file \`afk-mcp actions init\` writes, with its inputs, at ${reach.base}?)`
            : `dispatching workflow ${workflow} failed: ${(error as Error).message}`;
      throw new UsageError(fix);
    });
    const record: RunRecord = {
      run_id: dispatched.runId,
      html_url: dispatched.htmlUrl,
      attempt: request.attempt,
      branch: request.branch,
      worktree: request.worktree,
      verdict_path: request.verdictPath,
      run_ref: runRef,
      command_line: request.command,
      started_at: Date.now(),
      seen: null,
      times: this.times(config),
    };
    await this.save(slot, record);
    return this.watch(slot, record, request.output, record.times, reach);
  }

  /**
   * The runner starts where the host prepared the worktree (a continuation, or a fresh start
   * from the base): origin's issue branch is set to it before the dispatch, by this host, with a
   * lease on the tip it last fetched. What that replaces is kept here: the preparation set it
   * aside (server/worktrees/). The runner then only ever fast-forwards the branch.
   */
  private async publishStart(reach: ActionsReach, worktree: string, branch: string): Promise<void> {
    const head = (await reach.git.runRaw(["rev-parse", "HEAD"], worktree)).stdout.trim();
    const remote = (await reach.git.runRaw(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${branch}^{commit}`])).stdout.trim();
    if (!/^[0-9a-f]{40,64}$/.test(head) || head === remote) return;
    const pushed = await reach.git
      .network(["push", "--quiet", `--force-with-lease=refs/heads/${branch}:${remote}`, "origin", `${head}:refs/heads/${branch}`])
      .catch((error: unknown) => error as Error);
    if (pushed instanceof Error)
      throw new UsageError(`could not set ${branch} on origin to the prepared start ${head.slice(0, 12)} before dispatching its run: ${pushed.message}`);
  }

  private async watch(slot: WorkerSlot, record: RunRecord, output: OutputSink, times: RunTimes, reach: ActionsReach): Promise<RunHandle> {
    // The start the host published (the worktree is not moved while the run is in flight).
    const start = (await reach.git.runRaw(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], record.worktree)).stdout.trim();
    const guard = new BranchGuard({
      git: reach.git,
      issue: slot.issue,
      branch: record.branch,
      start: start || null,
      since: record.started_at,
      say: (line) => output.onLine("stderr", line, "runtime"),
    });
    this.guards.set(slot.issue, guard);
    const handle = new RunHandle({
      reach,
      reader: this.readerFor(times.beatMs),
      runId: record.run_id,
      htmlUrl: record.html_url,
      issue: slot.issue,
      attempt: record.attempt,
      branch: record.branch,
      runRef: record.run_ref,
      worktree: record.worktree,
      verdictPath: record.verdict_path,
      commandLine: record.command_line,
      startedAt: record.started_at,
      seen: record.seen,
      output,
      times,
      alone: (at, besides) => this.aloneAt(at, slot.issue, besides),
      guardOf: (issue) => this.guards.get(issue),
      guard,
      onSeen: (sha) => void this.save(slot, { ...record, seen: sha }).catch(() => undefined),
      onEnd: () => {
        span.to = Date.now();
        // Spans that ended an hour before no push still being judged can fall in.
        this.spans = this.spans.filter((s) => s.to === null || s.to >= span.to! - 3_600_000);
        if (this.live.get(slot.issue)?.handle === handle) this.live.delete(slot.issue);
      },
    });
    const span = { issue: slot.issue, from: record.started_at, to: null as number | null };
    this.spans.push(span);
    this.live.set(slot.issue, { handle, branch: record.branch, runRef: record.run_ref });
    return handle;
  }

  /**
   * Whether no run of this host but `issue`'s (and `besides`') was in flight at `at` (a push's
   * time on the forge; a margin either side for the clocks).
   */
  private aloneAt(at: number, issue: number, besides?: number): boolean {
    const margin = 5_000;
    return this.spans.every((s) => s.issue === issue || s.issue === besides || s.from - margin > at || (s.to !== null && s.to + margin < at));
  }

  async adopt(slot: WorkerSlot, output: (attempt: number) => OutputSink): Promise<AdoptedWorker | null> {
    const record = await this.load(slot);
    if (!record || !this.reach) return null;
    // One conditional request: is the run still going?
    const run = await this.reach.api.run(record.run_id).catch(() => null);
    if (!run || run.status === "completed") return null;
    return { handle: await this.watch(slot, record, output(record.attempt), record.times, this.reach), attempt: record.attempt, worktree: record.worktree };
  }

  async evict(slot: WorkerSlot): ReturnType<WorkerRuntime["evict"]> {
    const record = await this.load(slot);
    if (!record || !this.reach) return null;
    // One request each: read the run, cancel it while it runs (never two runners on one issue).
    const run = await this.reach.api.run(record.run_id).catch(() => null);
    if (!run || run.status === "completed") return null;
    await this.reach.api.cancel(record.run_id).catch(() => false);
    return { tags: { run: record.run_id }, label: `workflow run ${record.run_id}` };
  }

  async forget(slot: WorkerSlot): Promise<void> {
    await rm(join(slot.dir, RECORD), { force: true });
  }

  async recorded(runDir: string): Promise<RecordedWorker[]> {
    const dirs = await readdir(runDir).catch(() => [] as string[]);
    const out: RecordedWorker[] = [];
    for (const name of dirs) {
      const issue = /^issue-(\d+)$/.exec(name);
      if (!issue) continue;
      const record = await this.load({ issue: Number(issue[1]), dir: join(runDir, name) });
      if (record) out.push({ issue: Number(issue[1]), attempt: record.attempt, startedAt: record.started_at, tags: { run: record.run_id } });
    }
    return out;
  }

  /** A PR head of an issue with no run in flight here, by who pushed it (head-vet.ts); a run in flight has its branch guard. */
  async vetHead(head: HeadToLand): Promise<string | null> {
    if (!this.reach || this.live.has(head.issue)) return null;
    return vetHeadPush(this.reach, head);
  }

  /** Runs go on without this host (a restarted one adopts them): nothing here to end. */
  endAllNow(): number {
    return 0;
  }

  /**
   * The run's record, replaced whole (a temp file renamed over it): a host killed mid-write, as a
   * host may be at any time, leaves the previous record for the next host to adopt the run from,
   * never a torn one. The writes go one at a time, in order (each beat's `seen` is one).
   */
  private save(slot: WorkerSlot, record: RunRecord): Promise<void> {
    const path = join(slot.dir, RECORD);
    const write = async (): Promise<void> => {
      await mkdir(slot.dir, { recursive: true, mode: 0o700 });
      await writeAtomic(path, `${JSON.stringify(record)}\n`);
    };
    return this.saving.run(write);
  }

  private async load(slot: WorkerSlot): Promise<RunRecord | null> {
    try {
      const raw = JSON.parse(await readFile(join(slot.dir, RECORD), "utf8")) as RunRecord;
      return Number.isSafeInteger(raw.run_id) && typeof raw.branch === "string" && typeof raw.times?.pollMs === "number" ? raw : null;
    } catch {
      return null;
    }
  }
}
