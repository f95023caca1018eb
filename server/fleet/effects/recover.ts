// recover: a claim we hold has no worker (a restart, a hung worker killed): continue its work.
import { defineEffect } from "./effect.js";
import { attemptOf } from "./failure.js";

export const recover = defineEffect("recover", async (fleet, tick, action) => {
  const issue = tick.issues.get(action.issue);
  if (!issue) return;
  await fleet.birthFor(issue, attemptOf(fleet, issue) + 1, "continue", action.sha);
});
