// How to run the scripted demo worker: from dist/ it is plain `node worker.js`; from the
// TypeScript sources (tests under tsx) it needs tsx's loader, named by absolute URL because the
// worker runs with a worktree as its cwd, where `--import tsx` would not resolve.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { shellQuote } from "../agent/shell.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith(".ts");

/** Absolute path of the worker program next to this module (worker.ts or worker.js). */
export function workerScriptPath(): string {
  const path = join(HERE, FROM_SOURCE ? "worker.ts" : "worker.js");
  if (!existsSync(path)) throw new Error(`demo: the scripted worker is missing at ${path}; run \`npm run build\``);
  return path;
}

/** argv that runs the worker: [node, (--import <tsx>), worker]. */
export function workerArgv(): string[] {
  const loader = FROM_SOURCE ? ["--import", import.meta.resolve("tsx")] : [];
  return [process.execPath, ...loader, workerScriptPath()];
}

/**
 * The worker as a shell command line for the fleet's `worker_command`, every word quoted.
 * `env` becomes leading assignments (e.g. AFK_DEMO_DELAY_MS), since the fleet passes only
 * named variables through to workers.
 */
export function workerShellCommand(env: Record<string, string> = {}): string {
  const assignments = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`demo: ${JSON.stringify(name)} is not an environment variable name`);
    return `${name}=${shellQuote(value)}`;
  });
  return [...assignments, ...workerArgv().map(shellQuote)].join(" ");
}

/**
 * `afk-mcp worker` of this very package as a shell command line (for the workflow the demo
 * proposes with runtime "actions": the forge's runner is this machine, so the package on disk
 * serves, not the registry's).
 */
export function packageWorkerCommand(): string {
  const bin = join(HERE, "..", FROM_SOURCE ? "bin.ts" : "bin.js");
  if (!existsSync(bin)) throw new Error(`demo: afk-mcp's own bin is missing at ${bin}; run \`npm run build\``);
  const loader = FROM_SOURCE ? ["--import", import.meta.resolve("tsx")] : [];
  return [process.execPath, ...loader, bin, "worker"].map(shellQuote).join(" ");
}
