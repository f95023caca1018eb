// One worker on a GitHub Actions runner, watched from the host: the run's status polled with
// conditional requests (304 while nothing changed: no rate limit), once a beat while the beats
// come on time; the runner's beats read from its run ref (beat.ts, through the repository's
// shared reader), its output delivered to the fleet's sink line by line as if it ran here. Its
// end brings everything home before `exited` resolves: the last beats, the verdict, the issue branch's commits into the host's worktree,
// and the faults only the host can see (a run cancelled by someone else, a runner that died
// without a last beat, a run no runner picked up, a push outside the issue's branch or into
// another issue's). The issue branch comes home as the run's beats reported it, never as origin
// holds it: a push into it by another run is put back (guard.ts).
import { writeFile } from "node:fs/promises";
import type { OutputSink, TailLine, WorkerExit, WorkerHandle, WorkerObservation } from "../../worker-port/port.js";
import type { WorkflowRun } from "../../gh/actions-api.js";
import { readBeats, type BeatFacts } from "./beat.js";
import { BranchGuard } from "./guard.js";
import { describeRunFailure, readRunFailure } from "./run-failure.js";
import { type ActionsReach, type RunListing, type RunRefReader } from "./reach.js";

/** Who a run's token pushes as on GitHub (and on the local forge). */
export const RUNNER_LOGIN = "github-actions[bot]";
const TAIL_MAX = 200;

export interface RunTimes {
  /** Between two polls (ms): each reads the run's status, but once a beat while its beats come on time. */
  pollMs: number;
  /** The runner's beat period (ms): the run ref is read about this often. */
  beatMs: number;
  /** A run still queued this long after its dispatch is cancelled (ms). */
  pickupMs: number;
  /** After a cancel, how long to wait for the run to complete (ms). */
  cancelWaitMs: number;
}

export interface RunHandleInput {
  reach: ActionsReach;
  reader: RunRefReader;
  runId: number;
  htmlUrl: string;
  issue: number;
  attempt: number;
  branch: string;
  runRef: string;
  worktree: string;
  verdictPath: string;
  commandLine: string;
  startedAt: number;
  /** The last beat already delivered (an adopted run), or null. */
  seen: string | null;
  output: OutputSink;
  times: RunTimes;
  /** Whether this run was the only one of this host in flight at `at` (ms), `besides` aside. */
  alone: (at: number, besides?: number) => boolean;
  /** The branch guard of another issue's latest run on this host (whose push onto its branch was whose), if any. */
  guardOf: (issue: number) => BranchGuard | undefined;
  /** The guard of this run's branch (the runtime keeps it past the run's end, for the others' questions). */
  guard: BranchGuard;
  /** Called with the newest beat delivered (the record keeps it for an adopter). */
  onSeen: (sha: string) => void;
  /** Called once the handle has ended. */
  onEnd: () => void;
}

export class RunHandle implements WorkerHandle {
  readonly id: string;
  readonly runtime = "actions";
  readonly tags: Readonly<Record<string, number | string>>;
  readonly label: string;
  readonly startedAt: number;
  readonly commandLine: string;
  readonly exited: Promise<WorkerExit>;
  private resolveExit!: (exit: WorkerExit) => void;
  private status: WorkflowRun["status"] = "queued";
  private lastOutput: number;
  private busy: boolean | "unknown" = "unknown";
  private why = "queued: waiting for a runner";
  private readonly lines: TailLine[] = [];
  private seen: string | null;
  private beatReadAt = 0;
  /** When this host last received a new beat of the run, and last read the run's status. */
  private beatAt: number | null = null;
  private statusReadAt = 0;
  private final: BeatFacts | null = null;
  private verdict: string | null = null;
  private stopReason: string | null = null;
  /** When the fleet's stop was first seen by a poll (the cancel's wait counts from it). */
  private stoppedAt: number | null = null;
  private fault: { why: string; resume: boolean } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ended = false;
  private polling: Promise<void> | null = null;
  /** The last listing read (its branch tip is judged at the end). */
  private listing: RunListing | null = null;
  /** An adopted run's beats before `seen` were told to the guard. */
  private primed: boolean;

