// reclaim: take over a dead peer's stale claim (compare-and-swap from its sha), then continue
// its work (a worker, or its open PR alone), or drop it at once when the issue is closed (a
// phantom lock).
import { fleetIssueResolver, landedPulls } from "../../gh/gather.js";
import { defineEffect } from "./effect.js";
import { attemptOf } from "./failure.js";
import { releasedBoard } from "../drain.js";
import { wrapUpRecovered } from "../recovered.js";

export const reclaim = defineEffect("reclaim", async (fleet, tick, action) => {
  // A tick that decided before births were held (a stop, a breaker trip) takes no new claim.
  if (!action.thenRelease && fleet.birthsHeld()) return;
  const outcome = await fleet.deps.lease.reclaim(action.issue, action.sha);
  if (!outcome.won) return;
  fleet.log("info", "reclaimed", `#${action.issue}: reclaimed a stale claim from ${action.from ?? "an unknown instance"}`, action.issue);
  if (action.thenRelease) {
    await fleet.deps.lease.release(action.issue, outcome.sha);
    tick.report.released.push(action.issue);
    await releasedBoard(fleet, action.issue, "the fleet instance that held it stopped answering, and the issue is closed", "closed");
    return;
  }
  tick.report.reclaimed.push(action.issue);
  // A claim carried by an open PR of the fleet's is continued by its PR (its state decides: land,
  // wait, or the retry ladder), not by a worker pushing more commits to a head being gated.
  const pr = tick.set.stale.find((s) => s.issue === action.issue && s.sha === action.sha)?.pr ?? null;
  if (pr !== null) {
    fleet.log("info", "reclaimed_pr", `#${action.issue}: its open PR #${pr} carries the work on; no worker starts`, action.issue, { pr });
    fleet.board.enter(action.issue, "pr_open");
    return;
  }
  // The dead peer may have been killed between a landing and its wrap-up: its PR merged, so the
  // landing is settled (the issue closed, the claim released), not redone by a worker.
  const stale = tick.set.stale.find((s) => s.issue === action.issue && s.sha === action.sha);
  const { conn } = fleet.deps;
  const issueOf = fleetIssueResolver(
    `${conn.forge.repo.owner}/${conn.forge.repo.name}`,
    fleet.registration.base,
    fleet.registration.config.worktree.branch_prefix,
  );
  const landed = stale ? await landedPulls(conn.forge, [stale], issueOf, conn.login) : [];
  const [settled] = fleet.closes.recover(landed, [{ issue: action.issue, sha: outcome.sha }]);
  if (settled) {
    await wrapUpRecovered(fleet, settled, attemptOf(fleet, tick.issues.get(action.issue)));
    return;
  }
  const issue = tick.issues.get(action.issue);
  if (issue) await fleet.birthFor(issue, attemptOf(fleet, issue) + 1, "continue", outcome.sha);
});
