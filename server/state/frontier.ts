// The frontier: which open issues may be dispatched now, in which order, and — for every other
// open issue — the one reason it is not, chosen by a fixed precedence so a plan reads the same
// on every tick and on every host.

import { sameLogin } from "./markers.js";
import type { CoreLabels } from "./config.js";
import type { DependencyAnalysis } from "./dependencies.js";
import type { IssueFacts } from "./facts.js";
import type { SnapshotIssue } from "./snapshot.js";
import { engineLabel, type Route } from "./route.js";
import type { NamedMiss } from "./selectors.js";

export interface DispatchItem {
  number: number;
  title: string;
  /** Index of the first selector that picks the issue: lower goes first. */
  selector: number;
  /** Carries the priority-high label: first within its selector. */
  high: boolean;
  /** From `afk-attempt/<n>` labels (a released issue keeps its count). */
  attempt: number;
  /** Picked as an open blocker of these issues, which an `issues` selector names. */
  blocks?: number[];
  /** Its place in its `issues` selector's list (absent: a selector without a list; order by priority, then number). */
  rank?: number;
  /** The engine and model its next attempt runs (route.ts); absent: no engine start (an opaque command). */
  route?: Route;
}

export type ClaimState = "mine" | "peer_live" | "stale";

export type ExclusionReason =
  | { kind: "human_reserved"; via: "escalate_label" | "hold_label"; label: string }
  | { kind: "human_reserved"; via: "ready_label_removed"; label: string; artefacts: string[] }
  | { kind: "not_selected" }
  /**
   * An `issues` selector names it (or pulls it in as an open blocker of `blocks`), but it fails
   * the selector's other facets (`missing`, e.g. "no label ready-for-agent"): not ready yet.
   */
  | { kind: "not_ready"; selector: number; missing: string[]; blocks?: number[] }
  | { kind: "epic"; via: "label"; label: string }
  | { kind: "epic"; via: "sub_issues"; count: number }
  | { kind: "claimed"; instance: string | null; host: string | null; sha: string; state: ClaimState }
  | { kind: "open_pr"; pulls: number[] }
  | { kind: "assigned"; assignees: string[] }
  /** Its `afk-engine/<name>` label names an engine this fleet cannot run (`known`: the ones it can). */
  | { kind: "engine_unknown"; label: string; engine: string; known: string[] }
  | { kind: "cycle"; members: number[] }
  | { kind: "blocked"; by: number[] };

export type ExclusionKind = ExclusionReason["kind"];

export interface Excluded {
  number: number;
  reason: ExclusionReason;
  text: string;
  /** Pulled in by an `issues` selector as an open blocker of these named issues. */
  blocks?: number[];
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
  /** That selector picked it as an open blocker of these named issues. */
  pulledFor?: number[];
  /** Its place in that selector's `issues` list (see DispatchItem.rank). */
  rank?: number;
  /** No selector picks it, but an `issues` selector names it or pulls it in: what it lacks. */
  named?: NamedMiss;
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
  /**
   * The engines an `afk-engine/<name>` label may name (those this fleet verified at its start;
   * for a dry-run plan, those the config knows). Empty: the fleet runs an opaque command and
   * follows no engine label. Absent: labels are not checked.
   */
  engines?: readonly string[];
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
  return reservationWith(facts, selected, artefacts.claimed, artefacts.fleetPull, lowerLabels(labels));
}

/** The configured labels a frontier compares, lower-cased once. */
interface LowerLabels {
  labels: CoreLabels;
  escalate: string;
  hold: string | undefined;
  ready: string;
  epic: readonly string[];
}

function lowerLabels(labels: CoreLabels): LowerLabels {
  return {
    labels,
    escalate: labels.escalate.toLowerCase(),
    hold: labels.hold !== undefined ? labels.hold.toLowerCase() : undefined,
    ready: labels.ready.toLowerCase(),
    epic: labels.epic.map((l) => l.toLowerCase()),
  };
}