  constructor(private readonly input: RunHandleInput) {
    this.id = String(input.runId);
    this.tags = { run: input.runId };
    this.label = `workflow run ${input.runId}`;
    this.startedAt = input.startedAt;
    this.commandLine = input.commandLine;
    this.lastOutput = input.startedAt;
    this.seen = input.seen;
    this.primed = input.seen === null;
    input.reader.watch(input.issue, input.branch);
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    this.schedule(0);
  }

  running(): boolean {
    return !this.ended;
  }

  lastOutputAt(): number {
    return this.lastOutput;
  }

  tail(): TailLine[] {
    return [...this.lines];
  }

  notices(): readonly string[] {
    return [...this.input.guard.notices];
  }

  /** What the last poll and beat said: no request of its own (the handle polls on its own clock). */
  async observe(): Promise<WorkerObservation> {
    return { running: !this.ended, lastOutputAt: this.lastOutput, busy: this.busy, why: this.why };
  }

  async stop(reason: string): Promise<WorkerExit> {
    if (this.ended) return this.exited;
    this.stopReason ??= reason;
    // One request; a run that completed meanwhile answers 409, which is no error here.
    await this.input.reach.api.cancel(this.input.runId).catch(() => false);
    this.schedule(0);
    return this.exited;
  }

  private schedule(ms: number): void {
    if (this.ended) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private tick(): Promise<void> {
    this.polling ??= this.poll().finally(() => (this.polling = null));
    return this.polling;
  }

  private async poll(): Promise<void> {
    const { api } = this.input.reach;
    const { times } = this.input;
    if (this.beatsOnTime(Date.now())) {
      // The runner's beats say the run is in progress: its status is read once a beat, not every poll.
      if (Date.now() - this.beatReadAt >= times.beatMs / 2) await this.readBeats(false);
      if (this.final === null) {
        this.schedule(times.pollMs);
        return;
      }
    }
    this.statusReadAt = Date.now();
    let run: WorkflowRun | null;
    try {
      // Conditional: 304 (free) while the run's status is unchanged.
      run = await api.run(this.input.runId);
    } catch (error) {
      this.why = `cannot read the run: ${(error as Error).message}`;
      this.schedule(times.pollMs);
      return;
    }
    if (run === null) {
      this.fault ??= { why: `workflow run ${this.input.runId} is gone (deleted on GitHub)`, resume: true };
      return this.finish(null);
    }
    this.status = run.status;
    const now = Date.now();
    if (run.status !== "completed" && run.status !== "in_progress") {
      this.why = `${run.status}: waiting for a runner`;
      if (now - this.startedAt > times.pickupMs && this.stopReason === null) {
        const why = `no runner picked up workflow run ${this.input.runId} within ${Math.round(times.pickupMs / 1000)} s (is a runner for \`runs-on\` available, and are Actions enabled?)`;
        this.fault = { why, resume: true };
        this.stopReason = why;
        await api.cancel(this.input.runId).catch(() => false);
      }
    } else if (run.status === "in_progress" && this.busy === "unknown" && this.final === null) {
      this.why = "on a runner";
    }
    if (run.status === "completed") {
      await this.readBeats(true);
      return this.finish(run);
    }
    if (now - this.beatReadAt >= times.beatMs / 2) await this.readBeats(false);
    if (this.stopReason !== null && now - (this.stoppedAt ??= now) > times.cancelWaitMs) {
      this.fault ??= { why: `workflow run ${this.input.runId} did not end within ${Math.round(times.cancelWaitMs / 1000)} s of its cancel`, resume: true };
      return this.finish(run);
    }
    this.schedule(this.stopReason !== null ? Math.min(2_000, times.pollMs) : times.pollMs);
  }

  /**
   * Whether this poll may leave the run's status unread: it was in progress when last read, less
   * than a beat ago, and the runner's beats come on time (one within two beat periods, not the
   * last). A queued run, a late beat, the last beat or the fleet's stop has it read every poll.
   */
  private beatsOnTime(now: number): boolean {
    const { beatMs } = this.input.times;
    const beat = this.beatAt !== null && now - this.beatAt < 2 * beatMs;
    return beat && this.stopReason === null && this.status === "in_progress" && this.final === null && now - this.statusReadAt < beatMs;
  }

  /** New beats of this run, delivered in order; `fresh`: list the run refs now (the run just ended). */
  private async readBeats(fresh: boolean): Promise<void> {
    this.beatReadAt = Date.now();
    const { reader, issue, reach, guard, branch } = this.input;
    try {
      const listing = await reader.current(fresh);
      this.listing = listing;
      await this.prime();
      const tip = listing.tips.get(issue);
      if (!tip || tip === this.seen) return await guard.check(listing.branches.get(branch), false);
      if (!(await reader.fetch(issue, tip))) return;
      for (const beat of await readBeats(reach.git.dir, tip, this.seen, reader.known(issue, tip))) {
        if (beat.facts.run_id !== this.input.runId || beat.facts.issue !== issue) continue;
        guard.beat(beat.facts);
        for (const line of beat.output) this.deliver(line.s === "o" ? "stdout" : "stderr", line.l, line.t || Date.now());
        if (beat.facts.dropped > 0) this.input.output.onTruncated?.("stdout", beat.facts.dropped);
        this.beatAt = Date.now();
        this.lastOutput = Math.max(this.lastOutput, Date.parse(beat.facts.activity_at) || 0);
        this.busy = beat.facts.busy;
        this.why = beat.facts.why ? `on the runner: ${beat.facts.why}` : "on a runner";
        if (beat.facts.exit) {
          this.final = beat.facts;
          this.verdict = beat.verdict;
        }
      }
      this.seen = tip;
      this.input.onSeen(tip);
      // Origin's branch as the same listing showed it (listed before the beats just read).
      await guard.check(listing.branches.get(branch), false);
    } catch (error) {
      this.why = `cannot read the runner's beats: ${(error as Error).message}`;
    }
  }

  /** A line of the worker's output, to the fleet's sink and the tail. */
  private deliver(stream: "stdout" | "stderr", line: string, at: number): void {
    this.input.output.onLine(stream, line);
    this.lines.push({ stream, line, at });
    if (this.lines.length > TAIL_MAX) this.lines.shift();
  }

  /** An adopted run: the beats an earlier host already delivered still tell the guard what the run pushed. */
  private async prime(): Promise<void> {
    if (this.primed || this.input.seen === null) return;
    this.primed = true;
    const earlier = await readBeats(this.input.reach.git.dir, this.input.seen, null).catch(() => []);
    for (const beat of earlier) if (beat.facts.run_id === this.input.runId && beat.facts.issue === this.input.issue) this.input.guard.beat(beat.facts);
  }

  private async finish(run: WorkflowRun | null): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    const conclusion = run?.conclusion ?? null;
    const { guard, reader, branch } = this.input;
    // After the last beat, every push the run made is reported: any other tip is foreign.
    await guard.check(this.listing?.branches.get(branch), this.final !== null).catch(() => undefined);
    guard.end(this.final !== null);
    reader.unwatch(this.input.issue, branch);
    await this.bringBranchHome();
    if (this.verdict !== null) await writeFile(this.input.verdictPath, this.verdict, { mode: 0o600 }).catch(() => undefined);
    if (this.fault === null) this.fault = this.stopReason === null ? await this.faultOf(conclusion) : null;
    const foreign = await this.foreignPushes().catch(() => ({ outside: [], cross: [] }));
    const refs = (list: string[]): string => `${list.slice(0, 3).join(", ")}${list.length > 3 ? ` and ${list.length - 3} more` : ""}`;
    const said: string[] = [];
    if (foreign.cross.length > 0)
      said.push(
        `the runner pushed to ${refs(foreign.cross)}, another issue's branch${foreign.cross.length > 1 ? "es" : ""}, with a commit that issue's run never pushed`,
      );
    if (foreign.outside.length > 0)
      said.push(`${said.length > 0 ? "and" : "the runner pushed"} to ${refs(foreign.outside)}, outside the issue's branch ${this.input.branch}`);
    if (said.length > 0) {
      const why = `${said.join("; ")}: the attempt is not trusted, and the next one starts fresh (its commits are set aside, not lost)`;
      this.fault = { why, resume: false };
    }
    const exit: WorkerExit = {
      code: this.final?.exit?.code ?? (conclusion === "success" ? 0 : conclusion === "failure" ? 1 : null),
      signal: (this.final?.exit?.signal as NodeJS.Signals | null | undefined) ?? null,
      durationMs: Date.now() - this.startedAt,
      killReason: this.stopReason,
      fault: this.fault,
      ...(guard.notices.length > 0 ? { notices: [...guard.notices] } : {}),
    };
    this.input.onEnd();
    this.resolveExit(exit);
  }

