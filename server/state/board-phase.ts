// The phases an issue's status board shows, and which one a claim of ours is in now: from its
// status in the working set and whether this host runs its worker.
import type { MineClaim } from "./inflight.js";

export type BoardPhase = "claimed" | "coding" | "pr_open" | "ci_failed" | "awaiting_review" | "awaiting_merge" | "merged" | "escalated" | "released";

export const BOARD_PHASES: readonly BoardPhase[] = [
  "claimed",
  "coding",
  "pr_open",
  "ci_failed",
  "awaiting_review",
  "awaiting_merge",
  "merged",
  "escalated",
  "released",
];

export function boardPhase(claim: Pick<MineClaim, "status" | "rerun">, workerHere: boolean): BoardPhase {
  switch (claim.status) {
    case "awaiting_merge":
      return "awaiting_merge";
    case "awaiting_review":
      return "awaiting_review";
    case "awaiting_ci":
      return "pr_open";
    case "failure":
      // A flaky check about to be re-run has not failed the attempt: its CI runs again.
      return claim.rerun ? "pr_open" : "ci_failed";
    case "no_pr":
    case "changes_requested":
      // Changes requested: the retry that follows brings a new worker.
      return workerHere ? "coding" : "claimed";
  }
}
