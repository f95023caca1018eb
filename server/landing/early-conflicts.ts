// Git facts for seeing conflicts early, all local to the fleet's work repository (no request,
// no checkout): whether an in-flight PR's head still merges with a new base tip (git merge-tree),
// the files a PR changes, and the paths of the base tree.
import { gitRaw } from "../gh/git.js";

/** Files that conflict when `head` is merged with `base`; [] when clean; null when unknown here. */
export async function conflictingFiles(repoDir: string, base: string, head: string): Promise<string[] | null> {
  const r = await gitRaw(["merge-tree", "--write-tree", "--name-only", "--no-messages", base, head], { cwd: repoDir });
  if (r.exitCode === 0) return [];
  const lines = r.stdout.split("\n");
  // Conflicts: exit 1 and the tree id first. Anything else (an object missing here because it was
  // pushed from elsewhere) is no opinion.
  if (r.exitCode !== 1 || !/^[0-9a-f]{40,64}$/.test(lines[0]?.trim() ?? "")) return null;
  return [
    ...new Set(
      lines
        .slice(1)
        .map((l) => l.trim())
        .filter(Boolean),
    ),
  ].sort();
}

/** Files `head` changes against its merge base with `base`; null when unknown here. */
export async function changedFiles(repoDir: string, base: string, head: string): Promise<string[] | null> {
  const r = await gitRaw(["diff", "--name-only", "--no-renames", `${base}...${head}`], { cwd: repoDir });
  return r.exitCode === 0 ? r.stdout.split("\n").filter(Boolean) : null;
}

/** Every file path in the tree of `rev`; empty when it cannot be read. */
export async function treePaths(repoDir: string, rev: string): Promise<Set<string>> {
  const r = await gitRaw(["ls-tree", "-r", "--name-only", rev], { cwd: repoDir });
  return new Set(r.exitCode === 0 ? r.stdout.split("\n").filter(Boolean) : []);
}
