// What the work repository's callers pass and get back: worktree preparation (tiers 1-3),
// progress, sync and push results, and the typed errors of worktree moves.
import { GitError, UsageError } from "../gh/errors.js";
import { assertSafeBranchName } from "../gh/git.js";
import { assertIssueNumber } from "./slug.js";
import type { GitAuth } from "../gh/git.js";

export type Tier = 1 | 2 | 3;

export interface WorkRepoOptions {
  /** The bare work repository (created if absent), e.g. `<stateDir>/work/<owner>/<name>.git`. */
  repoDir: string;
  /** The clone URL (https, the local forge's URL, or a path); it must not carry credentials. */
  remoteUrl: string;
  /** Worktrees go to `<worktreeRoot>/issue-<n>`. */
  worktreeRoot: string;
  /** `worktree.branch_prefix`; default "afk/". */
  branchPrefix?: string;
  /** For fetches and pushes: sent only as an http.extraHeader scoped to the remote's origin. */
  auth?: GitAuth | null;
  timeoutMs?: number;
  /** Keep the user's commit signing in worktrees (default: signing is off in the work repo). */
  keepSigning?: boolean;
  /** The clock, for backup ref names. */
  now?: () => Date;
}

export interface PrepareInput {
  issue: number;
  title: string;
  /** The base branch, e.g. "main". */
  base: string;
  /** Recorded in the branch's reflog, for forensics. */
  attempt?: number;
}

export interface PreparedWorktree {
  path: string;
  branch: string;
  tier: Tier;
  head: string;
  /** origin/<base>'s tip as just fetched. */
  baseSha: string;
  /** Whether HEAD contains baseSha: always true for tier 3; tiers 1-2 are reported, not rewritten. */
  baseContained: boolean;
  /** The branch's tip on origin as just fetched, null when it is not on origin. */
  remoteSha: string | null;
  /** Whether HEAD contains remoteSha (null when there is none). */
  remoteContained: boolean | null;
  /** `refs/afk-backup/<n>/<time>-<sha>` refs written to keep tips that were set aside. */
  backupRefs: string[];
  /** Where a worktree that was at the issue's path but not on its branch was moved to. */
  displaced: string | null;
}

export interface WorktreeProgress {
  /** Whether a usable worktree exists for the issue. */
  worktree: boolean;
  path: string;
  branch: string | null;
  head: string | null;
  /** Commits on HEAD that origin/<base> (as last fetched) does not have. */
  commitsAhead: number;
  /** Uncommitted changes, untracked files included (ignored files not). */
  dirty: boolean;
  /** Committer time of the newest commit ahead of base; null when there is none. */
  lastCommitAt: Date | null;
  /** Newest mtime under the worktree, skipping .git and node_modules (bounded scan). */
  worktreeMtime: Date | null;
}

export type SyncResult =
  | { ok: true; head: string; merged: boolean }
  | {
      ok: false;
      /**
       * "conflict": the merge was aborted, the worktree is as before. "dirty": uncommitted tracked
       * changes (or untracked files the merge would overwrite), listed in `dirty`; nothing merged.
       */
      reason: "conflict" | "dirty";
      conflicts: string[];
      dirty: string[];
    };

export interface PushOptions {
  /** Overrides the WorkRepo's auth for this push. */
  auth?: GitAuth | null;
  /**
   * A tip on origin that this push may replace although the local branch does not contain it
   * (e.g. an earlier attempt's push the caller saw). Anything else on origin that the branch
   * does not contain is somebody else's work, and the push is refused.
   */
  expectedRemoteSha?: string | null;
}

export interface PushResult {
  branch: string;
  sha: string;
  /** What origin held before (null: the branch was new there). */
  previous: string | null;
  /** False when origin already held `sha`. */
  pushed: boolean;
}

export type WorktreeErrorKind = "no_branch" | "no_worktree" | "base_not_contained";

export class WorktreeError extends Error {
  override readonly name = "WorktreeError";
  constructor(
    readonly kind: WorktreeErrorKind,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** A push the remote or the lease refused. `actual` is origin's tip when known. */
export class PushRejectedError extends GitError {
  readonly kind = "push_rejected";
  constructor(
    message: string,
    command: string,
    stderr: string,
    hint: string,
    readonly branch: string,
    /** What the push expected origin to hold (the lease, or the caller's expectedRemoteSha). */
    readonly expected: string | null,
    readonly actual: string | null,
  ) {
    super(message, command, null, stderr, hint);
  }
}

export function validated(input: PrepareInput): { issue: number; base: string } {
  assertIssueNumber(input.issue);
  assertSafeBranchName(input.base);
  if (input.attempt !== undefined && !(Number.isSafeInteger(input.attempt) && input.attempt >= 0)) {
    throw new UsageError(`invalid attempt ${JSON.stringify(input.attempt)}: expected a non-negative integer`);
  }
  return { issue: input.issue, base: input.base };
}

export function attemptNote(issue: number, attempt: number | undefined): string {
  return attempt === undefined ? `afk: issue ${issue}` : `afk: issue ${issue} attempt ${attempt}`;
}

/** What is at an issue's worktree path. */
export type Inspection =
  | { state: "absent" }
  /** Registered, but the directory is gone. */
  | { state: "stale" }
  /** A registered worktree on one of the issue's branches (or rebasing one). */
  | { state: "valid"; branch: string; gitDir: string }
  /** Something else at the path: a worktree on another branch or detached, or a stray directory. */
  | { state: "foreign"; registered: boolean };
