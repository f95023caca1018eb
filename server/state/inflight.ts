// Every claim ref lands in exactly one of three sets: mine (my instance wrote it), peer_live (a
// peer whose lease is fresh) or stale (a peer whose lease lapsed, or a claim nobody can prove
// is theirs). My claims are further classified by the state of the PR that carries the work.

import type { Heartbeat, ClaimRef, SnapshotPull } from "./snapshot.js";
import type { RequiredChecks } from "./ports.js";
import { evaluateGate, rerunVerdict, type GateResult, type RerunCheck } from "./gate.js";
import { evaluateReviews, type ReviewGate } from "./reviews.js";
import { reviewMarks, type ReviewMark } from "./review-stage.js";
import { openedOnAttempt } from "./markers.js";

/**
 * awaiting_review: green (or, under a local gate, waiting to be gated at landing) but the base
 * requires approvals a human has not given yet. changes_requested: a human asked for changes.
 */
export type MineStatus = "awaiting_merge" | "awaiting_review" | "changes_requested" | "awaiting_ci" | "failure" | "no_pr";

interface ClaimBase {
  issue: number;
  /** The claim commit's sha: the fencing token for every push, merge, reclaim and release. */
  sha: string;
  instance: string | null;
  host: string | null;
  at: string | null;
  /** False when the issue is not among the snapshot's open issues: release the claim. */
  issueOpen: boolean;
}

export interface MineClaim extends ClaimBase {
  status: MineStatus;
  /** The fleet's own open PR for the issue: branch `<branch_prefix><n>-…` in this repository, aimed at the base. */
  pr: number | null;
  head: string | null;
  headRef: string | null;
  /** A draft never lands: with gate.ci = required it waits as awaiting_ci; with local, mark it ready first. */
  draft: boolean;
  /** From the issue's `afk-attempt/<n>` labels; 0 when none (or the issue is not open). */
  attempt: number;
  /** The attempt (1-based) the fleet opened the PR in, as its description says; null: no PR, or it does not say. */
  prAttempt: number | null;
  /** Names of the failing checks (gate.ci = required). */
  failing: string[];
  /** Names of the checks still pending or not yet reported. */
  pending: string[];
  /** Whether checks on the PR's current head were read (gate.ci = required). */
  checksRead: boolean;
  /** The gate in full, when checks were read. */
  gate: GateResult | null;
  /** A red gate whose failing checks are re-run before the failure counts (`gate.rerun_failed`): the runs to re-run. Absent: none. */
  rerun?: RerunCheck[];
  /** Open PRs that close the issue but are not the fleet's (a human's, a fork's): never landed. */
  otherPulls: number[];
  /** A human took the issue back (see frontier.ts `humanReservation`): stop and release. */
  reservedByHuman: boolean;
  /** Required human approvals on the PR's head; null when the base requires none (or no PR). */
  review: ReviewGate | null;
  /** The review stage's rounds on the PR (the fleet's own markers), oldest first. */
  reviewMarks: ReviewMark[];
}

export interface PeerClaim extends ClaimBase {
  instance: string;
  /** The newest sign of the owner's life: its heartbeat, or the claim itself if newer. */
  aliveAt: string;
}

export type StaleReason = "expired" | "no_heartbeat" | "unreadable";

export interface StaleClaim extends ClaimBase {
  reason: StaleReason;
  heartbeatAt: string | null;
  /** The fleet's open PR for the issue, if any: a reclaim then carries the PR on and starts no worker. */
  pr?: number | null;
}

export interface ClaimSets {
  mine: MineClaim[];
  peer_live: PeerClaim[];
  stale: StaleClaim[];
  /** My own lease: a lapsed one lets a peer reclaim my work, so refresh it before acting. */
  lease: { fresh: boolean; heartbeatAt: string | null };
}

export interface ClaimContext {
  instance: string;
  /** The fleet's own login: its reviews never count as approvals. */
  login?: string;
  nowMs: number;
  ttlSeconds: number;
  gateMode: "required" | "local";
  requiredChecks: RequiredChecks;
  /** Re-runs of a failing Actions check per head before its failure counts (`gate.rerun_failed`); absent: 0. */
  rerunFailed?: number;
  /** What the core knows of an open issue; undefined when the issue is not open. */
  issueInfo: (issue: number) => { attempt: number; reservedByHuman: boolean } | undefined;
  /** Issue → the fleet's own open PR for it. */
  fleetPullOf: ReadonlyMap<number, SnapshotPull>;
  /** Issue → every open PR linked to it (closing keyword or fleet branch), sorted. */
  linkedPullsOf: ReadonlyMap<number, readonly number[]>;
}

