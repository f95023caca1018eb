// Issues (and pull requests seen as issues): list with GitHub's filters, create, read,
// update, and the labels and assignees attached to one issue.
import { HttpError, invalidField, notFound, validationFailed } from "./http-errors.js";
import { nullableString, oneOf, optionalString, optionalStringArray, queryEnum, requiredString } from "./input.js";
import type { ForgeEmulator } from "./core.js";
import { paginate } from "./paginate.js";
import { STATE_ONLY, type Reply, type RequestContext, type Router } from "./router.js";
import { isoNow, type IssueRecord, type UserRecord } from "./state.js";

const REPO = "/repos/{owner}/{repo}";

/** The caller of a write; the server has already refused anonymous writes. */
export function actor(ctx: RequestContext): UserRecord {
  if (!ctx.user) throw new HttpError(401, "Requires authentication");
  return ctx.user;
}

export function requireAdmin(ctx: RequestContext): UserRecord {
  const u = actor(ctx);
  if (!u.admin) throw new HttpError(403, "Must have admin rights to Repository.");
  return u;
}

export function issueParam(ctx: RequestContext, name = "issue_number"): IssueRecord {
  const issue = ctx.forge.state.issue(Number(ctx.params[name]));
  if (!issue) throw notFound();
  return issue;
}

export function touch(issue: IssueRecord): void {
  issue.updatedAt = isoNow();
}

/** Closes an issue (or PR) the way GitHub records it. */
export function closeIssue(forge: ForgeEmulator, issue: IssueRecord, by: string, reason: string): void {
  if (issue.state === "closed") return;
  const now = isoNow();
  issue.state = "closed";
  issue.stateReason = issue.pull ? null : reason;
  issue.closedAt = now;
  issue.closedBy = by;
  issue.updatedAt = now;
  forge.state.changed();
}

function reopenIssue(forge: ForgeEmulator, issue: IssueRecord): void {
  if (issue.state === "open") return;
  issue.state = "open";
  issue.stateReason = issue.pull ? null : "reopened";
  issue.closedAt = null;
  issue.closedBy = null;
  touch(issue);
  forge.state.changed();
}

/** Attaches labels by name, creating unknown ones as GitHub does for writers. */
export function addLabels(forge: ForgeEmulator, issue: IssueRecord, names: string[]): void {
  for (const name of names) {
    if (name.trim() === "") throw invalidField("Label", "name", name);
    let label = forge.state.label(name);
    if (!label) {
      label = { id: forge.state.nextId(), name, color: "ededed", description: null };
      forge.state.addLabel(label);
    }
    if (!issue.labels.some((n) => n.toLowerCase() === label.name.toLowerCase())) issue.labels.push(label.name);
  }
}

function checkAssignees(forge: ForgeEmulator, names: string[]): string[] {
  const bad = names.filter((n) => !forge.state.user(n));
  if (bad.length > 0) {
    throw validationFailed(bad.map((value) => ({ resource: "Issue", field: "assignees", code: "invalid", value })));
  }
  return names.map((n) => forge.state.user(n)!.login);
}

function listIssues(ctx: RequestContext): Reply {
  const { state, render } = ctx.forge;
  const wantState = queryEnum(ctx.query, "state", ["open", "closed", "all"] as const, "open");
  const sort = queryEnum(ctx.query, "sort", ["created", "updated", "comments"] as const, "created");
  const direction = queryEnum(ctx.query, "direction", ["asc", "desc"] as const, "desc");
  const labels = (ctx.query.get("labels") ?? "")
    .split(",")
    .map((l) => l.trim().toLowerCase())
    .filter(Boolean);
  const creator = ctx.query.get("creator")?.toLowerCase();
  const assignee = ctx.query.get("assignee")?.toLowerCase();
  const since = ctx.query.get("since");
  const sinceMs = since ? Date.parse(since) : Number.NaN;

  const picked = state.issues().filter((i) => {
    if (wantState !== "all" && i.state !== wantState) return false;
    if (creator && i.author.toLowerCase() !== creator) return false;
    if (assignee === "none" && i.assignees.length > 0) return false;
    if (assignee === "*" && i.assignees.length === 0) return false;
    if (assignee && assignee !== "none" && assignee !== "*" && !i.assignees.some((a) => a.toLowerCase() === assignee)) return false;
    if (labels.length > 0) {
      const have = new Set(i.labels.map((l) => l.toLowerCase()));
      if (!labels.every((l) => have.has(l))) return false;
    }
    if (!Number.isNaN(sinceMs) && Date.parse(i.updatedAt) < sinceMs) return false;
    return true;
  });

  const key = (i: IssueRecord): number | string => (sort === "created" ? i.createdAt : sort === "updated" ? i.updatedAt : state.commentsFor(i.number).length);
  const sign = direction === "asc" ? 1 : -1;
  picked.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    const c = ka < kb ? -1 : ka > kb ? 1 : a.number - b.number;
    return sign * c;
  });
  const page = paginate(ctx, picked);
  return { status: 200, body: page.items.map((i) => render.issue(i)), headers: page.headers };
}

