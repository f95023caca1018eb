// One pull request as a route sees it (its issue record and pull record), read from the route's
// parameters, and its live head and base: shared by the pull, merge and review routes.
import { notFound } from "./http-errors.js";
import type { RequestContext } from "./router.js";
import type { IssueRecord, PullRecord } from "./state.js";

export interface PullPair {
  issue: IssueRecord;
  pull: PullRecord;
}

export function pullParam(ctx: RequestContext): PullPair {
  const issue = ctx.forge.state.issue(Number(ctx.params.pull_number));
  if (!issue?.pull) throw notFound();
  return { issue, pull: issue.pull };
}

/** Live head and base shas: an open PR follows its branches; a closed one is frozen. */
export function liveShas(pair: PullPair, tips: Map<string, string>): { headSha: string; baseSha: string } {
  const { issue, pull } = pair;
  if (issue.state !== "open") return { headSha: pull.headSha, baseSha: pull.baseSha };
  return { headSha: tips.get(pull.head) ?? pull.headSha, baseSha: tips.get(pull.base) ?? pull.baseSha };
}
