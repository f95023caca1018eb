// dispatch: claim a frontier issue (create-only, so one worker per issue) and start its worker.
import { defineEffect } from "./effect.js";

export const dispatch = defineEffect("dispatch", async (fleet, tick, action) => {
  const issue = tick.issues.get(action.issue);
  // A tick that decided before births were held (a stop, a breaker trip) claims nothing new.
  if (!issue || fleet.birthsHeld()) return;
  const claimed = await fleet.deps.lease.claim(action.issue);
  if (!claimed.won) {
    fleet.log("info", "claim_lost", `#${action.issue}: a peer claimed it first`, action.issue);
    return;
  }
  tick.report.dispatched.push(action.issue);
  fleet.board.claimed(action.issue, { noComments: issue.comments === 0 });
  await fleet.birthFor(issue, action.attempt + 1, "continue", claimed.sha);
});
