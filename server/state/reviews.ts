// Human approvals, read the way GitHub's merge button reads them: each reviewer's latest approve
// or request-changes review counts (comments do not), an approval on an older head is void when
// the base dismisses stale approvals, and only reviewers with write access count. The fleet can
// never approve its own PRs, so a base that requires approvals holds a green PR until a human
// approves; a human asking for changes turns the review's text into the next attempt's evidence.
import type { PullReview, RequiredChecks } from "./ports.js";
import { sameLogin } from "./markers.js";

/** author_association values of accounts with write access to the repository. */
const WRITERS = new Set(["OWNER", "MEMBER", "COLLABORATOR"]);

export type ReviewGateState = "not_required" | "approved" | "awaiting" | "changes_requested";

export interface ReviewGate {
  state: ReviewGateState;
  /** Approving reviews the base requires. */
  required: number;
  /** Logins whose latest review approves the current head (or any head, when stale ones stand). */
  approvedBy: string[];
  /** The latest request for changes per reviewer still standing: its author and text. */
  changes: Array<{ by: string; body: string; at: string | null }>;
}

/**
 * The reviews' verdict on a PR at `head`. `login` is the fleet's own: its reviews never count
 * (GitHub refuses them anyway, and the fleet must never approve its own work through a second
 * token either: that would be a human's signature the fleet forged).
 */
export function evaluateReviews(
  reviews: readonly PullReview[] | undefined,
  required: Pick<RequiredChecks, "approvals" | "dismissStaleApprovals">,
  login: string,
  head: string,
): ReviewGate {
  const count = required.approvals ?? 0;
  if (count <= 0) return { state: "not_required", required: 0, approvedBy: [], changes: [] };
  const latest = new Map<string, PullReview>();
  for (const r of reviews ?? []) {
    if (r.state !== "APPROVED" && r.state !== "CHANGES_REQUESTED" && r.state !== "DISMISSED") continue;
    if (!WRITERS.has(r.association) || sameLogin(r.author, login)) continue;
    const key = r.author.toLowerCase();
    const seen = latest.get(key);
    // Reviews come in chronological order; ids break a tie if a page came out of order.
    if (!seen || r.id > seen.id) latest.set(key, r);
  }
  const approvedBy: string[] = [];
  const changes: ReviewGate["changes"] = [];
  for (const r of latest.values()) {
    if (r.state === "APPROVED" && (!required.dismissStaleApprovals || r.commitId === head)) approvedBy.push(r.author);
    if (r.state === "CHANGES_REQUESTED") changes.push({ by: r.author, body: r.body, at: r.submittedAt });
  }
  approvedBy.sort();
  changes.sort((a, b) => (a.by < b.by ? -1 : a.by > b.by ? 1 : 0));
  const state: ReviewGateState = changes.length > 0 ? "changes_requested" : approvedBy.length >= count ? "approved" : "awaiting";
  return { state, required: count, approvedBy, changes };
}

/** What a human must do, in one sentence: for the PR comment, the board and `status`. */
export function reviewNeed(gate: ReviewGate): string {
  const missing = Math.max(0, gate.required - gate.approvedBy.length);
  const have = gate.approvedBy.length > 0 ? ` (approved so far by ${gate.approvedBy.join(", ")})` : "";
  return (
    `needs ${missing} more approving review${missing === 1 ? "" : "s"} from someone with write access${have}: ` +
    `the base branch requires ${gate.required}, and the fleet cannot approve its own pull requests`
  );
}
