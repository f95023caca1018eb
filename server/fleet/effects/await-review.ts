// await_review: a green PR of ours that the base branch will not merge without a human's
// approving review. The claim stays and no worker runs; the PR gets one note saying exactly
// what is needed (posted once per PR, found again after a restart), the board says so too.
import { sameLogin } from "../../state/markers.js";
import { defineEffect } from "./effect.js";

/** Tags the fleet's note on a PR that waits for a human's review. */
export const AWAITING_REVIEW_MARKER = "<!-- afk:awaiting-review -->";

export const awaitReview = defineEffect("await_review", async (fleet, tick, action) => {
  tick.report.awaiting_review.push(action.issue);
  const memory = fleet.memory.of(action.issue);
  if (memory.reviewNoticePr === action.pr) return;
  const { forge, login } = fleet.deps.conn;
  // Two requests at most, once per PR and process: the note's marker is looked for first (a
  // restarted fleet must not post it twice), and the note posted when it is missing.
  const comments = await forge.listComments(action.pr);
  if (!comments.some((c) => sameLogin(c.author, login) && c.body.includes(AWAITING_REVIEW_MARKER))) {
    await forge.createComment(action.pr, reviewNote(fleet.registration.base, action.required, action.approvedBy));
    fleet.log("info", "awaiting_review", `#${action.issue}: PR #${action.pr} is green and waits for ${action.required} approving review(s)`, action.issue, {
      pr: action.pr,
      head: action.head,
    });
  }
  memory.reviewNoticePr = action.pr;
});

function reviewNote(base: string, required: number, approvedBy: readonly string[]): string {
  const reviews = `${required} approving review${required === 1 ? "" : "s"}`;
  return [
    AWAITING_REVIEW_MARKER,
    `**afk-mcp: waiting for a human review.** This pull request passed the fleet's gate, but \`${base}\` requires ${reviews} from someone with write access, and the fleet never approves its own pull requests.`,
    "",
    `- Approved so far: ${approvedBy.length > 0 ? approvedBy.join(", ") : "nobody"}.`,
    `- **To land it:** approve it (Files changed → Review changes → Approve). The fleet lands it on its next pass.`,
    `- **To send it back:** request changes and say what to fix: your review's text becomes the evidence in the next attempt's brief.`,
    "",
    "Meanwhile the fleet keeps its claim on the issue and works on others.",
  ].join("\n");
}
