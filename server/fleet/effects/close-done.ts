// close_done: the worker found the issue already satisfied and its branch changes nothing
// (decide read that): close the issue with the worker's reason, and let the claim go.
import { neutralizeMarkers } from "../../board/render.js";
import { oneLine } from "../../text/text.js";
import { defineEffect } from "./effect.js";
import { attemptOf, clearRunnerError } from "./failure.js";

export const closeDone = defineEffect("close_done", async (fleet, tick, action) => {
  const n = action.issue;
  const { forge } = fleet.deps.conn;
  const cfg = fleet.registration.config;
  await fleet.deps.lease.fence(n, action.sha);
  await forge.createComment(n, `Closing: the fleet's worker found this already satisfied.\n\n> ${neutralizeMarkers(oneLine(action.reason))}`);
  await forge.closeIssue(n, "completed");
  await fleet.board.terminal(n, "merged", attemptOf(fleet, tick.issues.get(n)), cfg.retry + 1, { note: "closed as already satisfied" });
  await fleet.deps.lease.release(n, action.sha);
  await fleet.deps.workRepo.remove(n, { deleteBranch: true }).catch(() => undefined);
  fleet.memory.forget(n);
  await clearRunnerError(fleet, tick, n);
  tick.report.closed.push(n);
  fleet.log("info", "closed_done", `#${n}: closed as already satisfied`, n);
});
