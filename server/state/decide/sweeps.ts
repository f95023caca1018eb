// The host's housekeeping, decided like everything else: the garbage sweep when its period is
// up, the breaker's sweep of the issues a trip owns, the wrap-up of landings a crash left
// unsettled, the claims of merged issues GitHub closes itself (released once closed, closed by us
// after the grace), workers whose claim is gone (ended), checkpoints due, and exited workers'
// verdicts still to post. Facts in (what the host remembers, what the snapshot lists), sweeps out:
// each executed by one handler in server/fleet/effects/, before the tick's actions. Pure.
import type { MineClaim } from "../inflight.js";
import type { Verdict } from "../markers.js";
import type { LandedPull } from "../snapshot.js";

/** A merged issue whose claim waits for GitHub to close it (mergedAt: epoch ms). */
export interface WaitingClose {
  pr: number;
  claimSha: string;
  mergedAt: number;
}

/** A worker (or reviewer) this host runs or ran for an issue, as its memory holds it. */
export interface HostRun {
  issue: number;
  role: "worker" | "reviewer";
  exited: boolean;
  /** Epoch ms. */
  startedAt: number;
  /** When its last checkpoint was considered (epoch ms), or null: none yet. */
  lastCheckpointAt: number | null;
}

export interface SweepFacts {
  /** Epoch ms. */
  now: number;
  /** The garbage sweep: when it last ran (epoch ms; null: never) and its period (ms). */
  garbage: { lastAt: number | null; everyMs: number };
  /** Issues a breaker trip still has to put back: the breaker owns them. */
  breakerOwned: ReadonlySet<number>;
  /** Every claim of ours the snapshot lists, before any is set aside. */
  mine: ReadonlyArray<Pick<MineClaim, "issue" | "sha" | "attempt">>;
  /** Landings the gather found merged with their issue still open and claimed (Snapshot.landed). */
  landed: readonly LandedPull[];
  /** Merged issues whose claims wait for GitHub's close, in the order they began to wait. */
  closing: ReadonlyMap<number, WaitingClose>;
  /** How long GitHub may take to close a merged PR's issue (ms). */
  graceMs: number;
  /** The issues the snapshot lists open. */
  open: ReadonlySet<number>;
  /** A stop: a merged issue still open is closed now, without waiting for the grace. */
  force: boolean;
  runs: readonly HostRun[];
  /** The period of periodic checkpoints (ms). */
  checkpointEveryMs: number;
  /** Verdicts exited workers left, and whether this host posted each already. */
  verdicts: ReadonlyArray<{ issue: number; attempt: number; verdict: Verdict; posted: boolean }>;
}

/** How a merged issue's waiting claim settles this tick. */
export type SettleStep = "forget" | "release" | "close";

export type Sweep =
  | { kind: "collect_garbage" }
  /** The breaker puts these issues back in the backlog (their claims, when ours, released). */
  | { kind: "breaker_sweep"; claims: Array<{ issue: number; sha: string | null }> }
  /** A landing a crash kept from its wrap-up: its claim waits to settle (from mergedAt), its board says merged. */
  | { kind: "wrap_up_recovered"; issue: number; claimSha: string; attempt: number; mergedAt: number; landed: LandedPull }
  /** forget: not ours to settle any more; release: GitHub closed it; close: the grace is over (or a stop), close it, then release. */
  | { kind: "settle_merged"; issue: number; pr: number; claimSha: string; step: SettleStep; waitedMs: number; force: boolean }
  /** A worker whose claim is no longer ours: ended (when it still runs) and forgotten. */
  | { kind: "drop_worker"; issue: number; kill: boolean }
  | { kind: "checkpoint"; issue: number; sha: string }
  | { kind: "post_verdict"; issue: number; attempt: number; verdict: Verdict };

export type SweepKind = Sweep["kind"];

/** The landings a restart recovers this tick: claimed by us (not the breaker's), not yet waiting. */
export function recoveredLandings(
  f: Pick<SweepFacts, "landed" | "mine" | "breakerOwned" | "closing" | "now" | "graceMs">,
): Array<Extract<Sweep, { kind: "wrap_up_recovered" }>> {
  const out: Array<Extract<Sweep, { kind: "wrap_up_recovered" }>> = [];
  for (const l of f.landed) {
    const claim = f.mine.find((m) => m.issue === l.issue && !f.breakerOwned.has(m.issue));
    if (!claim || f.closing.has(l.issue) || out.some((o) => o.issue === l.issue)) continue;
    // As if this process had merged it, with the grace over: GitHub would have closed it by now.
    const mergedAt = Math.min(Date.parse(l.mergedAt) || 0, f.now - f.graceMs);
    out.push({ kind: "wrap_up_recovered", issue: l.issue, claimSha: claim.sha, attempt: claim.attempt, mergedAt, landed: l });
  }
  return out;
}

