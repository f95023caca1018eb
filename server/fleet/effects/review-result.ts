// review_result: take an exited reviewer's verdict. It is posted on the PR as a review comment by
// the fleet's login, with a marker pinning the head it speaks for (the durable record of the
// round); a fix is pushed (and gated again); a refutation sends its findings down the retry ladder.
import { neutralizeMarkers } from "../../board/render.js";
import { formatReviewMark, type ReviewMark } from "../../state/review-stage.js";
import { defineEffect, type FleetRuntime } from "./effect.js";
import { failedAttempt } from "./failure.js";

export const reviewResult = defineEffect("review_result", async (fleet, tick, action) => {
  const n = action.issue;
  const run = fleet.memory.run(n);
  const facts = run?.exitFacts;
  if (!run || !facts || run.role !== "reviewer" || !run.reviewOf) return;
  fleet.memory.endRun(n);
  const reviewed = run.reviewOf.head;
  const round = run.reviewOf.round;
  const verdict = facts.review;
  if (verdict === undefined || typeof verdict === "string" || action.head !== reviewed) {
    const why = typeof verdict === "string" ? verdict : `PR #${action.pr}'s head moved to ${action.head.slice(0, 12)} during the review`;
    await post(fleet, action.pr, reviewed, { verdict: "none", head: reviewed, round }, `No verdict: ${why}.`);
    fleet.log("warn", "review_none", `#${n}: review round ${round} of PR #${action.pr} gave no verdict: ${why}`, n);
    return;
  }
  if (verdict.verdict === "refute") {
    await post(fleet, action.pr, reviewed, { verdict: "refute", head: reviewed, round }, verdict.findings);
    fleet.log("info", "review_refuted", `#${n}: the reviewer refuted PR #${action.pr}`, n, { head: reviewed, round });
    await failedAttempt(fleet, tick, { issue: n, sha: action.sha, pr: action.pr }, { kind: "review_findings", pr: action.pr, findings: verdict.findings });
    return;
  }
  let head = reviewed;
  if (verdict.verdict === "fix") {
    await fleet.deps.lease.fence(n, action.sha);
    const pushed = await fleet.deps.workRepo.push(n);
    head = pushed.sha;
    if (head !== reviewed) tick.events.pushed.push({ issue: n, pr: action.pr, head });
  }
  const kind = verdict.verdict === "fix" && head !== reviewed ? "fix" : "approve";
  await post(fleet, action.pr, head, { verdict: kind, head, round }, verdict.findings);
  fleet.log(
    "info",
    `review_${kind === "fix" ? "fixed" : "approved"}`,
    `#${n}: the reviewer ${kind === "fix" ? "fixed" : "approved"} PR #${action.pr} at ${head.slice(0, 12)}`,
    n,
    { head, round },
  );
});

async function post(fleet: FleetRuntime, pr: number, commitId: string, mark: ReviewMark, text: string): Promise<void> {
  const max = fleet.registration.config.review.max_rounds;
  const words = { approve: "approved", fix: "fixed in place (pushed; gated again before it lands)", refute: "refuted", none: "no verdict" }[mark.verdict];
  const body = [
    formatReviewMark(mark),
    `**afk-mcp review, round ${mark.round} of ${max}: ${words}** at \`${mark.head.slice(0, 12)}\``,
    "",
    neutralizeMarkers(text.trim() || "(no findings)"),
  ].join("\n");
  // One request per review round: the round's marker is durable state (a restart counts rounds
  // from these reviews) and the findings are what a human reads on the PR.
  await fleet.deps.conn.forge.createReview(pr, { event: "COMMENT", body, commitId });
}
