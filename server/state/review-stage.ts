// The review stage's durable record: every review round the fleet runs ends in a PR review
// comment by the fleet's own login carrying a marker `<!-- afk:review {...} -->` with the
// verdict and the head it pins. Read back from GitHub (never from local memory), so a restart
// knows how many rounds a PR had and which head a reviewer approved. Markers by any other
// login are ignored: only the fleet speaks for its reviewers.
import type { PullReview } from "./ports.js";
import { sameLogin } from "./markers.js";

export const REVIEW_MARKER = "afk:review";

export type ReviewVerdictKind = "approve" | "fix" | "refute" | "none";

export interface ReviewMark {
  verdict: ReviewVerdictKind;
  /** The head the verdict speaks for: the reviewed head, or for "fix" the head with the fixes. */
  head: string;
  round: number;
}

const MARK = /<!--\s*afk:review\s+(\{[^\n]*?\})\s*-->/;
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const KINDS = new Set<ReviewVerdictKind>(["approve", "fix", "refute", "none"]);

export function formatReviewMark(mark: ReviewMark): string {
  return `<!-- ${REVIEW_MARKER} ${JSON.stringify({ verdict: mark.verdict, head: mark.head, round: mark.round })} -->`;
}

export function parseReviewMark(body: string): ReviewMark | null {
  const m = MARK.exec(body);
  if (!m) return null;
  try {
    const o = JSON.parse(m[1]!) as { verdict?: unknown; head?: unknown; round?: unknown };
    if (typeof o.verdict !== "string" || !KINDS.has(o.verdict as ReviewVerdictKind)) return null;
    if (typeof o.head !== "string" || !SHA.test(o.head)) return null;
    if (typeof o.round !== "number" || !Number.isInteger(o.round) || o.round < 1) return null;
    return { verdict: o.verdict as ReviewVerdictKind, head: o.head, round: o.round };
  } catch {
    return null;
  }
}

/** The fleet's review rounds on one PR, oldest first. */
export function reviewMarks(reviews: readonly PullReview[] | undefined, login: string): ReviewMark[] {
  const marks: ReviewMark[] = [];
  for (const r of reviews ?? []) {
    if (!sameLogin(r.author, login)) continue;
    const mark = parseReviewMark(r.body);
    if (mark) marks.push(mark);
  }
  return marks;
}

/** The head a passing review pinned (approve, or fix at its fixed head), if the last round passed. */
export function pinnedHead(marks: readonly ReviewMark[]): string | null {
  const last = marks[marks.length - 1];
  return last && (last.verdict === "approve" || last.verdict === "fix") ? last.head : null;
}
