// The narrow interface between the fleet and GitHub: exactly what the fleet needs, in the
// fleet's own words. The core never sees Octokit types; `octokit.ts` implements this over
// REST, and tests point that implementation at the local forge over real HTTP. The types the
// core needs too (checks, required checks, pull refs, reviews, links) are the core's ports,
// re-exported here.
import type { Checks, IssueLink, IssueState, PullRef, PullReview, RequiredChecks } from "../state/ports.js";

export type { CheckRun, Checks, CommitStatus, IssueLink, IssueState, PullRef, PullReview, PullReviewState, RequiredChecks } from "../state/ports.js";

export interface RepoSlug {
  owner: string;
  name: string;
}

export interface Issue {
  number: number;
  /** GitHub's numeric id (dependency and sub-issue endpoints take ids, not numbers). */
  id: number;
  title: string;
  body: string;
  state: IssueState;
  stateReason: string | null;
  /** Label names as GitHub spells them. */
  labels: string[];
  author: string;
  assignees: string[];
  milestone: string | null;
  createdAt: string;
  updatedAt: string;
  htmlUrl: string;
  /** From `issue_dependencies_summary`: lets a snapshot skip the per-issue request. */
  blockedByCount: number;
  /** From `sub_issues_summary.total`. */
  subIssueCount: number;
  /** From `sub_issues_summary.completed`: closed sub-issues, when the listing says. */
  subIssuesCompleted?: number;
  /** Number of the parent issue, parsed from `parent_issue_url`, if any. */
  parent: number | null;
  /** How many comments it has, when the listing says (a board on an issue without any needs no lookup). */
  comments?: number;
  /** The number is a pull request's (GitHub reads PRs as issues too): set only then. */
  isPull?: true;
}

export interface Label {
  name: string;
  color: string;
  description: string | null;
}

export interface Comment {
  id: number;
  body: string;
  author: string;
  createdAt: string;
  updatedAt: string;
  htmlUrl: string;
}

/** A line comment of a pull request review: where in the diff, and what it says. */
export interface ReviewComment extends Comment {
  path: string;
  /** The line in the file it is on (null: on a line that is no longer in the diff). */
  line: number | null;
}

export interface PullRequest {
  number: number;
  title: string;
  body: string;
  state: IssueState;
  draft: boolean;
  merged: boolean;
  author: string;
  head: PullRef;
  base: PullRef;
  htmlUrl: string;
  updatedAt: string;
}

export interface PullDetail extends PullRequest {
  /** null while GitHub is still computing it: poll again. */
  mergeable: boolean | null;
  mergeableState: string;
  mergeCommitSha: string | null;
}

export type MergeMethod = "squash" | "merge" | "rebase";

export interface MergeRequest {
  /** The head sha that was gated: GitHub answers 409 if the head moved. */
  sha: string;
  method: MergeMethod;
  title?: string;
  message?: string;
}

export interface MergeResult {
  merged: boolean;
  sha: string;
  message: string;
}

/** Whether the token may move a branch by a plain fast-forward push (no PR). */
export interface DirectPush {
  /** null: unknown (the protection could not be read). */
  allowed: boolean | null;
  /** What refuses it, or why it is unknown; "" when allowed. */
  why: string;
}

export interface RepoInfo {
  fullName: string;
  defaultBranch: string;
  /** The clone URL git talks to (https on GitHub, the forge's own URL locally). */
  cloneUrl: string;
  htmlUrl: string;
  private: boolean;
  permissions: { admin: boolean; push: boolean; pull: boolean; maintain: boolean };
  allowSquashMerge: boolean;
  allowMergeCommit: boolean;
  allowRebaseMerge: boolean;
}

export interface RateLimit {
  limit: number;
  remaining: number;
  /** Unix seconds. */
  reset: number;
  used: number;
}

/** A pull request's place in its base's merge queue (GraphQL). */
export interface QueueStatus {
  state: "OPEN" | "CLOSED" | "MERGED";
  head: string;
  /** The entry while queued: GitHub's MergeQueueEntryState and 1-based position. */
  entry: { state: string; position: number } | null;
  /** The PR's latest AddedToMergeQueueEvent or RemovedFromMergeQueueEvent (with the queue's reason). */
  lastEvent: { kind: "added" | "removed"; at: string; reason: string | null } | null;
}

