// The sandbox of one worker, as bubblewrap arguments (pure: the paths are given).
//
// Mount order matters (a later mount covers an earlier one): the whole filesystem read-only,
// a fresh /dev, /proc and /tmp, then empty tmpfs over every denied directory (the user's home,
// the fleet's state dir with its tokens and logs, the work repository, the other worktrees),
// then, on top, what this worker may see again: the PATH entries and `sandbox.allow_read`
// read-only, and read-write only its worktree, its private git dir (config and alternates
// read-only), its own HOME, the box that stands in for its run directory (the brief, its
// verdict) and `sandbox.allow_write`. The work repository's objects are read-only (the private
// git dir borrows them). Every namespace is unshared: the network namespace holds only loopback.
import { dirname, isAbsolute, join, relative } from "node:path";

export interface PlanInput {
  worktree: string;
  /** The run directory as the host knows it (brief, verdict, output files). */
  runDir: string;
  /** `<runDir>.sandbox`: git/, home/, box/, the .git file, the spec. */
  sandboxDir: string;
  /** The work repository (common git dir). */
  commonDir: string;
  /** Hidden entirely (tmpfs over each). */
  deny: readonly string[];
  allowRead: readonly string[];
  allowWrite: readonly string[];
}

export interface SandboxPaths {
  gitDir: string;
  dotGit: string;
  home: string;
  box: string;
  spec: string;
  /** Why this birth's sandbox could not start, when it could not (fault.ts). */
  fault: string;
}

export function sandboxPaths(sandboxDir: string): SandboxPaths {
  return {
    gitDir: join(sandboxDir, "git"),
    dotGit: join(sandboxDir, "dotgit"),
    home: join(sandboxDir, "home"),
    box: join(sandboxDir, "box"),
    spec: join(sandboxDir, "spec.json"),
    fault: join(sandboxDir, "fault.json"),
  };
}

/** Whether `path` is `root` or inside it. */
export function within(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The outermost of the paths: a path inside another one adds nothing to a deny. */
export function outermost(paths: readonly string[]): string[] {
  const unique = [...new Set(paths.filter((p) => isAbsolute(p) && p !== "/"))].sort((a, b) => a.length - b.length);
  return unique.filter((p, i) => !unique.slice(0, i).some((q) => within(p, q)));
}

/** Every sandbox's first mounts: every namespace unshared, the whole filesystem read-only, a fresh /dev, /proc and /tmp. */
export const BASE_ARGS: readonly string[] = [
  "--die-with-parent",
  "--unshare-all",
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
];

export function bwrapArgs(input: PlanInput): string[] {
  const p = sandboxPaths(input.sandboxDir);
  const args = [...BASE_ARGS];
  for (const dir of outermost(input.deny)) args.push("--tmpfs", dir);
  for (const path of input.allowRead) args.push("--ro-bind-try", path, path);
  const objects = join(input.commonDir, "objects");
  args.push("--ro-bind", objects, objects);
  args.push(
    "--bind",
    p.gitDir,
    p.gitDir,
    "--ro-bind",
    join(p.gitDir, "config"),
    join(p.gitDir, "config"),
    "--ro-bind",
    join(p.gitDir, "objects", "info"),
    join(p.gitDir, "objects", "info"),
  );
  args.push("--bind", input.worktree, input.worktree, "--ro-bind", p.dotGit, join(input.worktree, ".git"));
  args.push("--bind", p.home, p.home, "--bind", p.box, input.runDir);
  for (const path of input.allowWrite) args.push("--bind-try", path, path);
  args.push("--chdir", input.worktree);
  return args;
}

/** The plan's arguments with `shown` bound again read-only, after the denials and before the working directory (shown.ts). */
export function withShown(args: readonly string[], shown: readonly string[]): string[] {
  const out = [...args];
  for (const path of shown) out.splice(out.indexOf("--chdir"), 0, "--ro-bind-try", path, path);
  return out;
}

/**
 * The variables the sandbox changes: its own HOME and /tmp, the proxy for every client that
 * honours the usual variables, loopback left direct (the forwarders serve it). XDG base
 * directories point into the hidden home: unset, so CLIs use the sandbox's HOME.
 */
export function sandboxEnv(home: string, proxyPort: number): { set: Record<string, string>; unset: string[] } {
  const proxy = `http://127.0.0.1:${proxyPort}`;
  return {
    set: {
      HOME: home,
      TMPDIR: "/tmp",
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      https_proxy: proxy,
      http_proxy: proxy,
      NO_PROXY: "localhost,127.0.0.1,::1",
      no_proxy: "localhost,127.0.0.1,::1",
      AFK_SANDBOX: "bubblewrap",
    },
    unset: ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "ALL_PROXY", "all_proxy", "SSH_AUTH_SOCK"],
  };
}

/** PATH entries under a denied directory (but not under `keepOut`), to be mounted again read-only. */
export function pathEntriesToShow(pathVar: string, deny: readonly string[], keepOut: readonly string[]): string[] {
  return [...new Set(pathVar.split(":"))].filter((entry) => isAbsolute(entry) && deny.some((d) => within(entry, d)) && !keepOut.some((k) => within(entry, k)));
}

/** The directories holding the real files behind symlinked programs in shown PATH entries (npm, nvm, native installers). */
export function targetDirOf(realPath: string): string {
  return dirname(realPath);
}
