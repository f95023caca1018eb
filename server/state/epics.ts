// Epics that are done: an open epic a selector picks (itself, or by naming it in `epic`) whose
// sub-issues are all closed, as the issue listing's `sub_issues_summary` says (no request of
// its own). Decide turns each into a close_epic action when `epics.close_when_done` is on.
import type { Excluded } from "./frontier.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface EpicDone {
  issue: number;
  /** Its sub-issues, ascending (all closed). */
  children: number[];
}

/** The epics to close this tick, ascending. Pure. */
export function doneEpics(issues: readonly SnapshotIssue[], excluded: readonly Excluded[], selectors: readonly { epic?: number | null }[]): EpicDone[] {
  const reason = new Map(excluded.map((e) => [e.number, e.reason.kind]));
  const picked = new Set<number>();
  for (const [n, kind] of reason) if (kind === "epic") picked.add(n);
  // An epic a selector names: unless a human holds it (reserved), it is the fleet's to finish.
  for (const s of selectors) if (s.epic != null && reason.get(s.epic) !== "human_reserved") picked.add(s.epic);
  const out: EpicDone[] = [];
  for (const issue of issues) {
    const total = issue.subIssueCount ?? issue.subIssues.length;
    if (!picked.has(issue.number) || total === 0 || issue.subIssuesCompleted !== total) continue;
    out.push({ issue: issue.number, children: [...issue.subIssues].sort((a, b) => a - b) });
  }
  return out.sort((a, b) => a.issue - b.issue);
}
