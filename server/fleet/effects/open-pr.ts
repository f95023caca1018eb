// open_pr: a worker's commits are its result: push the branch (fenced) and open the PR once.
import { ForgeError } from "../../gh/errors.js";
import { openedOnLine } from "../../state/markers.js";
import { defineEffect, type FleetRuntime } from "./effect.js";

export const openPr = defineEffect("open_pr", async (fleet, tick, action) => {
  const n = action.issue;
  const { forge } = fleet.deps.conn;
  const { registration } = fleet;
  await fleet.deps.lease.fence(n, action.sha);
  await syncBeforeOpening(fleet, n);
  const pushed = await fleet.deps.workRepo.push(n, { expectedRemoteSha: fleet.memory.get(n)?.replaceable ?? null });
  const title = tick.issues.get(n)?.title ?? `Issue #${n}`;
  // This tick's snapshot listed the open PRs: the fleet's PR for the issue, if any, is on the
  // claim. Only when GitHub says one exists after all (opened since) is the list read again.
  const claim = tick.set.mine.find((m) => m.issue === n);
  let open = claim?.pr != null && claim.headRef === pushed.branch ? claim.pr : null;
  if (open === null) {
    // The attempt that opens it is said in the description: a red PR is fixed forward once, by
    // the attempt after it (state/decide/claims.ts), and a restarted host reads that here too.
    const body = [`Closes #${n}`, "", openedOnLine(n, (claim?.attempt ?? 0) + 1, registration.instance), "", `Head: ${pushed.sha}`].join("\n");
    try {
      // The one request a result needs: the PR is the work, what the gate checks and what lands.
      const pr = await forge.createPull({ title, body, head: pushed.branch, base: registration.base });
      fleet.log("info", "pr_opened", `#${n}: opened PR #${pr.number}`, n, { pr: pr.number, head: pushed.sha });
      open = pr.number;
    } catch (error) {
      if (!(error instanceof ForgeError && error.kind === "validation" && /already exists/i.test(error.message))) throw error;
      open =
        (await forge.listOpenPulls()).find((p) => p.head.ref === pushed.branch && p.head.repoFullName?.toLowerCase() === registration.repo.toLowerCase())
          ?.number ?? null;
      if (open === null) throw error;
    }
  }
  tick.events.pushed.push({ issue: n, pr: open, head: pushed.sha });
  fleet.memory.endRun(n);
  const memory = fleet.memory.get(n);
  if (memory) memory.replaceable = null;
  fleet.board.enter(n, "pr_open");
});

/**
 * The base merged into the branch before the PR opens, when it moved while the worker ran. A PR
 * that lacks the base tip must be synced before it can land (a base requiring up-to-date
 * branches, a fast-forward landing), and its CI would then run twice: on the stale head, and
 * again on the synced one, one CI run's wait per issue. A conflict, uncommitted changes or a git
 * failure leave the branch as the worker left it: the landing's sync meets the same conflict and
 * sends it back to a worker with the files named, as it always has.
 */
async function syncBeforeOpening(fleet: FleetRuntime, n: number): Promise<void> {
  const base = fleet.registration.base;
  const result = await fleet.deps.workRepo.syncWithBase(n, base).catch((error: unknown) => {
    fleet.log("info", "presync_skipped", `#${n}: ${base} was not merged in before the PR opened: ${error instanceof Error ? error.message : String(error)}`, n);
    return null;
  });
  if (result === null) return;
  if (!result.ok) {
    const why = result.reason === "conflict" ? `it conflicts in ${result.conflicts.join(", ")}` : `uncommitted changes in ${result.dirty.join(", ")}`;
    fleet.log("info", "presync_skipped", `#${n}: ${base} was not merged in before the PR opened: ${why}`, n, { reason: result.reason });
  } else if (result.merged) {
    fleet.log("info", "presynced", `#${n}: ${base} moved while the worker ran; merged it in before opening the PR (one CI run instead of two)`, n, {
      head: result.head,
    });
  }
}