function reservationWith(
  facts: Pick<IssueFacts, "labels" | "hasAttempt">,
  selected: boolean,
  claimed: boolean,
  fleetPull: number | null,
  lower: LowerLabels,
): Extract<ExclusionReason, { kind: "human_reserved" }> | null {
  const labels = lower.labels;
  if (facts.labels.includes(lower.escalate)) {
    return { kind: "human_reserved", via: "escalate_label", label: labels.escalate };
  }
  if (lower.hold !== undefined && facts.labels.includes(lower.hold)) {
    return { kind: "human_reserved", via: "hold_label", label: labels.hold! };
  }
  if (selected || facts.labels.includes(lower.ready)) {
    return null;
  }
  if (!facts.hasAttempt && !claimed && fleetPull === null) {
    return null;
  }
  const found: string[] = [];
  if (facts.hasAttempt) found.push("attempt label");
  if (claimed) found.push("claim");
  if (fleetPull !== null) found.push(`fleet PR #${fleetPull}`);
  return { kind: "human_reserved", via: "ready_label_removed", label: labels.ready, artefacts: found };
}

function epicReason(issue: SnapshotIssue, facts: IssueFacts, lower: LowerLabels): Extract<ExclusionReason, { kind: "epic" }> | null {
  for (let i = 0; i < lower.epic.length; i++) {
    if (facts.labels.includes(lower.epic[i]!)) {
      return { kind: "epic", via: "label", label: lower.labels.epic[i]! };
    }
  }
  const count = Math.max(issue.subIssues.length, issue.subIssueCount ?? 0);
  return count > 0 ? { kind: "epic", via: "sub_issues", count } : null;
}

/**
 * The one reason an issue is not dispatchable, or null when it is. When several hold, the first
 * in this order is reported (human_reserved, not_selected, not_ready, epic, claimed, open_pr,
 * assigned, engine_unknown, cycle, blocked):
 * - a human's word outranks every machine fact;
 * - outside the work scope, nothing else is worth saying (and an issue a list names but that
 *   fails its other facets is not ready, which is said instead);
 * - an epic is never worker-sized, whatever else holds;
 * - a claim, then an open PR: work is in flight (and the claim carries the fencing token);
 * - an assignee: a person has it;
 * - a label naming an engine the fleet cannot run: a human fixes the label or the config (shown
 *   before a cycle or a blocker, which would hide it until the issue is otherwise ready);
 * - a cycle before plain blocking: it is the root cause, and it never resolves by waiting.
 */
export function exclusionFor(row: IssueRow, input: FrontierInput): ExclusionReason | null {
  return exclusionWith(row, input, lowerLabels(input.labels));
}

