// The ports of the core: what the reconciliation core needs to know of GitHub and git, in its
// own words. server/gh implements them (Octokit, git refs); the core imports nothing else.

export type IssueState = "open" | "closed";

/** A linked issue as the dependency and sub-issue endpoints return it. */
export interface IssueLink {
  number: number;
  id: number;
  state: IssueState;
}

export interface PullRef {
  ref: string;
  sha: string;
  /** "owner/name" of the repository the branch lives in: differs from the base for a fork. */
  repoFullName: string | null;
}

export interface CheckRun {
  id: number;
  name: string;
  status: string; // queued | in_progress | completed | waiting | requested | pending
  conclusion: string | null; // success | failure | neutral | cancelled | skipped | timed_out | action_required
  title: string | null;
  summary: string | null;
  text: string | null;
  detailsUrl: string | null;
  htmlUrl: string | null;
  appId: number | null;
  /** The app that posted the run, by slug ("github-actions": a job GitHub can re-run); absent or null: unknown. */
  app?: string | null;
  /** Its check suite: a re-run of an Actions job is a new run of the same name in the same suite. */
  suiteId?: number | null;
}

export interface CommitStatus {
  context: string;
  state: string; // error | failure | pending | success
  description: string | null;
  targetUrl: string | null;
}

export interface Checks {
  sha: string;
  checkRuns: CheckRun[];
  statuses: CommitStatus[];
}

export interface RequiredChecks {
  /** Names (contexts) of the checks the branch requires. */
  contexts: string[];
  /** Whether branches must be up to date before merging (strict). */
  strict: boolean;
  /** Where the answer came from; "none" means no rule requires checks. */
  source: "rulesets" | "protection" | "both" | "none";
  /** False when protection could not be read (no admin rights): treat as unknown. */
  readable: boolean;
  /** Approving reviews the branch requires before a merge (protection or a ruleset); 0 or absent: none. */
  approvals?: number;
  /** An approval on an older head no longer counts (dismiss stale reviews). */
  dismissStaleApprovals?: boolean;
  /** A ruleset requires GitHub's merge queue: PRs are enqueued, never merged through REST. */
  mergeQueue?: boolean;
}

export type PullReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";

export interface PullReview {
  id: number;
  author: string;
  /** GitHub's author_association: OWNER, MEMBER and COLLABORATOR have write access. */
  association: string;
  state: PullReviewState;
  body: string;
  /** The head the review was made on. */
  commitId: string | null;
  submittedAt: string | null;
}

// ---- the ref store: refs in the fleet's hidden namespace, with compare-and-swap ----------------

export interface RefEntry {
  /** Full ref name, e.g. "refs/afk/claim/42". */
  ref: string;
  sha: string;
  /** The commit message of the commit the ref points at. */
  message: string;
}

export type CasOutcome =
  { won: true; sha: string } | { won: false; /** What the ref holds now (null: absent), when it could be read. */ current: string | null };

export interface RefStore {
  /** Every ref under `prefix` (e.g. "refs/afk/"), read in one round trip. */
  list(prefix: string): Promise<RefEntry[]>;
  /** Creates `ref` -> a new empty-tree commit carrying `message`, only if `ref` is absent. */
  create(ref: string, message: string): Promise<CasOutcome>;
  /** Moves `ref` from `expectedSha` to a new commit carrying `message`; loses if it moved. */
  swap(ref: string, expectedSha: string, message: string): Promise<CasOutcome>;
  /** Deletes `ref` only if it still holds `expectedSha`. Deleting an absent ref wins. */
  remove(ref: string, expectedSha: string): Promise<CasOutcome>;
  /** Reads one ref now (bypassing any cache): null when absent. */
  read(ref: string): Promise<string | null>;
}
