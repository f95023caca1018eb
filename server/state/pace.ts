// How long to sleep before the next tick: briskly while anything moves or is in flight (green
// PRs merge promptly), slowly when idle, very slowly after a run of empty ticks — but never so
// long, while holding a claim, that the lease could lapse and a peer reclaim live work.

import type { CoreConfig } from "./config.js";

export interface TickSummary {
  /** Something merged, was dispatched, escalated or reclaimed this tick. */
  moved: boolean;
  /** Claims the fleet holds (with or without a PR). */
  inFlight: number;
}

export interface PaceInput {
  lastSummary: TickSummary;
  /** Consecutive ticks, the last included, with an empty frontier and nothing in flight. */
  emptyTicks: number;
  config: Pick<CoreConfig, "pacing" | "lease">;
}

/** Seconds until the next tick (at least 1). */
export function pace({ lastSummary, emptyTicks, config }: PaceInput): number {
  const { pacing, lease } = config;
  const busy = lastSummary.moved || lastSummary.inFlight > 0;
  let seconds = busy
    ? pacing.busy_seconds
    : emptyTicks >= pacing.idle_ticks_before_sleep
      ? pacing.long_idle_seconds
      : pacing.idle_seconds;
  if (lastSummary.inFlight > 0) {
    // The heartbeat is refreshed by ticks: sleeping past ttl/2 (or the heartbeat cadence) risks
    // the lease lapsing under live work.
    seconds = Math.min(seconds, lease.ttl_seconds / 2, lease.heartbeat_seconds);
  }
  return Math.max(1, Math.floor(seconds));
}
