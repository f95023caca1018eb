// Links written in prose: closing keywords in PR titles and bodies ("Closes #12"), the
// `## Blocked by` section of an issue body, and `prd: #N` lines. A reference to another
// repository is ignored unless it names this one; text inside fenced code blocks is ignored.

const OWNER_NAME = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?/[A-Za-z0-9._-]+";
// One issue reference: "#12", "owner/name#12", or an issue URL on any host (GitHub Enterprise).
// Positional groups (named ones cost an object per match): 1 slug, 2 number | 3 slug, 4 number.
const REF_SOURCE = `(?:(${OWNER_NAME})?#([1-9]\\d{0,9})|https?://[^\\s/]+/(${OWNER_NAME})/issues/([1-9]\\d{0,9}))(?![\\w/])`;

const CLOSING = new RegExp(`(?<![\\w-])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?:\\s*:\\s*|\\s+)${REF_SOURCE}`, "gi");

/** The issue number a matched reference names, or null when it points at another repository. */
function refNumber(m: RegExpExecArray, repo: string): number | null {
  const slug = m[1] ?? m[3];
  const num = m[2] ?? m[4];
  if (num === undefined) {
    return null;
  }
  if (slug !== undefined && (slug.length !== repo.length || slug.toLowerCase() !== repo.toLowerCase())) {
    return null;
  }
  return Number(num);
}

/** Sorts and dedupes in place. Lists here hold a handful of numbers: an insertion sort spares
 * the work array `Array.prototype.sort` allocates on every call. */
export function sortedUnique(numbers: number[]): number[] {
  if (numbers.length <= 1) {
    return numbers;
  }
  if (numbers.length > 16) {
    numbers.sort((a, b) => a - b);
  } else {
    for (let i = 1; i < numbers.length; i++) {
      const v = numbers[i]!;
      let j = i - 1;
      while (j >= 0 && numbers[j]! > v) {
        numbers[j + 1] = numbers[j]!;
        j--;
      }
      numbers[j + 1] = v;
    }
  }
  let w = 1;
  for (let r = 1; r < numbers.length; r++) {
    if (numbers[r] !== numbers[w - 1]) numbers[w++] = numbers[r]!;
  }
  numbers.length = w;
  return numbers;
}

/**
 * The text with fenced code blocks (``` or ~~~) blanked out, line structure kept. Most texts
 * have no fence at all and are returned as they are, unscanned line by line.
 */
function withoutCodeFences(text: string): string {
  if (!text.includes("```") && !text.includes("~~~")) {
    return text;
  }
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null && m) {
      fence = m[1]![0]!;
      out.push("");
      continue;
    }
    if (fence !== null) {
      if (m && m[1]![0] === fence) {
        fence = null;
      }
      out.push("");
      continue;
    }
    out.push(line);
  }
  return out.join("\n");
}

/**
 * Issues a PR closes by GitHub's keywords (close/closes/closed, fix/fixes/fixed,
 * resolve/resolves/resolved, optionally followed by ":"), each keyword naming one issue:
 * as on GitHub, "Closes #3, #4" closes only #3.
 */
export function parseClosingRefs(text: string, repo: string): number[] {
  const found: number[] = [];
  for (const m of withoutCodeFences(text).matchAll(CLOSING)) {
    const n = refNumber(m, repo);
    if (n !== null) {
      found.push(n);
    }
  }
  return sortedUnique(found);
}

// The section and `prd:` parsers walk the text by index with sticky regexes: no per-line
// strings, and candidates are found by their words first — a `^` under the multiline flag
// would be tried at every position of every body.
const HEADING_AT = /[ \t]{0,3}#{1,6}(?=[ \t\r\n]|$)/y;
const BLOCKED_BY_HEADING_AT = /[ \t]{0,3}#{1,6}[ \t]+blocked[ \t]+by\b/iy;
const BLOCKED_BY_WORDS = /blocked[ \t]+by\b/gi;
const HEADING_PREFIX_AT = /[ \t]{0,3}#{1,6}[ \t]+/y;
const LIST_ITEM_AT = /[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/y;
const REF_AT = new RegExp(REF_SOURCE, "iy");
const REF_SEPARATOR_AT = /[ \t]*(?:,|&|and\b)?[ \t]*/iy;

function lineStart(text: string, index: number): number {
  return text.lastIndexOf("\n", index - 1) + 1;
}

/** Whether `re` (sticky) matches at `at` and ends exactly at `end`. */
function matchesBetween(re: RegExp, text: string, at: number, end: number): boolean {
  re.lastIndex = at;
  return re.test(text) && re.lastIndex === end;
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** Index of the start of the first line that is a `Blocked by` heading, or -1. */
function firstBlockedByHeading(text: string): number {
  BLOCKED_BY_WORDS.lastIndex = 0;
  while (BLOCKED_BY_WORDS.test(text)) {
    // The match is "blocked", a run of blanks, "by": walk back from its end (`test` builds no
    // match array).
    let index = BLOCKED_BY_WORDS.lastIndex - 2;
    while (index > 0 && isBlank(text.charCodeAt(index - 1))) index--;
    index -= 7;
    const resume = BLOCKED_BY_WORDS.lastIndex;
    const start = lineStart(text, index);
    if (matchesBetween(HEADING_PREFIX_AT, text, start, index)) {
      return start;
    }
    BLOCKED_BY_WORDS.lastIndex = resume;
  }
  return -1;
}

function isWordOrSlash(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2f;
}

/**
 * Where a bare `#N` reference at `at` ends (what `REF_AT` matches there without a slug), or -1
 * when the text at `at` is not one: `#`, 1-10 digits not starting with 0, then no `[\w/]`.
 */
function plainRefEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== 0x23 /* # */) return -1;
  const first = text.charCodeAt(at + 1);
  if (first < 0x31 || first > 0x39) return -1;
  let end = at + 2;
  while (end < text.length && end - at <= 10) {
    const c = text.charCodeAt(end);
    if (c < 0x30 || c > 0x39) break;
    end++;
  }
  // More than ten digits, or a word character or slash right after: no match (as the regex).
  if (end < text.length && isWordOrSlash(text.charCodeAt(end))) return -1;
  return end;
}

