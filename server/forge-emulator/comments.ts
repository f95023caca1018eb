// Issue comments (pull request conversation comments are issue comments too).
import { notFound, validationFailed } from "./http-errors.js";
import { queryEnum, requiredString } from "./input.js";
import { actor, issueParam, touch } from "./issues.js";
import { paginate } from "./paginate.js";
import { STATE_ONLY, type Reply, type RequestContext, type Router } from "./router.js";
import { isoNow, type CommentRecord } from "./state.js";

const REPO = "/repos/{owner}/{repo}";

function commentParam(ctx: RequestContext): CommentRecord {
  const c = ctx.forge.state.comment(Number(ctx.params.comment_id));
  if (!c) throw notFound();
  return c;
}

function sinceFilter(ctx: RequestContext): (c: CommentRecord) => boolean {
  const since = ctx.query.get("since");
  const ms = since ? Date.parse(since) : Number.NaN;
  return (c) => Number.isNaN(ms) || Date.parse(c.updatedAt) >= ms;
}

function listComments(ctx: RequestContext): Reply {
  const issue = issueParam(ctx);
  const page = paginate(ctx, ctx.forge.state.commentsFor(issue.number).filter(sinceFilter(ctx)));
  return { status: 200, body: page.items.map((c) => ctx.forge.render.comment(c)), headers: page.headers };
}

function listRepoComments(ctx: RequestContext): Reply {
  const sort = queryEnum(ctx.query, "sort", ["created", "updated"] as const, "created");
  const direction = queryEnum(ctx.query, "direction", ["asc", "desc"] as const, "asc");
  const all = ctx.forge.state.allComments().filter(sinceFilter(ctx));
  const key = (c: CommentRecord): string => (sort === "created" ? c.createdAt : c.updatedAt);
  const sorted = [...all].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id) * (direction === "asc" ? 1 : -1));
  const page = paginate(ctx, sorted);
  return { status: 200, body: page.items.map((c) => ctx.forge.render.comment(c)), headers: page.headers };
}

function bodyOf(ctx: RequestContext): string {
  const body = requiredString(ctx.body, "body", "IssueComment");
  if (body.trim() === "") throw validationFailed([{ resource: "IssueComment", field: "body", code: "missing_field" }]);
  return body;
}

function createComment(ctx: RequestContext): Reply {
  const user = actor(ctx);
  const issue = issueParam(ctx);
  const body = bodyOf(ctx);
  const now = isoNow();
  const c: CommentRecord = { id: ctx.forge.state.nextId(), issue: issue.number, body, author: user.login, createdAt: now, updatedAt: now };
  ctx.forge.state.addComment(c);
  touch(issue);
  const rendered = ctx.forge.render.comment(c);
  return { status: 201, body: rendered, headers: { location: String(rendered.url) } };
}

function getComment(ctx: RequestContext): Reply {
  return { status: 200, body: ctx.forge.render.comment(commentParam(ctx)) };
}

function updateComment(ctx: RequestContext): Reply {
  actor(ctx);
  const c = commentParam(ctx);
  c.body = bodyOf(ctx);
  c.updatedAt = isoNow();
  ctx.forge.state.changed();
  return { status: 200, body: ctx.forge.render.comment(c) };
}

function deleteComment(ctx: RequestContext): Reply {
  actor(ctx);
  ctx.forge.state.deleteComment(commentParam(ctx));
  return { status: 204 };
}

export function registerCommentRoutes(router: Router): void {
  // The literal "comments" routes come first: "/issues/comments" must not read as issue "comments".
  router
    .add("GET", `${REPO}/issues/comments`, listRepoComments, STATE_ONLY)
    .add("GET", `${REPO}/issues/comments/{comment_id}`, getComment, STATE_ONLY)
    .add("PATCH", `${REPO}/issues/comments/{comment_id}`, updateComment)
    .add("DELETE", `${REPO}/issues/comments/{comment_id}`, deleteComment)
    .add("GET", `${REPO}/issues/{issue_number}/comments`, listComments, STATE_ONLY)
    .add("POST", `${REPO}/issues/{issue_number}/comments`, createComment);
}
