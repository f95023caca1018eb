// Whether a path is there inside a sandbox, computed from the plan's bubblewrap arguments
// (pure: the host's filesystem is asked through the `HostFs` given). The start's preflight asks
// it of the worker's program and each engine's binary before a worker runs, so that a program
// the sandbox hides refuses the start instead of killing every worker with "command not found".
//
// The rule is bubblewrap's: mounts apply in order and a later one covers an earlier one, so what
// is at a path is the last mount whose destination holds it. A bind shows the host's file at its
// source (same path here, but for the box and the .git file); a tmpfs, /dev or /proc shows
// nothing of the host's, only the directories bubblewrap made for the mounts below it. A
// symbolic link is followed inside the sandbox, component by component, as the kernel does: a
// link in a shown directory that points into a hidden one leads nowhere.
import { isAbsolute, join, normalize, relative } from "node:path";
import { within } from "./plan.js";

export type Mount = { kind: "bind"; source: string; dest: string } | { kind: "empty"; dest: string };

const BINDS = new Set(["--bind", "--bind-try", "--ro-bind", "--ro-bind-try"]);
const EMPTIES = new Set(["--tmpfs", "--dev", "--proc"]);
const FLAGS = new Set(["--die-with-parent", "--unshare-all"]);

/** The mounts of a plan's bubblewrap arguments, in order. An option it does not know is an error: the rule must follow the plan. */
export function mountsOf(args: readonly string[]): Mount[] {
  const mounts: Mount[] = [];
  for (let i = 0; i < args.length; i++) {
    const option = args[i]!;
    if (option === "--") break;
    if (BINDS.has(option)) {
      mounts.push({ kind: "bind", source: args[i + 1]!, dest: args[i + 2]! });
      i += 2;
    } else if (EMPTIES.has(option)) mounts.push({ kind: "empty", dest: args[++i]! });
    else if (option === "--chdir") i += 1;
    else if (!FLAGS.has(option)) throw new Error(`sandbox plan: unknown bubblewrap option ${option}`);
  }
  return mounts;
}

/** What is at one path inside: a host path, a directory bubblewrap made (a mount point), or nothing (hidden by `by`). */
export type Inside = { kind: "host"; path: string; top: boolean } | { kind: "made" } | { kind: "hidden"; by: string };

export function lookInside(mounts: readonly Mount[], path: string): Inside {
  for (let i = mounts.length - 1; i >= 0; i--) {
    const mount = mounts[i]!;
    if (!within(path, mount.dest)) continue;
    if (mount.kind === "bind") return { kind: "host", path: join(mount.source, relative(mount.dest, path)), top: path === mount.dest };
    // Later mounts below this path made it (and its parents) as directories.
    if (path === mount.dest || mounts.slice(i + 1).some((later) => within(later.dest, path))) return { kind: "made" };
    return { kind: "hidden", by: mount.dest };
  }
  return { kind: "hidden", by: "/" };
}

export type FileKind = "file" | "dir" | "link";

/** The host's filesystem as the rule needs it: a path's kind without following a last link (`lstat`) or following it (`stat`), and a link's text. */
export interface HostFs {
  lstat(path: string): FileKind | null;
  stat(path: string): Exclude<FileKind, "link"> | null;
  readlink(path: string): string;
}

export type Resolved =
  | { ok: true; /** The file inside, every link followed. */ path: string; /** The same file on the host. */ host: string }
  /** `at`: the first path inside that is not there; `by`: the mount that hides it (null: the host has nothing there either). */
  | { ok: false; at: string; by: string | null };

/** Resolves an absolute path inside the sandbox of `mounts` to a file (not a directory), following links as the kernel would. */
export function resolveInside(path: string, mounts: readonly Mount[], fs: HostFs, maxLinks = 40): Resolved {
  if (!isAbsolute(path)) return { ok: false, at: path, by: null };
  const queue = normalize(path).split("/").filter(Boolean);
  let cur = "/";
  let links = 0;
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      cur = join(cur, "..");
      continue;
    }
    const next = join(cur, part);
    const look = lookInside(mounts, next);
    if (look.kind === "hidden") return { ok: false, at: next, by: look.by };
    if (look.kind === "made") {
      cur = next;
      continue;
    }
    // A bind's own destination holds what its source resolves to: bubblewrap follows the source's links.
    const kind = look.top ? fs.stat(look.path) : fs.lstat(look.path);
    if (kind === null) return { ok: false, at: next, by: null };
    if (kind === "link") {
      if (++links > maxLinks) return { ok: false, at: next, by: null };
      const target = fs.readlink(look.path);
      queue.unshift(...target.split("/").filter(Boolean));
      if (isAbsolute(target)) cur = "/";
      continue;
    }
    if (kind === "file" && queue.length > 0) return { ok: false, at: join(next, queue[0]!), by: null };
    cur = next;
  }
  const last = lookInside(mounts, cur);
  if (last.kind !== "host" || fs.stat(last.path) !== "file") return { ok: false, at: cur, by: null };
  return { ok: true, path: cur, host: last.path };
}
