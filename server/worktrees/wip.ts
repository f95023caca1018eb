// What a worker left uncommitted, kept: before an issue leaves the fleet for a human (an
// escalation), modified and untracked files in its worktree become one marked "work in
// progress" commit on the issue branch, so the next push carries them and a later fresh
// worktree (a re-queue starts over) cannot throw them away. Ignored files stay out: build
// output and dependencies are not the worker's work.
import type { WorkRepo } from "./worktrees.js";
import { isDirectory } from "./work-repo.js";

/** The subject every work-in-progress checkpoint starts with. */
export const WIP_SUBJECT = "afk: work in progress";

export interface WipCommit {
  sha: string;
  /** The paths it holds (added, modified or deleted), as git status named them. */
  files: string[];
}

/** Paths in `git status --porcelain -z` output (a rename's source field skipped). */
function statusPaths(stdout: string): string[] {
  const fields = stdout.split("\0").filter((f) => f !== "");
  const out: string[] = [];
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i]!;
    out.push(field.slice(3));
    if (field[0] === "R" || field[0] === "C") i += 1;
  }
  return out;
}

/**
 * Commits everything uncommitted in the issue's worktree as a marked checkpoint. Call it only
 * once no worker runs there. Null when there is no worktree or nothing uncommitted.
 */
export async function commitWorkInProgress(workRepo: WorkRepo, issue: number, why: string): Promise<WipCommit | null> {
  const path = workRepo.worktreePath(issue);
  if (!(await isDirectory(path))) return null;
  const status = await workRepo.git.run(["status", "--porcelain", "-z", "--untracked-files=all"], path);
  const files = statusPaths(status.stdout);
  if (files.length === 0) return null;
  await workRepo.git.run(["add", "--all", "--", "."], path);
  const message = `${WIP_SUBJECT} (#${issue})\n\n${why}\n\nThe worker left these changes uncommitted; the fleet committed them as they were, untested.\n`;
  // No hooks and no signing: this commit records what was there, it is not a worker's change.
  await workRepo.git.run(["-c", "commit.gpgSign=false", "commit", "--no-verify", "--quiet", "--file=-"], path, message);
  const sha = await workRepo.git.revParse("HEAD", path);
  if (sha === null) throw new Error(`#${issue}: the work-in-progress commit left no HEAD in ${path}`);
  return { sha, files };
}
