// The private bare repository that worker worktrees are made from (one per project), and the
// plumbing reads the worktree logic needs. Every call goes through gh/git.ts: argv only, no
// prompts, and a token only ever as an http.extraHeader, never in the URL or the config.
import { mkdir, readFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { retry, retryWhile } from "../kit/retry.js";
import { assertNoCredentialsInUrl, git, gitRaw, nulSeparated, type GitAuth, type GitResult } from "../gh/git.js";
import { GitError } from "../gh/errors.js";

// git's words for a ref (or packed-refs) lock that another process holds right now.
const REF_LOCKED = /cannot lock ref|unable to create '[^']*\.lock': file exists|unable to lock/i;
const FETCH_LOCK_RETRIES = 6;

/** `<stateDir>/work/<owner>/<name>.git`: where the bare work repository lives by default. */
export function defaultWorkRepoDir(stateDir: string, owner: string, name: string): string {
  return join(stateDir, "work", owner.toLowerCase(), `${name.toLowerCase()}.git`);
}

/** `<stateDir>/worktrees/<owner>/<name>`: `worktree.root` when the config leaves it null. */
export function defaultWorktreeRoot(stateDir: string, owner: string, name: string): string {
  return join(stateDir, "worktrees", owner.toLowerCase(), name.toLowerCase());
}

/** The identity set in the work repository when git has none configured at all. */
export const FLEET_IDENTITY = { name: "afk-mcp", email: "afk-mcp@users.noreply.github.com" } as const;

export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** Full ref ("refs/heads/afk/12-fix"), or null when detached. */
  branch: string | null;
  bare: boolean;
  prunable: boolean;
}

export interface RefTip {
  /** Full ref name. */
  ref: string;
  sha: string;
  /** Committer time (seconds since the epoch). */
  time: number;
}

export interface RepoGitOptions {
  dir: string;
  remoteUrl: string;
  auth?: GitAuth | null;
  timeoutMs?: number;
  /** Leave the user's commit signing on (default: off in the work repository). */
  keepSigning?: boolean;
}

/** Plumbing over one bare work repository; policy lives in worktrees.ts. */
export class RepoGit {
  readonly dir: string;
  readonly remoteUrl: string;
  private readonly auth: GitAuth | null;
  private readonly timeoutMs: number | undefined;
  private readonly keepSigning: boolean;
  private ready: Promise<void> | null = null;

  constructor(options: RepoGitOptions) {
    assertNoCredentialsInUrl(options.remoteUrl);
    this.dir = resolve(options.dir);
    this.remoteUrl = options.remoteUrl;
    this.auth = options.auth ? scoped(options.auth, options.remoteUrl) : null;
    this.timeoutMs = options.timeoutMs;
    this.keepSigning = options.keepSigning ?? false;
  }

  /** Creates the bare repository on first use (idempotent, retried after a failure). */
  ensure(): Promise<void> {
    if (!this.ready) {
      this.ready = this.init().catch((error: unknown) => {
        this.ready = null;
        throw error;
      });
    }
    return this.ready;
  }