/**
 * Issue numbers listed under a `## Blocked by` heading (any level), until the next heading:
 * list items such as `- #12`, `- [ ] #12`, `- [x] owner/name#12 title`, `- #12, #13`.
 * A checked box does not unblock: whether a blocker is open is read from the snapshot.
 */
export function parseBlockedBySection(body: string, repo: string): number[] {
  const text = withoutCodeFences(body);
  let pos = firstBlockedByHeading(text);
  if (pos < 0) {
    return [];
  }
  const found: number[] = [];
  let inSection = false;
  while (pos <= text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    HEADING_AT.lastIndex = pos;
    if (HEADING_AT.test(text)) {
      BLOCKED_BY_HEADING_AT.lastIndex = pos;
      inSection = BLOCKED_BY_HEADING_AT.test(text);
    } else if (inSection) {
      LIST_ITEM_AT.lastIndex = pos;
      if (LIST_ITEM_AT.test(text)) {
        // The item's leading run of references: "#12", "#12, #13", "#12 and #13".
        let at = LIST_ITEM_AT.lastIndex;
        while (at < end) {
          const plain = plainRefEnd(text, at);
          if (plain > 0) {
            // "#12": the common case, read without a match array.
            found.push(Number(text.slice(at + 1, plain)));
            REF_SEPARATOR_AT.lastIndex = plain;
            REF_SEPARATOR_AT.test(text);
            at = REF_SEPARATOR_AT.lastIndex;
            continue;
          }
          REF_AT.lastIndex = at;
          const m = REF_AT.exec(text);
          if (!m) break;
          const n = refNumber(m, repo);
          if (n !== null) found.push(n);
          REF_SEPARATOR_AT.lastIndex = REF_AT.lastIndex;
          REF_SEPARATOR_AT.test(text);
          at = REF_SEPARATOR_AT.lastIndex;
        }
      }
    }
    pos = end + 1;
  }
  return sortedUnique(found);
}

const PRD_WORD = /prd[ \t]*:[ \t]*/gi;
const PRD_PREFIX_AT = /[ \t]*(?:[-*+][ \t]+)?/y;
// Group 5: a bare number ("prd: 42").
const PRD_VALUE_AT = new RegExp(`(?:${REF_SOURCE}|([1-9]\\d{0,9})\\b)`, "iy");

/** The PRD / epic numbers named by `prd: #N` lines in an issue body. */
export function parsePrdLines(body: string, repo: string): number[] {
  const text = withoutCodeFences(body);
  const found: number[] = [];
  PRD_WORD.lastIndex = 0;
  for (let m = PRD_WORD.exec(text); m !== null; m = PRD_WORD.exec(text)) {
    if (!matchesBetween(PRD_PREFIX_AT, text, lineStart(text, m.index), m.index)) {
      continue;
    }
    PRD_VALUE_AT.lastIndex = m.index + m[0].length;
    const v = PRD_VALUE_AT.exec(text);
    if (!v) {
      continue;
    }
    const n = v[5] !== undefined ? Number(v[5]) : refNumber(v, repo);
    if (n !== null) {
      found.push(n);
    }
  }
  return sortedUnique(found);
}

/** The PRD number a `prd:N` (or `prd:#N`, `prd: N`) label names, or null. */
export function parsePrdLabel(label: string): number | null {
  const m = /^prd:\s*#?([1-9]\d{0,9})$/i.exec(label.trim());
  return m ? Number(m[1]) : null;
}
