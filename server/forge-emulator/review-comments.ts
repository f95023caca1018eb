// Pull request review comments: the line comments a reviewer leaves on a path and line of the
// diff. Created one at a time (as GitHub's single-comment form of the endpoint) and listed
// oldest first, paged; the fleet reads them for the brief of an attempt a reviewer sent back.
import { HttpError } from "./http-errors.js";
import { optionalString, requiredInteger, requiredString } from "./input.js";
import { actor } from "./issues.js";
import { paginate } from "./paginate.js";
import { pullParam } from "./pull-pair.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { isoNow, type ReviewCommentRecord } from "./state.js";
import type { ForgeEmulator } from "./core.js";

const COMMENTS = "/repos/{owner}/{repo}/pulls/{pull_number}/comments";

function render(forge: ForgeEmulator, c: ReviewCommentRecord): Record<string, unknown> {
  const api = forge.render.repoApi;
  const html = `${forge.render.repoWeb}/pull/${c.pull}#discussion_r${c.id}`;
  const self = `${api}/pulls/comments/${c.id}`;
  return {
    url: self,
    pull_request_review_id: null,
    id: c.id,
    node_id: `PRRC_${c.id}`,
    diff_hunk: "",
    path: c.path,
    position: c.line,
    original_position: c.line,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    user: forge.render.user(c.author),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    html_url: html,
    pull_request_url: `${api}/pulls/${c.pull}`,
    author_association: forge.render.association(c.author),
    _links: { self: { href: self }, html: { href: html }, pull_request: { href: `${api}/pulls/${c.pull}` } },
    line: c.line,
    original_line: c.line,
    side: "RIGHT",
    subject_type: "line",
  };
}

async function createReviewComment(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const pair = pullParam(ctx);
  const body = requiredString(ctx.body, "body", "PullRequestReviewComment");
  const path = requiredString(ctx.body, "path", "PullRequestReviewComment");
  const line = requiredInteger(ctx.body, "line", "PullRequestReviewComment");
  const commitId = optionalString(ctx.body, "commit_id", "PullRequestReviewComment");
  if (line < 1) throw new HttpError(422, "Unprocessable Entity", { errors: ["line must be a positive line number"] });
  const { forge } = ctx;
  return forge.writeLock.run(async () => {
    const head = (await ctx.memo.branchTips()).get(pair.pull.head) ?? pair.pull.headSha;
    const record: ReviewCommentRecord = {
      id: forge.state.nextId(),
      pull: pair.issue.number,
      author: user.login,
      body,
      path,
      line,
      commitId: commitId ?? head,
      createdAt: isoNow(),
    };
    forge.state.addReviewComment(record);
    ctx.memo.invalidate();
    return { status: 201, body: render(forge, record) };
  });
}

function listReviewComments(ctx: RequestContext): Reply {
  const pair = pullParam(ctx);
  const page = paginate(ctx, [...ctx.forge.state.reviewCommentsFor(pair.issue.number)]);
  return { status: 200, body: page.items.map((c) => render(ctx.forge, c)), headers: page.headers };
}

export function registerReviewCommentRoutes(router: Router): void {
  router.add("GET", COMMENTS, listReviewComments).add("POST", COMMENTS, createReviewComment);
}
