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
  let seconds = busy ? pacing.busy_seconds : emptyTicks >= pacing.idle_ticks_before_sleep ? pacing.long_idle_seconds : pacing.idle_seconds;
  if (lastSummary.inFlight > 0) {
    // The heartbeat is refreshed by ticks: sleeping past ttl/2 (or the heartbeat cadence) risks
    // the lease lapsing under live work.
    seconds = Math.min(seconds, lease.ttl_seconds / 2, lease.heartbeat_seconds);
  }
  return Math.max(1, Math.floor(seconds));
}

/**
 * pace() counts in loop seconds, which the loop multiplies by the time scale; the lease in a
 * scaled host's config is already in real seconds (see withScaledLease in server/host/host.ts),
 * so its cap is taken back to loop seconds here, or a scaled loop would tick scale² fast.
 */
export function loopPacing<C extends Pick<CoreConfig, "pacing" | "lease">>(config: C, timeScale: number): Pick<CoreConfig, "pacing" | "lease"> {
  if (timeScale === 1) return config;
  const { lease } = config;
  return { pacing: config.pacing, lease: { ...lease, ttl_seconds: lease.ttl_seconds / timeScale, heartbeat_seconds: lease.heartbeat_seconds / timeScale } };
}
