// adopt: the fleet's own open PR whose issue has no claim is claimed again (create-only, so one
// owner), after one read of the PR confirms it is still open, unmerged, the fleet's, on the same
// branch. No worker starts: the PR is the work, and from the next tick its state decides (green:
// land; pending: wait; red: the retry ladder). See docs/architecture.md, "Orphaned PRs".
import { sameLogin } from "../../state/markers.js";
import { defineEffect } from "./effect.js";

export const adopt = defineEffect("adopt", async (fleet, tick, action) => {
  const n = action.issue;
  // A tick that decided before births were held (a stop, a breaker trip) takes no new claim.
  if (!tick.issues.has(n) || fleet.birthsHeld()) return;
  const { forge, login } = fleet.deps.conn;
  const { registration } = fleet;
  // The listing may be older than the claim refs (a landing merged the PR and released its claim
  // between the two reads): the PR itself says whether it is still open work of ours. One request,
  // only when an orphaned PR of ours is adopted (rare).
  const pull = await forge.getPull(action.pr);
  const same =
    pull.state === "open" &&
    !pull.merged &&
    sameLogin(pull.author, login) &&
    pull.head.ref === action.headRef &&
    pull.head.repoFullName?.toLowerCase() === registration.repo.toLowerCase() &&
    pull.base.ref === registration.base;
  if (!same) return;
  const claimed = await fleet.deps.lease.claim(n);
  if (!claimed.won) {
    fleet.log("info", "claim_lost", `#${n}: a peer claimed it first`, n);
    return;
  }
  tick.report.reclaimed.push(n);
  fleet.log("info", "pr_adopted", `#${n}: claimed again to carry the fleet's open PR #${action.pr}, which had no claim`, n, {
    pr: action.pr,
    head: pull.head.sha,
  });
  fleet.board.enter(n, "pr_open");
});