  private async init(): Promise<void> {
    const exists = await stat(join(this.dir, "HEAD")).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await mkdir(this.dir, { recursive: true });
      await this.run(["init", "--bare", "--quiet", this.dir]);
    }
    // One read of every setting git sees from here (system, global, this repository), then
    // writes only for what differs: opening an existing work repository costs one call.
    const seen = await this.effectiveConfig();
    const wanted: [string, string, "always" | "if-unset"][] = [
      // Re-pointed every time: the clone URL may have changed since the last run.
      ["remote.origin.url", this.remoteUrl, "always"],
      // What a worker's own `git fetch` in its worktree uses; the fleet passes explicit refspecs.
      ["remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*", "if-unset"],
      // A bare repository keeps no reflogs by default; these record every branch move the fleet
      // and its workers make, so a tip that was replaced can still be found.
      ["core.logallrefupdates", "always", "always"],
      // An identity only where git has none from anywhere (global, system, this repository).
      ["user.name", FLEET_IDENTITY.name, "if-unset"],
      ["user.email", FLEET_IDENTITY.email, "if-unset"],
    ];
    if (!this.keepSigning) {
      // Unattended commits must never wait for a signing key or a pinentry. This is the fleet's
      // private repository, so the user's global config is left as it is.
      wanted.push(["commit.gpgsign", "false", "always"], ["tag.gpgsign", "false", "always"]);
    }
    for (const [key, value, when] of wanted) {
      const current = seen.get(key);
      if (current === value || (when === "if-unset" && current !== undefined)) continue;
      await this.run(["config", key, value]);
    }
  }

  // `git config --list -z`: "key\nvalue\0" entries, later scopes overriding earlier ones.
  private async effectiveConfig(): Promise<Map<string, string>> {
    const { stdout } = await this.run(["config", "--list", "-z"]);
    const values = new Map<string, string>();
    for (const entry of stdout.split("\0")) {
      const newline = entry.indexOf("\n");
      const key = (newline < 0 ? entry : entry.slice(0, newline)).toLowerCase();
      if (key !== "") values.set(key, newline < 0 ? "true" : entry.slice(newline + 1));
    }
    return values;
  }

  /** A local command in the repository (or in `cwd`, a worktree). Throws GitError on failure. */
  run(args: string[], cwd: string = this.dir, input?: string): Promise<GitResult> {
    return git(args, { cwd, ...(input !== undefined ? { input } : {}), ...this.timeout() });
  }

  /** Like run, returning the exit code instead of throwing. */
  runRaw(args: string[], cwd: string = this.dir): Promise<GitResult> {
    return gitRaw(args, { cwd, ...this.timeout() });
  }

  /** A command that talks to origin: the token (if any) goes along as a scoped header. */
  network(args: string[], auth?: GitAuth | null): Promise<GitResult> {
    return git(args, { cwd: this.dir, auth: this.authFor(auth), ...this.timeout() });
  }

  networkRaw(args: string[], auth?: GitAuth | null): Promise<GitResult> {
    return gitRaw(args, { cwd: this.dir, auth: this.authFor(auth), ...this.timeout() });
  }

  /**
   * A fetch into refs that another process may write too: a worker's own `git fetch` in its
   * worktree moves the same remote-tracking refs, and git gives up at once on a ref lock held
   * by someone else ("cannot lock ref"). A fetch with forced refspecs is idempotent, so it is
   * tried again and takes what the remote holds then: six more times, backing off from 0.1 s to
   * 1.5 s (4.5 s in all), because on a loaded machine the other process can hold the lock for
   * seconds (a full suite's run under load saw three retries 0.6 s apart all meet the lock).
   */
  async fetchRaw(args: string[], auth?: GitAuth | null): Promise<GitResult> {
    return retryWhile(
      () => this.networkRaw(args, auth),
      (result) => result.exitCode !== 0 && REF_LOCKED.test(result.stderr),
      { retries: FETCH_LOCK_RETRIES, minMs: 100, maxMs: 1_500 },
    );
  }

  authFor(auth: GitAuth | null | undefined): GitAuth | null {
    return auth === undefined ? this.auth : auth === null ? null : scoped(auth, this.remoteUrl);
  }

  /** The commit a ref resolves to, or null. */
  async revParse(ref: string, cwd: string = this.dir): Promise<string | null> {
    const result = await this.runRaw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], cwd);
    const sha = result.stdout.trim();
    return result.exitCode === 0 && sha !== "" ? sha : null;
  }

  /** Whether commit `a` is reachable from `b` (a == b counts). */
  async isAncestor(a: string, b: string, cwd: string = this.dir): Promise<boolean> {
    const args = ["merge-base", "--is-ancestor", a, b];
    const result = await this.runRaw(args, cwd);
    if (result.exitCode === 0) return true;
    if (result.exitCode === 1) return false;
    throw new GitError(
      `git ${args.join(" ")} failed: ${result.stderr.trim() || `exit code ${result.exitCode}`}`,
      `git ${args.join(" ")}`,
      result.exitCode,
      result.stderr,
    );
  }

  /** Refs matching a for-each-ref pattern, with their tips. */
  async refs(pattern: string): Promise<RefTip[]> {
    const { stdout } = await this.run(["for-each-ref", "--format=%(refname)%00%(objectname)%00%(committerdate:unix)", pattern]);
    const tips: RefTip[] = [];
    for (const line of stdout.split("\n")) {
      const [ref, sha, time] = line.split("\0");
      if (ref && sha) tips.push({ ref, sha, time: Number(time) || 0 });
    }
    return tips;
  }

  async updateRef(ref: string, sha: string, message: string): Promise<void> {
    await this.run(["update-ref", "-m", message, ref, sha]);
  }

  async deleteRef(ref: string): Promise<void> {
    await this.runRaw(["update-ref", "-d", ref]);
  }

  /** A config value as git resolves it from here (all scopes), or null when unset. */
  async config(key: string, cwd: string = this.dir): Promise<string | null> {
    const result = await this.runRaw(["config", "--get", key], cwd);
    return result.exitCode === 0 ? result.stdout.replace(/\n$/, "") : null;
  }

  async worktrees(): Promise<WorktreeEntry[]> {
    // A `worktree add` under way elsewhere (the command gate's scratch worktree) leaves a
    // half-made entry for a moment, and `list` fails reading its commondir or gitdir: read again.
    const { stdout } = await retry(() => this.run(["worktree", "list", "--porcelain"]), {
      retries: 3,
      minMs: 50,
      again: (error) => /failed to read worktrees\/[^/]+\/(commondir|gitdir)/.test(error.message),
    });
    const entries: WorktreeEntry[] = [];
    let current: WorktreeEntry | null = null;
    for (const line of stdout.split("\n")) {
      if (line.startsWith("worktree ")) {
        current = { path: line.slice("worktree ".length), head: null, branch: null, bare: false, prunable: false };
        entries.push(current);
      } else if (current) {
        if (line.startsWith("HEAD ")) current.head = line.slice(5);
        else if (line.startsWith("branch ")) current.branch = line.slice(7);
        else if (line === "bare") current.bare = true;
        else if (line === "prunable" || line.startsWith("prunable ")) current.prunable = true;
      }
    }
    return entries;
  }

  private timeout(): { timeoutMs?: number } {
    return this.timeoutMs ? { timeoutMs: this.timeoutMs } : {};
  }

  async trackedChanges(path: string): Promise<string[]> {
    const { stdout } = await this.run(["--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=no"], path);
    // Entries are "XY path"; a rename adds its source as one more NUL-separated field.
    const files: string[] = [];
    const fields = nulSeparated(stdout);
    for (let i = 0; i < fields.length; i += 1) {
      const field = fields[i]!;
      files.push(field.slice(3));
      if (field[0] === "R" || field[0] === "C") i += 1;
    }
    return files;
  }

  async remoteTip(ref: string, auth: GitAuth | null | undefined): Promise<string | null> {
    const { stdout } = await this.network(["ls-remote", "--refs", "origin", ref], auth);
    for (const line of stdout.split("\n")) {
      const [sha, name] = line.split("\t");
      if (name === ref && sha) return sha;
    }
    return null;
  }
}

