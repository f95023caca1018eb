// The slice of the fleet config the pure core reads. Declared here, not imported, so the core
// stays decoupled from the zod schema: the full `FleetConfig` is structurally assignable to it.

import type { Selector } from "./selectors.js";

export interface CoreLabels {
  /** The label the default selector picks ("ready-for-agent"). */
  ready: string;
  /** The label that hands an issue to humans ("ready-for-human"). */
  escalate: string;
  /** Labels that mark an issue as an epic / PRD: never dispatched. */
  epic: readonly string[];
  /** Issues carrying it sort first within their selector ("priority:high"). */
  priority_high: string;
  /** Prefix of the retry-count labels ("afk-attempt/" → "afk-attempt/2"). */
  attempt_prefix: string;
  /** Hands-off label ("afk-hold"): never dispatched, whatever the selectors say. */
  hold?: string;
  /** Prefix of the labels a selector's `tags` facet matches ("tag:"). */
  tag_prefix?: string;
}

export interface CoreConfig {
  labels: CoreLabels;
  /** Ordered: an issue's priority is the index of the first selector that picks it. Empty → default. */
  selectors?: readonly Selector[];
  /** `rerun_failed`: re-runs of a red Actions check per head before it counts (absent: none). */
  gate: { ci: "required" | "local"; rerun_failed?: number };
  lease: { ttl_seconds: number; heartbeat_seconds: number };
  idle_grace_seconds: number;
  pacing: PacingConfig;
  /** Worker branches are `<branch_prefix><issue>-<slug>` ("afk/"). */
  worktree?: { branch_prefix: string };
}

export interface PacingConfig {
  busy_seconds: number;
  idle_seconds: number;
  long_idle_seconds: number;
  idle_ticks_before_sleep: number;
  /** Seconds between looks at what a wait watches (required checks on waiting heads, the base); default 10. */
  watch_seconds?: number;
  /** A tick under way this long (real time) is reported once in the supervisor lane; default 120. */
  slow_tick_seconds?: number;
}

/**
 * The selectors in force: the configured ones, or `[{label: ready}]` when none are given (the
 * canonical config already writes that default out).
 */
export function effectiveSelectors(config: Pick<CoreConfig, "labels" | "selectors">): readonly Selector[] {
  return config.selectors && config.selectors.length > 0 ? config.selectors : [{ label: config.labels.ready }];
}
