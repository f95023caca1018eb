// The forge's records as they land on disk (state.ts holds them, with their indices): users,
// labels, issues and pull requests, comments, checks and statuses, protection and rulesets,
// reviews, the merge queue, ref activity.

export interface UserRecord {
  login: string;
  id: number;
  token: string;
  admin: boolean;
  createdAt: string;
  /**
   * A classic token's OAuth scopes, sent as `x-oauth-scopes` on every authenticated answer;
   * absent for a fine-grained or app token, which GitHub answers without that header.
   */
  scopes?: string[];
  /** false: a read-only collaborator (GitHub's `pull` permission); absent: push access. */
  push?: boolean;
}

export interface LabelRecord {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface PullRecord {
  /** A pull request's own id (GitHub's PR ids differ from the id of its issue). */
  id: number;
  /** Branch name in this repository. */
  head: string;
  /** Follows the branch tip while the branch exists; frozen once it is deleted or merged. */
  headSha: string;
  base: string;
  /** The base tip when the PR was merged or closed (while open, the live tip is shown). */
  baseSha: string;
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
}

export type IssueStateName = "open" | "closed";

export interface IssueRecord {
  number: number;
  id: number;
  title: string;
  body: string | null;
  state: IssueStateName;
  stateReason: string | null;
  /** Label names as the label spells them. */
  labels: string[];
  assignees: string[];
  author: string;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  closedBy: string | null;
  locked: boolean;
  /** Numbers of the issues blocking this one, and of those it blocks (kept symmetric). */
  blockedBy: number[];
  blocking: number[];
  subIssues: number[];
  parent: number | null;
  pull: PullRecord | null;
}

export interface CommentRecord {
  id: number;
  issue: number;
  body: string;
  author: string;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRunRecord {
  id: number;
  headSha: string;
  name: string;
  status: string;
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  title: string | null;
  summary: string | null;
  text: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  createdBy: string;
  /** Posted by GitHub Actions for a job (its id is the job's): the app is github-actions, the suite its workflow run. */
  actionsRun?: number;
}

export interface StatusRecord {
  id: number;
  sha: string;
  state: string;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: string;
  updatedAt: string;
}

export interface RequiredCheck {
  context: string;
  appId: number | null;
}

/** `required_pull_request_reviews` of classic protection (a ruleset's `pull_request` rule says the same). */
export interface RequiredReviews {
  count: number;
  dismissStale: boolean;
  codeOwners: boolean;
}

export interface ProtectionRecord {
  branch: string;
  requiredStatusChecks: { strict: boolean; checks: RequiredCheck[] } | null;
  /** Absent in state files written before reviews existed: read as null. */
  requiredReviews?: RequiredReviews | null;
  enforceAdmins: boolean;
  requiredLinearHistory: boolean;
  allowForcePushes: boolean;
  allowDeletions: boolean;
}

export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "PENDING" | "DISMISSED";

export interface ReviewRecord {
  id: number;
  /** The pull request's number. */
  pull: number;
  author: string;
  state: ReviewState;
  body: string;
  /** The head the review was made on. */
  commitId: string;
  /** Null while PENDING (a draft review nobody else sees). */
  submittedAt: string | null;
}

/** A line comment of a pull request review (`POST /pulls/{n}/comments`). */
export interface ReviewCommentRecord {
  id: number;
  pull: number;
  author: string;
  body: string;
  path: string;
  line: number;
  commitId: string;
  createdAt: string;
}

export interface RuleRecord {
  type: string;
  parameters?: Record<string, unknown>;
}

export interface RulesetRecord {
  id: number;
  name: string;
  target: string;
  enforcement: string;
  include: string[];
  exclude: string[];
  rules: RuleRecord[];
  createdAt: string;
  updatedAt: string;
}

/** A pull request in a base branch's merge queue, and the merge group built for it. */
export interface QueueEntryRecord {
  id: number;
  pr: number;
  base: string;
  /** The PR head that was enqueued: a push to the branch removes the entry. */
  headOid: string;
  enqueuedAt: string;
  enqueuer: string;
  jump: boolean;
  groupRef: string | null;
  groupSha: string | null;
  /** The base tip the group was built on. */
  groupBase: string | null;
  /** When the group was built (ms), for the checks' response timeout. */
  groupAt: number | null;
}

/** An AddedToMergeQueueEvent or RemovedFromMergeQueueEvent on a PR's timeline. */
export interface QueueEventRecord {
  id: number;
  pr: number;
  kind: "added" | "removed";
  at: string;
  actor: string;
  reason: string | null;
  beforeCommit: string | null;
}

/** What `GET /activity` lists: one ref update that landed (a push, a ref API write, a merge). */
export type ActivityType = "push" | "force_push" | "branch_creation" | "branch_deletion" | "pr_merge" | "merge_queue_merge";

export interface ActivityRecord {
  id: number;
  /** The full ref name (`refs/heads/x`, `refs/tags/v1`, `refs/afk/...`). */
  ref: string;
  /** 40 hex digits; zeros for a creation (before) or a deletion (after). */
  before: string;
  after: string;
  at: string;
  type: ActivityType;
  /** Who moved the ref (null: nobody known) and that user's id (a run token's bot keeps its own). */
  actor: string | null;
  actorId: number | null;
}
