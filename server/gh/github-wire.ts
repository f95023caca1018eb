// GitHub's REST payloads as the fleet reads them, and their mapping to the Forge's types. The
// mapping happens here and nowhere else.
import type { CheckRun, Comment, CommitStatus, Issue, IssueLink, PullRef, PullRequest, PullReview, PullReviewState, RepoSlug, ReviewComment } from "./forge.js";
import { sameSlug } from "./slug.js";

// The parts of GitHub's JSON we read. Fields are optional where GitHub (or an older GHES)
// may omit them, so a missing field degrades to a safe default instead of a crash.
export interface RawUser {
  login?: string;
}
export interface RawLabel {
  name?: string;
  color?: string;
  description?: string | null;
}
export interface RawIssue {
  id: number;
  number: number;
  title?: string;
  body?: string | null;
  state?: string;
  state_reason?: string | null;
  labels?: (string | RawLabel)[];
  user?: RawUser | null;
  assignees?: RawUser[] | null;
  milestone?: { title?: string } | null;
  created_at?: string;
  updated_at?: string;
  html_url?: string;
  pull_request?: unknown;
  issue_dependencies_summary?: { blocked_by?: number; total_blocked_by?: number } | null;
  sub_issues_summary?: { total?: number; completed?: number } | null;
  comments?: number;
  parent_issue_url?: string | null;
}
export interface RawComment {
  id: number;
  body?: string | null;
  user?: RawUser | null;
  created_at?: string;
  updated_at?: string;
  html_url?: string;
}
export interface RawPullRef {
  ref?: string;
  sha?: string;
  repo?: { full_name?: string } | null;
}
export interface RawPull {
  number: number;
  title?: string;
  body?: string | null;
  state?: string;
  draft?: boolean;
  merged?: boolean;
  merged_at?: string | null;
  user?: RawUser | null;
  head?: RawPullRef;
  base?: RawPullRef;
  html_url?: string;
  updated_at?: string;
  mergeable?: boolean | null;
  mergeable_state?: string;
  merge_commit_sha?: string | null;
}
export interface RawCheckRun {
  id: number;
  name?: string;
  status?: string;
  conclusion?: string | null;
  output?: { title?: string | null; summary?: string | null; text?: string | null } | null;
  details_url?: string | null;
  html_url?: string | null;
  app?: { id?: number; slug?: string } | null;
  check_suite?: { id?: number } | null;
}
export interface RawStatus {
  context?: string;
  state?: string;
  description?: string | null;
  target_url?: string | null;
}
export interface RawRule {
  type?: string;
  parameters?: {
    required_status_checks?: { context?: string; integration_id?: number }[];
    strict_required_status_checks_policy?: boolean;
    required_approving_review_count?: number;
    dismiss_stale_reviews_on_push?: boolean;
  };
}
export interface RawReview {
  id: number;
  user?: RawUser | null;
  author_association?: string;
  state?: string;
  body?: string | null;
  commit_id?: string | null;
  submitted_at?: string | null;
}
export interface RawProtection {
  required_status_checks?: { strict?: boolean; contexts?: string[]; checks?: { context?: string }[] } | null;
  required_pull_request_reviews?: { required_approving_review_count?: number; dismiss_stale_reviews?: boolean } | null;
  restrictions?: unknown;
}
export interface RawBranch {
  protected?: boolean;
  protection?: {
    enabled?: boolean;
    required_status_checks?: {
      enforcement_level?: string;
      contexts?: string[];
      checks?: { context?: string }[];
      strict?: boolean;
    } | null;
  } | null;
}
export interface RawRepo {
  full_name?: string;
  default_branch?: string;
  clone_url?: string;
  html_url?: string;
  private?: boolean;
  permissions?: { admin?: boolean; push?: boolean; pull?: boolean; maintain?: boolean };
  allow_squash_merge?: boolean;
  allow_merge_commit?: boolean;
  allow_rebase_merge?: boolean;
}

export function toLink(raw: RawIssue): IssueLink {
  return { number: raw.number, id: raw.id, state: raw.state === "closed" ? "closed" : "open" };
}

export function toComment(raw: RawComment): Comment {
  return {
    id: raw.id,
    body: raw.body ?? "",
    author: raw.user?.login ?? "ghost",
    createdAt: raw.created_at ?? "",
    updatedAt: raw.updated_at ?? "",
    htmlUrl: raw.html_url ?? "",
  };
}

