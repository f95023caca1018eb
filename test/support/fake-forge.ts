// An in-memory Forge (server/gh/forge.ts) for tests, held to the local forge by the contract suite
// (test/contract-forge.test.ts): the same listing orders, the same typed refusals (404, 405 not
// mergeable, 409 head moved, 422), merges pinned to a head sha and made as commits on an
// in-memory repository shared with the fake RefStore. `state` is the test's hands (open issues,
// push branches, post checks): what a test does through REST and git on the local forge.
//
// Not modelled (docs/architecture.md, "Fakes and the contract suite"): rulesets and the merge
// queue (enqueuePull refuses), pagination, ETags and rate limits (rateLimit counts calls only),
// faults, forks, assignees and milestones, the "unstable" mergeable state.
import { ForgeError, UsageError } from "../../server/gh/errors.js";
import type {
  Checks,
  Comment,
  DirectPush,
  Forge,
  Issue,
  IssueLink,
  Label,
  MergeRequest,
  MergeResult,
  PullDetail,
  PullRequest,
  PullReview,
  QueueStatus,
  RateLimit,
  RepoInfo,
  RepoSlug,
  RequiredChecks,
  ReviewComment,
} from "../../server/gh/forge.js";
import { runsSettleNotGreen } from "../../server/state/gate.js";
import { FakeForgeState, type FakeForgeOptions, type FakeIssue, type FakePull } from "./fake-forge-state.js";

export type { FakeForgeOptions } from "./fake-forge-state.js";

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const NOT_MERGEABLE = "Pull Request is not mergeable";
const NO_RULE: RequiredChecks = { contexts: [], strict: false, source: "none", readable: true, approvals: 0, dismissStaleApprovals: false };

const notFound = (what: string): ForgeError => new ForgeError("not_found", `${what}: Not Found`, 404, "check the number");
const invalid = (what: string): ForgeError => new ForgeError("validation", `${what}: Validation Failed`, 422, "");
const refused = (what: string, why: string): ForgeError => new ForgeError("not_mergeable", `${what}: ${why}`, 405, "");
const moved = (what: string, why: string, status = 409): ForgeError =>
  new ForgeError("conflict", `${what}: ${why}`, status, "the head moved since it was read: re-read the pull request");

export class FakeForge implements Forge {
  readonly repo: RepoSlug;
  readonly state: FakeForgeState;
  /** Calls made through the port, by method name. */
  readonly calls = new Map<string, number>();

  constructor(options: FakeForgeOptions = {}) {
    this.state = new FakeForgeState(options);
    const [owner = "", name = ""] = this.state.slug.split("/");
    this.repo = { owner, name };
  }

  async whoami(): Promise<string> {
    return this.count("whoami", this.state.login);
  }

  async repoInfo(): Promise<RepoInfo> {
    const web = `https://github.com/${this.state.slug}`;
    return this.count("repoInfo", {
      fullName: this.state.slug,
      defaultBranch: "main",
      cloneUrl: `${web}.git`,
      htmlUrl: web,
      private: false,
      permissions: { admin: true, push: true, pull: true, maintain: true },
      allowSquashMerge: true,
      allowMergeCommit: true,
      allowRebaseMerge: false,
    });
  }

  rateLimit(): RateLimit | null {
    let used = 0;
    for (const n of this.calls.values()) used += n;
    return { limit: 5000, remaining: Math.max(0, 5000 - used), reset: 0, used };
  }

  async listOpenIssues(): Promise<Issue[]> {
    const open = [...this.state.issues.values()].filter((i) => i.state === "open" && i.pull === null);
    return this.count(
      "listOpenIssues",
      newestFirst(open).map((i) => this.issue(i)),
    );
  }

  async getIssue(number: number): Promise<Issue> {
    return this.count("getIssue", this.issue(this.find(number, `read issue #${number}`)));
  }