export interface Forge {
  readonly repo: RepoSlug;

  /** The token's own login: markers are honoured only when written by it. */
  whoami(): Promise<string>;
  repoInfo(): Promise<RepoInfo>;
  rateLimit(): RateLimit | null;

  /** Open issues, pull requests excluded (GitHub's list includes them). */
  listOpenIssues(): Promise<Issue[]>;
  getIssue(number: number): Promise<Issue>;
  listBlockedBy(number: number): Promise<IssueLink[]>;
  listSubIssues(number: number): Promise<IssueLink[]>;
  closeIssue(number: number, reason: "completed" | "not_planned"): Promise<void>;

  listLabels(): Promise<Label[]>;
  /** Creates the label if absent; an existing one is left alone. */
  ensureLabel(label: Label): Promise<void>;
  addLabels(number: number, labels: string[]): Promise<void>;
  /** Removing a label the issue does not carry is not an error. */
  removeLabel(number: number, label: string): Promise<void>;

  listComments(number: number): Promise<Comment[]>;
  createComment(number: number, body: string): Promise<Comment>;
  updateComment(commentId: number, body: string): Promise<Comment>;

  listOpenPulls(): Promise<PullRequest[]>;
  /** The most recently updated closed PRs, one page of 100, each with when it merged (null: closed unmerged). */
  listRecentlyClosedPulls(): Promise<Array<PullRequest & { mergedAt: string | null }>>;
  getPull(number: number): Promise<PullDetail>;
  createPull(input: { title: string; body: string; head: string; base: string; draft?: boolean }): Promise<PullRequest>;
  /** 405 (not mergeable) and 409 (head moved) come back as typed ForgeErrors, never retried. */
  mergePull(number: number, request: MergeRequest): Promise<MergeResult>;
  /**
   * Closes a pull request without merging it (a retry starts over on a fresh branch). With `body`,
   * its description becomes `body` in the same request (a retry's note: one write, not two).
   */
  closePull(number: number, body?: string): Promise<void>;
  /** Merges the base into the head (asynchronous on GitHub). */
  updatePullBranch(number: number, expectedHeadSha: string): Promise<void>;

  /** Line comments of a pull request's reviews, oldest first. */
  listReviewComments(number: number): Promise<ReviewComment[]>;
  /** Reviews of a pull request, oldest first. */
  listReviews(number: number): Promise<PullReview[]>;
  /** A review by the token's login: COMMENT only for the fleet's own PRs (GitHub refuses approving them). */
  createReview(number: number, input: { event: "COMMENT" | "APPROVE" | "REQUEST_CHANGES"; body: string; commitId?: string }): Promise<PullReview>;

  /** The PR's merge queue entry and latest queue event (GraphQL). */
  queueStatus(number: number): Promise<QueueStatus>;
  /** Adds the PR to its base's merge queue, pinned to `expectedHead` (GraphQL enqueuePullRequest). */
  enqueuePull(number: number, expectedHead: string): Promise<QueueStatus["entry"]>;

  /**
   * Check runs and commit statuses on a commit. With `gate` (the base's required checks), the
   * statuses are left unread (empty) while the runs alone say the head is not green.
   */
  checksFor(sha: string, gate?: RequiredChecks): Promise<Checks>;
  requiredChecks(branch: string): Promise<RequiredChecks>;
  /**
   * Re-runs the failed jobs of the Actions workflow runs behind these check runs (a job's id is
   * its check run's id): one new attempt of each run, whose jobs post new check runs of the same
   * names on the same head. A run already on attempt `maxAttempt` or later is left alone
   * (`exhausted`): GitHub's own count guards the fleet's. A job that is not an Actions job is
   * not_found; a run GitHub will not re-run now (still in progress, too old) is a ForgeError of its status.
   */
  rerunFailedJobs(checkRunIds: readonly number[], maxAttempt: number): Promise<{ rerun: number[]; exhausted: number[] }>;
  /**
   * Whether a fast-forward push to `branch` would be accepted for this token, from the branch's
   * rules and protection (a ruleset or protection demanding a PR, restricted updates). Required
   * status checks do not refuse it: a gated head carries them.
   */
  directPush(branch: string): Promise<DirectPush>;
}
