// Where the daemon keeps its files inside the state dir: the socket, the lock naming its pid,
// its lane, what Node itself wrote past it, its registrations, and each repository's instance id.
import { join } from "node:path";
import { daemonDir, stateDir } from "../paths.js";

export interface DaemonPaths {
  root: string;
  dir: string;
  socket: string;
  lock: string;
  /** The directory of its lane, `daemon.jsonl` (logs {lane: "daemon"}). */
  lanes: string;
  /** Its stdout and stderr when detached: only what Node writes past JavaScript (a fatal error) lands here; the next daemon moves it into the lane. */
  log: string;
  registrations: string;
}

/** Unix socket paths are limited (104 bytes on macOS, 108 on Linux, the NUL included). */
export const SOCKET_PATH_MAX = 103;

export function daemonPaths(env: NodeJS.ProcessEnv = process.env): DaemonPaths {
  const root = stateDir(env);
  const dir = daemonDir(env);
  return {
    root,
    dir,
    socket: join(dir, "afk.sock"),
    lock: join(dir, "lock.json"),
    lanes: dir,
    log: join(dir, "daemon.log"),
    registrations: join(dir, "registrations.json"),
  };
}
