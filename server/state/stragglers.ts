// Open issues the fleet cannot consume because nobody triaged them yet: counted so a plan can
// say "3 issues are unlabelled" instead of leaving them silently invisible.

import { hasLabel, NEEDS_INFO_LABEL, NEEDS_TRIAGE_LABEL } from "./markers.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface Stragglers {
  /** Open issues with no label at all. */
  unlabelled: number;
  needsTriage: number;
  needsInfo: number;
}

export function countStragglers(issues: readonly SnapshotIssue[]): Stragglers {
  const counts: Stragglers = { unlabelled: 0, needsTriage: 0, needsInfo: 0 };
  for (const issue of issues) {
    if (issue.labels.length === 0) {
      counts.unlabelled++;
      continue;
    }
    if (hasLabel(issue.labels, NEEDS_TRIAGE_LABEL)) counts.needsTriage++;
    if (hasLabel(issue.labels, NEEDS_INFO_LABEL)) counts.needsInfo++;
  }
  return counts;
}
