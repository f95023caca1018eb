// escalate: hand the issue to a human (ready-for-human) with where it got stuck.
import { defineEffect } from "./effect.js";
import { escalateIssue } from "./failure.js";

export const escalate = defineEffect("escalate", async (fleet, tick, action) => {
  // The head the snapshot judged red: its checks are the evidence (no read of the PR for it).
  const head = tick.set.mine.find((m) => m.issue === action.issue && m.pr === action.pr)?.head ?? null;
  await escalateIssue(fleet, action.issue, action.sha, action.pr, action.why, action.evidence, tick.issues.get(action.issue), head);
  tick.report.escalated.push(action.issue);
});
