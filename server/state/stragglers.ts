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

/** `lowerLabels`, when given, holds each issue's labels already lower-cased (aligned with `issues`). */
export function countStragglers(issues: readonly SnapshotIssue[], lowerLabels?: readonly (readonly string[])[]): Stragglers {
  const counts: Stragglers = { unlabelled: 0, needsTriage: 0, needsInfo: 0 };
  for (let i = 0; i < issues.length; i++) {
    const issue = issues[i]!;
    if (issue.labels.length === 0) {
      counts.unlabelled++;
      continue;
    }
    const labels = lowerLabels?.[i] ?? issue.labels.map((l) => l.toLowerCase());
    if (labels.includes(NEEDS_TRIAGE_LABEL)) counts.needsTriage++;
    if (labels.includes(NEEDS_INFO_LABEL)) counts.needsInfo++;
  }
  return counts;
}
