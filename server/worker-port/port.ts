// The WorkerRuntime port: everything the fleet asks of wherever a worker runs. The fleet starts a
// worker with a brief, a worktree, an environment and the engine's command line, gets a handle
// whose id is opaque, observes it (alive, last activity, output, whether it is busy), stops it
// with a reason, and reads its exit facts; after a crash it adopts the workers a runtime's
// durable state names. Pids, process groups, /proc, pid files and node:child_process stay behind
// this port (today in server/runtimes/local/); the fleet and the host see none of them
// (eslint.config.js). A runtime is chosen by name (config `runtime`, server/runtimes/registry.ts).
//
// How other runtimes fit: a sandbox wraps the local process (its start builds a different
// command and environment, everything else is the local runtime's); a GitHub Actions runtime's
// id is the workflow run's id, observe reads the run's status and the heartbeat the runner
// pushes (busy "unknown": its CPU is not ours to see), stop cancels the run, its exit facts come
// from the run's conclusion, and adopt lists the runs its dispatches left in flight.

import { join } from "node:path";
import type { FleetConfig } from "../../schemas/config.js";

export type OutputStream = "stdout" | "stderr";

/** The files a worker's output goes to in its slot's directory (`stdout.log`, `stderr.log`): the transcript a runtime keeps on this host. */
export function outputFiles(dir: string): Record<OutputStream, string> {
  return { stdout: join(dir, "stdout.log"), stderr: join(dir, "stderr.log") };
}

export interface TailLine {
  stream: OutputStream;
  line: string;
  /** Epoch ms. */
  at: number;
}

/** What a worker's end says (not a verdict: docs/architecture.md, runtime lesson 2, judge by branch and verdict). */
export interface WorkerExit {
  /** Exit code, where the runtime can read one (an adopted local process: null). */
  code: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  /** The reason given to `stop`, when the fleet ended it. */
  killReason: string | null;
  /**
   * The runtime's own finding that the attempt failed whatever the worker left (a runner that
   * died, a run cancelled by someone else, a push outside the issue's branch): the attempt is
   * spent with this reason. `resume`: the next attempt continues from the branch (the worker's
   * commits are trusted, it was its runner that failed); otherwise it starts fresh, the
   * commits set aside.
   */
  fault?: { why: string; resume: boolean } | null;
  /**
   * What the runtime found and set right during the attempt that spends nothing (a push into the
   * issue's branch that its worker did not make, put back): the board and status say it.
   */
  notices?: readonly string[];
}

/** A worker's place in the fleet's run directory: one per issue, beside its brief and verdict file. */
export interface WorkerSlot {
  issue: number;
  /** `<runDir>/issue-<n>`: the runtime keeps its durable records (a pid file, output files) here. */
  dir: string;
}

/**
 * Who wrote a line: the worker, or the runtime around it (a sandbox's banner). The lane keeps
 * both; the words that explain a worker's death (the breaker, the board) are the worker's own.
 */
export type LineSource = "worker" | "runtime";

/** Where a worker's output goes, line by line, while it is watched. */
export interface OutputSink {
  /** `source`: "runtime" for a line the runtime wrote into the worker's output; absent, the worker's. */
  onLine: (stream: OutputStream, line: string, source?: LineSource) => void;
  /** The cap on what the runtime keeps of the output on disk (`worker.output_max_bytes`). */
  maxBytes?: number;
  /** Called after the runtime cut its copy of the output, with the bytes cut (all of them already delivered). */
  onTruncated?: (stream: OutputStream, dropped: number) => void;
}

export interface StartRequest {
  slot: WorkerSlot;
  attempt: number;
  /** The engine's command line, opaque (the user's worker command or an engine profile's). `{brief}` names the brief file. */
  command: string;
  /** The issue's worktree: where the worker runs and what it may change. */
  worktree: string;
  /** The issue's branch, the one ref the worker may move (a sandbox gives it a git dir of its own; a runner pushes only there). */
  branch: string;
  /** Where the worker writes its verdict (server/agent/outcome.ts): a runtime that runs it elsewhere brings it back here. */
  verdictPath: string;
  /** The engine the command runs (its API hosts, for a network allowlist); null: an opaque command. */
  engine: string | null;
  /** The fleet's config: a runtime reads its own section there. */
  config: FleetConfig;
  /** The host's environment, for a runtime that must find its own tools; the worker gets `env` only. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** The whole environment (server/agent/env.ts); nothing else is inherited. */
  env: Record<string, string>;
  /** The brief file (server/agent/brief.ts): the worker's stdin. */
  briefPath: string;
  /** Whether the command needs the user's login profile (an engine profile's PATH). */
  loginShell?: boolean;
  output: OutputSink;
}

