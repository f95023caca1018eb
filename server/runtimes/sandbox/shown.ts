// What a sandbox shows again, read-only, inside the directories it hides (the user's home): found
// on the host when the worker starts (the launcher) and, the same way, by the start's preflight.
//
// - Every PATH entry under the home (not under the fleet's own directories), and the directory
//   of the real file behind each symlinked program there (npm, nvm and native installers link
//   their programs into ~/.local/bin or similar).
// - The worker's program itself (an engine's binary, the worker command's first word) when it
//   lies under the home in a directory of its own: its directory, and the real file's. Never the
//   home itself (a program right in the home would show all of it) nor a fleet directory.
import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { which } from "./available.js";
import { pathEntriesToShow, targetDirOf, within } from "./plan.js";

export interface ShowInput {
  /** The PATH the worker's shell has. */
  pathVar: string;
  /** The hidden directories whose PATH entries and programs may be shown (the homes). */
  showPathUnder: readonly string[];
  /** Never shown: the fleet's state dir, the worktrees, the work repository. */
  keepOut: readonly string[];
  /** The command's program (visible.ts, programOf), or null. */
  program: string | null;
}

/** The file a program names on the host: a path as it is, a bare name on PATH; null when none. */
export function programOnHost(program: string, pathVar: string): string | null {
  if (isAbsolute(program)) return program;
  return program.includes("/") ? null : which(program, pathVar);
}

function real(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** Where a shown directory may not be: a fleet directory, or a hidden directory itself or one above it. */
function allowed(path: string, input: ShowInput): boolean {
  return !input.keepOut.some((k) => within(path, k)) && !input.showPathUnder.some((d) => within(d, path));
}

/** The directories of the program (named and real) that the sandbox shows because it runs it. */
export function programDirs(input: ShowInput): string[] {
  const found = input.program === null ? null : programOnHost(input.program, input.pathVar);
  if (found === null) return [];
  const dirs = [dirname(found), ...[real(found)].filter((p): p is string => p !== null).map(dirname)];
  return [...new Set(dirs)].filter((dir) => input.showPathUnder.some((d) => within(dir, d)) && allowed(dir, input));
}

/** Every path the sandbox shows again read-only (the launcher binds each over the hidden directories). */
export function shownPaths(input: ShowInput): string[] {
  const shown = new Set<string>();
  for (const entry of pathEntriesToShow(input.pathVar, input.showPathUnder, input.keepOut)) {
    shown.add(entry);
    let names: string[] = [];
    try {
      names = readdirSync(entry).slice(0, 500);
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        if (!lstatSync(join(entry, name)).isSymbolicLink()) continue;
        const target = realpathSync(join(entry, name));
        if (!input.keepOut.some((k) => within(target, k))) shown.add(statSync(target).isDirectory() ? target : targetDirOf(target));
      } catch {
        // a dangling link shows nothing
      }
    }
  }
  for (const dir of programDirs(input)) shown.add(dir);
  // Never a denied directory itself or one above it (a link to a file right in the home would name the home).
  return [...shown].filter((path) => !input.showPathUnder.some((d) => within(d, path)));
}
