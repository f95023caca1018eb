// The wrap-up a crash kept from a landing, done when a restart (or a peer's reclaim) finds the
// landing settled (gather.ts landedPulls, MergeCloses.recover): the board says merged, and, as
// after any landing, the issue's worktree and local branches go (worktree.cleanup) and its PR
// branch is deleted on GitHub (landing.delete_branch), only if it still holds the merged head.
import type { LandedPull } from "../state/snapshot.js";
import { parseFleetBranch } from "../state/markers.js";
import type { FleetRuntime } from "./effects/effect.js";
import { errorText } from "./supervisor-log.js";
import { removeWorktree } from "./effects/failure.js";

export async function wrapUpRecovered(fleet: FleetRuntime, landed: LandedPull, attempt: number): Promise<void> {
  const { issue, pr } = landed;
  const cfg = fleet.registration.config;
  const note = `PR #${pr} landed before its host stopped`;
  await fleet.board
    .terminal(issue, "merged", attempt, cfg.retry + 1, { pr, note })
    .catch((error: unknown) => fleet.log("warn", "board_failed", `#${issue}: board not updated: ${errorText(error)}`, issue));
  if (cfg.worktree.cleanup) await removeWorktree(fleet, issue);
  const head = landed.head;
  // Only the fleet's own branch for this very issue, and only at the head that merged (a compare-and-swap).
  if (cfg.landing.delete_branch && head && parseFleetBranch(head.ref, cfg.worktree.branch_prefix) === issue) {
    await fleet.deps.conn.refs.remove(`refs/heads/${head.ref}`, head.sha).catch(() => undefined);
  }
}
