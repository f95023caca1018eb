// The Forge over GitHub's REST API (and the local forge, which speaks the same API). Every
// call names its route explicitly, pages at 100, and fails only with a ForgeError saying
// which operation failed; GitHub's shapes are mapped to the fleet's types here and nowhere else.
// What each request costs and why the fleet makes it: docs/requests.md, and a comment where it is called.
import type {
  Checks,
  CommitStatus,
  Comment,
  Forge,
  Issue,
  IssueLink,
  Label,
  MergeRequest,
  MergeResult,
  PullDetail,
  PullRequest,
  PullReview,
  RateLimit,
  RepoInfo,
  RepoSlug,
  ReviewComment,
  RequiredChecks,
  DirectPush,
  QueueStatus,
} from "./forge.js";
import { enqueue, queueStatus } from "./merge-queue.js";
import { ForgeError, UsageError } from "./errors.js";
import { createClient, type GitHubClient, type Logger } from "./octokit.js";
import type { RequestStats } from "./etag-cache.js";
import { ActionsApi } from "./actions-api.js";
import { formatSlug, parseSlug } from "./slug.js";
import { DEFAULT_API_URL } from "./auth.js";
import { runsSettleNotGreen } from "../state/gate.js";
import { readDirectPush, readRequiredChecks, type BranchIo } from "./branch-rules.js";
import {
  toCheckRun,
  toComment,
  toIssue,
  toLink,
  toPull,
  toReview,
  toReviewComment,
  toStatus,
  type RawCheckRun,
  type RawComment,
  type RawIssue,
  type RawLabel,
  type RawPull,
  type RawRepo,
  type RawReview,
  type RawStatus,
  type RawUser,
} from "./github-wire.js";

type Params = Record<string, unknown>;

export class GitHubForge implements Forge {
  private login: Promise<string> | null = null;
  /** Labels this client made or found present, lower-cased. */
  private readonly ensuredLabels = new Set<string>();

  constructor(
    readonly repo: RepoSlug,
    private readonly client: GitHubClient,
  ) {}

  private actionsApi: ActionsApi | null = null;

  /** The Actions REST calls (workflows, dispatch, runs, jobs, pushes), on this client's accounting. */
  actions(): ActionsApi {
    this.actionsApi ??= new ActionsApi(
      this.repo,
      (route, params, what) => this.call(route, params, what),
      (route, params, what) => this.pageByPage(route, params, what),
    );
    return this.actionsApi;
  }

  /** Requests sent, 304s, and requests counted against the rate limit. */
  stats(): RequestStats {
    return this.client.stats();
  }

  rateLimit(): RateLimit | null {
    return this.client.rateLimit();
  }

  whoami(): Promise<string> {
    if (!this.login) {
      this.login = this.get<RawUser>("GET /user", {}, "read the token's own login").then((user) => {
        if (!user.login) throw new ForgeError("unexpected", "read the token's own login: GitHub returned no login", 200, "report this");
        return user.login;
      });
      this.login.catch(() => (this.login = null)); // a failure is not cached
    }
    return this.login;
  }

  async repoInfo(): Promise<RepoInfo> {
    const raw = await this.get<RawRepo>("GET /repos/{owner}/{repo}", {}, `read repository ${this.slug}`);
    return {
      fullName: raw.full_name ?? this.slug,
      defaultBranch: raw.default_branch ?? "main",
      cloneUrl: raw.clone_url ?? "",
      htmlUrl: raw.html_url ?? "",
      private: raw.private ?? false,
      permissions: {
        admin: raw.permissions?.admin ?? false,
        push: raw.permissions?.push ?? false,
        pull: raw.permissions?.pull ?? false,
        maintain: raw.permissions?.maintain ?? false,
      },
      allowSquashMerge: raw.allow_squash_merge ?? true,
      allowMergeCommit: raw.allow_merge_commit ?? true,
      allowRebaseMerge: raw.allow_rebase_merge ?? true,
    };
  }

