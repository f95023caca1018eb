// redispatch: a blocked claim whose blockers have all closed runs again (a free re-dispatch,
// counted so a claim that keeps saying "blocked" is escalated instead).
import { defineEffect } from "./effect.js";
import { attemptOf } from "./failure.js";

export const redispatch = defineEffect("redispatch", async (fleet, tick, action) => {
  const issue = tick.issues.get(action.issue);
  if (!issue) return;
  fleet.memory.of(action.issue).redispatches += 1;
  await fleet.birthFor(issue, attemptOf(fleet, issue) + 1, "continue", action.sha);
});