/**
 * The waiting claims' steps against this tick's snapshot: released once the issue is no longer
 * listed open; closed by us, then released, once the grace is over (at once when `force`d); left
 * waiting inside the grace; forgotten when the claim is no longer ours (taken over, released elsewhere).
 */
export function settleMerged(
  waiting: ReadonlyMap<number, WaitingClose>,
  mine: ReadonlyArray<{ issue: number; sha: string }>,
  open: ReadonlySet<number>,
  now: number,
  graceMs: number,
  force: boolean,
): Array<Extract<Sweep, { kind: "settle_merged" }>> {
  const out: Array<Extract<Sweep, { kind: "settle_merged" }>> = [];
  for (const [issue, w] of waiting) {
    const base = { kind: "settle_merged" as const, issue, pr: w.pr, claimSha: w.claimSha, waitedMs: now - w.mergedAt, force };
    if (!mine.some((m) => m.issue === issue && m.sha === w.claimSha)) out.push({ ...base, step: "forget" });
    else if (!open.has(issue)) out.push({ ...base, step: "release" });
    else if (force || now - w.mergedAt >= graceMs) out.push({ ...base, step: "close" });
  }
  return out;
}

/** The claims still waiting to settle (recovered ones included), with the claim as it began to wait. */
function waitingNow(f: SweepFacts): Map<number, WaitingClose> {
  const waiting = new Map(f.closing);
  for (const r of recoveredLandings(f)) waiting.set(r.issue, { pr: r.landed.pr, claimSha: r.claimSha, mergedAt: r.mergedAt });
  return waiting;
}

/** Ours once the breaker's are set aside. */
function ours(f: Pick<SweepFacts, "mine" | "breakerOwned">): Array<Pick<MineClaim, "issue" | "sha" | "attempt">> {
  return f.mine.filter((m) => !f.breakerOwned.has(m.issue));
}

/**
 * The claims no decision of this tick touches, nor the host's local reading: the breaker's, and
 * merged issues' that wait for GitHub's close (settled by sweeps, never decided on).
 */
export function setAside(f: SweepFacts): Set<number> {
  const mine = ours(f);
  const aside = new Set(f.breakerOwned);
  for (const [n, w] of waitingNow(f)) if (mine.some((m) => m.issue === n && m.sha === w.claimSha)) aside.add(n);
  return aside;
}

/** Whether a period that last ran at `lastAt` (null: never) is up at `now`. */
export function periodDue(lastAt: number | null, now: number, everyMs: number): boolean {
  return lastAt === null || now - lastAt >= everyMs;
}

/** This tick's housekeeping, in the order it applies (see the module comment). */
export function decideSweeps(f: SweepFacts): Sweep[] {
  const sweeps: Sweep[] = [];
  if (periodDue(f.garbage.lastAt, f.now, f.garbage.everyMs)) sweeps.push({ kind: "collect_garbage" });
  if (f.breakerOwned.size > 0) {
    const claims = [...f.breakerOwned].sort((a, b) => a - b).map((issue) => ({ issue, sha: f.mine.find((m) => m.issue === issue)?.sha ?? null }));
    sweeps.push({ kind: "breaker_sweep", claims });
  }
  sweeps.push(...recoveredLandings(f));
  const mine = ours(f);
  sweeps.push(...settleMerged(waitingNow(f), mine, f.open, f.now, f.graceMs, f.force));
  const aside = setAside(f);
  const decided = new Map(f.mine.filter((m) => !aside.has(m.issue)).map((m) => [m.issue, m]));
  for (const run of f.runs) {
    // Every worker here was born before this snapshot, after its claim was made: absence means loss.
    if (!decided.has(run.issue) && !f.breakerOwned.has(run.issue)) sweeps.push({ kind: "drop_worker", issue: run.issue, kill: !run.exited });
  }
  for (const run of f.runs) {
    const claim = decided.get(run.issue);
    if (!claim || run.role !== "worker" || run.exited) continue;
    if (periodDue(run.lastCheckpointAt ?? run.startedAt, f.now, f.checkpointEveryMs)) sweeps.push({ kind: "checkpoint", issue: run.issue, sha: claim.sha });
  }
  for (const v of f.verdicts) if (!v.posted) sweeps.push({ kind: "post_verdict", issue: v.issue, attempt: v.attempt, verdict: v.verdict });
  return sweeps;
}