  async listBlockedBy(number: number): Promise<IssueLink[]> {
    return this.count(
      "listBlockedBy",
      this.find(number, `list the issues blocking #${number}`).blockedBy.map((n) => this.link(n)),
    );
  }

  async listSubIssues(number: number): Promise<IssueLink[]> {
    return this.count(
      "listSubIssues",
      this.find(number, `list the sub-issues of #${number}`).subIssues.map((n) => this.link(n)),
    );
  }

  async closeIssue(number: number, reason: "completed" | "not_planned"): Promise<void> {
    const issue = this.find(number, `close issue #${number}`);
    if (issue.state === "open") issue.closedAt = this.state.now();
    Object.assign(issue, { state: "closed", stateReason: reason, updatedAt: this.state.now() });
    this.count("closeIssue", null);
  }

  async listLabels(): Promise<Label[]> {
    return this.count(
      "listLabels",
      this.state.labels.map((l) => ({ ...l })),
    );
  }

  async ensureLabel(label: Label): Promise<void> {
    if (!this.state.label(label.name)) this.state.labels.push({ name: label.name, color: label.color.replace(/^#/, ""), description: label.description });
    this.count("ensureLabel", null);
  }

  async addLabels(number: number, labels: string[]): Promise<void> {
    if (labels.length === 0) return;
    const issue = this.find(number, `label issue #${number}`);
    if (labels.some((name) => name.trim() === "")) throw invalid(`label issue #${number}`);
    for (const name of labels) {
      const label = this.state.labelMade(name);
      if (!issue.labels.some((n) => n.toLowerCase() === label.name.toLowerCase())) issue.labels.push(label.name);
    }
    issue.updatedAt = this.state.now();
    this.count("addLabels", null);
  }

  async removeLabel(number: number, label: string): Promise<void> {
    const issue = this.state.issues.get(number);
    this.count("removeLabel", null);
    // Not there (the label, or the issue): GitHub's 404, which the port swallows.
    if (!issue || !issue.labels.some((n) => n.toLowerCase() === label.toLowerCase())) return;
    issue.labels = issue.labels.filter((n) => n.toLowerCase() !== label.toLowerCase());
    issue.updatedAt = this.state.now();
  }

  async listComments(number: number): Promise<Comment[]> {
    this.find(number, `list the comments of #${number}`);
    return this.count(
      "listComments",
      this.state.comments.filter((c) => c.issue === number).map(({ issue: _issue, ...c }) => c),
    );
  }

  async createComment(number: number, body: string): Promise<Comment> {
    const issue = this.find(number, `comment on #${number}`);
    const now = this.state.now();
    const id = this.state.nextId();
    const comment = {
      id,
      body,
      author: this.state.login,
      createdAt: now,
      updatedAt: now,
      htmlUrl: `${this.state.htmlUrl("issues", number)}#issuecomment-${id}`,
    };
    this.state.comments.push({ ...comment, issue: number });
    issue.updatedAt = now;
    return this.count("createComment", { ...comment });
  }

  async updateComment(commentId: number, body: string): Promise<Comment> {
    const comment = this.state.comments.find((c) => c.id === commentId);
    if (!comment) throw notFound(`update comment ${commentId}`);
    Object.assign(comment, { body, updatedAt: this.state.now() });
    const { issue: _issue, ...out } = comment;
    return this.count("updateComment", out);
  }

  async listOpenPulls(): Promise<PullRequest[]> {
    const open = [...this.state.issues.values()].filter((i) => i.state === "open" && i.pull !== null);
    return this.count(
      "listOpenPulls",
      newestFirst(open).map((i) => this.pull(i)),
    );
  }

  async listRecentlyClosedPulls(): Promise<Array<PullRequest & { mergedAt: string | null }>> {
    const closed = [...this.state.issues.values()].filter((i) => i.state === "closed" && i.pull !== null);
    closed.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : b.number - a.number));
    return this.count(
      "listRecentlyClosedPulls",
      closed.slice(0, 100).map((i) => ({ ...this.pull(i), mergedAt: i.pull?.mergedAt ?? null })),
    );
  }

  async getPull(number: number): Promise<PullDetail> {
    const issue = this.findPull(number, `read pull request #${number}`);
    const pull = issue.pull as FakePull;
    const { mergeable, state } = issue.state === "open" ? this.mergeability(issue, pull) : { mergeable: null, state: "unknown" };
    return this.count("getPull", { ...this.pull(issue), mergeable, mergeableState: state, mergeCommitSha: pull.mergeCommitSha });
  }

  async createPull(input: { title: string; body: string; head: string; base: string; draft?: boolean }): Promise<PullRequest> {
    const what = `open a pull request from ${input.head} into ${input.base}`;
    const head = input.head.includes(":") ? input.head.slice(input.head.indexOf(":") + 1) : input.head;
    const [headSha, baseSha] = [this.state.tip(head), this.state.tip(input.base)];
    if (input.title.trim() === "" || headSha === null || baseSha === null) throw invalid(what);
    const dup = [...this.state.issues.values()].some((i) => i.state === "open" && i.pull?.head === head && i.pull.base === input.base);
    if (dup || head === input.base || this.state.git.isAncestor(headSha, baseSha)) throw invalid(what);
    const number = this.state.openIssue({ title: input.title, body: input.body });
    const issue = this.state.must(number);
    issue.pull = { head, base: input.base, draft: input.draft ?? false, merged: false, mergedAt: null, mergeCommitSha: null, headSha, baseSha };
    return this.count("createPull", this.pull(issue));
  }

  async mergePull(number: number, request: MergeRequest): Promise<MergeResult> {
    if (!SHA.test(request.sha)) throw new UsageError(`merge #${number}: the head sha ${JSON.stringify(request.sha)} is not a full commit sha`);
    const what = `merge pull request #${number} at ${request.sha.slice(0, 12)}`;
    const issue = this.findPull(number, what);
    const pull = issue.pull as FakePull;
    const headSha = this.state.tip(pull.head);
    if (issue.state !== "open" || headSha === null) throw refused(what, NOT_MERGEABLE);
    if (request.sha !== headSha) throw moved(what, "Head branch was modified. Review and try the merge again.");
    if (request.method === "rebase") throw refused(what, "Rebase merges are not allowed on this repository.");
    if (pull.draft) throw refused(what, "Pull Request is still a draft");
    const baseRef = `refs/heads/${pull.base}`;
    const baseSha = this.state.git.read(baseRef);
    if (baseSha === null) throw invalid(what);
    const refusal = this.protectionRefusal(pull.base, headSha, baseSha);
    if (refusal) throw refused(what, refusal);
    const tree = this.state.git.mergeTrees(baseSha, headSha);
    if (!tree) throw refused(what, NOT_MERGEABLE);
    const subject = request.title ?? (request.method === "squash" ? `${issue.title} (#${number})` : `Merge pull request #${number} from ${pull.head}`);
    const text = request.message ? `${subject}\n\n${request.message}` : subject;
    const commit = this.state.git.commit(request.method === "squash" ? [baseSha] : [baseSha, headSha], tree, text);
    if (!this.state.git.cas(baseRef, baseSha, commit)) throw moved(what, "Base branch was modified. Review and try the merge again.");
    const now = this.state.now();
    Object.assign(pull, { merged: true, mergedAt: now, mergeCommitSha: commit, headSha, baseSha });
    Object.assign(issue, { state: "closed", closedAt: now, updatedAt: now });
    return this.count("mergePull", { merged: true, sha: commit, message: "Pull Request successfully merged" });
  }

  async closePull(number: number, body?: string): Promise<void> {
    const issue = this.findPull(number, `close pull request #${number}`);
    const pull = issue.pull as FakePull;
    if (issue.state === "open") {
      pull.headSha = this.state.tip(pull.head) ?? pull.headSha;
      pull.baseSha = this.state.tip(pull.base) ?? pull.baseSha;
      issue.closedAt = this.state.now();
    }
    Object.assign(issue, { state: "closed", updatedAt: this.state.now(), ...(body !== undefined ? { body } : {}) });
    this.count("closePull", null);
  }

  async updatePullBranch(number: number, expectedHeadSha: string): Promise<void> {
    const what = `update the branch of pull request #${number}`;
    const issue = this.findPull(number, what);
    const pull = issue.pull as FakePull;
    const headRef = `refs/heads/${pull.head}`;
    const [headSha, baseSha] = [this.state.git.read(headRef), this.state.tip(pull.base)];
    if (issue.state !== "open" || headSha === null || baseSha === null) throw invalid(what);
    if (expectedHeadSha !== headSha) throw moved(what, "expected head sha didn’t match current head ref.", 422);
    this.count("updatePullBranch", null);
    if (this.state.git.isAncestor(baseSha, headSha)) return;
    const tree = this.state.git.mergeTrees(headSha, baseSha);
    if (!tree) throw invalid(what);
    const commit = this.state.git.commit([headSha, baseSha], tree, `Merge branch '${pull.base}' into ${pull.head}`);
    if (!this.state.git.cas(headRef, headSha, commit)) throw moved(what, "expected head sha didn’t match current head ref.", 422);
  }

  async listReviewComments(number: number): Promise<ReviewComment[]> {
    this.findPull(number, `list the review comments of pull request #${number}`);
    return this.count("listReviewComments", [...(this.state.reviewComments.get(number) ?? [])]);
  }

  async listReviews(number: number): Promise<PullReview[]> {
    this.findPull(number, `list the reviews of pull request #${number}`);
    return this.count("listReviews", [...(this.state.reviews.get(number) ?? [])]);
  }

  async createReview(number: number, input: { event: "COMMENT" | "APPROVE" | "REQUEST_CHANGES"; body: string; commitId?: string }): Promise<PullReview> {
    const what = `review pull request #${number}`;
    const issue = this.findPull(number, what);
    // GitHub refuses approving (or requesting changes on) one's own pull request.
    if (input.event !== "COMMENT" && issue.author === this.state.login) throw invalid(what);
    const state = input.event === "COMMENT" ? "COMMENTED" : input.event === "APPROVE" ? "APPROVED" : "CHANGES_REQUESTED";
    const commitId = input.commitId ?? this.state.tip((issue.pull as FakePull).head);
    const review: PullReview = {
      id: this.state.nextId(),
      author: this.state.login,
      association: "OWNER",
      state,
      body: input.body,
      commitId,
      submittedAt: this.state.now(),
    };
    this.state.reviews.set(number, [...(this.state.reviews.get(number) ?? []), review]);
    return this.count("createReview", { ...review });
  }

  async queueStatus(number: number): Promise<QueueStatus> {
    const issue = this.findPull(number, `read the merge queue entry of #${number}`);
    const pull = issue.pull as FakePull;
    const state = pull.merged ? "MERGED" : issue.state === "open" ? "OPEN" : "CLOSED";
    return this.count("queueStatus", { state, head: this.state.tip(pull.head) ?? pull.headSha, entry: null, lastEvent: null });
  }

  async enqueuePull(number: number): Promise<QueueStatus["entry"]> {
    this.findPull(number, `enqueue #${number}`);
    throw new ForgeError("validation", `enqueue #${number}: the fake forge models no merge queue (use the local forge for one)`, 422, "");
  }

  async checksFor(sha: string, gate?: RequiredChecks): Promise<Checks> {
    if (!SHA.test(sha)) throw new UsageError(`checks: ${JSON.stringify(sha)} is not a full commit sha`);
    // Every run, newest first, as GitHub's `filter=all` lists them (re-runs too: the gate keeps the newest per name).
    const checkRuns = [...(this.state.checkRuns.get(sha) ?? [])].reverse().map((r) => ({ ...r }));
    // Newest first; all of them (the gate keeps the latest per context).
    const statuses = [...(this.state.statuses.get(sha) ?? [])].reverse();
    return this.count("checksFor", { sha, checkRuns, statuses: gate && runsSettleNotGreen(checkRuns, gate) ? [] : statuses });
  }

  async rerunFailedJobs(checkRunIds: readonly number[], maxAttempt: number): Promise<{ rerun: number[]; exhausted: number[] }> {
    const suites = new Set<number>();
    const exhausted = new Set<number>();
    for (const id of checkRunIds) {
      const runs = [...this.state.checkRuns.values()].find((list) => list.some((r) => r.id === id));
      const run = runs?.find((r) => r.id === id);
      if (!runs || !run || run.app !== "github-actions") throw notFound(`read the Actions job ${id}`);
      // The run's attempt: its runs of this name so far.
      const attempt = runs.filter((r) => r.name === run.name && r.suiteId === run.suiteId).length;
      (attempt >= maxAttempt ? exhausted : suites).add(run.suiteId!);
    }
    for (const suite of exhausted) suites.delete(suite);
    // Each run's failed jobs start again: a queued run of the same name in the same suite.
    for (const [sha, list] of this.state.checkRuns) {
      const failed = latestByName(list, (r) => r.name).filter((r) => suites.has(r.suiteId ?? -1) && r.status === "completed" && r.conclusion !== "success");
      for (const r of failed)
        this.state.checkRuns.set(sha, [...this.state.checkRuns.get(sha)!, { ...r, id: this.state.nextId(), status: "queued", conclusion: null }]);
    }
    return this.count("rerunFailedJobs", { rerun: [...suites], exhausted: [...exhausted] });
  }

  async requiredChecks(branch: string): Promise<RequiredChecks> {
    return this.count("requiredChecks", { ...(this.state.protection.get(branch) ?? NO_RULE) });
  }

  async directPush(branch: string): Promise<DirectPush> {
    const rule = this.state.protection.get(branch);
    const reviews = (rule?.approvals ?? 0) > 0;
    return this.count("directPush", reviews ? { allowed: false, why: "branch protection requiring pull request reviews" } : { allowed: true, why: "" });
  }

  // ---- the wire shapes ----------------------------------------------------------------------

  private issue(i: FakeIssue): Issue {
    const subs = i.subIssues.map((n) => this.state.must(n));
    return {
      number: i.number,
      id: i.id,
      title: i.title,
      body: i.body,
      state: i.state,
      stateReason: i.stateReason,
      labels: [...i.labels],
      author: i.author,
      assignees: [...i.assignees],
      milestone: null,
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
      htmlUrl: this.state.htmlUrl(i.pull ? "pull" : "issues", i.number),
      blockedByCount: i.blockedBy.filter((n) => this.state.must(n).state === "open").length,
      subIssueCount: subs.length,
      subIssuesCompleted: subs.filter((s) => s.state === "closed").length,
      parent: i.parent,
      comments: this.state.comments.filter((c) => c.issue === i.number).length,
    };
  }

  private link(number: number): IssueLink {
    const i = this.state.must(number);
    return { number, id: i.id, state: i.state };
  }

  private pull(i: FakeIssue): PullRequest {
    const p = i.pull as FakePull;
    const live = i.state === "open";
    const headSha = live ? (this.state.tip(p.head) ?? p.headSha) : p.headSha;
    const baseSha = live ? (this.state.tip(p.base) ?? p.baseSha) : p.baseSha;
    return {
      number: i.number,
      title: i.title,
      body: i.body,
      state: i.state,
      draft: p.draft,
      merged: p.merged,
      author: i.author,
      head: { ref: p.head, sha: headSha, repoFullName: this.state.slug },
      base: { ref: p.base, sha: baseSha, repoFullName: this.state.slug },
      htmlUrl: this.state.htmlUrl("pull", i.number),
      updatedAt: i.updatedAt,
    };
  }

  private mergeability(issue: FakeIssue, pull: FakePull): { mergeable: boolean | null; state: string } {
    const [head, base] = [this.state.tip(pull.head), this.state.tip(pull.base)];
    if (head === null || base === null) return { mergeable: null, state: "unknown" };
    if (!this.state.git.mergeTrees(base, head)) return { mergeable: false, state: "dirty" };
    if (pull.draft) return { mergeable: true, state: "draft" };
    const refusal = this.protectionRefusal(pull.base, head, base);
    if (refusal) return { mergeable: true, state: /up to date/.test(refusal) ? "behind" : "blocked" };
    return { mergeable: true, state: "clean" };
  }

  /** Why the base's protection refuses merging `head`, or null. */
  private protectionRefusal(branch: string, head: string, base: string): string | null {
    const rule = this.state.protection.get(branch);
    if (!rule) return null;
    for (const context of rule.contexts) {
      const outcome = this.outcome(head, context);
      if (outcome !== "success") return `Required status check "${context}" is ${outcome === "failure" ? "failing" : "expected"}.`;
    }
    const approvals = new Set((this.state.reviews.get(this.pullOn(branch, head)) ?? []).filter((r) => r.state === "APPROVED").map((r) => r.author));
    if ((rule.approvals ?? 0) > approvals.size) return "At least 1 approving review is required by reviewers with write access.";
    if (rule.strict && !this.state.git.isAncestor(base, head)) return "Head branch is not up to date with the base branch.";
    return null;
  }

  /** The worst of the latest check run and the latest status named `context` on `sha`. */
  private outcome(sha: string, context: string): "success" | "pending" | "failure" | "missing" {
    const run = latestByName(this.state.checkRuns.get(sha) ?? [], (r) => r.name).find((r) => r.name === context);
    const status = [...(this.state.statuses.get(sha) ?? [])].reverse().find((s) => s.context === context);
    const ofRun = !run
      ? null
      : run.status !== "completed"
        ? "pending"
        : ["success", "neutral", "skipped"].includes(run.conclusion ?? "")
          ? "success"
          : "failure";
    const ofStatus = !status ? null : status.state === "success" ? "success" : status.state === "pending" ? "pending" : "failure";
    const all = [ofRun, ofStatus].filter((o) => o !== null);
    if (all.length === 0) return "missing";
    return all.includes("failure") ? "failure" : all.includes("pending") ? "pending" : "success";
  }

  private pullOn(branch: string, head: string): number {
    for (const i of this.state.issues.values()) if (i.state === "open" && i.pull?.base === branch && this.state.tip(i.pull.head) === head) return i.number;
    return 0;
  }

  private find(number: number, what: string): FakeIssue {
    const issue = this.state.issues.get(number);
    if (!issue) throw notFound(what);
    return issue;
  }

  private findPull(number: number, what: string): FakeIssue {
    const issue = this.find(number, what);
    if (!issue.pull) throw notFound(what);
    return issue;
  }

  private count<T>(method: string, value: T): T {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    return value;
  }
}

/** Newest first, as GitHub lists issues and pull requests by default (created, desc). */
function newestFirst(items: FakeIssue[]): FakeIssue[] {
  return [...items].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : b.number - a.number));
}

/** The latest of each name, newest first (`filter=latest`). */
function latestByName<T>(oldestFirst: readonly T[], name: (item: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (let i = oldestFirst.length - 1; i >= 0; i -= 1) {
    const item = oldestFirst[i] as T;
    if (seen.has(name(item))) continue;
    seen.add(name(item));
    out.push(item);
  }
  return out.map((item) => ({ ...item }));
}