/** What a look at a running worker tells (server/worker-port/liveness.ts decides what it means). */
export interface WorkerObservation {
  running: boolean;
  /** Epoch ms of the last output (the start before any). */
  lastOutputAt: number;
  /**
   * A part of the worker is working without printing (a test run, a build): true, false, or
   * "unknown" when this runtime cannot tell yet (a first look) or at all.
   */
  busy: boolean | "unknown";
  /** Why busy reads as it does, for the liveness lane. */
  why: string;
}

export interface WorkerHandle {
  /** Opaque and unique within its runtime: a local process's pid, a workflow run's id. */
  readonly id: string;
  /** The runtime's name (config `runtime`). */
  readonly runtime: string;
  /** The fields that name the worker in lane records and status rows (local: `{ pid }`). */
  readonly tags: Readonly<Record<string, number | string>>;
  /** The worker in a message ("pid 4242"). */
  readonly label: string;
  /** Epoch ms. */
  readonly startedAt: number;
  /** The command as the runtime runs it, after `{brief}` expansion. */
  readonly commandLine: string;
  /** Resolves (never rejects) once the worker ended and its output was delivered. */
  readonly exited: Promise<WorkerExit>;
  /** Ends the worker; resolves with its exit facts once it is gone. Idempotent. */
  stop(reason: string): Promise<WorkerExit>;
  /** One look, for liveness: each compares with the look before (the first says busy "unknown"). */
  observe(): Promise<WorkerObservation>;
  lastOutputAt(): number;
  /** The last lines of output, oldest first. */
  tail(): TailLine[];
  running(): boolean;
  /** What the runtime set right so far without spending the attempt (as `WorkerExit.notices`), for status while it runs. */
  notices?(): readonly string[];
}

/** A worker an earlier host process left, now watched from here. */
export interface AdoptedWorker {
  handle: WorkerHandle;
  attempt: number;
  /** The worktree it runs in, as recorded when it started. */
  worktree: string;
}

/** A worker still running by the runtime's durable state, for status (read only). */
export interface RecordedWorker {
  issue: number;
  attempt: number;
  /** Epoch ms. */
  startedAt: number;
  tags: Readonly<Record<string, number | string>>;
}

export interface WorkerRuntime {
  readonly name: string;
  /**
   * Starts a worker; rejects with an error naming the fix when it cannot start at all. A runtime
   * that knows the attempt failed at its start for a reason of its own (a sandbox that cannot
   * start on this host) may instead resolve a handle that has already exited with a `fault`: the
   * attempt is then spent with that reason, like any other fault.
   */
  start(request: StartRequest): Promise<WorkerHandle>;
  /**
   * The live worker an earlier host process left in the slot (a daemon restarted after a crash,
   * a hand-over), watched from here like one of ours; null when there is none. `output` gives
   * the sink for the attempt the runtime's record names.
   */
  adopt(slot: WorkerSlot, output: (attempt: number) => OutputSink): Promise<AdoptedWorker | null>;
  /** Ends what an earlier host process left running in the slot, before its worktree is reused: never two workers in one worktree. */
  evict(slot: WorkerSlot): Promise<{ tags: Readonly<Record<string, number | string>>; label: string } | null>;
  /** Drops the slot's durable record of a worker whose exit is being handled. */
  forget(slot: WorkerSlot): Promise<void>;
  /** The workers still running that the durable state under a repository's run directory names. */
  recorded(runDir: string): Promise<RecordedWorker[]>;
  /** Ends every worker this process started and has not seen end, at once (the host must exit now). Synchronous; returns how many. */
  endAllNow(): number;
  /**
   * Whether a PR head of the fleet may land, by who pushed it: null when it may, else why not
   * (what the runtime set right, said on the board; no attempt is spent). A runtime whose workers
   * can push where they should not (every job token of a repository can push to every branch)
   * judges here the commits that reached an issue's branch after its last worker ended, before
   * any landing, sync or train takes them. Absent: every gated head may land.
   */
  vetHead?(head: HeadToLand): Promise<string | null>;
}

/** A fleet PR's head about to land (or be synced with the base), on its issue's branch. */
export interface HeadToLand {
  issue: number;
  pr: number;
  /** The PR's branch, without refs/heads/. */
  branch: string;
  head: string;
}

/** The pid a status row shows for a worker: the local runtime's tag, null elsewhere. */
export function displayPid(tags: Readonly<Record<string, number | string>>): number | null {
  return typeof tags.pid === "number" ? tags.pid : null;
}
