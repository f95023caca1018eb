// rerun_checks: a red PR whose failing checks are all GitHub Actions jobs with re-runs left
// (`gate.rerun_failed`): GitHub re-runs their runs' failed jobs, the attempt is not spent, and the
// claim waits for the new runs like any pending check. GitHub counts the re-runs (new check runs
// of the same names in the same suites), so nothing here has to. A refusal (the run too old, no
// `actions: write` on the token) is remembered for the head: its failure then counts as it is.
import { ForgeError } from "../../gh/errors.js";
import { defineEffect } from "./effect.js";

export const rerunChecks = defineEffect("rerun_checks", async (fleet, _tick, action) => {
  const n = action.issue;
  const names = action.checks.map((c) => c.name).join(", ");
  const limit = fleet.registration.config.gate.rerun_failed;
  const round = Math.max(...action.checks.map((c) => c.reruns)) + 1;
  try {
    const runs = await fleet.deps.conn.forge.rerunFailedJobs(action.checks.map((c) => c.id));
    fleet.log("info", "rerun", `#${n}: PR #${action.pr}'s ${names} failed on ${action.head.slice(0, 12)}: re-run ${round} of ${limit} before it counts`, n, {
      pr: action.pr,
      head: action.head,
      checks: names,
      runs,
      round,
    });
  } catch (error) {
    if (!(error instanceof ForgeError)) throw error;
    fleet.memory.of(n).rerunRefused = { head: action.head, why: error.message };
    fleet.log("warn", "rerun_refused", `#${n}: GitHub refused to re-run ${names} on ${action.head.slice(0, 12)} (${error.message}): the failure counts`, n, {
      pr: action.pr,
      head: action.head,
    });
  }
});
