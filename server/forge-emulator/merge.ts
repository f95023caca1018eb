// Landing pull requests, performed for real in the bare repository: `git merge-tree
// --write-tree` computes the result without a worktree, `git commit-tree` records it, and
// `git update-ref <base> <new> <old>` moves the base only if nobody moved it meanwhile.
// Answers follow GitHub: 409 when the pinned sha is not the head, 405 when not mergeable.
import { recordActivity } from "./activity.js";
import { HttpError, invalidField } from "./http-errors.js";
import { optionalString } from "./input.js";
import { checkOutcomes } from "./checks.js";
import type { ForgeEmulator } from "./core.js";
import { actor } from "./issues.js";
import { pullParam, type PullPair } from "./pulls.js";
import { markMerged, syncPulls } from "./pull-sync.js";
import { MERGE_QUEUE_REQUIRED, mergeQueueFor, requiredChecksFor } from "./protection.js";
import { approvalState, reviewRefusal } from "./reviews.js";
import type { Reply, RequestContext, Router } from "./router.js";

const PULL = "/repos/{owner}/{repo}/pulls/{pull_number}";
const METHODS = ["merge", "squash", "rebase"] as const;
const NOT_MERGEABLE = "Pull Request is not mergeable";
/** The committer GitHub records on merge commits it makes. */
const GITHUB_COMMITTER = { name: "GitHub", email: "noreply@github.com" };
/** Who the `base_moves_before_merge` fault pretends to be. */
const PEER = "forge-peer";

/** The one-shot fault: someone else's commit lands on `base` just before a merge. */
async function moveBase(forge: ForgeEmulator, base: string): Promise<void> {
  const ref = `refs/heads/${base}`;
  const old = await forge.git.readRef(ref);
  if (!old) return;
  const tree = await forge.git.treeOf(old);
  const path = `.forge/base-moved-${Date.now()}.md`;
  const newTree = await forge.git.treeWithFile(tree, path, `A commit by ${PEER} that landed on ${base} while a merge was pending.\n`, forge.tempIndex());
  const sig = forge.signature(PEER);
  const commit = await forge.git.commitTree(newTree, [old], `Concurrent change on ${base}`, sig, sig);
  if (await forge.git.casRef(ref, commit, old, "base_moves_before_merge fault")) await recordActivity(forge, { login: PEER }, ref, old, commit);
}

async function squashMessage(forge: ForgeEmulator, baseSha: string, headSha: string): Promise<string> {
  const r = await forge.git.run(["log", "--reverse", "--format=* %s", `${baseSha}..${headSha}`]);
  return r.stdout.trim();
}

/**
 * Why GitHub would refuse the merge because of the base branch's rules, or null. A merge queue
 * does not ask for an up-to-date head (`upToDate: false`): it tests the merge with the base.
 */
export async function protectionRefusal(
  forge: ForgeEmulator,
  pair: PullPair,
  headSha: string,
  baseSha: string,
  opts: { upToDate: boolean } = { upToDate: true },
): Promise<string | null> {
  const required = requiredChecksFor(forge, pair.pull.base);
  if (required.contexts.length > 0) {
    const outcomes = checkOutcomes(forge, headSha);
    for (const c of required.contexts) {
      const o = outcomes.get(c);
      if (o === undefined || o === "pending") return `Required status check "${c}" is expected.`;
      if (o === "failure") return `Required status check "${c}" is failing.`;
    }
  }
  if (opts.upToDate && required.strict && !(await forge.isAncestor(baseSha, headSha))) return "Head branch is not up to date with the base branch.";
  return reviewRefusal(approvalState(forge, pair, headSha));
}

