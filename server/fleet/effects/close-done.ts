// close_done: the worker found the issue already satisfied and its branch changes nothing
// (decide read that): close the issue with the worker's reason, and let the claim go.
import { oneLine } from "../../text/text.js";
import { defineEffect } from "./effect.js";
import { attemptOf, clearRunnerError, removeWorktree } from "./failure.js";

export const closeDone = defineEffect("close_done", async (fleet, tick, action) => {
  const n = action.issue;
  const { forge } = fleet.deps.conn;
  const cfg = fleet.registration.config;
  await fleet.deps.lease.fence(n, action.sha);
  // One request: no PR will close this issue, so the fleet does.
  await forge.closeIssue(n, "completed");
  // The worker's reason goes on the final board (rendered, so neutralized and bounded; the verdict
  // comment keeps it whole): one comment, where a closing note of its own would be a second.
  await fleet.board.terminal(n, "merged", attemptOf(fleet, tick.issues.get(n)), cfg.retry + 1, {
    note: `closed as already satisfied: ${oneLine(action.reason)}`,
  });
  // The claim goes last: once it is gone, nothing of the issue is left on this host.
  await removeWorktree(fleet, n);
  await fleet.deps.lease.release(n, action.sha);
  fleet.memory.forget(n);
  await clearRunnerError(fleet, tick, n);
  tick.report.closed.push(n);
  fleet.log("info", "closed_done", `#${n}: closed as already satisfied`, n);
});