/** The canonical form of a path for comparisons (symlinks resolved where the path exists). */
export async function canonicalPath(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch {
    // Missing: canonicalise the nearest existing parent (/tmp is a symlink on macOS).
    const parent = dirname(absolute);
    return parent === absolute ? absolute : join(await canonicalPath(parent), basename(absolute));
  }
}

// Without a URL the header would apply to every HTTP remote; pin it to the clone URL's origin.
function scoped(auth: GitAuth, remoteUrl: string): GitAuth {
  return auth.url ? auth : { ...auth, url: remoteUrl };
}

// A worktree mid-rebase has a detached HEAD; the branch being rebased is in its git dir.
export async function rebasing(gitDir: string): Promise<string | null> {
  for (const dir of ["rebase-merge", "rebase-apply"]) {
    const name = await readFile(join(gitDir, dir, "head-name"), "utf8").catch(() => null);
    if (name && name.trim().startsWith("refs/heads/")) return name.trim().slice("refs/heads/".length);
  }
  return null;
}

// A linked worktree's ".git" is a file "gitdir: <repo>/worktrees/<id>"; null when it is not.
export async function linkedGitDir(worktree: string): Promise<string | null> {
  const text = await readFile(join(worktree, ".git"), "utf8").catch(() => null);
  const match = text === null ? null : /^gitdir: (.+)$/m.exec(text);
  if (!match) return null;
  const dir = resolve(worktree, match[1]!.trim());
  return (await isDirectory(dir)) ? dir : null;
}

export async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
