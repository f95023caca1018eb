// Starts a process that outlives its starter: its own session and process group (no signal to
// the starter's group or terminal reaches it), stdin closed, stdout and stderr appended to a log
// file (never the starter's stdout, which may be an MCP stream). Used to start the daemon.
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

export interface DetachedOptions {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logFile: string;
  cwd?: string;
}

/** Starts it and lets go; resolves with its pid once it runs (rejects if it cannot start). */
export function startDetached(options: DetachedOptions): Promise<number> {
  mkdirSync(dirname(options.logFile), { recursive: true, mode: 0o700 });
  const fd = openSync(options.logFile, "a", 0o600);
  try {
    const child = spawn(options.command, options.args, {
      env: options.env,
      cwd: options.cwd ?? "/",
      detached: true,
      stdio: ["ignore", fd, fd],
      windowsHide: true,
    });
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("spawn", () => {
        child.unref();
        resolve(child.pid!);
      });
    });
  } finally {
    closeSync(fd);
  }
}