export function toReviewComment(raw: RawComment & { path?: string; line?: number | null; original_line?: number | null }): ReviewComment {
  return { ...toComment(raw), path: raw.path ?? "", line: raw.line ?? raw.original_line ?? null };
}

export function toPull(raw: RawPull): PullRequest {
  return {
    number: raw.number,
    title: raw.title ?? "",
    body: raw.body ?? "",
    state: raw.state === "closed" ? "closed" : "open",
    draft: raw.draft ?? false,
    merged: raw.merged ?? (raw.merged_at !== undefined && raw.merged_at !== null),
    author: raw.user?.login ?? "ghost",
    head: toPullRef(raw.head),
    base: toPullRef(raw.base),
    htmlUrl: raw.html_url ?? "",
    updatedAt: raw.updated_at ?? "",
  };
}

export function toPullRef(raw: RawPullRef | undefined): PullRef {
  return { ref: raw?.ref ?? "", sha: raw?.sha ?? "", repoFullName: raw?.repo?.full_name ?? null };
}

export function toCheckRun(raw: RawCheckRun): CheckRun {
  return {
    id: raw.id,
    name: raw.name ?? "",
    status: raw.status ?? "queued",
    conclusion: raw.conclusion ?? null,
    title: raw.output?.title ?? null,
    summary: raw.output?.summary ?? null,
    text: raw.output?.text ?? null,
    detailsUrl: raw.details_url ?? null,
    htmlUrl: raw.html_url ?? null,
    appId: raw.app?.id ?? null,
    app: raw.app?.slug ?? null,
    suiteId: raw.check_suite?.id ?? null,
  };
}

export function toStatus(raw: RawStatus): CommitStatus {
  return { context: raw.context ?? "", state: raw.state ?? "pending", description: raw.description ?? null, targetUrl: raw.target_url ?? null };
}

const REVIEW_STATES = new Set<PullReviewState>(["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]);

export function toReview(raw: RawReview): PullReview {
  const state = (raw.state ?? "").toUpperCase() as PullReviewState;
  return {
    id: raw.id,
    author: raw.user?.login ?? "ghost",
    association: raw.author_association ?? "NONE",
    // An unknown state counts as a comment: it neither approves nor blocks.
    state: REVIEW_STATES.has(state) ? state : "COMMENTED",
    body: raw.body ?? "",
    commitId: raw.commit_id ?? null,
    submittedAt: raw.submitted_at ?? null,
  };
}

export function toIssue(raw: RawIssue, repo: RepoSlug): Issue {
  const summary = raw.issue_dependencies_summary;
  // `blocked_by` counts open blockers. If only the total is present (an older server), assume
  // they may be open, so the snapshot asks rather than dispatching a blocked issue.
  const blockedBy = typeof summary?.blocked_by === "number" ? summary.blocked_by : (summary?.total_blocked_by ?? 0);
  return {
    number: raw.number,
    id: raw.id,
    title: raw.title ?? "",
    body: raw.body ?? "",
    state: raw.state === "closed" ? "closed" : "open",
    stateReason: raw.state_reason ?? null,
    labels: (raw.labels ?? []).map((label) => (typeof label === "string" ? label : (label.name ?? ""))).filter((name) => name !== ""),
    author: raw.user?.login ?? "ghost",
    assignees: (raw.assignees ?? []).map((user) => user.login ?? "").filter((login) => login !== ""),
    milestone: raw.milestone?.title ?? null,
    createdAt: raw.created_at ?? "",
    updatedAt: raw.updated_at ?? "",
    htmlUrl: raw.html_url ?? "",
    blockedByCount: blockedBy,
    subIssueCount: raw.sub_issues_summary?.total ?? 0,
    ...(typeof raw.sub_issues_summary?.completed === "number" ? { subIssuesCompleted: raw.sub_issues_summary.completed } : {}),
    parent: parentNumber(raw.parent_issue_url, repo),
    ...(typeof raw.comments === "number" ? { comments: raw.comments } : {}),
    ...(raw.pull_request !== undefined && raw.pull_request !== null ? { isPull: true as const } : {}),
  };
}

// ".../repos/{owner}/{repo}/issues/{n}": a parent in another repository has no number here.
function parentNumber(url: string | null | undefined, repo: RepoSlug): number | null {
  if (!url) return null;
  const match = /\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/?$/.exec(url);
  if (!match) return null;
  if (!sameSlug({ owner: decodeURIComponent(match[1]!), name: decodeURIComponent(match[2]!) }, repo)) return null;
  return Number(match[3]);
}
