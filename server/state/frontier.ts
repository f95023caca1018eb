// The frontier: which open issues may be dispatched now, in which order, and — for every other
// open issue — the one reason it is not, chosen by a fixed precedence so a plan reads the same
// on every tick and on every host.

import { sameLogin } from "./markers.js";
import type { CoreLabels } from "./config.js";
import type { DependencyAnalysis } from "./dependencies.js";
import type { IssueFacts } from "./facts.js";
import type { SnapshotIssue } from "./snapshot.js";

export interface DispatchItem {
  number: number;
  title: string;
  /** Index of the first selector that picks the issue: lower goes first. */
  selector: number;
  /** Carries the priority-high label: first within its selector. */
  high: boolean;
  /** From `afk-attempt/<n>` labels (a released issue keeps its count). */
  attempt: number;
}

export type ClaimState = "mine" | "peer_live" | "stale";

export type ExclusionReason =
  | { kind: "human_reserved"; via: "escalate_label" | "hold_label"; label: string }
  | { kind: "human_reserved"; via: "ready_label_removed"; label: string; artefacts: string[] }
  | { kind: "not_selected" }
  | { kind: "epic"; via: "label"; label: string }
  | { kind: "epic"; via: "sub_issues"; count: number }
  | { kind: "claimed"; instance: string | null; host: string | null; sha: string; state: ClaimState }
  | { kind: "open_pr"; pulls: number[] }
  | { kind: "assigned"; assignees: string[] }
  | { kind: "cycle"; members: number[] }
  | { kind: "blocked"; by: number[] };

export type ExclusionKind = ExclusionReason["kind"];

/**
 * When several reasons hold, the first in this list is reported:
 * - a human's word outranks every machine fact;
 * - outside the work scope, nothing else is worth saying;
 * - an epic is never worker-sized, whatever else holds;
 * - a claim, then an open PR: work is in flight (and the claim carries the fencing token);
 * - an assignee: a person has it;
 * - a cycle before plain blocking: it is the root cause, and it never resolves by waiting.
 */
export const EXCLUSION_PRECEDENCE: readonly ExclusionKind[] = [
  "human_reserved",
  "not_selected",
  "epic",
  "claimed",
  "open_pr",
  "assigned",
  "cycle",
  "blocked",
];

export interface Excluded {
  number: number;
  reason: ExclusionReason;
  text: string;
}

export interface Frontier {
  dispatch: DispatchItem[];
  excluded: Excluded[];
}

export interface ClaimOnIssue {
  instance: string | null;
  host: string | null;
  sha: string;
  state: ClaimState;
}

/** One open issue with what rebuild derived from it once. */
export interface IssueRow {
  issue: SnapshotIssue;
  facts: IssueFacts;
  /** Index of the first selector that picks the issue; -1 when none does. */
  priority: number;
}

export interface FrontierInput {
  /** Open issues, unique by number. */
  rows: readonly IssueRow[];
  labels: CoreLabels;
  login: string;
  /** Issue → the claim on it (when several: mine first, then by sha). */
  claimOf: ReadonlyMap<number, ClaimOnIssue>;
  /** Issue → open PRs linked to it, sorted. */
  linkedPullsOf: ReadonlyMap<number, readonly number[]>;
  /** Issue → the fleet's own open PR number. */
  fleetPullOf: ReadonlyMap<number, number>;
  deps: DependencyAnalysis;
}

/**
 * Reserved for humans when:
 * (a) the issue carries the escalate label (`ready-for-human`) — even if someone re-added the
 *     ready label: a human hands it back by removing the escalate label; or
 * (a') it carries the hold label (`afk-hold`): hands off, whatever the selectors say; or
 * (b) it lacks the ready label, no selector picks it any more, and a fleet artefact remains on it
 *     (an `afk-attempt/<n>` label, a claim ref, or an open fleet-branch PR): the fleet worked on
 *     it and a human then took it out of scope. (b) never overrides a selector that still picks
 *     the issue, so a scope that does not ask for the ready label (`label: null`) is not affected.
 */
export function humanReservation(
  facts: Pick<IssueFacts, "labels" | "hasAttempt">,
  selected: boolean,
  artefacts: { claimed: boolean; fleetPull: number | null },
  labels: CoreLabels,
): Extract<ExclusionReason, { kind: "human_reserved" }> | null {
  if (facts.labels.includes(labels.escalate.toLowerCase())) {
    return { kind: "human_reserved", via: "escalate_label", label: labels.escalate };
  }
  if (labels.hold !== undefined && facts.labels.includes(labels.hold.toLowerCase())) {
    return { kind: "human_reserved", via: "hold_label", label: labels.hold };
  }
  if (selected || facts.labels.includes(labels.ready.toLowerCase())) {
    return null;
  }
  const found: string[] = [];
  if (facts.hasAttempt) found.push("attempt label");
  if (artefacts.claimed) found.push("claim");
  if (artefacts.fleetPull !== null) found.push(`fleet PR #${artefacts.fleetPull}`);
  if (found.length === 0) {
    return null;
  }
  return { kind: "human_reserved", via: "ready_label_removed", label: labels.ready, artefacts: found };
}

