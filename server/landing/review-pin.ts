// The review stage's pin: a reviewed head may land as it is, or as a sync merge of it with the
// base, and nothing else. A head that is a two-parent merge whose first parent is the reviewed
// head, whose second parent is on the base, and whose tree is exactly what merging those two
// gives (git merge-tree, no checkout) adds nothing a reviewer did not see; any other head was
// pushed after the review and must be reviewed again.
import { gitRaw } from "../gh/git.js";

export async function isCleanSyncOf(repoDir: string, reviewed: string, head: string, base: string): Promise<boolean> {
  const parents = await gitRaw(["rev-list", "--parents", "-n", "1", head], { cwd: repoDir });
  if (parents.exitCode !== 0) return false; // not here: pushed from elsewhere
  const [, first, second, ...more] = parents.stdout.trim().split(/\s+/);
  if (first !== reviewed || !second || more.length > 0) return false;
  const onBase = await gitRaw(["merge-base", "--is-ancestor", second, `refs/remotes/origin/${base}`], { cwd: repoDir });
  if (onBase.exitCode !== 0) return false;
  const merged = await gitRaw(["merge-tree", "--write-tree", reviewed, second], { cwd: repoDir });
  if (merged.exitCode !== 0) return false;
  const tree = await gitRaw(["rev-parse", `${head}^{tree}`], { cwd: repoDir });
  return tree.exitCode === 0 && merged.stdout.split("\n")[0]!.trim() === tree.stdout.trim();
}

/** `git diff <baseSha>...<head>` for a review brief (both fetched already), cut at `maxBytes`. */
export async function reviewDiff(repoDir: string, baseSha: string, head: string, maxBytes: number): Promise<{ diff: string; cut: boolean }> {
  const result = await gitRaw(["diff", "--no-color", "--no-ext-diff", `${baseSha}...${head}`], { cwd: repoDir });
  if (result.exitCode !== 0) return { diff: `(the diff could not be computed here: ${result.stderr.trim().slice(0, 300)})`, cut: false };
  const buf = Buffer.from(result.stdout, "utf8");
  if (buf.length <= maxBytes) return { diff: result.stdout, cut: false };
  return { diff: buf.subarray(0, maxBytes).toString("utf8"), cut: true };
}
