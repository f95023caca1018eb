// What the host hands the sandbox launcher (launcher.ts) for one worker: a JSON file written at
// birth beside the worker's run directory. The launcher is a separate process, the leader of the
// worker's process group, so that the network proxy lives exactly as long as the worker and
// outlives a daemon that dies (docs/architecture.md, invariant 5): nothing of it runs in the host.

export interface SandboxSpec {
  /** bwrap's arguments up to (not including) `--` and the command. */
  bwrapArgs: string[];
  /** The bwrap binary. */
  bwrap: string;
  /** The socat binary (the forwarders inside the sandbox's network namespace). */
  socat: string;
  /** The shell that runs the command inside, and the command (`{brief}` already expanded). */
  shell: string;
  commandLine: string;
  /** The command's program (visible.ts, programOf): shown read-only when it lies under the home (shown.ts). */
  program?: string | null;
  /** Hosts the proxy lets through: `host`, `host:port`, `*.domain` (see hosts.ts). */
  allowHosts: string[];
  /** Loopback ports of allowed hosts, forwarded into the sandbox so that 127.0.0.1:port works as on the host. */
  forwardPorts: number[];
  /** The port of the HTTP proxy inside the sandbox (127.0.0.1). */
  proxyPort: number;
  /** Denied directories whose PATH entries (of the launcher's PATH, after the login shell) are shown again read-only. */
  showPathUnder: string[];
  /** Never shown again, even on PATH: the fleet's state dir, the worktrees. */
  keepOut: string[];
  /** What the sandbox changes in the worker's environment (plan.ts, sandboxEnv). */
  env: { set: Record<string, string>; unset: string[] };
  /** The sandbox's private files (its git dir, home, box): see private-git.ts. */
  takeBack: TakeBack;
}

/** What the launcher (and the host, after an exit) carries back from the sandbox's private copies. */
export interface TakeBack {
  /** The worker's own git dir (a clone borrowing the work repository's objects read-only). */
  gitDir: string;
  /** The issue's worktree as the host sees it (its own git dir is the work repository's). */
  worktree: string;
  branch: string;
  /** The box mounted over the run directory: the verdict the worker wrote there, and where it belongs. */
  boxVerdict: string;
  verdict: string;
}

/** The file beside a run directory that names the sandbox of its current worker. */
export function sandboxDirOf(issueRunDir: string): string {
  return `${issueRunDir}.sandbox`;
}

/** The launcher's first line on the worker's stderr: the runtime's, not the worker's (the breaker never quotes it). */
export const BANNER_PREFIX = "afk-mcp sandbox: bubblewrap; ";

export function bannerLine(allowHosts: readonly string[]): string {
  return `${BANNER_PREFIX}writable: the worktree; network: ${allowHosts.join(", ") || "none"}`;
}
