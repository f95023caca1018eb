// What an issue's branch holds against the base, read with git: how far it is ahead, when it was
// last committed to, whether its worktree is dirty (the worker's progress), and whether merging
// it would change the base's tree at all (an "already satisfied" verdict's check).
import { gitFailure } from "../gh/git.js";
import { newestMtime } from "./activity.js";
import type { RepoGit } from "./work-repo.js";
import type { WorktreeProgress } from "./worktree-types.js";

/** Fills in `facts` for a branch whose head is known; the worktree's own state when `inWorktree`. */
export async function headProgress(git: RepoGit, facts: WorktreeProgress, head: string, base: string, inWorktree: boolean): Promise<WorktreeProgress> {
  const baseSha = await git.revParse(`refs/remotes/origin/${base}`);
  const range = baseSha ? [`${baseSha}..${head}`] : [head];
  facts.commitsAhead = Number((await git.run(["rev-list", "--count", ...range])).stdout.trim()) || 0;
  const last = (await git.run(["log", "-1", "--format=%ct", ...range])).stdout.trim();
  facts.lastCommitAt = last === "" ? null : new Date(Number(last) * 1000);
  if (inWorktree) {
    // --no-optional-locks: status would otherwise refresh the index under index.lock, and a
    // worker committing at that moment would fail.
    const status = await git.run(["--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal"], facts.path);
    facts.dirty = status.stdout !== "";
    facts.worktreeMtime = await newestMtime(facts.path);
  }
  return facts;
}

/** Whether landing `head` on `baseSha` would change the base's tree. */
export async function changesAgainst(git: RepoGit, baseSha: string, head: string): Promise<boolean> {
  if (await git.isAncestor(head, baseSha)) return false;
  const merged = await git.runRaw(["merge-tree", "--write-tree", "--no-messages", baseSha, head]);
  if (merged.exitCode === 0) {
    const baseTree = (await git.run(["rev-parse", `${baseSha}^{tree}`])).stdout.trim();
    return (merged.stdout.split("\n")[0] ?? "").trim() !== baseTree;
  }
  if (merged.exitCode === 1) return true; // conflicts: certainly a change
  // git older than 2.38 has no --write-tree: fall back to what the branch introduced.
  const diff = await git.runRaw(["diff", "--quiet", `${baseSha}...${head}`]);
  if (diff.exitCode > 1) throw gitFailure(["diff", "--quiet", `${baseSha}...${head}`], diff);
  return diff.exitCode === 1;
}
