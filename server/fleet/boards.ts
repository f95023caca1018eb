// The status boards at the end of a tick: one per claim still open, in the phase the claim is
// in (a board whose claim this tick let go already shows its last state).
import { boardPhase } from "../state/board-phase.js";
import type { FleetRuntime, TickScope } from "./effects/effect.js";

export async function renderBoards(fleet: FleetRuntime, tick: TickScope): Promise<void> {
  const { registration } = fleet;
  const { set, issues, report } = tick;
  if (!registration.config.board.enabled) return;
  const ended = new Set([...report.merged, ...report.escalated, ...report.closed, ...report.released]);
  // A PR this tick opened or synced is newer than the snapshot, which still shows no PR (or a
  // green head): its board says "PR open" now, not a stale phase that the next tick undoes.
  const pushed = new Map(tick.events.pushed.map((p) => [p.issue, p.pr]));
  for (const claim of set.mine) {
    if (!claim.issueOpen || ended.has(claim.issue)) continue;
    let phase = pushed.has(claim.issue) ? "pr_open" : boardPhase(claim, fleet.memory.hasRun(claim.issue));
    // Under auto-merge a green PR lands within seconds, or is synced with the base and checked
    // again: one "PR open" board for that whole stretch, not two writes per landing round.
    if (phase === "awaiting_merge" && registration.autoMerge) phase = "pr_open";
    await fleet.board
      .show(
        claim.issue,
        phase,
        claim.attempt,
        registration.config.retry + 1,
        pushed.get(claim.issue) ?? claim.pr,
        registration.instance,
        fleet.deps.conn.hostName,
        { noComments: issues.get(claim.issue)?.comments === 0, conflict: fleet.conflicts.boardNote(claim.issue) },
      )
      .catch((error: unknown) => fleet.log("warn", "board_failed", `#${claim.issue}: board not updated: ${(error as Error).message}`, claim.issue));
  }
}