  async listOpenIssues(): Promise<Issue[]> {
    const raw = await this.all<RawIssue>("GET /repos/{owner}/{repo}/issues", { state: "open" }, `list open issues of ${this.slug}`);
    return raw.filter((item) => item.pull_request === undefined || item.pull_request === null).map((item) => toIssue(item, this.repo));
  }

  async getIssue(number: number): Promise<Issue> {
    checkNumber(number, "issue");
    const raw = await this.get<RawIssue>("GET /repos/{owner}/{repo}/issues/{issue_number}", { issue_number: number }, `read issue #${number}`);
    return toIssue(raw, this.repo);
  }

  async listBlockedBy(number: number): Promise<IssueLink[]> {
    checkNumber(number, "issue");
    const raw = await this.all<RawIssue>(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by",
      { issue_number: number },
      `list the issues blocking #${number}`,
    );
    return raw.map(toLink);
  }

  async listSubIssues(number: number): Promise<IssueLink[]> {
    checkNumber(number, "issue");
    const raw = await this.all<RawIssue>(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues",
      { issue_number: number },
      `list the sub-issues of #${number}`,
    );
    return raw.map(toLink);
  }

  async closeIssue(number: number, reason: "completed" | "not_planned"): Promise<void> {
    checkNumber(number, "issue");
    await this.call(
      "PATCH /repos/{owner}/{repo}/issues/{issue_number}",
      { issue_number: number, state: "closed", state_reason: reason },
      `close issue #${number}`,
    );
  }

  async listLabels(): Promise<Label[]> {
    const raw = await this.all<RawLabel>("GET /repos/{owner}/{repo}/labels", {}, `list the labels of ${this.slug}`);
    // A label seen here needs no create later (ensureLabel would pay a 422 to learn it exists).
    for (const label of raw) if (label.name) this.ensuredLabels.add(label.name.toLowerCase());
    return raw.map((label) => ({ name: label.name ?? "", color: label.color ?? "", description: label.description ?? null }));
  }

