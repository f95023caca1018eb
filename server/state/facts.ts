// What rebuild reads from one issue, derived once per rebuild: lower-cased labels, the blockers
// and PRD references its body and links name, its attempt count. Every later step looks these up
// instead of re-scanning labels and bodies, which keeps a 10,000-issue rebuild in milliseconds.

import { parseBlockedBySection, parsePrdLabel, parsePrdLines, sortedUnique } from "./links.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface IssueFacts {
  /** Label names, lower-cased (a handful per issue: an array beats a set). */
  labels: readonly string[];
  /** PRDs / epics named by `prd: #N` body lines and `prd:N` labels. */
  prdRefs: ReadonlySet<number>;
  /** Native blocked-by links united with the body's `## Blocked by` section (sorted, unique). */
  blockers: readonly number[];
  /** Native blocked-by links GitHub reports open (one may live in another repository); sorted. */
  openLinks: readonly number[];
  /** Highest `afk-attempt/<n>`; 0 when none. */
  attempt: number;
  /** Whether any `afk-attempt/<n>` label is present (even `/0`). */
  hasAttempt: boolean;
}

const NO_NUMBERS: ReadonlySet<number> = new Set();
const NONE: number[] = [];
const PRD_LABEL_START = /^prd:/i;
// One scan of the body decides whether either parser needs to run at all.
const BODY_HINT = /prd|blocked[ \t]+by/gi;

/** Whether `s` holds an ASCII capital or any non-ASCII character (which may lower-case). */
function mayHaveUpperCase(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a) || c >= 0x80) return true;
  }
  return false;
}

/** Derives an issue's facts, with the attempt-label parser of the config's prefix (`attemptLabelParser` in markers.ts). */
export function issueFactsWith(issue: SnapshotIssue, repo: string, parseAttempt: (label: string) => number | null): IssueFacts {
  // Labels are nearly always lower-case already: share the issue's own list until one differs.
  const source = issue.labels;
  let labels: string[] | null = null;
  let prdRefs: Set<number> | null = null;
  let attempt = 0;
  let hasAttempt = false;
  for (let i = 0; i < source.length; i++) {
    const label = source[i]!;
    if (labels !== null) labels.push(label.toLowerCase());
    else if (mayHaveUpperCase(label)) {
      const lower = label.toLowerCase();
      if (lower !== label) {
        labels = source.slice(0, i);
        labels.push(lower);
      }
    }
    const n = parseAttempt(label);
    if (n !== null) {
      hasAttempt = true;
      if (n > attempt) attempt = n;
    }
    const c = label.charCodeAt(0);
    if ((c === 0x70 || c === 0x50) && PRD_LABEL_START.test(label)) {
      const prd = parsePrdLabel(label);
      if (prd !== null) (prdRefs ??= new Set()).add(prd);
    }
  }
  let written: number[] = NONE;
  // One pass over the body says which parsers have anything to find (`test` allocates no match:
  // the last character matched tells the alternatives apart).
  let prd = false;
  let blocked = false;
  const body = issue.body;
  BODY_HINT.lastIndex = 0;
  while (!(prd && blocked) && BODY_HINT.test(body)) {
    const last = body.charCodeAt(BODY_HINT.lastIndex - 1) | 0x20;
    if (last === 0x64 /* d */) prd = true;
    else blocked = true;
  }
  if (prd) {
    for (const n of parsePrdLines(issue.body, repo)) (prdRefs ??= new Set()).add(n);
  }
  if (blocked) {
    written = parseBlockedBySection(issue.body, repo);
  }
  let blockers = written;
  let openLinks: number[] = NONE;
  if (issue.blockedBy.length > 0) {
    blockers = written.slice();
    for (const link of issue.blockedBy) {
      blockers.push(link.number);
      if (link.state === "open") (openLinks === NONE ? (openLinks = []) : openLinks).push(link.number);
    }
    sortedUnique(blockers);
    if (openLinks !== NONE) sortedUnique(openLinks);
  }
  return { labels: labels ?? source, prdRefs: prdRefs ?? NO_NUMBERS, blockers, openLinks, attempt, hasAttempt };
}
