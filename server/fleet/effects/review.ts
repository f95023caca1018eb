// review: start a reviewer on a green PR's head, through the same birth path as a worker (the
// issue's worktree, continued at the PR head; liveness, stalls, quota and the breaker apply).
import { LandingGit } from "../../landing/landing-git.js";
import { reviewDiff } from "../../landing/review-pin.js";
import { defineEffect } from "./effect.js";

export const review = defineEffect("review", async (fleet, tick, action) => {
  const issue = tick.issues.get(action.issue);
  const claim = tick.set.mine.find((m) => m.issue === action.issue);
  if (!issue || !claim) return;
  const cfg = fleet.registration.config;
  const base = fleet.registration.base;
  // The head may have been pushed from elsewhere (a human, another host): fetch it first.
  const { conn, workRepo } = fleet.deps;
  const lg = new LandingGit(workRepo, { token: conn.token, url: conn.info.cloneUrl });
  const tips = await lg.fetchTips(base, claim.headRef ?? "", action.issue);
  const { diff, cut } = await reviewDiff(workRepo.repoDir, tips.base, action.head, cfg.review.diff_bytes).finally(() => lg.dropPrivateRefs(action.issue));
  const gate =
    cfg.gate.ci === "required"
      ? `green on this head: ${claim.gate ? "every required check passed" : "checks passed"}`
      : `the local gate (${cfg.gate.local_command ?? ""}) runs on exactly this tree (or its sync with ${base}) before it lands`;
  const started = await fleet.birthFor(issue, claim.attempt + 1, "continue", action.sha, {
    pr: { number: action.pr, url: `${fleet.deps.conn.info.htmlUrl.replace(/\/$/, "")}/pull/${action.pr}` },
    head: action.head,
    round: action.round,
    maxRounds: cfg.review.max_rounds,
    diff,
    diffCut: cut,
    gate,
  });
  const run = fleet.memory.run(action.issue);
  if (started && run && run.role === "reviewer" && run.prepared.head !== action.head) {
    // The worktree is not at the PR head (moved elsewhere): a verdict would speak for another tree.
    await run.handle.stop("the worktree is not at the PR head");
    fleet.log(
      "warn",
      "review_skipped",
      `#${action.issue}: the worktree is at ${run.prepared.head?.slice(0, 12) ?? "?"}, not at PR #${action.pr}'s head ${action.head.slice(0, 12)}`,
      action.issue,
    );
  }
});
