// Issue dependencies ("blocked by" / "blocking") and sub-issues. These endpoints identify
// the other issue by its numeric id, not its number: a classic mix-up the forge keeps honest
// by giving ids and numbers very different values.
import { HttpError, notFound } from "./http-errors.js";
import { optionalBoolean, requiredInteger } from "./input.js";
import { actor, issueParam, touch } from "./issues.js";
import { paginate } from "./paginate.js";
import { STATE_ONLY, type Reply, type RequestContext, type Router } from "./router.js";
import type { IssueRecord } from "./state.js";

const ISSUE = "/repos/{owner}/{repo}/issues/{issue_number}";

function byId(ctx: RequestContext, id: number): IssueRecord {
  const issue = ctx.forge.state.issueById(id);
  if (!issue) throw notFound();
  return issue;
}

function listOf(ctx: RequestContext, numbers: number[]): Reply {
  const issues = numbers.map((n) => ctx.forge.state.issue(n)).filter((i): i is IssueRecord => i !== undefined);
  const page = paginate(ctx, issues);
  return { status: 200, body: page.items.map((i) => ctx.forge.render.issue(i)), headers: page.headers };
}

/** Whether `from` can reach `to` following blocked-by edges (adding to->from would close a cycle). */
function reaches(ctx: RequestContext, from: IssueRecord, to: IssueRecord): boolean {
  const seen = new Set<number>();
  const stack = [from.number];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n === to.number) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...(ctx.forge.state.issue(n)?.blockedBy ?? []));
  }
  return false;
}

function addBlockedBy(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  const blocker = byId(ctx, requiredInteger(ctx.body, "issue_id", "IssueDependency"));
  if (blocker === issue) throw new HttpError(422, "An issue cannot be blocked by itself");
  if (issue.blockedBy.includes(blocker.number)) throw new HttpError(422, "Issue is already blocked by this issue");
  if (reaches(ctx, blocker, issue)) throw new HttpError(422, "Adding this dependency would create a circular dependency");
  issue.blockedBy.push(blocker.number);
  blocker.blocking.push(issue.number);
  touch(issue);
  ctx.forge.state.changed();
  return { status: 201, body: ctx.forge.render.issue(blocker), headers: { location: `${ctx.forge.render.issueApiUrl(issue.number)}/dependencies/blocked_by` } };
}

function removeBlockedBy(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  const blocker = byId(ctx, Number(ctx.params.issue_id));
  if (!issue.blockedBy.includes(blocker.number)) throw notFound();
  issue.blockedBy = issue.blockedBy.filter((n) => n !== blocker.number);
  blocker.blocking = blocker.blocking.filter((n) => n !== issue.number);
  touch(issue);
  ctx.forge.state.changed();
  return { status: 200, body: ctx.forge.render.issue(blocker) };
}

function addSubIssue(ctx: RequestContext): Reply {
  actor(ctx);
  const parent = issueParam(ctx);
  const sub = byId(ctx, requiredInteger(ctx.body, "sub_issue_id", "SubIssue"));
  const replace = optionalBoolean(ctx.body, "replace_parent", "SubIssue") ?? false;
  if (sub === parent) throw new HttpError(422, "An issue cannot be a sub-issue of itself");
  if (sub.pull) throw new HttpError(422, "Pull requests cannot be sub-issues");
  if (sub.parent === parent.number) throw new HttpError(422, "Issue is already a sub-issue of this issue");
  if (sub.parent !== null) {
    if (!replace) throw new HttpError(422, "Issue may not contain duplicate sub-issues and sub-issue may only have one parent");
    const old = ctx.forge.state.issue(sub.parent);
    if (old) old.subIssues = old.subIssues.filter((n) => n !== sub.number);
  }
  // Refuse a cycle: the parent must not be a descendant of the new sub-issue.
  for (let p: number | null = parent.number; p !== null; p = ctx.forge.state.issue(p)?.parent ?? null) {
    if (p === sub.number) throw new HttpError(422, "Adding this sub-issue would create a cycle");
  }
  parent.subIssues.push(sub.number);
  sub.parent = parent.number;
  touch(parent);
  ctx.forge.state.changed();
  return { status: 201, body: ctx.forge.render.issue(parent), headers: { location: `${ctx.forge.render.issueApiUrl(parent.number)}/sub_issues` } };
}

function removeSubIssue(ctx: RequestContext): Reply {
  actor(ctx);
  const parent = issueParam(ctx);
  const sub = byId(ctx, requiredInteger(ctx.body, "sub_issue_id", "SubIssue"));
  if (sub.parent !== parent.number) throw notFound();
  parent.subIssues = parent.subIssues.filter((n) => n !== sub.number);
  sub.parent = null;
  touch(parent);
  ctx.forge.state.changed();
  return { status: 200, body: ctx.forge.render.issue(parent) };
}

function getParent(ctx: RequestContext): Reply {
  const issue = issueParam(ctx);
  const parent = issue.parent === null ? undefined : ctx.forge.state.issue(issue.parent);
  if (!parent) throw notFound();
  return { status: 200, body: ctx.forge.render.issue(parent) };
}

export function registerRelationRoutes(router: Router): void {
  router
    .add("GET", `${ISSUE}/dependencies/blocked_by`, (ctx) => listOf(ctx, issueParam(ctx).blockedBy), STATE_ONLY)
    .add("POST", `${ISSUE}/dependencies/blocked_by`, addBlockedBy)
    .add("DELETE", `${ISSUE}/dependencies/blocked_by/{issue_id}`, removeBlockedBy)
    .add("GET", `${ISSUE}/dependencies/blocking`, (ctx) => listOf(ctx, issueParam(ctx).blocking), STATE_ONLY)
    .add("GET", `${ISSUE}/sub_issues`, (ctx) => listOf(ctx, issueParam(ctx).subIssues), STATE_ONLY)
    .add("POST", `${ISSUE}/sub_issues`, addSubIssue)
    .add("DELETE", `${ISSUE}/sub_issue`, removeSubIssue)
    .add("GET", `${ISSUE}/parent`, getParent, STATE_ONLY);
}
