// rebuild: one snapshot in, the working set out — the frontier, my claims by PR state, peers'
// live and stale claims, and a fingerprint. Pure: no I/O, `now` is an argument, and the result
// does not depend on the order of any list in the snapshot. O(n log n) in the snapshot's size.

import { effectiveSelectors, type CoreConfig } from "./config.js";
import { analyzeDependencies } from "./dependencies.js";
import { fingerprintOf } from "./fingerprint.js";
import { computeFrontier, humanReservation, type ClaimOnIssue, type Frontier, type IssueRow } from "./frontier.js";
import { classifyClaims, isFresh, latestHeartbeats, type ClaimSets, type MineClaim, type PeerClaim, type StaleClaim } from "./inflight.js";
import { parseClosingRefs } from "./links.js";
import { issueFactsWith, type IssueFacts } from "./facts.js";
import { attemptLabelParser, FLEET_BRANCH_PREFIX, parseFleetBranch } from "./markers.js";
import { compileSelectors, selectorContext, type Selector } from "./selectors.js";
import { assertInstanceId, canonicalSnapshot, type Snapshot, type SnapshotPull } from "./snapshot.js";
import { countStragglers, type Stragglers } from "./stragglers.js";
import { orphanedPulls, type OrphanPull } from "./orphans.js";
import { routeFor, type RoutePolicy, type RouteStep } from "./route.js";
import { namedSkips, type NamedSkip, type NumberKind } from "./named.js";

export type RebuildConfig = Pick<CoreConfig, "labels" | "selectors" | "gate" | "lease" | "worktree">;

export interface WorkingSet {
  repo: string;
  instance: string;
  /** The `now` the set was computed for (ISO 8601). */
  now: string;
  frontier: Frontier;
  mine: MineClaim[];
  peer_live: PeerClaim[];
  stale: StaleClaim[];
  /** My own lease as the snapshot shows it. */
  lease: ClaimSets["lease"];
  /** Dependency cycles among open issues (each sorted): their members are excluded as "cycle". */
  cycles: number[][];
  fingerprint: string;
  stragglers: Stragglers;
  /** Open issues with the fleet's own open PR and no claim: claimed again to carry the PR on (see orphans.ts). Absent: none. */
  orphans?: OrphanPull[];
  /** Issue → the route its selector names (`selectors[].engine`, `model`), for picked issues whose selector names one. Absent: none does. */
  selector_routes?: Map<number, { index: number; step: RouteStep }>;
  /** Other instances whose lease is fresh, sorted: peers that may claim, finish and release an issue while this tick acts. Absent: none. */
  live_peers?: string[];
  /** Issues the `issues` selectors name (or pull in) that will not run now, with their reasons (named.ts). Absent: no selector names issues. */
  named?: NamedSkip[];
}

/** Whether a PR's head branch lives in this repository (a fork's never does). */
function inThisRepo(pull: SnapshotPull, repo: string): boolean {
  return pull.head.repoFullName !== null && pull.head.repoFullName.toLowerCase() === repo.toLowerCase();
}

interface PullIndex {
  linkedPullsOf: Map<number, number[]>;
  fleetPullOf: Map<number, SnapshotPull>;
  /** Pull → the issues its title and body close. */
  closes: Map<number, number[]>;
}

/**
 * Links open PRs to issues: by closing keywords in the title or body (same repository only), and
 * by the fleet's own branch name `<branch_prefix><n>-…` (in this repository only). The fleet's PR for an
 * issue is the newest (highest-numbered) fleet-branch PR that targets the snapshot's base.
 */
function indexPulls(pulls: readonly SnapshotPull[], repo: string, base: string, branchPrefix: string): PullIndex {
  const linked = new Map<number, Set<number>>();
  const fleetPullOf = new Map<number, SnapshotPull>();
  const closes = new Map<number, number[]>();
  const link = (issue: number, pr: number): void => {
    let set = linked.get(issue);
    if (!set) {
      set = new Set();
      linked.set(issue, set);
    }
    set.add(pr);
  };
  for (const pull of pulls) {
    const closed = parseClosingRefs(`${pull.title}\n${pull.body}`, repo);
    closes.set(pull.number, closed);
    for (const n of closed) {
      link(n, pull.number);
    }
    const branchIssue = inThisRepo(pull, repo) ? parseFleetBranch(pull.head.ref, branchPrefix) : null;
    if (branchIssue !== null) {
      link(branchIssue, pull.number);
      // The fleet's own PR also targets the base it lands on (the only heads gather reads checks for).
      const seen = fleetPullOf.get(branchIssue);
      if (pull.baseRef === base && (!seen || pull.number > seen.number)) {
        fleetPullOf.set(branchIssue, pull);
      }
    }
  }
  const linkedPullsOf = new Map<number, number[]>();
  for (const [issue, set] of linked) {
    linkedPullsOf.set(
      issue,
      [...set].sort((a, b) => a - b),
    );
  }
  return { linkedPullsOf, fleetPullOf, closes };
}

