// Orphaned PRs: an open issue the fleet would dispatch but for its own open PR, with no claim on
// it. Nothing else picks such an issue up (the frontier excludes it for its open PR, and no claim
// carries the PR to the gate), so it is claimed again and its PR carried on (docs/architecture.md,
// "Orphaned PRs"). Pure, like the rest of rebuild.
import { exclusionFor, type FrontierInput, type IssueRow } from "./frontier.js";
import { sameLogin } from "./markers.js";
import type { SnapshotPull } from "./snapshot.js";

export interface OrphanPull {
  issue: number;
  pr: number;
  /** The PR's head as listed: the adoption reads the PR again and takes it only if it still holds this. */
  head: string;
  headRef: string;
}

/**
 * Issues to claim again for the fleet's own open PR. Only where the fleet's PR (its login, its
 * branch for the issue, this repository, the base) is every open PR linked to the issue — a PR
 * another login opened, or one a human branched off, is never adopted — and where the issue,
 * without those PRs, would be dispatchable (selected, not reserved, not an epic, unclaimed, not
 * assigned to someone else, not blocked).
 */
export function orphanedPulls(
  rows: readonly IssueRow[],
  input: FrontierInput,
  fleetPullOf: ReadonlyMap<number, SnapshotPull>,
  pulls: readonly SnapshotPull[],
  isFleetPullFor: (pull: SnapshotPull, issue: number) => boolean,
): OrphanPull[] {
  const byNumber = new Map(pulls.map((p) => [p.number, p]));
  const out: OrphanPull[] = [];
  for (const row of rows) {
    const n = row.issue.number;
    const pull = fleetPullOf.get(n);
    if (!pull || !sameLogin(pull.author, input.login) || input.claimOf.has(n)) continue;
    const linked = input.linkedPullsOf.get(n) ?? [];
    const ours = linked.every((number) => {
      const p = byNumber.get(number);
      return p !== undefined && sameLogin(p.author, input.login) && isFleetPullFor(p, n);
    });
    if (!ours) continue;
    // The issue as the frontier would see it without the fleet's PRs: it must be dispatchable.
    const without = new Map(input.linkedPullsOf);
    without.delete(n);
    const fleetPulls = new Map(input.fleetPullOf);
    fleetPulls.delete(n);
    if (exclusionFor(row, { ...input, linkedPullsOf: without, fleetPullOf: fleetPulls }) !== null) continue;
    out.push({ issue: n, pr: pull.number, head: pull.head.sha, headRef: pull.head.ref });
  }
  return out;
}
