// Starting and ending one worker process: the user's opaque command through their shell, the
// brief on stdin followed by end-of-file, output read line by line (never inherited: our stdout
// is the MCP stream), and the whole process tree ended as one process group.
//
// With `outputDir`, stdout and stderr are FILES there that we follow, not pipes: a worker must
// outlive the daemon that started it (a crash, kill -9, an upgrade), and a pipe whose reader died
// kills the worker with SIGPIPE on its next line. A file has no reader to lose; the next daemon
// adopts the worker and follows the same files.
//
// stdin is the brief FILE, opened read-only, not a pipe we write into: the worker reads the brief
// and then EOF exactly as if we had written it and closed the pipe (an open stdin hangs `claude
// -p` and `codex exec`), with no 64 KiB pipe buffer to fill and no EPIPE. And Node's child pipes
// are socketpairs: bash takes a socket on stdin for rshd/sshd and sources ~/.bashrc, which would
// run the user's interactive setup (and re-export whatever tokens it exports) in every worker.
//
// node:child_process rather than execa: execa's result waits for every holder of the stdout
// pipe, so `agent & exit` style leftovers would keep a finished worker "running"; we need the
// leader's exit, signals to the group, and our own bounded line reader. No `shell: true`
// anywhere: the shell is spawned explicitly with the user's command as its one `-c` argument.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, constants as fsConstants, fstatSync, lstatSync, openSync } from "node:fs";
import { isAbsolute } from "node:path";
import { executable, expandCommand, resolveShell } from "../../agent/shell.js";
import { processGroupMembers } from "./proc.js";
import { FileFollower, outputFiles } from "./output-files.js";

import type { OutputStream, TailLine, WorkerExit } from "../../worker-port/port.js";
import { setTimeout as sleep } from "node:timers/promises";

export type { OutputStream, TailLine, WorkerExit } from "../../worker-port/port.js";
export { expandCommand, resolveShell, shellQuote } from "../../agent/shell.js";

export interface StartWorkerOptions {
  /** The user's worker command, opaque. `{brief}` is replaced by the shell-quoted brief path. */
  command: string;
  /** Where the worker's group is kept until it ends (its runtime's, to end at once on a hard exit). */
  groups?: WorkerGroups;
  cwd: string;
  /** The whole environment (see env.ts); nothing else is inherited. */
  env: Record<string, string>;
  /** The brief file (see brief.ts): the worker's stdin, and what `{brief}` expands to. */
  briefPath: string;
  onLine?: (stream: OutputStream, line: string) => void;
  /** The shell to run the command with. Default: `$SHELL` when it is a known POSIX shell, else /bin/sh. */
  shell?: string;
  /** Start the shell as a login shell (`-l`): the user's profile sets PATH (engine profiles). */
  loginShell?: boolean;
  /** SIGTERM → SIGKILL grace for the process group. Default 10 s. */
  killGraceMs?: number;
  /** Lines kept for `tail()`. Default 200. */
  tailLines?: number;
  /** Longer lines are delivered in pieces of this many characters. Default 64 Ki. */
  maxLineChars?: number;
  /**
   * A directory for `stdout.log` and `stderr.log` (truncated at the start): the worker writes
   * there and we follow them, so it survives our death. Without it, output goes through pipes.
   */
  outputDir?: string;
  /** With `outputDir`: each file is cut, with a marker, once it passed this many bytes and was read (output-files.ts). */
  outputMaxBytes?: number;
  /** Called after a file was cut, with the bytes cut. */
  onOutputTruncated?: (stream: OutputStream, dropped: number) => void;
  /**
   * Called synchronously the moment the process exists, before anything is awaited: the place
   * to record its pid, so that a host killed right after the spawn still leaves a trace of it.
   */
  onSpawn?: (pid: number, commandLine: string) => void;
}

export interface WorkerHandle {
  pid: number;
  /** The worker's process group (== pid: it is started as a group and session leader). */
  pgid: number;
  /** Epoch ms. */
  startedAt: number;
  shell: string;
  /** The command as handed to the shell, after `{brief}` expansion. */
  commandLine: string;
  /** Resolves (never rejects) once the leader exited, leftovers in its group were ended and output drained. */
  exited: Promise<WorkerExit>;
  /** SIGTERM to the group, SIGKILL after the grace; resolves when everything is gone. Idempotent. */
  kill(reason: string): Promise<WorkerExit>;
  /** Epoch ms of the last byte of output (`startedAt` before any). */
  lastOutputAt(): number;
  /** The last lines of output, oldest first. */
  tail(): TailLine[];
  running(): boolean;
}

export class WorkerSpawnError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(`${message}; ${hint}`);
    this.name = "WorkerSpawnError";
  }
}

/** Splits a text stream into lines; bounded: a line longer than `max` is emitted in pieces. */
export class LineSplitter {
  private partial = "";

