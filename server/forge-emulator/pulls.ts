// Pull requests: create, list, read (with mergeability computed for real from the bare
// repository and the branch's required checks), update. Merging lives in merge.ts.
import { checkOutcomes } from "./checks.js";
import type { ForgeEmulator } from "./core.js";
import { HttpError, validationFailed } from "./http-errors.js";
import { nullableString, oneOf, optionalBoolean, optionalString, queryEnum, requiredString } from "./input.js";
import { actor, closeIssue, touch } from "./issues.js";
import { paginate } from "./paginate.js";
import { requiredChecksFor } from "./protection.js";
import { approvalState, reviewRefusal } from "./reviews.js";
import type { PullView } from "./render.js";
import type { Reply, RequestContext, Router } from "./router.js";
import { syncPullsIfStale } from "./pull-sync.js";
import { pullRequestEvent } from "./actions-events.js";
import { liveShas, pullParam, type PullPair } from "./pull-pair.js";
import { isoNow, type IssueRecord } from "./state.js";

export { pullParam, type PullPair } from "./pull-pair.js";

const REPO = "/repos/{owner}/{repo}";

/** GitHub's mergeable / mergeable_state for an open PR. */
export async function mergeability(
  forge: ForgeEmulator,
  pair: PullPair,
  headSha: string,
  baseSha: string,
): Promise<{ mergeable: boolean | null; state: string }> {
  const { issue, pull } = pair;
  if (issue.state !== "open") return { mergeable: null, state: "unknown" };
  const merge = await forge.mergeTree(baseSha, headSha);
  if (!merge.clean) return { mergeable: false, state: "dirty" };
  if (pull.draft) return { mergeable: true, state: "draft" };
  const required = requiredChecksFor(forge, pull.base);
  const outcomes = checkOutcomes(forge, headSha);
  if (required.contexts.some((c) => outcomes.get(c) !== "success")) return { mergeable: true, state: "blocked" };
  if (reviewRefusal(approvalState(forge, pair, headSha)) !== null) return { mergeable: true, state: "blocked" };
  if (required.strict && !(await forge.isAncestor(baseSha, headSha))) return { mergeable: true, state: "behind" };
  const requiredSet = new Set(required.contexts);
  for (const [name, o] of outcomes) {
    if (!requiredSet.has(name) && o !== "success") return { mergeable: true, state: "unstable" };
  }
  return { mergeable: true, state: "clean" };
}

async function fullView(forge: ForgeEmulator, pair: PullPair, tips: Map<string, string>): Promise<PullView> {
  const { headSha, baseSha } = liveShas(pair, tips);
  const [m, stats] = await Promise.all([mergeability(forge, pair, headSha, baseSha), forge.compare(baseSha, headSha)]);
  return { headSha, baseSha, mergeable: m.mergeable, mergeableState: m.state, ...stats };
}

function simpleView(pair: PullPair, tips: Map<string, string>): PullView {
  const { headSha, baseSha } = liveShas(pair, tips);
  return { headSha, baseSha, mergeable: null, mergeableState: "unknown", commits: 0, additions: 0, deletions: 0, changedFiles: 0 };
}

/** Branch tips for a read about pull requests, after catching up with unseen ref moves. */
async function freshTips(ctx: RequestContext): Promise<Map<string, string>> {
  const tips = await ctx.memo.branchTips();
  if (!(await syncPullsIfStale(ctx.forge, tips))) return tips;
  ctx.memo.invalidate();
  return ctx.memo.branchTips();
}

/**
 * The single-PR shape. `underLock`: the caller holds the write lock, so catching up with
 * unseen ref moves (which takes the lock) is skipped; the caller has just synced anyway.
 */
export async function renderFullPull(ctx: RequestContext, pair: PullPair, opts: { computeMergeable?: boolean; underLock?: boolean } = {}): Promise<unknown> {
  const computeMergeable = opts.computeMergeable ?? true;
  const tips = opts.underLock ? await ctx.memo.branchTips() : await freshTips(ctx);
  let view: PullView;
  if (computeMergeable) {
    view = await fullView(ctx.forge, pair, tips);
  } else {
    // Right after creation GitHub has not computed mergeability yet: null / "unknown".
    const { headSha, baseSha } = liveShas(pair, tips);
    view = { headSha, baseSha, mergeable: null, mergeableState: "unknown", ...(await ctx.forge.compare(baseSha, headSha)) };
  }
  return ctx.forge.render.pull(pair.issue, pair.pull, view, true);
}

/** "owner:branch" or "branch" -> branch, for this repository only (no forks here). */
function headBranch(ctx: RequestContext, head: string): string | null {
  const i = head.indexOf(":");
  if (i < 0) return head;
  return head.slice(0, i).toLowerCase() === ctx.forge.urls.owner.toLowerCase() ? head.slice(i + 1) : null;
}