function createIssue(ctx: RequestContext): Reply {
  const user = actor(ctx);
  const { state, render } = ctx.forge;
  const title = requiredString(ctx.body, "title", "Issue");
  if (title.trim() === "") throw validationFailed([{ resource: "Issue", field: "title", code: "missing_field" }]);
  const body = nullableString(ctx.body, "body", "Issue") ?? null;
  const labels = optionalStringArray(ctx.body, "labels", "Issue") ?? [];
  const assigneeList = optionalStringArray(ctx.body, "assignees", "Issue") ?? [];
  const single = optionalString(ctx.body, "assignee", "Issue");
  const assignees = checkAssignees(ctx.forge, single ? [...assigneeList, single] : assigneeList);
  const now = isoNow();
  const issue: IssueRecord = {
    number: state.allocNumber(),
    id: state.nextId(),
    title,
    body,
    state: "open",
    stateReason: null,
    labels: [],
    assignees: [...new Set(assignees)],
    author: user.login,
    createdAt: now,
    updatedAt: now,
    closedAt: null,
    closedBy: null,
    locked: false,
    blockedBy: [],
    blocking: [],
    subIssues: [],
    parent: null,
    pull: null,
  };
  addLabels(ctx.forge, issue, labels);
  state.addIssue(issue);
  return { status: 201, body: render.issue(issue), headers: { location: render.issueApiUrl(issue.number) } };
}

function getIssue(ctx: RequestContext): Reply {
  return { status: 200, body: ctx.forge.render.issue(issueParam(ctx)) };
}

function updateIssue(ctx: RequestContext): Reply {
  const user = actor(ctx);
  const { forge } = ctx;
  const issue = issueParam(ctx);
  const title = optionalString(ctx.body, "title", "Issue");
  const body = nullableString(ctx.body, "body", "Issue");
  const newState = oneOf(optionalString(ctx.body, "state", "Issue"), ["open", "closed"] as const, "Issue", "state");
  const reason = oneOf(
    ctx.body.state_reason === null ? undefined : optionalString(ctx.body, "state_reason", "Issue"),
    ["completed", "not_planned", "reopened", "duplicate"] as const,
    "Issue",
    "state_reason",
  );
  const labels = optionalStringArray(ctx.body, "labels", "Issue");
  const assignees = optionalStringArray(ctx.body, "assignees", "Issue");
  if (title !== undefined) {
    if (title.trim() === "") throw validationFailed([{ resource: "Issue", field: "title", code: "missing_field" }]);
    issue.title = title;
  }
  if (body !== undefined) issue.body = body;
  if (labels !== undefined) {
    issue.labels = [];
    addLabels(forge, issue, labels);
  }
  if (assignees !== undefined) issue.assignees = [...new Set(checkAssignees(forge, assignees))];
  if (newState === "closed") {
    if (issue.pull?.merged) {
      // Already closed by its merge: nothing to do.
    } else if (issue.state === "open") {
      closeIssue(forge, issue, user.login, reason ?? "completed");
    } else if (reason && !issue.pull) {
      issue.stateReason = reason;
    }
  } else if (newState === "open") {
    if (issue.pull?.merged) throw new HttpError(422, "Cannot reopen a merged pull request");
    reopenIssue(forge, issue);
  } else if (reason && issue.state === "closed" && !issue.pull) {
    issue.stateReason = reason;
  }
  touch(issue);
  forge.state.changed();
  return { status: 200, body: forge.render.issue(issue) };
}