  constructor(
    private readonly emit: (line: string) => void,
    private readonly max: number,
  ) {}

  push(chunk: string): void {
    let text = this.partial + chunk;
    let nl = text.indexOf("\n");
    while (nl !== -1) {
      this.emitBounded(text.slice(0, nl));
      text = text.slice(nl + 1);
      nl = text.indexOf("\n");
    }
    while (text.length > this.max) {
      this.emit(text.slice(0, this.max));
      text = text.slice(this.max);
    }
    this.partial = text;
  }

  flush(): void {
    if (this.partial !== "") this.emitBounded(this.partial);
    this.partial = "";
  }

  private emitBounded(line: string): void {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.length <= this.max) {
      this.emit(text);
      return;
    }
    for (let i = 0; i < text.length; i += this.max) this.emit(text.slice(i, i + this.max));
  }
}

const TAIL_LINE_MAX = 2_000;
const DRAIN_MS = 2_000;
const POLL_MS = 50;

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in the group. EPERM cannot happen for our own children.
  }
}

/** Process groups of workers started and not yet ended, kept by their starter (the local runtime). */
export class WorkerGroups {
  private readonly live = new Set<number>();

  add(pgid: number): void {
    this.live.add(pgid);
  }

  delete(pgid: number): void {
    this.live.delete(pgid);
  }

  /**
   * SIGKILLs every worker group started and not seen to end: the last act of a process that must
   * exit at once (a second signal), so that no worker outlives its host unwatched. Synchronous on
   * purpose. Returns how many groups were signalled.
   */
  endAllNow(): number {
    const groups = [...this.live];
    for (const pgid of groups) signalGroup(pgid, "SIGKILL");
    this.live.clear();
    return groups.length;
  }
}

/** Whether any live (non-zombie) process remains in the group. */
export async function groupAlive(pgid: number): Promise<boolean> {
  const members = await processGroupMembers(pgid);
  if (members !== null) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!(await groupAlive(pgid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

/** Ends every process of the group: SIGTERM, then SIGKILL after `graceMs`. */
export async function endGroup(pgid: number, graceMs: number): Promise<void> {
  if (!(await groupAlive(pgid))) return;
  signalGroup(pgid, "SIGTERM");
  // A group stopped while its output file was cut (a daemon that died then) only sees the TERM once continued.
  signalGroup(pgid, "SIGCONT");
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, "SIGKILL");
  await waitGroupGone(pgid, 5_000);
}

function waitForSpawn(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const onSpawn = () => {
      child.off("error", onError);
      resolve();
    };
    const onError = (err: Error) => {
      child.off("spawn", onSpawn);
      reject(err);
    };
    child.once("spawn", onSpawn);
    child.once("error", onError);
  });
}

/**
 * Starts the worker. Rejects with a WorkerSpawnError when the process cannot be started at all
 * (missing cwd or shell); once started, every outcome arrives through `exited`.
 */