/** Rows by issue number, over rows sorted by ascending number (no per-rebuild hash table). */
class RowIndex {
  constructor(private readonly rows: readonly IssueRow[]) {}

  get(n: number): IssueRow | undefined {
    const rows = this.rows;
    let lo = 0;
    let hi = rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const row = rows[mid]!;
      const m = row.issue.number;
      if (m === n) return row;
      if (m < n) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  has(n: number): boolean {
    return this.get(n) !== undefined;
  }
}

/**
 * What the host adds to a rebuild: the engines an `afk-engine/` label may name (see
 * FrontierInput.engines); the route policy of an engine start (each dispatched issue then says
 * its engine and model); and what the named numbers that are not open are (named.ts).
 */
export interface RebuildRouting {
  engines?: readonly string[];
  policy?: RoutePolicy;
  kinds?: ReadonlyMap<number, NumberKind>;
}

export function rebuild(snapshot: Snapshot, config: RebuildConfig, instance: string, now: Date, routing: RebuildRouting = {}): WorkingSet {
  assertInstanceId(instance);
  const nowMs = now.getTime();
  if (Number.isNaN(nowMs)) {
    throw new Error("rebuild: `now` is an invalid Date: pass the tick's clock reading");
  }
  const snap = canonicalSnapshot(snapshot);
  const { repo, login } = snap;
  const labels = config.labels;
  const ttlSeconds = config.lease.ttl_seconds;

  const openPulls = new Set(snap.pulls.map((p) => p.number));
  const knownClosed = new Set(snap.knownClosed ?? []);
  const branchPrefix = config.worktree?.branch_prefix ?? FLEET_BRANCH_PREFIX;
  const { linkedPullsOf, fleetPullOf, closes } = indexPulls(snap.pulls, repo, snap.base, branchPrefix);

  // One row per open issue: what it says, derived once, and its selector priority.
  const selectors = effectiveSelectors(config);
  const ctx = selectorContext(repo, login, snap.issues, labels);
  const parseAttempt = attemptLabelParser(labels.attempt_prefix);
  const priorityOf = compileSelectors(selectors, ctx);
  const issueCount = snap.issues.length;
  const rows: IssueRow[] = new Array<IssueRow>(issueCount);
  const issueFacts: IssueFacts[] = new Array<IssueFacts>(issueCount);
  const lowerLabels: (readonly string[])[] = new Array<readonly string[]>(issueCount);
  for (let i = 0; i < issueCount; i++) {
    const issue = snap.issues[i]!;
    const facts = issueFactsWith(issue, repo, parseAttempt);
    const priority = priorityOf(issue, facts);
    const row: IssueRow = { issue, facts, priority };
    if (priority >= 0) {
      const pulledFor = priorityOf.pulledFor(issue.number, priority);
      if (pulledFor) row.pulledFor = pulledFor;
      const rank = priorityOf.rankFor(issue.number, priority);
      if (rank !== undefined) row.rank = rank;
    } else {
      const named = priorityOf.namedMiss(issue, facts);
      if (named) row.named = named;
    }
    rows[i] = row;
    issueFacts[i] = facts;
    lowerLabels[i] = facts.labels;
  }
  // The canonical snapshot lists issues by ascending number: look rows up by binary search.
  const rowOf = new RowIndex(rows);

  const deps = analyzeDependencies(snap.issues, { openIssues: rowOf, openPulls, knownClosed }, (_issue, i) => issueFacts[i]!);

  const claimedIssues = new Set(snap.claims.map((c) => c.issue));
  const sets = classifyClaims(snap.claims, snap.heartbeats, {
    instance,
    login: snap.login,
    nowMs,
    ttlSeconds,
    gateMode: config.gate.ci,
    requiredChecks: snap.requiredChecks,
    rerunFailed: config.gate.rerun_failed ?? 0,
    fleetPullOf,
    linkedPullsOf,
    issueInfo: (n) => {
      const row = rowOf.get(n);
      if (!row) return undefined;
      const reservation = humanReservation(
        row.facts,
        row.priority >= 0,
        { claimed: claimedIssues.has(n), fleetPull: fleetPullOf.get(n)?.number ?? null },
        labels,
      );
      return { attempt: row.facts.attempt, reservedByHuman: reservation !== null };
    },
  });

  // The claim the frontier reports per issue: mine first, then peers' by sha (sets are sorted).
  const claimOf = new Map<number, ClaimOnIssue>();
  const note = (c: { issue: number; instance: string | null; host: string | null; sha: string }, state: ClaimOnIssue["state"]): void => {
    if (!claimOf.has(c.issue)) claimOf.set(c.issue, { instance: c.instance, host: c.host, sha: c.sha, state });
  };
  for (const c of sets.mine) note(c, "mine");
  const peers = [...sets.peer_live.map((c) => ({ c, state: "peer_live" as const })), ...sets.stale.map((c) => ({ c, state: "stale" as const }))].sort(
    (a, b) => a.c.issue - b.c.issue || (a.c.sha < b.c.sha ? -1 : a.c.sha > b.c.sha ? 1 : 0),
  );
  for (const { c, state } of peers) note(c, state);

  const fleetPullNumberOf = new Map<number, number>();
  for (const [issue, pull] of fleetPullOf) fleetPullNumberOf.set(issue, pull.number);

  const frontierInput = {
    rows,
    labels,
    login,
    claimOf,
    linkedPullsOf,
    fleetPullOf: fleetPullNumberOf,
    deps,
    ...(routing.engines ? { engines: routing.engines } : {}),
  };
  const selectorRoutes = routesOfSelectors(rows, selectors);
  const frontier = computeFrontier(frontierInput);
  if (routing.policy) {
    // The route of the attempt a dispatch would start (route.ts), as a birth computes it.
    for (const d of frontier.dispatch) d.route = routeFor(routing.policy, rowOf.get(d.number)!.issue.labels, d.attempt + 1, selectorRoutes?.get(d.number));
  }
  const named = selectors.some((s) => s.issues != null) ? namedSkips(selectors, frontier, openPulls, routing.kinds) : null;
  const orphans = orphanedPulls(
    rows,
    frontierInput,
    fleetPullOf,
    snap.pulls,
    (pull, issue) => inThisRepo(pull, repo) && pull.baseRef === snap.base && parseFleetBranch(pull.head.ref, branchPrefix) === issue,
  );

  const fresh = new Set<string>();
  for (const [id, beat] of latestHeartbeats(snap.heartbeats)) {
    if (isFresh(beat.at, nowMs, ttlSeconds)) fresh.add(id);
  }
  const livePeers = [...fresh].filter((id) => id !== instance).sort();

  return {
    repo,
    instance,
    now: now.toISOString(),
    frontier,
    mine: sets.mine,
    peer_live: sets.peer_live,
    stale: sets.stale,
    lease: sets.lease,
    cycles: deps.cycles,
    fingerprint: fingerprintOf(snap, sets, { issueFacts, closes, freshInstances: fresh }),
    stragglers: countStragglers(snap.issues, lowerLabels),
    orphans,
    ...(livePeers.length > 0 ? { live_peers: livePeers } : {}),
    ...(selectorRoutes ? { selector_routes: selectorRoutes } : {}),
    ...(named ? { named } : {}),
  };
}

/** Each picked issue's selector route, when a selector names an engine or a model; null when none does. */
function routesOfSelectors(rows: readonly IssueRow[], selectors: readonly Selector[]): Map<number, { index: number; step: RouteStep }> | null {
  const steps = selectors.map((s) =>
    s.engine !== undefined || s.model !== undefined
      ? { ...(s.engine !== undefined ? { engine: s.engine } : {}), ...(s.model !== undefined ? { model: s.model } : {}) }
      : null,
  );
  if (steps.every((s) => s === null)) return null;
  const out = new Map<number, { index: number; step: RouteStep }>();
  for (const row of rows) {
    const step = row.priority >= 0 ? steps[row.priority] : null;
    if (step) out.set(row.issue.number, { index: row.priority, step });
  }
  return out;
}