  async ensureLabel(label: Label): Promise<void> {
    // Once made (or found) by this client, a label is not made again: each attempt of each
    // issue would otherwise pay a request for it. Should someone delete it meanwhile, adding
    // it to an issue creates it again (GitHub does so for unknown label names).
    const key = label.name.toLowerCase();
    if (this.ensuredLabels.has(key)) return;
    const body: Params = { name: label.name, color: label.color.replace(/^#/, "") };
    if (label.description !== null) body.description = label.description;
    try {
      await this.call("POST /repos/{owner}/{repo}/labels", body, `create label ${JSON.stringify(label.name)}`);
    } catch (error) {
      // 422 already_exists: somebody (maybe us, a moment ago) made it. That is the goal.
      if (!(error instanceof ForgeError && error.kind === "validation" && /already[ _]exists/i.test(error.message))) throw error;
    }
    this.ensuredLabels.add(key);
  }

  async addLabels(number: number, labels: string[]): Promise<void> {
    checkNumber(number, "issue");
    if (labels.length === 0) return;
    await this.call(
      "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
      { issue_number: number, labels },
      `label issue #${number} with ${labels.join(", ")}`,
    );
  }

  async removeLabel(number: number, label: string): Promise<void> {
    checkNumber(number, "issue");
    try {
      await this.call(
        "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
        { issue_number: number, name: label },
        `remove label ${JSON.stringify(label)} from #${number}`,
      );
    } catch (error) {
      if (error instanceof ForgeError && error.kind === "not_found") return; // it was not there
      throw error;
    }
  }

  async listComments(number: number): Promise<Comment[]> {
    checkNumber(number, "issue");
    const raw = await this.all<RawComment>(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
      { issue_number: number },
      `list the comments of #${number}`,
    );
    return raw.map(toComment);
  }

  async createComment(number: number, body: string): Promise<Comment> {
    checkNumber(number, "issue");
    const raw = await this.call<RawComment>(
      "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
      { issue_number: number, body },
      `comment on #${number}`,
    );
    return toComment(raw);
  }

  async updateComment(commentId: number, body: string): Promise<Comment> {
    checkNumber(commentId, "comment");
    const raw = await this.call<RawComment>(
      "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
      { comment_id: commentId, body },
      `update comment ${commentId}`,
    );
    return toComment(raw);
  }

  async listOpenPulls(): Promise<PullRequest[]> {
    const raw = await this.all<RawPull>("GET /repos/{owner}/{repo}/pulls", { state: "open" }, `list open pull requests of ${this.slug}`);
    return raw.map(toPull);
  }

  // Read by a restarted fleet only, once, when claims of its own have no open PR (gather.ts, landedUnsettled).
  async listRecentlyClosedPulls(): Promise<Array<PullRequest & { mergedAt: string | null }>> {
    const raw = await this.get<RawPull[]>(
      "GET /repos/{owner}/{repo}/pulls",
      { state: "closed", sort: "updated", direction: "desc", per_page: 100 },
      `list recently closed pull requests of ${this.slug}`,
    );
    return raw.map((r) => ({ ...toPull(r), mergedAt: r.merged_at ?? null }));
  }

  async getPull(number: number): Promise<PullDetail> {
    checkNumber(number, "pull request");
    const raw = await this.get<RawPull>("GET /repos/{owner}/{repo}/pulls/{pull_number}", { pull_number: number }, `read pull request #${number}`);
    return {
      ...toPull(raw),
      mergeable: raw.mergeable ?? null,
      mergeableState: raw.mergeable_state ?? "unknown",
      mergeCommitSha: raw.merge_commit_sha ?? null,
    };
  }

  async createPull(input: { title: string; body: string; head: string; base: string; draft?: boolean }): Promise<PullRequest> {
    const raw = await this.call<RawPull>(
      "POST /repos/{owner}/{repo}/pulls",
      { title: input.title, body: input.body, head: input.head, base: input.base, draft: input.draft ?? false },
      `open a pull request from ${input.head} into ${input.base}`,
    );
    return toPull(raw);
  }

  async mergePull(number: number, request: MergeRequest): Promise<MergeResult> {
    checkNumber(number, "pull request");
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(request.sha)) {
      throw new UsageError(`merge #${number}: the head sha ${JSON.stringify(request.sha)} is not a full commit sha`);
    }
    const body: Params = { pull_number: number, sha: request.sha, merge_method: request.method };
    if (request.title !== undefined) body.commit_title = request.title;
    if (request.message !== undefined) body.commit_message = request.message;
    const raw = await this.call<{ sha?: string; merged?: boolean; message?: string }>(
      "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge",
      body,
      `merge pull request #${number} at ${request.sha.slice(0, 12)}`,
    );
    return { merged: raw.merged ?? false, sha: raw.sha ?? "", message: raw.message ?? "" };
  }

  async closePull(number: number, body?: string): Promise<void> {
    checkNumber(number, "pull request");
    await this.call(
      "PATCH /repos/{owner}/{repo}/pulls/{pull_number}",
      { pull_number: number, state: "closed", ...(body !== undefined ? { body } : {}) },
      `close pull request #${number}`,
    );
  }

  async updatePullBranch(number: number, expectedHeadSha: string): Promise<void> {
    checkNumber(number, "pull request");
    const what = `update the branch of pull request #${number}`;
    try {
      await this.call("PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch", { pull_number: number, expected_head_sha: expectedHeadSha }, what);
    } catch (error) {
      // GitHub says "head moved" here with a 422; the fleet treats it like merge's 409.
      if (error instanceof ForgeError && error.kind === "validation" && /expected_head_sha/i.test(error.message)) {
        throw new ForgeError("conflict", error.message, error.status, "the head moved since it was read: re-read the pull request", null);
      }
      throw error;
    }
  }

  async checksFor(sha: string, gate?: RequiredChecks): Promise<Checks> {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) throw new UsageError(`checks: ${JSON.stringify(sha)} is not a full commit sha`);
    // Octokit's paginator unwraps `{total_count, check_runs}` into the array itself.
    const runsRead = this.pages<RawCheckRun[] | { check_runs?: RawCheckRun[] }>(
      "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
      // "all": a re-run is another run of the same name in the same suite (state/gate.ts rerunVerdict); the gate takes the newest.
      { ref: sha, filter: "all" },
      `list check runs of ${sha.slice(0, 12)}`,
    ).then((pages) => pages.flatMap((page) => (Array.isArray(page) ? page : (page.check_runs ?? []))).map(toCheckRun));
    // The status list, not the combined status: the combined one embeds the repository (its
    // pushed_at), so every push anywhere in the repository changes its ETag and a watch of an
    // unchanged head would pay for a 200. The list is newest first, as the gate expects.
    const statusesRead = (): Promise<CommitStatus[]> =>
      this.pages<RawStatus[]>("GET /repos/{owner}/{repo}/commits/{ref}/statuses", { ref: sha }, `list the commit statuses of ${sha.slice(0, 12)}`).then(
        (pages) => pages.flat().map(toStatus),
      );
    if (gate) {
      // For a gate verdict, a head whose runs failed or still run is not green whatever its
      // statuses say: the status list (a 200 on each new head, where most CI reports check runs
      // only) is read once the runs pass. Evidence readers pass no gate and get both lists.
      const checkRuns = await runsRead;
      return { sha, checkRuns, statuses: runsSettleNotGreen(checkRuns, gate) ? [] : await statusesRead() };
    }
    const [checkRuns, statuses] = await Promise.all([runsRead, statusesRead()]);
    return { sha, checkRuns, statuses };
  }