async function mergePull(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const pair = pullParam(ctx);
  const { issue, pull } = pair;
  const methodRaw = optionalString(ctx.body, "merge_method", "PullRequest") ?? "merge";
  if (!(METHODS as readonly string[]).includes(methodRaw)) throw invalidField("PullRequest", "merge_method", methodRaw);
  const method = methodRaw as (typeof METHODS)[number];
  const sha = optionalString(ctx.body, "sha", "PullRequest");
  const title = optionalString(ctx.body, "commit_title", "PullRequest");
  const message = optionalString(ctx.body, "commit_message", "PullRequest");
  const { forge } = ctx;

  return forge.writeLock.run(async () => {
    if (issue.state !== "open") throw new HttpError(405, NOT_MERGEABLE);
    if (forge.faults.takeOnce("merge_405")) throw new HttpError(405, NOT_MERGEABLE);
    const headSha = await forge.git.readRef(`refs/heads/${pull.head}`);
    if (!headSha) throw new HttpError(405, NOT_MERGEABLE);
    if (sha !== undefined && sha !== headSha) throw new HttpError(409, "Head branch was modified. Review and try the merge again.");
    if (method === "rebase") throw new HttpError(405, "Rebase merges are not allowed on this repository.");
    if (pull.draft) throw new HttpError(405, "Pull Request is still a draft");
    // Rulesets here have no bypass actors, so nobody merges around a required queue.
    if (mergeQueueFor(forge, pull.base)) throw new HttpError(405, MERGE_QUEUE_REQUIRED);
    if (forge.faults.takeOnce("base_moves_before_merge")) await moveBase(forge, pull.base);

    const baseRef = `refs/heads/${pull.base}`;
    const baseSha = await forge.git.readRef(baseRef);
    if (!baseSha) throw new HttpError(422, `Base branch ${pull.base} does not exist`);
    const refusal = await protectionRefusal(forge, pair, headSha, baseSha);
    if (refusal) throw new HttpError(405, refusal);
    const merged = await forge.mergeTree(baseSha, headSha);
    if (!merged.clean) throw new HttpError(405, NOT_MERGEABLE);

    const n = issue.number;
    const subject = title ?? (method === "squash" ? `${issue.title} (#${n})` : `Merge pull request #${n} from ${forge.urls.owner}/${pull.head}`);
    const detail = message ?? (method === "squash" ? await squashMessage(forge, baseSha, headSha) : issue.title);
    const text = detail ? `${subject}\n\n${detail}` : subject;
    const parents = method === "squash" ? [baseSha] : [baseSha, headSha];
    const author = forge.signature(method === "squash" ? issue.author : user.login);
    const commit = await forge.git.commitTree(merged.tree, parents, text, author, { ...GITHUB_COMMITTER, date: author.date });
    if (!(await forge.git.casRef(baseRef, commit, baseSha, `merge pull request #${n}`))) {
      throw new HttpError(409, "Base branch was modified. Review and try the merge again.");
    }
    await recordActivity(forge, user, baseRef, baseSha, commit, "pr_merge");
    ctx.memo.invalidate();
    pull.headSha = headSha;
    markMerged(forge, issue, pull, { by: user.login, mergeCommitSha: commit, baseSha });
    forge.state.data.pushedAt = issue.closedAt ?? forge.state.data.pushedAt;
    // Other open PRs may now be contained in the base (e.g. one stacked on this one).
    await syncPulls(forge, user.login);
    return { status: 200, body: { sha: commit, merged: true, message: "Pull Request successfully merged" } };
  });
}

/** GitHub's words for a stale expected_head_sha; the errors entry names the field for clients. */
function headMoved(): HttpError {
  return new HttpError(422, "expected head sha didn’t match current head ref.", {
    errors: [{ resource: "PullRequest", field: "expected_head_sha", code: "invalid" }],
  });
}

function isMerged(ctx: RequestContext): Reply {
  const { pull } = pullParam(ctx);
  if (!pull.merged) throw new HttpError(404, "Not Found");
  return { status: 204 };
}

async function updateBranch(ctx: RequestContext): Promise<Reply> {
  const user = actor(ctx);
  const pair = pullParam(ctx);
  const { issue, pull } = pair;
  const expected = optionalString(ctx.body, "expected_head_sha", "PullRequest");
  const { forge } = ctx;
  return forge.writeLock.run(async () => {
    if (issue.state !== "open") throw new HttpError(422, "Cannot update a closed pull request.");
    const headRef = `refs/heads/${pull.head}`;
    const headSha = await forge.git.readRef(headRef);
    if (!headSha) throw new HttpError(422, "Head branch does not exist.");
    if (expected !== undefined && expected !== headSha) throw headMoved();
    const baseSha = await forge.git.readRef(`refs/heads/${pull.base}`);
    if (!baseSha) throw new HttpError(422, `Base branch ${pull.base} does not exist`);
    const accepted = { status: 202, body: { message: "Updating pull request branch.", url: `${forge.render.repoWeb}/pull/${issue.number}` } };
    // Already up to date: nothing to merge. (What GitHub answers here is unconfirmed; the
    // forge accepts, which is what a caller racing another updater needs.)
    if (await forge.isAncestor(baseSha, headSha)) return accepted;
    const merged = await forge.mergeTree(headSha, baseSha);
    if (!merged.clean) throw new HttpError(422, "merge conflict between base and head");
    const sig = forge.signature(user.login);
    const commit = await forge.git.commitTree(merged.tree, [headSha, baseSha], `Merge branch '${pull.base}' into ${pull.head}`, sig, {
      ...GITHUB_COMMITTER,
      date: sig.date,
    });
    if (!(await forge.git.casRef(headRef, commit, headSha, "update branch via API"))) {
      throw headMoved();
    }
    await recordActivity(forge, user, headRef, headSha, commit);
    ctx.memo.invalidate();
    await syncPulls(forge, user.login);
    return accepted;
  });
}

export function registerMergeRoutes(router: Router): void {
  router.add("PUT", `${PULL}/merge`, mergePull).add("GET", `${PULL}/merge`, isMerged).add("PUT", `${PULL}/update-branch`, updateBranch);
}
