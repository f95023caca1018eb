// When the loop runs its next tick, and what it watches until then. The loop is driven by
// events (a worker's exit, a watched check concluding, the base moving, a landing finishing);
// fixed cadences (pace.ts) remain only as the fallback, for idle discovery and the heartbeat.
// Pure: the fleet hands in what its last tick saw and did, and acts on the plan.

import type { PacingConfig } from "./config.js";
import type { MineStatus } from "./inflight.js";

/** A PR head whose checks the fleet waits for. */
export interface WatchedHead {
  issue: number;
  pr: number;
  head: string;
}

export interface WakeInput {
  gateMode: "required" | "local";
  autoMerge: boolean;
  /** The fleet's claims as the tick's snapshot saw them. */
  claims: ReadonlyArray<{ issue: number; status: MineStatus; pr: number | null; head: string | null; issueOpen: boolean }>;
  /** Heads the tick pushed (a PR opened, a branch synced with the base): their checks start now. */
  pushed: readonly WatchedHead[];
  /** Issues the tick settled (landed, escalated, retried, closed, released): nothing to wait for. */
  settled: readonly number[];
  /** Green PRs the tick wanted to land but could not (the landing lock or slot was taken). */
  blocked: readonly number[];
  /** The tick landed something: the base moved, and the next PR in line may land now. */
  landed: boolean;
  /** A PR synced with the base holds the landing slot (required CI): nothing lands before its checks conclude. */
  slotHeld?: boolean;
  /** A landing runs in the background (a gate, a train, a merge queue): its end wakes the loop, nothing lands before. */
  landingInFlight?: boolean;
  /** The fleet is draining: it lands nothing new through a watch. */
  stopping: boolean;
}

export interface WakePlan {
  /** Tick again at once, without sleeping. */
  now: boolean;
  /** Required-check heads to poll (conditional requests) while sleeping; empty: watch none. */
  heads: WatchedHead[];
  /** Poll the base tip too: a move (a peer's landing, a human push) is an event for the blocked PRs. */
  base: boolean;
  /** Why, for the monitor lane. */
  why: string;
}

export function planWake(input: WakeInput): WakePlan {
  const settled = new Set(input.settled);
  const open = input.claims.filter((c) => c.issueOpen && !settled.has(c.issue));
  const waitingToLand = open.some((c) => c.status === "awaiting_merge");
  if (input.autoMerge && !input.stopping && !input.landingInFlight) {
    // A landing finished: the next green PR in line lands (or syncs) now, not a tick later.
    if (input.landed && waitingToLand && !input.slotHeld) return { now: true, heads: [], base: false, why: "a landing finished and another green PR waits" };
    // Under a local gate the gate runs inside the landing: a PR just opened is ready to try.
    if (input.gateMode === "local" && input.pushed.some((p) => !settled.has(p.issue))) {
      return { now: true, heads: [], base: false, why: "a PR was opened under the local gate" };
    }
  }
  const heads: WatchedHead[] = [];
  if (input.gateMode === "required") {
    const pushed = new Map(input.pushed.filter((p) => !settled.has(p.issue)).map((p) => [p.issue, p]));
    for (const claim of open) {
      if (pushed.has(claim.issue) || claim.status !== "awaiting_ci" || claim.pr === null || claim.head === null) continue;
      heads.push({ issue: claim.issue, pr: claim.pr, head: claim.head });
    }
    heads.push(...pushed.values());
    heads.sort((a, b) => a.issue - b.issue);
  }
  const blocked = input.autoMerge && !input.stopping && input.blocked.some((n) => !settled.has(n));
  const why = [heads.length > 0 ? `watching checks on ${heads.length} head(s)` : "", blocked ? "watching the base for a blocked landing" : ""]
    .filter(Boolean)
    .join("; ");
  return { now: false, heads, base: blocked, why: why || "nothing to watch" };
}

/**
 * Seconds before the `poll`-th look (from 0) at what a wait watches: soon after the wait
 * begins, when an instant CI has most likely just answered, then backing off to
 * `pacing.watch_seconds`. Every look is a conditional request, free while nothing changed.
 */
export function watchDelay(poll: number, pacing: Pick<PacingConfig, "watch_seconds">): number {
  const cap = Math.max(1, pacing.watch_seconds ?? DEFAULT_WATCH_SECONDS);
  // Half a second first: a CI that answers in about a second is seen a second sooner than with
  // a 1 s start, for two or three more free 304s per pushed head.
  return Math.min(cap, 2 ** (Math.floor(Math.max(0, poll) / 2) - 1));
}

export const DEFAULT_WATCH_SECONDS = 10;