  async rerunFailedJobs(checkRunIds: readonly number[], maxAttempt: number): Promise<{ rerun: number[]; exhausted: number[] }> {
    const runs = new Set<number>();
    const exhausted = new Set<number>();
    for (const job_id of checkRunIds) {
      checkNumber(job_id, "job");
      const job = await this.get<{ run_id: number; run_attempt?: number }>("GET /repos/{owner}/{repo}/actions/jobs/{job_id}", { job_id }, `read job ${job_id}`);
      ((job.run_attempt ?? 1) >= maxAttempt ? exhausted : runs).add(job.run_id);
    }
    for (const run_id of exhausted) runs.delete(run_id);
    const rerun = "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs";
    for (const run_id of runs) await this.call(rerun, { run_id }, `re-run the failed jobs of the Actions run ${run_id}`);
    return { rerun: [...runs], exhausted: [...exhausted] };
  }

  requiredChecks(branch: string): Promise<RequiredChecks> {
    return readRequiredChecks(this.branchIo(), branch, this.protectionAnswers);
  }

  private readonly queueNodeIds = new Map<number, string>();
  /** Branches whose protection endpoint answered last time: read it instead of the summary. */
  private readonly protectionAnswers = new Set<string>();

  async queueStatus(number: number): Promise<QueueStatus> {
    checkNumber(number, "pull request");
    const { nodeId, ...status } = await queueStatus(this.client, this.repo, number);
    this.queueNodeIds.set(number, nodeId);
    return status;
  }

  async enqueuePull(number: number, expectedHead: string): Promise<QueueStatus["entry"]> {
    checkNumber(number, "pull request");
    // GraphQL names a PR by its node id: read it (with the entry) unless this client already did.
    const nodeId = this.queueNodeIds.get(number) ?? (await queueStatus(this.client, this.repo, number)).nodeId;
    return enqueue(this.client, nodeId, number, expectedHead);
  }

  async listReviewComments(number: number): Promise<ReviewComment[]> {
    checkNumber(number, "pull request");
    const raw = await this.all<RawComment>(
      "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
      { pull_number: number },
      `list the review comments of pull request #${number}`,
    );
    return raw.map(toReviewComment);
  }

  async listReviews(number: number): Promise<PullReview[]> {
    checkNumber(number, "pull request");
    const raw = await this.all<RawReview>(
      "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
      { pull_number: number },
      `list the reviews of pull request #${number}`,
    );
    return raw.map(toReview);
  }