function parseTime(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

/**
 * Fresh means within the lease ttl of now, in either direction: a little clock skew is
 * tolerated, but a time more than a ttl in the future is not believed (it would otherwise hold
 * a dead owner's claims for as long as the skew).
 */
export function isFresh(atMs: number | null, nowMs: number, ttlSeconds: number): boolean {
  return atMs !== null && Math.abs(nowMs - atMs) <= ttlSeconds * 1000;
}

/** Latest heartbeat per instance (order-independent). */
export function latestHeartbeats(heartbeats: readonly Heartbeat[]): Map<string, { at: number; iso: string }> {
  const latest = new Map<string, { at: number; iso: string }>();
  for (const hb of heartbeats) {
    const at = parseTime(hb.at);
    if (at === null) continue;
    const seen = latest.get(hb.instance);
    if (!seen || at > seen.at) {
      latest.set(hb.instance, { at, iso: new Date(at).toISOString() });
    }
  }
  return latest;
}

function compareClaims(a: ClaimBase, b: ClaimBase): number {
  return a.issue - b.issue || (a.sha < b.sha ? -1 : a.sha > b.sha ? 1 : 0);
}

export function classifyClaims(claims: readonly ClaimRef[], heartbeats: readonly Heartbeat[], ctx: ClaimContext): ClaimSets {
  const beats = latestHeartbeats(heartbeats);
  const mine: MineClaim[] = [];
  const peer_live: PeerClaim[] = [];
  const stale: StaleClaim[] = [];
  const seen = new Set<string>();

  for (const claim of claims) {
    // The same ref read twice (a paging overlap) is one claim.
    const key = `${claim.issue}\u0000${claim.sha}`;
    if (seen.has(key)) continue;
    seen.add(key);

    const issue = ctx.issueInfo(claim.issue);
    const base: ClaimBase = {
      issue: claim.issue,
      sha: claim.sha,
      instance: claim.instance,
      host: claim.host,
      at: claim.at,
      issueOpen: issue !== undefined,
    };
    if (claim.instance === null) {
      // Not in our message format: nobody can prove it is theirs, and leaving it would be a
      // phantom lock. The namespace is the fleet's own, so it is reclaimable.
      stale.push({ ...base, reason: "unreadable", heartbeatAt: null, pr: ctx.fleetPullOf.get(claim.issue)?.number ?? null });
      continue;
    }
    if (claim.instance === ctx.instance) {
      mine.push(classifyMine(base, issue, ctx));
      continue;
    }
    const beat = beats.get(claim.instance) ?? null;
    const claimAt = parseTime(claim.at);
    // A peer writes its claim a moment before (or without yet) a heartbeat: a claim younger than
    // the ttl is itself a sign of life, so the race never hands away live work.
    const signs = [beat?.at ?? null, claimAt].filter((t): t is number => t !== null);
    const aliveAt = signs.length > 0 ? Math.max(...signs) : null;
    if (aliveAt !== null && isFresh(aliveAt, ctx.nowMs, ctx.ttlSeconds)) {
      peer_live.push({ ...base, instance: claim.instance, aliveAt: new Date(aliveAt).toISOString() });
    } else {
      stale.push({ ...base, reason: beat ? "expired" : "no_heartbeat", heartbeatAt: beat?.iso ?? null, pr: ctx.fleetPullOf.get(claim.issue)?.number ?? null });
    }
  }

  mine.sort(compareClaims);
  peer_live.sort(compareClaims);
  stale.sort(compareClaims);
  const own = beats.get(ctx.instance) ?? null;
  return {
    mine,
    peer_live,
    stale,
    lease: { fresh: own !== null && isFresh(own.at, ctx.nowMs, ctx.ttlSeconds), heartbeatAt: own?.iso ?? null },
  };
}

function classifyMine(base: ClaimBase, issue: { attempt: number; reservedByHuman: boolean } | undefined, ctx: ClaimContext): MineClaim {
  const pr = ctx.fleetPullOf.get(base.issue) ?? null;
  const classified = classifyByChecks(base, issue, ctx, pr);
  if (!pr || classified.review === null) return classified;
  // Required approvals come after the machine gate: a human asking for changes ends the attempt
  // whatever CI says; a missing approval holds only what would otherwise land.
  if (classified.review.state === "changes_requested") return { ...classified, status: "changes_requested" };
  if (classified.review.state === "awaiting" && classified.status === "awaiting_merge") return { ...classified, status: "awaiting_review" };
  return classified;
}

function classifyByChecks(
  base: ClaimBase,
  issue: { attempt: number; reservedByHuman: boolean } | undefined,
  ctx: ClaimContext,
  pr: SnapshotPull | null,
): MineClaim {
  const otherPulls = (ctx.linkedPullsOf.get(base.issue) ?? []).filter((n) => n !== pr?.number);
  const review = pr ? evaluateReviews(pr.reviews, ctx.requiredChecks, ctx.login ?? "", pr.head.sha) : null;
  const common = {
    ...base,
    pr: pr?.number ?? null,
    head: pr?.head.sha ?? null,
    headRef: pr?.head.ref ?? null,
    draft: pr?.draft ?? false,
    attempt: issue?.attempt ?? 0,
    prAttempt: pr ? openedOnAttempt(pr.body) : null,
    otherPulls,
    reservedByHuman: issue?.reservedByHuman ?? false,
    review: review && review.state !== "not_required" ? review : null,
    reviewMarks: pr ? reviewMarks(pr.reviews, ctx.login ?? "") : [],
  };
  if (!pr) {
    return { ...common, status: "no_pr", failing: [], pending: [], checksRead: false, gate: null };
  }
  if (ctx.gateMode === "local") {
    // The local gate runs inside the merge sequence; checks are not read.
    return { ...common, status: "awaiting_merge", failing: [], pending: [], checksRead: false, gate: null };
  }
  if (!pr.checks || pr.checks.sha !== pr.head.sha) {
    // Checks not read, or read for another head: nothing is known about this head yet.
    return { ...common, status: "awaiting_ci", failing: [], pending: [], checksRead: false, gate: null };
  }
  const gate = evaluateGate(pr.checks, ctx.requiredChecks);
  const failing = gate.failing.map((f) => f.name);
  if (gate.state === "red") {
    const rerun = rerunVerdict(pr.checks, gate, ctx.rerunFailed ?? 0);
    return { ...common, status: "failure", failing, pending: gate.pending, checksRead: true, gate, ...(rerun.rerun ? { rerun: rerun.checks } : {}) };
  }
  if (gate.state === "pending" || pr.draft) {
    // A draft cannot land even when green: it waits like a pending check.
    return { ...common, status: "awaiting_ci", failing, pending: gate.pending, checksRead: true, gate };
  }
  return { ...common, status: "awaiting_merge", failing, pending: gate.pending, checksRead: true, gate };
}
