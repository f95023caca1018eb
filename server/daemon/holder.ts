// The daemon as a process rather than a socket: the pid the state dir's lock names, checked
// against its start time so a recycled pid is never signalled. Used when the socket is missing,
// refused or silent, so that status can name the daemon and stop and restart can still end it.
import { readFile } from "node:fs/promises";
import { lockHolder, type LockRecord } from "./lock.js";
import { processStartTime } from "../runtimes/local/pid-files.js";
import { parseProcStat } from "../runtimes/local/proc.js";
import type { DaemonPaths } from "./paths.js";
import { UsageError } from "../gh/errors.js";
import { setTimeout as sleep } from "node:timers/promises";

export type { LockRecord };

/** The live daemon holding the state dir (start time verified), or null. */
export function daemonHolder(paths: DaemonPaths): Promise<LockRecord | null> {
  return lockHolder(paths.lock);
}

/** " (it is stopped: kill -CONT N resumes it)" when the process is stopped, else "". */
export async function stoppedNote(pid: number): Promise<string> {
  const entry = await readFile(`/proc/${pid}/stat`, "utf8").then(parseProcStat, () => null);
  return entry?.state === "T" ? ` (it is stopped: "kill -CONT ${pid}" resumes it)` : "";
}

/** A daemon that holds the state dir but cannot be reached through its socket: why, and the fix. */
export class DaemonUnreachable extends UsageError {
  constructor(
    readonly holder: LockRecord,
    readonly why: string,
  ) {
    super(
      `the afk-mcp daemon pid ${holder.pid} (afk-mcp ${holder.version}, since ${holder.started_at}) holds this state dir but cannot be reached: ${why}. ` +
        `Run "afk-mcp daemon restart" (it ends that pid, checked by its start time, and a new daemon takes over its registrations and adopts its workers), or "afk-mcp daemon stop" to drain it`,
    );
  }
}

/**
 * Signals the holder if it is still the same process (pid and start time). False when it is
 * gone already; throws when the signal is refused (another user's process).
 */
export async function signalHolder(holder: LockRecord, signal: NodeJS.Signals): Promise<boolean> {
  if ((await processStartTime(holder.pid)) !== holder.start) return false;
  try {
    process.kill(holder.pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw new Error(`could not signal the afk-mcp daemon pid ${holder.pid}: ${(error as Error).message}`);
  }
}

/** Resolves once the holder's process has exited (however long its drain takes). */
export async function holderGone(holder: LockRecord): Promise<void> {
  while ((await processStartTime(holder.pid)) === holder.start) await sleep(200);
}
