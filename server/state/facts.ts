// What rebuild reads from one issue, derived once per rebuild: lower-cased labels, the blockers
// and PRD references its body and links name, its attempt count. Every later step looks these up
// instead of re-scanning labels and bodies, which keeps a 10,000-issue rebuild in milliseconds.

import { parseBlockedBySection, parsePrdLabel, parsePrdLines } from "./links.js";
import { attemptLabelParser } from "./markers.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface IssueFacts {
  /** Label names, lower-cased (a handful per issue: an array beats a set). */
  labels: readonly string[];
  /** PRDs / epics named by `prd: #N` body lines and `prd:N` labels. */
  prdRefs: ReadonlySet<number>;
  /** Native blocked-by links united with the body's `## Blocked by` section (sorted, unique). */
  blockers: readonly number[];
  /** Highest `afk-attempt/<n>`; 0 when none. */
  attempt: number;
  /** Whether any `afk-attempt/<n>` label is present (even `/0`). */
  hasAttempt: boolean;
}

const NO_NUMBERS: ReadonlySet<number> = new Set();
const PRD_LABEL_START = /^prd:/i;
// One scan of the body decides whether either parser needs to run at all.
const BODY_HINT = /(prd)|blocked[ \t]+by/gi;

/** Derives an issue's facts; pass the same `attemptPrefix` the config names. */
export function issueFacts(issue: SnapshotIssue, repo: string, attemptPrefix: string): IssueFacts {
  return issueFactsWith(issue, repo, attemptLabelParser(attemptPrefix));
}

/** `issueFacts` with a prepared attempt-label parser (see `attemptLabelParser`). */
export function issueFactsWith(
  issue: SnapshotIssue,
  repo: string,
  parseAttempt: (label: string) => number | null,
): IssueFacts {
  const labels: string[] = [];
  let prdRefs: Set<number> | null = null;
  let attempt = 0;
  let hasAttempt = false;
  for (const label of issue.labels) {
    labels.push(label.toLowerCase());
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
  let written: number[] = [];
  // One pass over the body says which parsers have anything to find.
  let prd = false;
  let blocked = false;
  BODY_HINT.lastIndex = 0;
  for (let m = BODY_HINT.exec(issue.body); m !== null && !(prd && blocked); m = BODY_HINT.exec(issue.body)) {
    if (m[1] !== undefined) prd = true;
    else blocked = true;
  }
  if (prd) {
    for (const n of parsePrdLines(issue.body, repo)) (prdRefs ??= new Set()).add(n);
  }
  if (blocked) {
    written = parseBlockedBySection(issue.body, repo);
  }
  let blockers = written;
  if (issue.blockedBy.length > 0) {
    const set = new Set(written);
    for (const link of issue.blockedBy) set.add(link.number);
    blockers = [...set].sort((a, b) => a - b);
  }
  return { labels, prdRefs: prdRefs ?? NO_NUMBERS, blockers, attempt, hasAttempt };
}
