// The Not Rocket Science Rule, checked on a forge's history: every commit on the base's
// first-parent line (the seed's root aside) has the tree of a commit on which CI passed — a
// PR head (or a train's head) with a successful check run. Shared by every landing test.
import assert from "node:assert/strict";
import { api, git, type TestForge } from "./forge-fixtures.js";

/** Asserts the rule; returns the first-parent commits it checked (newest first, the root excluded). */
export async function assertBaseOnGatedTrees(forge: TestForge, repo: string, clone: string, base = "main"): Promise<string[]> {
  await git(clone, "fetch", "--quiet", "origin", `+refs/heads/${base}:refs/remotes/origin/${base}`);
  const log = (await git(clone, "log", "--first-parent", "--format=%H %T %P", `origin/${base}`)).stdout.split("\n").filter(Boolean);
  const passedTrees = new Set<string>();
  const pulls = (await api(forge, "GET", `/repos/${repo}/pulls?state=all&per_page=100`)).body as { head: { sha: string } }[];
  for (const pull of pulls) {
    const runs = (await api(forge, "GET", `/repos/${repo}/commits/${pull.head.sha}/check-runs`)).body as { check_runs: { conclusion: string | null }[] };
    if (!runs.check_runs.some((r) => r.conclusion === "success")) continue;
    await git(clone, "fetch", "--quiet", "origin", pull.head.sha).catch(() => undefined);
    passedTrees.add((await git(clone, "rev-parse", `${pull.head.sha}^{tree}`)).stdout.trim());
  }
  const checked: string[] = [];
  for (const line of log) {
    const [sha, tree, ...parents] = line.split(" ");
    if (parents.length === 0) continue; // the seed's root commit
    assert.ok(passedTrees.has(tree!), `commit ${sha} on ${base} has a tree no CI run passed`);
    checked.push(sha!);
  }
  return checked;
}
