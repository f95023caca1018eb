// Pull request reviews: create and list, and what they mean for a merge. As on GitHub, nobody
// may approve (or request changes on) their own pull request, a reviewer's latest approve or
// request-changes review is the one that counts, and a branch that requires approvals refuses
// the merge until enough reviewers with write access approved and none still asks for changes.
import type { ForgeEmulator } from "./core.js";
import { HttpError } from "./http-errors.js";
import { optionalString } from "./input.js";
import { actor } from "./issues.js";
import { paginate } from "./paginate.js";
import { requiredReviewsFor } from "./protection.js";
import { pullParam, type PullPair } from "./pull-pair.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { isoNow, type ReviewRecord, type ReviewState } from "./state.js";

const REVIEWS = "/repos/{owner}/{repo}/pulls/{pull_number}/reviews";
const EVENTS: Record<string, ReviewState> = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" };

export interface ApprovalState {
  /** Approvals the base branch requires (0: none). */
  required: number;
  /** Logins whose latest review approves (at the head, when stale approvals are dismissed). */
  approvedBy: string[];
  /** Logins whose latest review requests changes. */
  changesRequestedBy: string[];
}

/** The reviews' verdict on a pull request at `headSha`, against its base branch's rules. */
export function approvalState(forge: ForgeEmulator, pair: PullPair, headSha: string): ApprovalState {
  const rules = requiredReviewsFor(forge, pair.pull.base);
  const latest = new Map<string, ReviewRecord>();
  for (const r of forge.state.reviewsFor(pair.issue.number)) {
    if (r.state !== "APPROVED" && r.state !== "CHANGES_REQUESTED" && r.state !== "DISMISSED") continue;
    // Only reviewers with write access count: every forge user has it, strangers do not exist.
    if (!forge.state.user(r.author)) continue;
    latest.set(r.author.toLowerCase(), r);
  }
  const approvedBy: string[] = [];
  const changesRequestedBy: string[] = [];
  for (const r of latest.values()) {
    if (r.state === "APPROVED" && (!rules.dismissStale || r.commitId === headSha)) approvedBy.push(r.author);
    if (r.state === "CHANGES_REQUESTED") changesRequestedBy.push(r.author);
  }
  return { required: rules.count, approvedBy: approvedBy.sort(), changesRequestedBy: changesRequestedBy.sort() };
}

/** GitHub's 405 text when reviews block a merge, or null when they do not. */
export function reviewRefusal(state: ApprovalState): string | null {
  if (state.required === 0) return null;
  if (state.changesRequestedBy.length > 0) return "Changes were requested by a reviewer with write access.";
  if (state.approvedBy.length < state.required) {
    const n = state.required;
    return `At least ${n} approving review${n === 1 ? " is" : "s are"} required by reviewers with write access.`;
  }
  return null;
}

async function createReview(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const pair = pullParam(ctx);
  const eventRaw = optionalString(ctx.body, "event", "PullRequestReview");
  const body = optionalString(ctx.body, "body", "PullRequestReview") ?? "";
  const commitId = optionalString(ctx.body, "commit_id", "PullRequestReview");
  // GitHub answers review input errors with the simple validation shape: a list of sentences.
  const refuse = (sentence: string): HttpError => new HttpError(422, "Unprocessable Entity", { errors: [sentence] });
  if (eventRaw !== undefined && !Object.hasOwn(EVENTS, eventRaw))
    throw refuse(`event must be one of APPROVE, REQUEST_CHANGES, COMMENT (got ${JSON.stringify(eventRaw)})`);
  const state: ReviewState = eventRaw === undefined ? "PENDING" : EVENTS[eventRaw]!;
  const own = user.login.toLowerCase() === pair.issue.author.toLowerCase();
  if (own && state === "APPROVED") throw refuse("Can not approve your own pull request");
  if (own && state === "CHANGES_REQUESTED") throw refuse("Can not request changes on your own pull request");
  if ((state === "CHANGES_REQUESTED" || state === "COMMENTED") && body.trim() === "") throw refuse(`Body is required when the event is ${eventRaw}`);
  const { forge } = ctx;
  return forge.writeLock.run(async () => {
    const head = (await ctx.memo.branchTips()).get(pair.pull.head) ?? pair.pull.headSha;
    if (commitId !== undefined && !/^[0-9a-f]{40}$/.test(commitId)) throw refuse("commit_id must be a full commit sha");
    const review: ReviewRecord = {
      id: forge.state.nextId(),
      pull: pair.issue.number,
      author: user.login,
      state,
      body,
      commitId: commitId ?? head,
      submittedAt: state === "PENDING" ? null : isoNow(),
    };
    forge.state.addReview(review);
    ctx.memo.invalidate();
    return { status: 200, body: forge.render.review(review) };
  });
}

function listReviews(ctx: RequestContext): Reply {
  const viewer = ctx.user?.login.toLowerCase() ?? null;
  const pair = pullParam(ctx);
  // A pending review is a draft: only its author sees it.
  const visible = ctx.forge.state.reviewsFor(pair.issue.number).filter((r) => r.state !== "PENDING" || r.author.toLowerCase() === viewer);
  const page = paginate(ctx, [...visible]);
  return { status: 200, body: page.items.map((r) => ctx.forge.render.review(r)), headers: page.headers };
}

export function registerReviewRoutes(router: Router): void {
  router.add("GET", REVIEWS, listReviews).add("POST", REVIEWS, createReview);
}
