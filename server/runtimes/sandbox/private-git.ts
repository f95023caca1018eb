// A sandboxed worker's own git dir. A linked worktree's git dir lives inside the work repository
// and shares its refs with every other worktree: a worker that may write it can move another
// issue's branch. So the sandbox mounts, over the worktree's `.git` file, one that points at a
// private repository made for this birth: its objects borrowed read-only from the work repository
// (alternates), its one branch at the worktree's HEAD, the base's remote-tracking refs for diffs,
// the worktree's index, and an identity. Its `config` and `objects/info` are read-only inside.
//
// The commits come back the other way (`takeBack`): the branch, and nothing else, is
// fetched from the private repository into the work repository and the worktree's branch is moved
// to it (the worktree's index follows, its files are the same files). The launcher does it while
// the worker runs (so checkpoints see new commits) and when it exits; the host once more after
// the exit (a launcher ended by SIGKILL). The verdict file comes back from the box the same way.
import { copyFile, lstat, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { git, gitRaw } from "../../gh/git.js";
import type { TakeBack } from "./spec.js";
import { writeAtomic } from "../../kit/atomic-file.js";

const VERDICT_MAX_BYTES = 64 * 1024;

/** Absolute paths of the worktree's own git dir and of the repository's common dir. */
export async function gitDirsOf(worktree: string): Promise<{ linked: string; common: string }> {
  const { stdout } = await git(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"], { cwd: worktree });
  const [linked, common] = stdout.trim().split("\n");
  if (!linked || !common) throw new Error(`sandbox: cannot read the git dirs of ${worktree}`);
  return { linked, common };
}

async function effective(worktree: string, key: string): Promise<string | null> {
  const result = await gitRaw(["config", "--get", key], { cwd: worktree });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * Makes `gitDir` (removed first) the worker's private repository for `worktree` on `branch`, and
 * writes `dotGit`, the `.git` file mounted over the worktree's.
 */
export async function makePrivateGitDir(worktree: string, branch: string, gitDir: string, dotGit: string): Promise<{ common: string }> {
  const { linked, common } = await gitDirsOf(worktree);
  await rm(gitDir, { recursive: true, force: true });
  await mkdir(gitDir, { recursive: true, mode: 0o700 });
  await git(["init", "--quiet", "--bare", gitDir], { cwd: worktree });
  const inP = (args: string[], input?: string) => git(["--git-dir", gitDir, ...args], { cwd: worktree, ...(input !== undefined ? { input } : {}) });
  await writeFile(join(gitDir, "objects", "info", "alternates"), `${join(common, "objects")}\n`);
  const head = (await git(["rev-parse", "--verify", "HEAD^{commit}"], { cwd: worktree })).stdout.trim();
  const remotes = (await git(["for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes/origin/"], { cwd: worktree })).stdout;
  const updates = [`create refs/heads/${branch} ${head}`];
  for (const line of remotes.split("\n")) {
    const [sha, ref] = line.split(" ");
    if (sha && ref && ref !== "refs/remotes/origin/HEAD") updates.push(`create ${ref} ${sha}`);
  }
  await inP(["update-ref", "--stdin"], `${updates.join("\n")}\n`);
  await inP(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  const settings: [string, string][] = [
    ["core.bare", "false"],
    ["commit.gpgsign", "false"],
    ["tag.gpgsign", "false"],
    ["core.logallrefupdates", "always"],
  ];
  for (const key of ["user.name", "user.email"]) {
    const value = await effective(worktree, key);
    if (value) settings.push([key, value]);
  }
  for (const [key, value] of settings) await inP(["config", key, value]);
  await copyFile(join(linked, "index"), join(gitDir, "index")).catch(() => undefined);
  await writeFile(dotGit, `gitdir: ${gitDir}\n`);
  return { common };
}

async function refSha(cwd: string, args: string[], ref: string): Promise<string | null> {
  const result = await gitRaw([...args, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * Carries the worker's commits on its branch (only that branch) and its verdict back. Returns
 * the sha the worktree's branch moved to, or null when nothing moved. Never throws for what the
 * worker left: a private repository it broke gives nothing back.
 */
export async function takeBack(tb: TakeBack): Promise<string | null> {
  await takeBackVerdict(tb);
  // A `commondir` file would make git read another directory's config for the private repository.
  if (
    await stat(join(tb.gitDir, "commondir")).then(
      () => true,
      () => false,
    )
  )
    return null;
  const tip = await refSha(tb.worktree, ["--git-dir", tb.gitDir], `refs/heads/${tb.branch}`).catch(() => null);
  const current = await refSha(tb.worktree, [], `refs/heads/${tb.branch}`);
  if (tip === null || tip === current) return null;
  const temp = `refs/sandbox/${tb.branch}`;
  const fetched = await gitRaw(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", tb.gitDir, `+refs/heads/${tb.branch}:${temp}`], { cwd: tb.worktree });
  if (fetched.exitCode !== 0) return null;
  const sha = await refSha(tb.worktree, [], temp);
  await gitRaw(["update-ref", "-d", temp], { cwd: tb.worktree });
  if (sha === null || sha === current) return null;
  // Compare-and-swap from the tip seen: a branch the fleet moved meanwhile is left alone.
  const moved = await gitRaw(["update-ref", "-m", "afk-mcp: the sandboxed worker's commits", `refs/heads/${tb.branch}`, sha, current ?? ""], {
    cwd: tb.worktree,
  });
  if (moved.exitCode !== 0) return null;
  // The worktree's index follows its branch; its files are the worker's files already.
  await gitRaw(["reset", "--quiet"], { cwd: tb.worktree });
  return sha;
}

async function takeBackVerdict(tb: TakeBack): Promise<void> {
  const seen = await lstat(tb.boxVerdict).catch(() => null);
  if (!seen) return;
  if (seen.isFile() && seen.size <= VERDICT_MAX_BYTES) {
    const text = await readFile(tb.boxVerdict);
    await writeAtomic(tb.verdict, text);
  }
  await rm(tb.boxVerdict, { force: true, recursive: true });
}
