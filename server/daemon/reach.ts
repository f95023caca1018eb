// Reaching this machine's daemon from a session: its socket once checked ours and owner-only,
// why it cannot be reached when its holder lives, and starting one detached when none runs.
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { UsageError } from "../gh/errors.js";
import { socketProblem, tryConnect } from "./connection.js";
import { daemonHolder, DaemonUnreachable } from "./holder.js";
import { processStartTime } from "../runtimes/local/pid-files.js";
import { startDetached } from "../runtimes/local/detached.js";
import type { DaemonPaths } from "./paths.js";
import { setTimeout as sleep } from "node:timers/promises";

/** How long a daemon that has just taken the lock may take to open its socket before it counts as unreachable. */
const STARTING_GRACE_MS = 10_000;

const BIN = fileURLToPath(new URL("../bin.js", import.meta.url));

/**
 * The socket of a live daemon, after checking it is ours and owner-only; null when none. A
 * socket refused while its daemon lives throws DaemonUnreachable naming the pid; a refused
 * file nobody holds is stale, and a new daemon replaces it.
 */
export async function reachDaemon(paths: DaemonPaths): Promise<Socket | null> {
  let problem: string | null;
  try {
    problem = await socketProblem(paths.socket);
  } catch {
    return null;
  }
  if (problem) {
    if (/owned by uid/.test(problem)) throw new UsageError(`afk-mcp daemon socket refused: ${problem}`);
    const holder = await daemonHolder(paths);
    if (holder) throw new DaemonUnreachable(holder, `${problem}`);
    return null;
  }
  return tryConnect(paths.socket);
}

/**
 * Why no session can reach the daemon that holds the state dir (its socket is gone), or null
 * when none holds it or its socket answers after all. A daemon that took the lock a moment
 * ago is given a grace to open its socket.
 */
export async function daemonUnreachable(paths: DaemonPaths): Promise<DaemonUnreachable | null> {
  for (;;) {
    const holder = await daemonHolder(paths);
    if (!holder) return null;
    const socket = await reachDaemon(paths);
    if (socket) {
      socket.destroy();
      return null;
    }
    if (Date.now() - Date.parse(holder.started_at) > STARTING_GRACE_MS) return new DaemonUnreachable(holder, `its socket ${paths.socket} is gone`);
    await sleep(100);
  }
}

export function daemonLogHint(paths: DaemonPaths): string {
  return `its lane (logs {lane: "daemon"}) and, for a crash in Node itself, ${paths.log}`;
}

export interface DaemonStart {
  env: NodeJS.ProcessEnv;
  /** Seconds idle before it exits, null: never. */
  idle: number | null;
  timeoutMs: number;
  /** Throws when the session that asked was closed meanwhile. */
  refuseIfClosed(): void;
}

/** Starts a daemon detached and waits for its socket. */
export async function startDaemon(paths: DaemonPaths, start: DaemonStart): Promise<Socket> {
  const args = [BIN, "daemon", "--foreground", "--idle-exit", start.idle === null ? "never" : String(start.idle)];
  const pid = await startDetached({ command: process.execPath, args, env: start.env, logFile: paths.log }).catch((error: unknown) => {
    throw new UsageError(`could not start the afk-mcp daemon: ${(error as Error).message}; run "afk-mcp daemon --foreground" to see why`);
  });
  const deadline = Date.now() + start.timeoutMs;
  while (Date.now() < deadline) {
    // A session closed while its daemon starts stops waiting: that daemon, if nothing needs it, exits when idle.
    start.refuseIfClosed();
    const socket = await reachDaemon(paths).catch((error: unknown) => {
      // The daemon just started holds the lock but has yet to replace a dead one's refused socket file.
      if (error instanceof DaemonUnreachable && error.holder.pid === pid) return null;
      throw error;
    });
    if (socket) return socket;
    // Fail fast: the child exited (another daemon holds the state dir, or it crashed).
    if ((await processStartTime(pid)) === null) {
      const stuck = await daemonUnreachable(paths);
      if (stuck) throw stuck;
      if (!(await daemonHolder(paths)))
        throw new UsageError(
          `the afk-mcp daemon (pid ${pid}) exited before opening ${paths.socket}: see ${daemonLogHint(paths)}, or run "afk-mcp daemon --foreground" to see why`,
        );
    }
    await sleep(100);
  }
  throw new UsageError(
    `the afk-mcp daemon (pid ${pid}) did not open ${paths.socket} within ${Math.round(start.timeoutMs / 1000)}s: see ${daemonLogHint(paths)}`,
  );
}