function exclusionWith(row: IssueRow, input: FrontierInput, lower: LowerLabels): ExclusionReason | null {
  const { issue, facts } = row;
  const selected = row.priority >= 0;
  const claim = input.claimOf.get(issue.number);
  const reserved = reservationWith(facts, selected, claim !== undefined, input.fleetPullOf.get(issue.number) ?? null, lower);
  if (reserved) return reserved;
  if (!selected) {
    const named = row.named;
    if (named) return { kind: "not_ready", selector: named.selector, missing: [...named.missing], ...(named.blocks ? { blocks: [...named.blocks] } : {}) };
    return { kind: "not_selected" };
  }
  const epic = epicReason(issue, facts, lower);
  if (epic) return epic;
  if (claim) return { kind: "claimed", instance: claim.instance, host: claim.host, sha: claim.sha, state: claim.state };
  const pulls = input.linkedPullsOf.get(issue.number);
  if (pulls && pulls.length > 0) return { kind: "open_pr", pulls: [...pulls] };
  if (issue.assignees.length > 0) {
    const others = issue.assignees.filter((a) => !sameLogin(a, input.login));
    if (others.length > 0) return { kind: "assigned", assignees: others.sort() };
  }
  if (input.engines !== undefined) {
    const engine = engineLabel(issue.labels);
    if (engine !== undefined && !input.engines.includes(engine))
      return { kind: "engine_unknown", label: `afk-engine/${engine}`, engine, known: [...input.engines] };
  }
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
    case "not_ready": {
      const why = reason.missing.length > 0 ? reason.missing.join(", ") : "its selector's facets do not match";
      return reason.blocks
        ? `not ready: ${why}; an open blocker of ${refs(reason.blocks)}, pulled in by selector ${reason.selector + 1}, which wait for it: label it, or close the link`
        : `not ready: ${why}; named by selector ${reason.selector + 1}`;
    }
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
    case "engine_unknown":
      return reason.known.length === 0
        ? `labelled ${reason.label}, but this fleet runs an opaque worker_command and follows no engine label: start it with engine, or remove the label`
        : `labelled ${reason.label}: engine ${JSON.stringify(reason.engine)} is not one this fleet runs (${reason.known.join(", ")}): fix the label, or define it under config "engines" (verified at start)`;
    case "cycle":
      return `dependency cycle among ${refs(reason.members)}: fix the blocked-by links`;
    case "blocked":
      return `blocked by open ${refs(reason.by)}`;
  }
}

/** Selector first; within an `issues` selector its list's order; else priority-high, then number. */
export function compareDispatch(a: DispatchItem, b: DispatchItem): number {
  return a.selector - b.selector || (a.rank ?? 0) - (b.rank ?? 0) || (a.high === b.high ? 0 : a.high ? -1 : 1) || a.number - b.number;
}

export function computeFrontier(input: FrontierInput): Frontier {
  const dispatch: DispatchItem[] = [];
  const excluded: Excluded[] = [];
  const lower = lowerLabels(input.labels);
  const high = input.labels.priority_high.toLowerCase();
  const rows = input.rows;
  let ascending = true;
  let ranked = false;
  let maxSelector = -1;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const number = row.issue.number;
    if (i > 0 && number <= rows[i - 1]!.issue.number) ascending = false;
    const reason = exclusionWith(row, input, lower);
    if (reason) {
      const blocks = row.pulledFor ?? row.named?.blocks;
      excluded.push({ number, reason, text: describeExclusion(reason), ...(blocks ? { blocks } : {}) });
      continue;
    }
    if (row.priority > maxSelector) maxSelector = row.priority;
    if (row.rank !== undefined) ranked = true;
    dispatch.push({
      number,
      title: row.issue.title,
      selector: row.priority,
      high: row.facts.labels.includes(high),
      attempt: row.facts.attempt,
      ...(row.pulledFor ? { blocks: row.pulledFor } : {}),
      ...(row.rank !== undefined ? { rank: row.rank } : {}),
    });
  }
  if (ascending && !ranked && maxSelector < 64) {
    // Rows come by ascending number (as rebuild passes them): the excluded list is in order
    // already, and the dispatch order is a stable bucketing by (selector, high) — no sort.
    return { dispatch: bucketDispatch(dispatch, maxSelector + 1), excluded };
  }
  dispatch.sort(compareDispatch);
  excluded.sort((a, b) => a.number - b.number);
  return { dispatch, excluded };
}

/** `compareDispatch` order for items already in ascending number order (selectors < buckets/2). */
function bucketDispatch(items: readonly DispatchItem[], selectors: number): DispatchItem[] {
  const counts = new Int32Array(selectors * 2 + 1);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    counts[item.selector * 2 + (item.high ? 0 : 1) + 1]!++;
  }
  for (let b = 1; b < counts.length; b++) counts[b]! += counts[b - 1]!;
  const out = new Array<DispatchItem>(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    out[counts[item.selector * 2 + (item.high ? 0 : 1)]!++] = item;
  }
  return out;
}
