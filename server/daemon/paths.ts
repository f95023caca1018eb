// Where the daemon keeps its files inside the state dir: the socket, the lock naming its pid,
// its log, its registrations, and the instance id of each repository it works on.
import { join } from "node:path";
import { stateDir } from "../paths.js";

export interface DaemonPaths {
  root: string;
  dir: string;
  socket: string;
  lock: string;
  log: string;
  registrations: string;
}

/** Unix socket paths are limited (104 bytes on macOS, 108 on Linux, the NUL included). */
export const SOCKET_PATH_MAX = 103;

export function daemonPaths(env: NodeJS.ProcessEnv = process.env): DaemonPaths {
  const root = stateDir(env);
  const dir = join(root, "daemon");
  return {
    root,
    dir,
    socket: join(dir, "afk.sock"),
    lock: join(dir, "lock.json"),
    log: join(dir, "daemon.log"),
    registrations: join(dir, "registrations.json"),
  };
}
