// After the base moved to a landed PR's tree: its issue closed and its branch deleted. Neither
// is durable state the landing depends on, so a failure is reported, not thrown.
import type { LandingGit } from "./landing-git.js";
import type { LandingContext } from "./land-types.js";

export async function wrapUpLanded(ctx: LandingContext, lg: LandingGit, issue: number, headRef: string, head: string): Promise<{ issueClosed: boolean; branchDeleted: boolean }> {
  // GitHub closes the issue for "Closes #n" on the default branch only; make sure it is closed.
  let issueClosed = false;
  try {
    const found = await ctx.forge.getIssue(issue);
    if (found.state === "open") await ctx.forge.closeIssue(issue, "completed");
    issueClosed = true;
  } catch {
    issueClosed = false; // the next tick sees it open without a claim... and the board says merged
  }
  let branchDeleted = false;
  if (ctx.config.landing.delete_branch) {
    const deleted = await lg.pushRef(null, `refs/heads/${headRef}`, head).catch(() => null);
    branchDeleted = deleted?.ok ?? false;
  }
  return { issueClosed, branchDeleted };
}
