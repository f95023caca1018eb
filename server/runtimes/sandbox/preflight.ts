// The start's check that every program a worker runs is there inside its sandbox (docs/runtimes.md,
// "What a sandboxed worker can run"): the worker command's program and each routed engine's
// binary, resolved on the host by the workers' shell, are looked up again in the sandbox's plan
// as a worker's would be built (plan.ts, the PATH entries and programs it shows: shown.ts), by
// the rule of visible.ts. A program the sandbox hides refuses the start, naming it, why, and the
// fixes; one under the home in a directory of its own is shown (its directory read-only).
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import type { FleetConfig } from "../../../schemas/config.js";
import { stateDir } from "../../paths.js";
import { planFor } from "./worker-plan.js";
import { bwrapArgs, within, withShown } from "./plan.js";
import { programDirs, shownPaths } from "./shown.js";
import { sandboxDirOf } from "./spec.js";
import { mountsOf, resolveInside, type HostFs, type Mount } from "./visible.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A program the workers will run, as the start resolved it on this host. */
export interface ProgramToRun {
  /** What it is, for a refusal: "the worker command's program", "engine claude's binary". */
  what: string;
  /** As the command names it: a bare name (looked up on PATH) or a path. */
  named: string;
  /** Where the workers' shell found it on this host (absolute). */
  path: string;
  /** The PATH of the workers' shell (a login shell's, for an engine that needs one). */
  pathVar: string;
}

export const HOST_FS: HostFs = {
  lstat: (path) => {
    try {
      const s = lstatSync(path);
      return s.isSymbolicLink() ? "link" : s.isDirectory() ? "dir" : "file";
    } catch {
      return null;
    }
  },
  stat: (path) => {
    try {
      return statSync(path).isDirectory() ? "dir" : "file";
    } catch {
      return null;
    }
  },
  readlink: (path) => readlinkSync(path),
};

function runnable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The file a worker's shell inside runs for `named`: a path, or the first PATH entry that holds it there; null when none does. */
export function programInside(named: string, pathVar: string, mounts: readonly Mount[], fs: HostFs = HOST_FS): string | null {
  const candidates = isAbsolute(named)
    ? [named]
    : pathVar
        .split(delimiter)
        .filter((entry) => isAbsolute(entry))
        .map((entry) => join(entry, named));
  for (const candidate of candidates) {
    const found = resolveInside(candidate, mounts, fs);
    if (found.ok && (fs !== HOST_FS || runnable(found.host))) return found.path;
  }
  return null;
}

/** Why `path` is not there inside, in words, from the mount that hides it (null: nothing on the host either). */
export function hiddenWhy(at: string, by: string | null, where: { home: readonly string[]; keepOut: readonly string[] }): string {
  if (by === "/tmp") return `${at} is under /tmp, and each worker gets a private, empty /tmp`;
  if (by !== null && where.home.includes(by))
    return `${at} is in the home (${by}), which the sandbox hides but for the directories on the workers' PATH and a program's own directory below it (never the home itself)`;
  if (by !== null && where.keepOut.some((k) => within(by, k) || within(k, by)))
    return `${at} is in the fleet's own directory ${by} (its tokens, logs and worktrees), which no worker sees`;
  if (by !== null) return `${at} is under ${by}, which the sandbox makes afresh`;
  return `it resolves through ${at}, which is not there inside the sandbox`;
}

/**
 * Each program checked in the sandbox a worker would get: the refusals (one per program it
 * hides, with the fixes), and the directories shown for the programs (the start says so).
 */
export function programsInSandbox(
  config: FleetConfig,
  hostEnv: Env,
  programs: readonly ProgramToRun[],
  fs: HostFs = HOST_FS,
): { refusals: string[]; shown: string[] } {
  const state = stateDir(hostEnv as NodeJS.ProcessEnv);
  // Where a worker's own places would be: under the state dir (or worktree.root), hidden like the rest of it.
  const runDir = join(state, "runs", "afk-preflight", "issue-0");
  const { home, keepOut, plan } = planFor(config, hostEnv, {
    worktree: join(config.worktree.root ?? join(state, "worktrees", "afk-preflight"), "issue-0"),
    runDir,
    sandboxDir: sandboxDirOf(runDir),
    commonDir: join(state, "work", "afk-preflight.git"),
  });
  const refusals: string[] = [];
  const shown = new Set<string>();
  for (const program of programs) {
    const show = { pathVar: program.pathVar, showPathUnder: home, keepOut, program: program.named };
    const mounts = mountsOf(withShown(bwrapArgs(plan), shownPaths(show)));
    const fixes = `sandbox.allow_read: [${JSON.stringify(dirname(realOr(program.path)))}] (shows that directory read-only), or install it in a directory on the workers' PATH outside /tmp (a PATH entry under the home is shown read-only), or "runtime": "local" in the config (or AFK_RUNTIME=local) to run workers unconfined`;
    if (program.named.startsWith("~")) {
      refusals.push(
        `${program.what} ${program.named} is not there inside the sandbox (runtime sandbox): ~ is the worker's own, empty HOME there; name it by its absolute path (${program.path}), which the sandbox shows or not as below. Fixes: ${fixes}`,
      );
      continue;
    }
    if (programInside(program.named, program.pathVar, mounts, fs) !== null) {
      for (const dir of programDirs(show)) shown.add(dir);
      continue;
    }
    const seen = resolveInside(program.path, mounts, fs);
    const why = seen.ok ? `${program.path} is not on the workers' PATH inside the sandbox` : hiddenWhy(seen.at, seen.by, { home, keepOut });
    refusals.push(`${program.what} ${program.path} is not there inside the sandbox (runtime sandbox): ${why}. Fixes: ${fixes}`);
  }
  return { refusals, shown: [...shown] };
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
