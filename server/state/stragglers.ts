// Open issues the fleet cannot consume because nobody triaged them yet: counted so a plan can
// say "3 issues are unlabelled" instead of leaving them silently invisible.

import { NEEDS_INFO_LABEL, NEEDS_TRIAGE_LABEL } from "./markers.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface Stragglers {
  /** Open issues with no label at all. */
  unlabelled: number;
  needsTriage: number;
  needsInfo: number;
}

/** `lowerLabels`, when given, returns an issue's labels already lower-cased (rebuild has them). */
export function countStragglers(
  issues: readonly SnapshotIssue[],
  lowerLabels: (issue: SnapshotIssue) => readonly string[] = (issue) => issue.labels.map((l) => l.toLowerCase()),
): Stragglers {
  const counts: Stragglers = { unlabelled: 0, needsTriage: 0, needsInfo: 0 };
  for (const issue of issues) {
    if (issue.labels.length === 0) {
      counts.unlabelled++;
      continue;
    }
    const labels = lowerLabels(issue);
    if (labels.includes(NEEDS_TRIAGE_LABEL)) counts.needsTriage++;
    if (labels.includes(NEEDS_INFO_LABEL)) counts.needsInfo++;
  }
  return counts;
}