  /** Why a run that ended without the fleet's stop is not the worker's own end, or null. */
  private async faultOf(conclusion: string | null): Promise<{ why: string; resume: boolean } | null> {
    const id = this.input.runId;
    const keep = " (the next attempt continues from what it pushed)";
    if (conclusion === "cancelled")
      return {
        why: `workflow run ${id} was cancelled outside the fleet (on GitHub, by a person or another run of the issue's concurrency group)${keep}`,
        resume: true,
      };
    if (conclusion === "timed_out") return { why: `workflow run ${id} passed its job's timeout-minutes${keep}`, resume: true };
    if (this.final !== null) return null;
    // The run says why: its failing step and the end of that job's log (two requests, once a run).
    const when = this.beatAt === null && this.input.seen === null ? "before the worker's first beat" : "without the worker's last beat";
    const failure = conclusion === "failure" ? await readRunFailure(this.input.reach.api, id) : null;
    if (failure === null)
      return {
        why: `workflow run ${id} ended (${conclusion ?? "no conclusion"}) ${when}: the runner died or a step before the worker failed${keep}`,
        resume: true,
      };
    // The worker's output, as the run's log ends: status and the breaker quote the last line.
    const said = describeRunFailure(failure, id, when);
    this.input.output.onLine("stderr", `afk: ${said.head}${failure.lines.length > 0 ? "; the last lines of its log:" : ""}`);
    for (const line of failure.lines) this.deliver("stderr", line, Date.now());
    return { why: `${said.why}${keep}`, resume: true };
  }

