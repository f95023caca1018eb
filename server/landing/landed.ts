// After the base moved to a landed PR's tree: its issue closed and its branch deleted. Neither
// is durable state the landing depends on, so a failure is reported, not thrown.
import type { PullRequest } from "../gh/forge.js";
import { parseClosingRefs } from "../state/links.js";
import type { LandingGit } from "./landing-git.js";
import type { LandingContext } from "./land-types.js";

/**
 * Whether GitHub itself closes `issue` now that `pull` merged through the merge API: it does for
 * a closing keyword ("Closes #n") in the PR's title or body, on the default branch only, a
 * moment after the merge. `pull` is the PR as read for this landing (a human may have edited the
 * fleet's "Closes #n" away). A push, a train or a merge queue is not counted on.
 */
export function closedByMerge(
  ctx: Pick<LandingContext, "forge" | "base" | "defaultBranch">,
  pull: Pick<PullRequest, "title" | "body"> | null,
  issue: number,
): boolean {
  if (pull === null || ctx.defaultBranch === undefined || ctx.base !== ctx.defaultBranch) return false;
  return parseClosingRefs(`${pull.title}\n${pull.body}`, `${ctx.forge.repo.owner}/${ctx.forge.repo.name}`).includes(issue);
}

/**
 * `byMerge`: GitHub closes the issue itself (closedByMerge): no request here. The fleet keeps its
 * claim until a listing shows the issue closed, and closes it itself should it stay open
 * (server/fleet/merge-closes.ts).
 */
export async function wrapUpLanded(
  ctx: LandingContext,
  lg: LandingGit,
  issue: number,
  headRef: string,
  head: string,
  byMerge = false,
): Promise<{ issueClosed: boolean; branchDeleted: boolean }> {
  // Otherwise (a push, a train, another base, no keyword) close it ourselves: one request
  // whatever GitHub did (closing a closed issue changes nothing), where reading its state first
  // costs one, two when open.
  let issueClosed = false;
  if (!byMerge) {
    try {
      await ctx.forge.closeIssue(issue, "completed");
      issueClosed = true;
    } catch {
      issueClosed = false; // the next tick sees it open without a claim... and the board says merged
    }
  }
  let branchDeleted = false;
  if (ctx.config.landing.delete_branch) {
    const deleted = await lg.pushRef(null, `refs/heads/${headRef}`, head).catch(() => null);
    branchDeleted = deleted?.ok ?? false;
  }
  return { issueClosed, branchDeleted };
}
