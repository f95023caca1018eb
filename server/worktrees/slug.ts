// Worker branch names from issue titles. A title is attacker-controlled text: whatever it holds
// (shell syntax, newlines, 100 KB, emoji, bidi marks), the slug is a short run of [a-z0-9-].
import { assertSafeBranchName } from "../gh/git.js";
import { UsageError } from "../gh/errors.js";
import { FLEET_BRANCH_PREFIX, fleetBranchName } from "../state/markers.js";

/** Longest slug (fleetBranchName cuts at 40 as well). */
export const MAX_SLUG_LENGTH = 40;

// Only this much of a title is looked at: a slug needs a few words, not the whole text.
const MAX_TITLE_SCAN = 400;

// Latin letters that NFKD does not decompose into a base letter plus marks.
const LETTERS: Record<string, string> = {
  ß: "ss",
  ẞ: "ss",
  æ: "ae",
  Æ: "ae",
  œ: "oe",
  Œ: "oe",
  ø: "o",
  Ø: "o",
  đ: "d",
  Đ: "d",
  ð: "d",
  Ð: "d",
  þ: "th",
  Þ: "th",
  ł: "l",
  Ł: "l",
  ı: "i",
  ħ: "h",
  Ħ: "h",
};

/**
 * A slug of lowercase ASCII letters, digits and single hyphens, at most `maxLength` long, with
 * no leading or trailing hyphen; "" when nothing usable is left. Accented Latin letters are
 * transliterated (é → e, ß → ss); everything else that is not ASCII is dropped. Apostrophes
 * vanish ("don't" → "dont") so that words stay whole.
 */
export function safeSlug(title: string, maxLength: number = MAX_SLUG_LENGTH): string {
  if (typeof title !== "string") return "";
  const limit = Math.max(0, Math.min(Math.floor(maxLength), 200));
  const folded = title
    .slice(0, MAX_TITLE_SCAN)
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[^ -~]/g, (c) => LETTERS[c] ?? " ")
    .toLowerCase()
    .replace(/['`]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (folded.length <= limit) return folded;
  const cut = folded.slice(0, limit);
  // End on a word boundary when one is close enough, so the slug does not end mid-word.
  const lastHyphen = cut.lastIndexOf("-");
  const midWord = folded[limit] !== "-";
  const trimmed = midWord && lastHyphen >= limit / 2 ? cut.slice(0, lastHyphen) : cut;
  return trimmed.replace(/-+$/g, "");
}

/** `afk/<n>-<slug>` (or `afk/<n>` when the title leaves no slug), checked against git's rules. */
export function issueBranchName(issue: number, title: string, prefix: string = FLEET_BRANCH_PREFIX): string {
  assertIssueNumber(issue);
  const branch = fleetBranchName(issue, safeSlug(title), prefix);
  assertSafeBranchName(branch);
  return branch;
}

export function assertIssueNumber(issue: number): void {
  if (!Number.isSafeInteger(issue) || issue <= 0) {
    throw new UsageError(`invalid issue number ${JSON.stringify(issue)}: expected a positive integer`);
  }
}