  /**
   * The issue branch as the runner left it, into the host's worktree (a fast-forward only: nothing
   * here is ever thrown away): the tip its last beat reported, not whatever origin holds (another
   * run's token may have pushed there). A run that ended without its last beat cannot say what it
   * pushed last: origin's tip is taken then, as far as it continues the worktree.
   */
  private async bringBranchHome(): Promise<void> {
    const { git } = this.input.reach;
    const { branch, worktree, guard } = this.input;
    const fetched = await git.fetchRaw(["fetch", "--no-tags", "--quiet", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`]);
    const origin = (await git.runRaw(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${branch}^{commit}`])).stdout.trim();
    const remote = this.final !== null ? (guard.trusted() ?? "") : fetched.exitCode === 0 ? origin : "";
    const head = (await git.runRaw(["rev-parse", "HEAD"], worktree)).stdout.trim();
    if (!remote || remote === head) return;
    if ((await git.runRaw(["cat-file", "-e", `${remote}^{commit}`])).exitCode !== 0) {
      this.input.output.onLine(
        "stderr",
        `afk: the tip the runner reported for ${branch} (${remote.slice(0, 12)}) is not on origin: the worktree is left at ${head.slice(0, 12)}`,
        "runtime",
      );
      return;
    }
    const ahead = await git.runRaw(["merge-base", "--is-ancestor", head, remote], worktree);
    if (ahead.exitCode === 0) await git.runRaw(["merge", "--ff-only", "--quiet", remote], worktree);
    else
      this.input.output.onLine(
        "stderr",
        `afk: ${branch} on origin (${remote.slice(0, 12)}) does not continue this worktree's ${head.slice(0, 12)}: left as it is`,
        "runtime",
      );
  }

  /**
   * Refs the runner token pushed since this run's dispatch that this run made, outside the fleet's
   * own (`outside`) or into another issue's branch (`cross`). Made by this run: the pushed commit
   * shares history with this run's own commits (the branch past the base), or it shares none and
   * this run was the only one of this host in flight (besides, for a push into another issue's
   * branch, that issue's own run). A push into another issue's branch counts only once that
   * branch's guard on this host judged it foreign (no beat of its run reported it): other hosts'
   * runners push their issues' branches, and a run's own push may be reported a beat later. The
   * others are left to the run they share history with.
   */
  private async foreignPushes(): Promise<{ outside: string[]; cross: string[] }> {
    const { branch, issue, runRef, reach, times } = this.input;
    const prefix = branch.slice(0, branch.indexOf(`${issue}-`));
    const runPrefix = runRef.slice(0, runRef.lastIndexOf("/") + 1);
    /** The issue whose fleet branch `ref` is, or null. */
    const issueOf = (ref: string): number | null => {
      const tail = /^(\d+)-/.exec(prefix === "" || !ref.startsWith(`refs/heads/${prefix}`) ? "" : ref.slice(`refs/heads/${prefix}`.length));
      return tail ? Number(tail[1]) : null;
    };
    const since = this.startedAt - 1_000;
    // One conditional request per page, at a run's end (pages back to its dispatch).
    const pushes = (await reach.api.pushesBy(RUNNER_LOGIN, { since })).filter((p) => p.ref !== `refs/heads/${branch}` && !p.ref.startsWith(runPrefix));
    if (pushes.length === 0) return { outside: [], cross: [] };
    const mine = (await reach.git.runRaw(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${branch}^{commit}`])).stdout.trim();
    const base = (await reach.git.runRaw(["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${reach.base}^{commit}`])).stdout.trim();
    const outside = new Set<string>();
    const cross = new Set<string>();
    for (const p of pushes) {
      const other = issueOf(p.ref);
      if (other === issue) continue;
      const blame = await this.madeBy(p.after, p.ref, mine, base);
      if (other === null) {
        if (blame === true || (blame === null && this.input.alone(Date.parse(p.timestamp)))) outside.add(p.ref);
        continue;
      }
      if (blame !== true && !(blame === null && this.input.alone(Date.parse(p.timestamp), other))) continue;
      // Its run's next beats (or its end) decide whose push it was: a few beats at most.
      const guard = this.input.guardOf(other);
      if (
        guard?.branch === p.ref.slice("refs/heads/".length) &&
        Date.parse(p.timestamp) >= guard.since &&
        (await guard.settled(p.after, Math.max(60_000, 4 * times.beatMs))) === "foreign"
      )
        cross.add(p.ref);
    }
    return { outside: [...outside], cross: [...cross] };
  }

  /** Whether `after` shares commits with this run's own (true), shares none (false), or cannot tell (null: a deletion, or gone). */
  private async madeBy(after: string, ref: string, mine: string, base: string): Promise<boolean | null> {
    if (!/^[0-9a-f]{40,64}$/.test(after) || /^0+$/.test(after) || !mine) return null;
    const { git } = this.input.reach;
    const have = await git.runRaw(["cat-file", "-e", `${after}^{commit}`]);
    if (have.exitCode !== 0) {
      const fetched = await git.fetchRaw([
        "fetch",
        "--no-tags",
        "--quiet",
        "--no-write-fetch-head",
        "origin",
        `+${ref}:refs/afk-actions/foreign/${this.input.issue}`,
      ]);
      if (fetched.exitCode !== 0 || (await git.runRaw(["cat-file", "-e", `${after}^{commit}`])).exitCode !== 0) return null;
    }
    const common = (await git.runRaw(["merge-base", after, mine])).stdout.trim();
    if (!common) return null;
    if (!base) return true;
    // Shared history past the base is this run's own commits.
    return (await git.runRaw(["merge-base", "--is-ancestor", common, base])).exitCode !== 0 ? true : null;
  }
}
