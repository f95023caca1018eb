// The discussion a brief carries: the issue's comments and, when a human sent the last attempt
// back, that PR's review line comments. Outside text like the body: newest first within one byte
// budget, each fenced under its author's login, the fleet's own marker comments (boards,
// verdicts, escalations) left out. Nothing here is an instruction: the worker is told so.
import { sameLogin } from "../state/markers.js";
import { headBytes, oneLine } from "../text/text.js";
import { clean, fenced } from "../text/fenced.js";

/** All the comments of one brief together keep at most this many UTF-8 bytes (32 KiB). */
export const BRIEF_COMMENTS_MAX_BYTES = 32 * 1024;
/** A comment cut to fit keeps at least this much, else it is left out with the older ones. */
const MIN_CUT_BYTES = 512;
/** The most comments a brief lists, whatever their size. */
const MAX_COMMENTS = 50;

export interface BriefComment {
  author: string;
  /** ISO time it was written. */
  createdAt: string;
  body: string;
  /** A review line comment's place in the diff. */
  path?: string;
  line?: number | null;
}

/** `<!-- afk:… -->` in any spacing or case: a fleet marker. */
const FLEET_MARKER = /<!--\s*afk:/i;

/**
 * The comments a brief may show: the fleet's own bookkeeping (a comment by its login that carries
 * an afk marker: a board, a verdict, an escalation, a review round) is left out, and never read
 * as an instruction. Anyone else's marker-like text is kept: it is data, fenced like the body.
 */
export function discussion<T extends { author: string; body: string }>(comments: readonly T[], fleetLogin: string): T[] {
  return comments.filter((c) => !(sameLogin(c.author, fleetLogin) && FLEET_MARKER.test(c.body)));
}

export interface RenderedComments {
  lines: string[];
  shown: number;
  /** Older comments left out for the budget. */
  omitted: number;
  /** A comment cut to fit. */
  cut: boolean;
}

/** The comments newest first, each fenced under its author, within `budget` bytes of comment text. */
export function renderComments(comments: readonly BriefComment[], budget: number = BRIEF_COMMENTS_MAX_BYTES): RenderedComments {
  const newest = [...comments].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  const lines: string[] = [];
  let left = budget;
  let shown = 0;
  let cut = false;
  for (const comment of newest) {
    if (shown >= MAX_COMMENTS || left <= 0) break;
    const text = clean(comment.body).trim() || "(empty)";
    const bounded = headBytes(text, left);
    if (bounded.cut && shown > 0 && left < MIN_CUT_BYTES) break;
    const where = comment.path ? ` on ${oneLine(comment.path, 200)}${comment.line ? `:${comment.line}` : ""}` : "";
    lines.push(`From @${oneLine(comment.author, 60) || "ghost"}${where}, ${oneLine(comment.createdAt, 40) || "undated"}:`, "");
    lines.push(fenced(bounded.text, "markdown"));
    if (bounded.cut) {
      lines.push("", `[This comment was truncated: ${Buffer.byteLength(bounded.text)} of ${bounded.bytes} bytes shown.]`);
      cut = true;
    }
    lines.push("");
    left -= Buffer.byteLength(bounded.text);
    shown += 1;
    if (bounded.cut) break;
  }
  return { lines, shown, omitted: newest.length - shown, cut };
}
