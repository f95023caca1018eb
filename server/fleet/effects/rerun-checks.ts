// rerun_checks: a red PR whose failing checks are all GitHub Actions jobs with re-runs left
// (`gate.rerun_failed`): GitHub re-runs their runs' failed jobs, the attempt is not spent, and the
// claim waits for the new runs like any pending check. GitHub counts the re-runs (new check runs
// of the same names in the same suites), so nothing here has to; its run attempt guards that count
// (a run already on its last allowed attempt is not re-run). A refusal (the run too old, no
// `actions: write` on the token, re-runs used up) is remembered for the head: its failure then counts.
import { ForgeError } from "../../gh/errors.js";
import { defineEffect } from "./effect.js";

export const rerunChecks = defineEffect("rerun_checks", async (fleet, _tick, action) => {
  const n = action.issue;
  const names = action.checks.map((c) => c.name).join(", ");
  const limit = fleet.registration.config.gate.rerun_failed;
  const round = Math.max(...action.checks.map((c) => c.reruns)) + 1;
  const refused = (why: string): void => {
    fleet.memory.of(n).rerunRefused = { head: action.head, why };
    fleet.log("warn", "rerun_refused", `#${n}: ${names} not re-run on ${action.head.slice(0, 12)} (${why}): the failure counts`, n, {
      pr: action.pr,
      head: action.head,
    });
  };
  let outcome: { rerun: number[]; exhausted: number[] };
  try {
    // One job read per red Actions check (its run and run_attempt), then one re-run per workflow
    // run: a flaky check re-run costs no attempt of the issue (docs/requests.md).
    outcome = await fleet.deps.conn.forge.rerunFailedJobs(
      action.checks.map((c) => c.id),
      limit + 1,
    );
  } catch (error) {
    if (!(error instanceof ForgeError)) throw error;
    refused(`GitHub refused: ${error.message}`);
    return;
  }
  if (outcome.exhausted.length > 0) refused(`workflow run ${outcome.exhausted.join(", ")} is on its attempt ${limit + 1} already`);
  if (outcome.rerun.length === 0) return;
  // Status and the board say it: the attempt was not spent on this failure.
  const note = `${names} failed on ${action.head.slice(0, 12)} and ${outcome.rerun.length === 1 ? "was" : "were"} re-run (${round} of ${limit}); a flaky check costs no attempt`;
  fleet.memory.of(n).notice = note;
  fleet.board.noted(n, note);
  fleet.log("info", "rerun", `#${n}: PR #${action.pr}'s ${names} failed on ${action.head.slice(0, 12)}: re-run ${round} of ${limit} before it counts`, n, {
    pr: action.pr,
    head: action.head,
    checks: names,
    runs: outcome.rerun,
    round,
  });
});
