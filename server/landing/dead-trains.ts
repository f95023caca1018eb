// Dead trains: while a host holds the landing lock no train runs anywhere (a train holds the lock
// from its first candidate until its branch is gone), so a train branch on origin then is a dead
// train's: its host was killed, or lost the lock, mid-train. Every landing that holds the lock
// sweeps them (a single PR's as much as a train's), else a repository that lands only single
// PRs afterwards keeps the branch, its draft PR and the draft's CI runs for good.
import { sameLogin } from "../state/markers.js";
import type { LandingContext } from "./land-types.js";
import type { LandingGit } from "./landing-git.js";

export const TRAIN_BRANCH_PREFIX = "afk/train/";
// A train branch as Train names it: `<prefix><time base 36>-<6 hex>-<n>`.
const DEAD_TRAIN = /^afk\/train\/[0-9a-z]+-[0-9a-f]{6}-\d+$/;

/**
 * The train branches on origin named as the fleet names them, with their tips: one ls-remote,
 * no request. Call it only while holding the landing lock (then each of them is dead).
 */
export async function listDeadTrains(lg: LandingGit): Promise<Map<string, string>> {
  return new Map([...(await lg.remoteBranches(TRAIN_BRANCH_PREFIX))].filter(([branch]) => DEAD_TRAIN.test(branch)));
}

/**
 * Closes the dead trains' draft PRs and deletes their branches; returns the branches swept. A
 * request (the open-PR list, conditional) only when there is one. A branch whose PR another
 * login opened is left alone, PR and all; a branch that moved since it was listed too (the
 * delete is a compare-and-swap).
 */
export async function sweepDeadTrains(ctx: Pick<LandingContext, "forge" | "login">, lg: LandingGit, dead: Map<string, string>): Promise<string[]> {
  if (dead.size === 0) return [];
  const left = new Map(dead);
  for (const pull of await ctx.forge.listOpenPulls()) {
    if (!left.has(pull.head.ref)) continue;
    // One request per dead train of ours (a host died mid-train): its draft PR would linger open.
    if (sameLogin(pull.author, ctx.login)) await ctx.forge.closePull(pull.number);
    else left.delete(pull.head.ref); // not ours: left alone
  }
  const swept: string[] = [];
  for (const [branch, sha] of left) if ((await lg.pushRef(null, `refs/heads/${branch}`, sha)).ok) swept.push(branch);
  return swept;
}