function epicReason(
  issue: SnapshotIssue,
  facts: IssueFacts,
  labels: CoreLabels,
): Extract<ExclusionReason, { kind: "epic" }> | null {
  for (const label of labels.epic) {
    if (facts.labels.includes(label.toLowerCase())) {
      return { kind: "epic", via: "label", label };
    }
  }
  const count = Math.max(issue.subIssues.length, issue.subIssueCount ?? 0);
  return count > 0 ? { kind: "epic", via: "sub_issues", count } : null;
}

/** The one reason an issue is not dispatchable, or null when it is. */
export function exclusionFor(row: IssueRow, input: FrontierInput): ExclusionReason | null {
  const { issue, facts } = row;
  const selected = row.priority >= 0;
  const claim = input.claimOf.get(issue.number);
  const reserved = humanReservation(
    facts,
    selected,
    { claimed: claim !== undefined, fleetPull: input.fleetPullOf.get(issue.number) ?? null },
    input.labels,
  );
  if (reserved) return reserved;
  if (!selected) return { kind: "not_selected" };
  const epic = epicReason(issue, facts, input.labels);
  if (epic) return epic;
  if (claim) return { kind: "claimed", instance: claim.instance, host: claim.host, sha: claim.sha, state: claim.state };
  const pulls = input.linkedPullsOf.get(issue.number);
  if (pulls && pulls.length > 0) return { kind: "open_pr", pulls: [...pulls] };
  const others = issue.assignees.filter((a) => !sameLogin(a, input.login));
  if (others.length > 0) return { kind: "assigned", assignees: [...others].sort() };
  const cycle = input.deps.cycleOf.get(issue.number);
  if (cycle) return { kind: "cycle", members: [...cycle] };
  const blockers = input.deps.openBlockers.get(issue.number);
  if (blockers && blockers.length > 0) return { kind: "blocked", by: [...blockers] };
  return null;
}

const refs = (numbers: readonly number[]): string => numbers.map((n) => `#${n}`).join(", ");

export function describeExclusion(reason: ExclusionReason): string {
  switch (reason.kind) {
    case "human_reserved":
      return reason.via === "ready_label_removed"
        ? `reserved for humans: ${reason.label} was removed while the fleet's ${reason.artefacts.join(", ")} remained`
        : `reserved for humans: labelled ${reason.label}`;
    case "not_selected":
      return "not picked by any selector";
    case "epic":
      return reason.via === "label" ? `epic: labelled ${reason.label}` : `epic: has ${reason.count} sub-issue(s)`;
    case "claimed":
      if (reason.instance === null) return `claimed by an unreadable claim (${reason.sha.slice(0, 7)}): reclaimable`;
      if (reason.state === "mine") return `claimed by this instance (${reason.instance})`;
      return reason.state === "peer_live"
        ? `claimed by instance ${reason.instance}${reason.host ? ` on ${reason.host}` : ""} (lease fresh)`
        : `claimed by instance ${reason.instance}${reason.host ? ` on ${reason.host}` : ""} (lease expired: reclaimable)`;
    case "open_pr":
      return `open PR ${refs(reason.pulls)} for it`;
    case "assigned":
      return `assigned to ${reason.assignees.map((a) => `@${a}`).join(", ")}`;
    case "cycle":
      return `dependency cycle among ${refs(reason.members)}: fix the blocked-by links`;
    case "blocked":
      return `blocked by open ${refs(reason.by)}`;
  }
}

export function compareDispatch(a: DispatchItem, b: DispatchItem): number {
  return a.selector - b.selector || (a.high === b.high ? 0 : a.high ? -1 : 1) || a.number - b.number;
}

export function computeFrontier(input: FrontierInput): Frontier {
  const dispatch: DispatchItem[] = [];
  const excluded: Excluded[] = [];
  const high = input.labels.priority_high.toLowerCase();
  for (const row of input.rows) {
    const reason = exclusionFor(row, input);
    if (reason) {
      excluded.push({ number: row.issue.number, reason, text: describeExclusion(reason) });
      continue;
    }
    dispatch.push({
      number: row.issue.number,
      title: row.issue.title,
      selector: row.priority,
      high: row.facts.labels.includes(high),
      attempt: row.facts.attempt,
    });
  }
  dispatch.sort(compareDispatch);
  excluded.sort((a, b) => a.number - b.number);
  return { dispatch, excluded };
}