async function listPulls(ctx: RequestContext): Promise<Reply> {
  const state = queryEnum(ctx.query, "state", ["open", "closed", "all"] as const, "open");
  const sort = queryEnum(ctx.query, "sort", ["created", "updated", "popularity", "long-running"] as const, "created");
  const direction = queryEnum(ctx.query, "direction", ["asc", "desc"] as const, sort === "created" ? "desc" : "asc");
  const head = ctx.query.get("head");
  const base = ctx.query.get("base");
  const headName = head ? headBranch(ctx, head) : undefined;
  await freshTips(ctx);
  const pairs: PullPair[] = [];
  for (const issue of ctx.forge.state.issues()) {
    if (!issue.pull) continue;
    if (state !== "all" && issue.state !== state) continue;
    if (headName !== undefined && issue.pull.head !== headName) continue;
    if (base && issue.pull.base !== base) continue;
    pairs.push({ issue, pull: issue.pull });
  }
  const key = (p: PullPair): string => (sort === "updated" ? p.issue.updatedAt : p.issue.createdAt);
  const sign = direction === "asc" ? 1 : -1;
  pairs.sort((a, b) => sign * (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.issue.number - b.issue.number));
  const page = paginate(ctx, pairs);
  const tips = await ctx.memo.branchTips();
  return {
    status: 200,
    body: page.items.map((p) => ctx.forge.render.pull(p.issue, p.pull, simpleView(p, tips), false)),
    headers: page.headers,
  };
}

async function createPull(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const title = requiredString(ctx.body, "title", "PullRequest");
  const headSpec = requiredString(ctx.body, "head", "PullRequest");
  const base = requiredString(ctx.body, "base", "PullRequest");
  const body = nullableString(ctx.body, "body", "PullRequest") ?? null;
  const draft = optionalBoolean(ctx.body, "draft", "PullRequest") ?? false;
  if (title.trim() === "") throw validationFailed([{ resource: "PullRequest", field: "title", code: "missing_field" }]);
  const head = headBranch(ctx, headSpec);
  const { forge } = ctx;
  return forge.writeLock.run(async () => {
    const tips = await forge.git.branchTips();
    const headSha = head === null ? undefined : tips.get(head);
    const baseSha = tips.get(base);
    if (head === null || headSha === undefined) throw validationFailed([{ resource: "PullRequest", field: "head", code: "invalid" }]);
    if (baseSha === undefined) throw validationFailed([{ resource: "PullRequest", field: "base", code: "invalid" }]);
    const label = `${forge.urls.owner}:${head}`;
    const dup = forge.state.issues().some((i) => i.pull && i.state === "open" && i.pull.head === head && i.pull.base === base);
    if (dup) throw validationFailed([{ resource: "PullRequest", code: "custom", message: `A pull request already exists for ${label}.` }]);
    if (head === base || (await forge.isAncestor(headSha, baseSha))) {
      throw validationFailed([{ resource: "PullRequest", code: "custom", message: `No commits between ${base} and ${head}` }]);
    }
    const now = isoNow();
    const issue: IssueRecord = {
      number: forge.state.allocNumber(),
      id: forge.state.nextId(),
      title,
      body,
      state: "open",
      stateReason: null,
      labels: [],
      assignees: [],
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
      pull: {
        id: forge.state.nextId(),
        head,
        headSha,
        base,
        baseSha,
        draft,
        merged: false,
        mergedAt: null,
        mergedBy: null,
        mergeCommitSha: null,
      },
    };
    forge.state.addIssue(issue);
    await pullRequestEvent(forge, issue, "opened");
    const rendered = (await renderFullPull(ctx, { issue, pull: issue.pull! }, { computeMergeable: false, underLock: true })) as { url: string };
    return { status: 201, body: rendered, headers: { location: rendered.url } };
  });
}

async function getPull(ctx: RequestContext): Promise<Reply> {
  return { status: 200, body: await renderFullPull(ctx, pullParam(ctx)) };
}

async function updatePull(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const pair = pullParam(ctx);
  const { issue, pull } = pair;
  const title = optionalString(ctx.body, "title", "PullRequest");
  const body = nullableString(ctx.body, "body", "PullRequest");
  const state = oneOf(optionalString(ctx.body, "state", "PullRequest"), ["open", "closed"] as const, "PullRequest", "state");
  const base = optionalString(ctx.body, "base", "PullRequest");
  const { forge } = ctx;
  return forge.writeLock.run(async () => {
    const tips = await forge.git.branchTips();
    if (base !== undefined && base !== pull.base) {
      if (issue.state !== "open") throw new HttpError(422, "Cannot change the base branch of a closed pull request.");
      if (!tips.has(base)) throw validationFailed([{ resource: "PullRequest", field: "base", code: "invalid" }]);
      pull.base = base;
    }
    if (title !== undefined) {
      if (title.trim() === "") throw validationFailed([{ resource: "PullRequest", field: "title", code: "missing_field" }]);
      issue.title = title;
    }
    if (body !== undefined) issue.body = body;
    if (state === "closed" && issue.state === "open") {
      const live = liveShas(pair, tips);
      pull.headSha = live.headSha;
      pull.baseSha = live.baseSha;
      closeIssue(forge, issue, user.login, "completed");
    } else if (state === "open" && issue.state === "closed") {
      if (pull.merged) throw new HttpError(422, "Cannot reopen a merged pull request.");
      const headSha = tips.get(pull.head);
      if (!headSha) throw new HttpError(422, "Cannot reopen: the head branch was deleted.");
      issue.state = "open";
      issue.closedAt = null;
      issue.closedBy = null;
      pull.headSha = headSha;
      await pullRequestEvent(forge, issue, "reopened");
    }
    touch(issue);
    forge.state.changed();
    ctx.memo.invalidate();
    return { status: 200, body: await renderFullPull(ctx, pair, { underLock: true }) };
  });
}

export function registerPullRoutes(router: Router): void {
  router
    .add("GET", `${REPO}/pulls`, listPulls)
    .add("POST", `${REPO}/pulls`, createPull)
    .add("GET", `${REPO}/pulls/{pull_number}`, getPull)
    .add("PATCH", `${REPO}/pulls/{pull_number}`, updatePull);
}