// Labels on one issue

function issueLabelList(ctx: RequestContext, issue: IssueRecord): unknown[] {
  const out: unknown[] = [];
  for (const name of issue.labels) {
    const l = ctx.forge.state.label(name);
    if (l) out.push(ctx.forge.render.label(l));
  }
  return out;
}

/** `{labels: [...]}` or a bare array, as GitHub accepts both. */
function labelNames(ctx: RequestContext): string[] {
  if (Array.isArray(ctx.rawBody)) return optionalStringArray({ labels: ctx.rawBody }, "labels", "Label") ?? [];
  const names = optionalStringArray(ctx.body, "labels", "Label");
  if (names === undefined) throw validationFailed([{ resource: "Label", field: "labels", code: "missing_field" }]);
  return names;
}

function listIssueLabels(ctx: RequestContext): Reply {
  const page = paginate(ctx, issueLabelList(ctx, issueParam(ctx)));
  return { status: 200, body: page.items, headers: page.headers };
}

function addIssueLabels(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  addLabels(ctx.forge, issue, labelNames(ctx));
  touch(issue);
  ctx.forge.state.changed();
  return { status: 200, body: issueLabelList(ctx, issue) };
}

function setIssueLabels(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  const names = labelNames(ctx);
  issue.labels = [];
  addLabels(ctx.forge, issue, names);
  touch(issue);
  ctx.forge.state.changed();
  return { status: 200, body: issueLabelList(ctx, issue) };
}

function removeIssueLabel(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  const key = (ctx.params.name ?? "").toLowerCase();
  if (!issue.labels.some((n) => n.toLowerCase() === key)) throw new HttpError(404, "Label does not exist");
  issue.labels = issue.labels.filter((n) => n.toLowerCase() !== key);
  touch(issue);
  ctx.forge.state.changed();
  return { status: 200, body: issueLabelList(ctx, issue) };
}

function clearIssueLabels(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  issue.labels = [];
  touch(issue);
  ctx.forge.state.changed();
  return { status: 204 };
}

// Assignees on one issue

function addAssignees(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  const names = checkAssignees(ctx.forge, optionalStringArray(ctx.body, "assignees", "Issue") ?? []);
  issue.assignees = [...new Set([...issue.assignees, ...names])];
  touch(issue);
  ctx.forge.state.changed();
  return { status: 201, body: ctx.forge.render.issue(issue) };
}

function removeAssignees(ctx: RequestContext): Reply {
  actor(ctx);
  const issue = issueParam(ctx);
  const names = new Set((optionalStringArray(ctx.body, "assignees", "Issue") ?? []).map((n) => n.toLowerCase()));
  issue.assignees = issue.assignees.filter((a) => !names.has(a.toLowerCase()));
  touch(issue);
  ctx.forge.state.changed();
  return { status: 200, body: ctx.forge.render.issue(issue) };
}

export function registerIssueRoutes(router: Router): void {
  router
    .add("GET", `${REPO}/issues`, listIssues, STATE_ONLY)
    .add("POST", `${REPO}/issues`, createIssue)
    .add("GET", `${REPO}/issues/{issue_number}`, getIssue, STATE_ONLY)
    .add("PATCH", `${REPO}/issues/{issue_number}`, updateIssue)
    .add("GET", `${REPO}/issues/{issue_number}/labels`, listIssueLabels, STATE_ONLY)
    .add("POST", `${REPO}/issues/{issue_number}/labels`, addIssueLabels)
    .add("PUT", `${REPO}/issues/{issue_number}/labels`, setIssueLabels)
    .add("DELETE", `${REPO}/issues/{issue_number}/labels`, clearIssueLabels)
    .add("DELETE", `${REPO}/issues/{issue_number}/labels/{name}`, removeIssueLabel)
    .add("POST", `${REPO}/issues/{issue_number}/assignees`, addAssignees)
    .add("DELETE", `${REPO}/issues/{issue_number}/assignees`, removeAssignees);
}