export async function startWorker(opts: StartWorkerOptions): Promise<WorkerHandle> {
  if (opts.command.trim() === "") throw new WorkerSpawnError("worker command is empty", "set worker_command in project_start");
  if (opts.command.includes("\0")) throw new WorkerSpawnError("worker command contains a NUL byte", "fix worker_command");
  let shell: string;
  if (opts.shell !== undefined) {
    if (!isAbsolute(opts.shell) || !executable(opts.shell)) {
      throw new WorkerSpawnError(`shell ${JSON.stringify(opts.shell)} is not an executable absolute path`, "pass an absolute path such as /bin/sh");
    }
    shell = opts.shell;
  } else {
    shell = resolveShell(opts.env.SHELL ?? process.env.SHELL);
  }
  const commandLine = expandCommand(opts.command, opts.briefPath);
  const graceMs = opts.killGraceMs ?? 10_000;
  const tailMax = Math.max(1, opts.tailLines ?? 200);
  const maxLine = Math.max(80, opts.maxLineChars ?? 64 * 1024);

  let stdinFd: number;
  try {
    // Checked before opening: opening a FIFO for reading would block the host.
    if (!lstatSync(opts.briefPath).isFile()) throw Object.assign(new Error("not a regular file"), { code: "not a regular file" });
    stdinFd = openSync(opts.briefPath, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (err) {
    throw new WorkerSpawnError(`cannot open the brief ${opts.briefPath}: ${(err as NodeJS.ErrnoException).code ?? err}`, "write it with writeBrief first");
  }
  let outFds: number[] = [];
  if (opts.outputDir !== undefined) {
    const files = outputFiles(opts.outputDir);
    const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_APPEND | fsConstants.O_NOFOLLOW;
    try {
      outFds = [openSync(files.stdout, flags, 0o600), openSync(files.stderr, flags, 0o600)];
    } catch (err) {
      for (const fd of outFds) closeSync(fd);
      closeSync(stdinFd);
      throw new WorkerSpawnError(
        `cannot open the worker's output files in ${opts.outputDir}: ${(err as NodeJS.ErrnoException).code ?? err}`,
        "check that the run directory is writable",
      );
    }
  }
  let child: ChildProcess;
  try {
    if (!fstatSync(stdinFd).isFile()) {
      throw new WorkerSpawnError(`the brief ${opts.briefPath} is not a regular file`, "write it with writeBrief");
    }
    child = spawn(shell, opts.loginShell ? ["-l", "-c", commandLine] : ["-c", commandLine], {
      cwd: opts.cwd,
      env: opts.env,
      // Own session and process group: no controlling terminal to prompt on, and one kill ends all.
      detached: true,
      stdio: outFds.length === 2 ? [stdinFd, outFds[0]!, outFds[1]!] : [stdinFd, "pipe", "pipe"],
      windowsHide: true,
    });
    if (child.pid !== undefined) {
      try {
        opts.onSpawn?.(child.pid, commandLine);
      } catch {
        // A record that could not be written is retried by the caller; the worker runs either way.
      }
    }
    await waitForSpawn(child);
  } catch (err) {
    if (err instanceof WorkerSpawnError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new WorkerSpawnError(
      `cannot start the worker with ${shell} in ${opts.cwd}: ${e.code ?? e.message}`,
      "check that the worktree exists and the shell is installed",
    );
  } finally {
    closeSync(stdinFd); // the child has its own copies
    for (const fd of outFds) closeSync(fd);
  }
  // After a successful spawn an 'error' can only be a failed signal; never let it crash the host.
  child.on("error", () => {});
  const pid = child.pid!;
  opts.groups?.add(pid);
  const startedAt = Date.now();
  let lastOutput = startedAt;
  const ring: TailLine[] = [];
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null; at: number } | null = null;
  let killReason: string | null = null;
  let ending: Promise<void> | null = null;

  const deliver = (stream: OutputStream) => (line: string) => {
    ring.push({ stream, line: line.length > TAIL_LINE_MAX ? `${line.slice(0, TAIL_LINE_MAX)}…` : line, at: Date.now() });
    if (ring.length > tailMax) ring.shift();
    try {
      opts.onLine?.(stream, line);
    } catch {
      // The reader must keep draining the pipe whatever a callback does: a full pipe hangs the worker.
    }
  };
  const splitters = {
    stdout: new LineSplitter(deliver("stdout"), maxLine),
    stderr: new LineSplitter(deliver("stderr"), maxLine),
  };
  const followers: FileFollower[] = [];
  if (opts.outputDir !== undefined) {
    const files = outputFiles(opts.outputDir);
    for (const name of ["stdout", "stderr"] as const) {
      followers.push(
        new FileFollower(
          files[name],
          0,
          (text) => {
            lastOutput = Date.now();
            splitters[name].push(text);
          },
          opts.outputMaxBytes === undefined
            ? undefined
            : { maxBytes: opts.outputMaxBytes, pgid: pid, onTruncated: (dropped) => opts.onOutputTruncated?.(name, dropped) },
        ).start(),
      );
    }
  } else {
    for (const name of ["stdout", "stderr"] as const) {
      const stream = child[name]!;
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        lastOutput = Date.now();
        splitters[name].push(chunk);
      });
      stream.on("error", () => {});
    }
  }
  const streamsClosed = followers.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => child.once("close", () => resolve()));

  const endAll = (): Promise<void> => {
    ending ??= endGroup(pid, graceMs);
    return ending;
  };

  const exited = new Promise<WorkerExit>((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = { code, signal, at: Date.now() };
      void (async () => {
        // Leftovers of a finished worker (a dev server, `sleep 1000 &`) hold the worktree and our
        // pipes: end them. Then let the output drain, bounded, in case something escaped the group.
        try {
          await endAll();
        } catch {
          // best effort
        }
        opts.groups?.delete(pid);
        await Promise.race([streamsClosed, sleep(DRAIN_MS)]);
        await Promise.all(followers.map((f) => f.close()));
        child.stdout?.destroy();
        child.stderr?.destroy();
        splitters.stdout.flush();
        splitters.stderr.flush();
        resolve({ code: exitInfo!.code, signal: exitInfo!.signal, durationMs: exitInfo!.at - startedAt, killReason });
      })();
    });
  });

  return {
    pid,
    pgid: pid,
    startedAt,
    shell,
    commandLine,
    exited,
    async kill(reason: string): Promise<WorkerExit> {
      if (exitInfo === null) killReason ??= reason;
      await endAll();
      return exited;
    },
    lastOutputAt: () => lastOutput,
    tail: () => ring.slice(),
    running: () => exitInfo === null,
  };
}