  async createReview(number: number, input: { event: "COMMENT" | "APPROVE" | "REQUEST_CHANGES"; body: string; commitId?: string }): Promise<PullReview> {
    checkNumber(number, "pull request");
    const raw = await this.call<RawReview>(
      "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
      { pull_number: number, event: input.event, body: input.body, ...(input.commitId ? { commit_id: input.commitId } : {}) },
      `review pull request #${number}`,
    );
    return toReview(raw);
  }

  directPush(branch: string): Promise<DirectPush> {
    return readDirectPush(this.branchIo(), branch);
  }

  /** The reads a branch's rules and protection take (branch-rules.ts). */
  private branchIo(): BranchIo {
    return { get: (r, p, w) => this.get(r, p, w), all: (r, p, w) => this.all(r, p, w) };
  }

  private get slug(): string {
    return formatSlug(this.repo);
  }

  private async get<T>(route: string, params: Params, what: string): Promise<T> {
    return this.call<T>(route, params, what);
  }

  private async call<T = unknown>(route: string, params: Params, what: string): Promise<T> {
    try {
      const response = await this.client.octokit.request(route, { owner: this.repo.owner, repo: this.repo.name, ...params });
      return response.data as T;
    } catch (error) {
      throw this.client.toError(error, what);
    }
  }

  // Array endpoints, every page (100 a page).
  private async all<T>(route: string, params: Params, what: string): Promise<T[]> {
    try {
      return (await this.client.octokit.paginate(route, { owner: this.repo.owner, repo: this.repo.name, per_page: 100, ...params })) as T[];
    } catch (error) {
      throw this.client.toError(error, what);
    }
  }

  // Array endpoints page by page, for a caller that stops early (Link headers followed).
  private async *pageByPage(route: string, params: Params, what: string): AsyncGenerator<unknown[]> {
    try {
      const iterator = this.client.octokit.paginate.iterator(route, { owner: this.repo.owner, repo: this.repo.name, per_page: 100, ...params });
      for await (const page of iterator) yield page.data as unknown[];
    } catch (error) {
      throw this.client.toError(error, what);
    }
  }

  // Object endpoints that page an inner array (check runs, combined status): every page's body.
  private async pages<T>(route: string, params: Params, what: string): Promise<T[]> {
    const out: T[] = [];
    try {
      const iterator = this.client.octokit.paginate.iterator(route, { owner: this.repo.owner, repo: this.repo.name, per_page: 100, ...params });
      for await (const page of iterator) out.push(page.data as T);
    } catch (error) {
      throw this.client.toError(error, what);
    }
    return out;
  }
}

export interface GitHubForgeOptions {
  /** "owner/name" or a remote URL, or a parsed slug. */
  repo: string | RepoSlug;
  token: string;
  /** REST API root (default https://api.github.com). */
  baseUrl?: string;
  /** For the local forge: no write spacing, millisecond retry delays. */
  fast?: boolean;
  logger?: Logger;
  /** Passed through to createClient (retries, timeouts, cache, an injected fetch). */
  client?: Omit<Parameters<typeof createClient>[0], "token" | "baseUrl" | "fast" | "logger">;
}

export function createGitHubForge(options: GitHubForgeOptions): GitHubForge {
  const repo = typeof options.repo === "string" ? parseSlug(options.repo) : parseSlug(formatSlug(options.repo));
  if (!options.token) {
    throw new UsageError("no GitHub token: set GITHUB_TOKEN (or GH_TOKEN), or sign in with `gh auth login`");
  }
  const client = createClient({
    ...options.client,
    token: options.token,
    baseUrl: options.baseUrl ?? DEFAULT_API_URL,
    ...(options.fast !== undefined ? { fast: options.fast } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return new GitHubForge(repo, client);
}

function checkNumber(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) throw new UsageError(`invalid ${what} number ${JSON.stringify(value)}: expected a positive integer`);
}
