// escalate: hand the issue to a human (ready-for-human) with where it got stuck.
import { defineEffect } from "./effect.js";
import { escalateIssue } from "./failure.js";

export const escalate = defineEffect("escalate", async (fleet, tick, action) => {
  await escalateIssue(fleet, action.issue, action.sha, action.pr, action.why, action.evidence, tick.issues.get(action.issue));
  tick.report.escalated.push(action.issue);
});
