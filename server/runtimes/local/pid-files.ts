// Worker pid files, so that a worker that outlived a crashed daemon is found again: each
// records the pid, its process group and the process's start time (a recycled pid never
// matches it, so a stranger is never signalled). A live orphan is either adopted (watched
// until it exits, its result handled as any worker's) or ended before its worktree is reused.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseProcStat } from "./proc.js";
import { FileFollower, outputFiles } from "./output-files.js";
import { endGroup, groupAlive, LineSplitter, type OutputStream, type TailLine, type WorkerExit, type WorkerHandle } from "./spawn.js";
import { setTimeout as sleep } from "node:timers/promises";
import { writeAtomic, writeAtomicSync } from "../../kit/atomic-file.js";

export interface PidRecord {
  pid: number;
  pgid: number;
  /** The process's start time as the OS reports it (ticks since boot on Linux, `ps lstart` elsewhere). */
  start: string;
  /** Epoch ms the fleet started it. */
  started_at: number;
  issue: number;
  attempt: number;
  worktree: string;
  command: string;
}

export const PID_FILE = "worker.pid.json";

/** The pid file of an issue's worker, beside its brief in the run directory. */
export function pidFilePath(issueRunDir: string): string {
  return join(issueRunDir, PID_FILE);
}

/** The start time of a live process, or null when there is no such process. */
export async function processStartTime(pid: number): Promise<string | null> {
  try {
    const entry = parseProcStat(await readFile(`/proc/${pid}/stat`, "utf8"));
    if (entry) return entry.state === "Z" ? null : `ticks:${entry.startTicks}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && hasProc()) return null;
  }
  // No /proc (macOS, BSD): ps names the start to the second, enough with the pid.
  return new Promise((resolve) => {
    execFile("ps", ["-o", "lstart=", "-p", String(pid)], { timeout: 5_000 }, (error, stdout) => {
      const text = String(stdout ?? "").trim();
      resolve(error || text === "" ? null : `lstart:${text}`);
    });
  });
}

/**
 * The start time of a live process read synchronously from /proc, for the instant right after a
 * spawn; undefined where there is no /proc (the async `processStartTime` asks ps there).
 */
export function processStartTimeSync(pid: number): string | null | undefined {
  try {
    const entry = parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    return entry && entry.state !== "Z" ? `ticks:${entry.startTicks}` : null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" && hasProc() ? null : undefined;
  }
}

/** writePidFile without a single await: a SIGKILL can only land before or after it. */
export function writePidFileSync(path: string, record: PidRecord): void {
  writeAtomicSync(path, JSON.stringify(record) + "\n");
}

/** Whether this system has /proc (Linux): a missing /proc/<pid> then means no such process. Asked only then, so not kept. */
function hasProc(): boolean {
  return existsSync("/proc/self/stat");
}

/** Whether the process a record names is still the same live process. */
export async function recordAlive(record: PidRecord): Promise<boolean> {
  return (await processStartTime(record.pid)) === record.start;
}

export async function writePidFile(path: string, record: PidRecord): Promise<void> {
  await writeAtomic(path, JSON.stringify(record) + "\n");
}

export async function readPidFile(path: string): Promise<PidRecord | null> {
  try {
    const parsed = JSON.parse(await readFile(path, "utf8")) as Partial<PidRecord>;
    if (!Number.isInteger(parsed.pid) || !Number.isInteger(parsed.pgid) || typeof parsed.start !== "string") return null;
    if ((parsed.pid ?? 0) <= 1 || (parsed.pgid ?? 0) <= 1) return null;
    return parsed as PidRecord;
  } catch {
    return null;
  }
}

export async function removePidFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

/**
 * The live worker a pid file names, or null (no file, a dead or recycled pid: the stale file is
 * removed). Its group may still hold children when the leader is gone; those are ended here,
 * since nothing can adopt a group without its leader.
 */
export async function liveOrphan(path: string): Promise<PidRecord | null> {
  const record = await readPidFile(path);
  if (!record) {
    await removePidFile(path);
    return null;
  }
  if (await recordAlive(record)) return record;
  // The leader is gone. Its group's leftovers are ours to end, but only while no process holds
  // the leader's pid: a group id is not reused while any member lives, so then they are ours;
  // a live process with that pid is a stranger (a recycled pid) and its group is not touched.
  if ((await processStartTime(record.pgid)) === null && (await groupAlive(record.pgid))) await endGroup(record.pgid, 2_000);
  await removePidFile(path);
  return null;
}

/** Ends the live orphan a pid file names, if any: nothing may share its worktree. Returns its pid. */
export async function endOrphan(path: string, graceMs = 10_000): Promise<number | null> {
  const record = await liveOrphan(path);
  if (!record) return null;
  await endGroup(record.pgid, graceMs);
  await removePidFile(path);
  return record.pid;
}

const POLL_MS = 250;

export interface AdoptedOutput {
  /** The worker's output directory (spawn.ts `outputDir`). */
  dir: string;
  onLine: (stream: OutputStream, line: string) => void;
  /** The cap on each file (spawn.ts `outputMaxBytes`). */
  maxBytes?: number;
  onTruncated?: (stream: OutputStream, dropped: number) => void;
}

/**
 * A handle on a worker another process started: it cannot read the worker's exit code, so it
 * watches the pid and, once the leader is gone, ends what is left of the group. Its output
 * files are followed from their current end (what came before went to the crashed process's
 * lanes, or sits in the files). Everything else reads the worktree, as for any worker.
 */
export function adoptedHandle(record: PidRecord, graceMs = 10_000, output?: AdoptedOutput): WorkerHandle {
  // A daemon that died while it cut an output file left the group stopped (output-files.ts).
  try {
    process.kill(-record.pgid, "SIGCONT");
  } catch {
    // The group is gone: the watch below sees it.
  }
  const adoptedAt = Date.now();
  let lastOutput = adoptedAt;
  const ring: TailLine[] = [];
  const followers: Promise<FileFollower | null>[] = [];
  if (output) {
    const files = outputFiles(output.dir);
    for (const name of ["stdout", "stderr"] as const) {
      const splitter = new LineSplitter((line) => {
        ring.push({ stream: name, line: line.slice(0, 2_000), at: Date.now() });
        if (ring.length > 200) ring.shift();
        try {
          output.onLine(name, line);
        } catch {
          // A callback's failure must not stop the following.
        }
      }, 64 * 1024);
      followers.push(
        stat(files[name]).then(
          (s) =>
            new FileFollower(
              files[name],
              s.size,
              (text) => {
                lastOutput = Date.now();
                splitter.push(text);
              },
              output.maxBytes === undefined
                ? undefined
                : { maxBytes: output.maxBytes, pgid: record.pgid, onTruncated: (dropped) => output.onTruncated?.(name, dropped) },
            ).start(),
          () => null,
        ),
      );
    }
  }
  let done = false;
  let killReason: string | null = null;
  let resolveExit!: (exit: WorkerExit) => void;
  const exited = new Promise<WorkerExit>((resolve) => (resolveExit = resolve));
  const finish = async (): Promise<void> => {
    if (done) return;
    done = true;
    // Leftovers of the group, unless the leader's pid was already recycled (see liveOrphan).
    if ((await processStartTime(record.pgid)) === null) await endGroup(record.pgid, 2_000);
    await Promise.all(followers.map(async (f) => (await f)?.close()));
    resolveExit({ code: null, signal: null, durationMs: Date.now() - record.started_at, killReason });
  };
  const watch = async (): Promise<void> => {
    while (!done && (await recordAlive(record))) await sleep(POLL_MS);
    await finish();
  };
  void watch();
  return {
    pid: record.pid,
    pgid: record.pgid,
    startedAt: record.started_at,
    shell: "",
    commandLine: record.command,
    exited,
    async kill(reason: string): Promise<WorkerExit> {
      killReason ??= reason;
      if (!done) await endGroup(record.pgid, graceMs);
      return exited;
    },
    lastOutputAt: () => lastOutput,
    tail: () => ring.slice(),
    running: () => !done,
  };
}

/**
 * The workers still running that pid files under a repository's run directory name, for status:
 * read only (nothing removed, nothing ended), so a read while no daemon runs, or before the next
 * one has adopted them, sees the workers that are there.
 */
export async function runningWorkers(runDir: string): Promise<PidRecord[]> {
  const names = await readdir(runDir).catch(() => [] as string[]);
  const found: PidRecord[] = [];
  for (const name of names.filter((n) => /^issue-\d+$/.test(n)).sort()) {
    const record = await readPidFile(pidFilePath(join(runDir, name)));
    if (record && (await recordAlive(record))) found.push(record);
  }
  return found;
}
