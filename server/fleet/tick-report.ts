// What one tick did, for the monitor lane, status and the CLI: the issues each kind of move
// touched, what is in flight, and why births or merges were held.
import type { WorkingSet } from "../state/rebuild.js";

export interface TickReport {
  at: string;
  merged: number[];
  escalated: number[];
  closed: number[];
  dispatched: number[];
  reclaimed: number[];
  released: number[];
  in_flight: number;
  frontier_remaining: number;
  workers: number;
  births_held: string | null;
  merges_held: number[];
  /** Green PRs wait for another host's landing lock: why (who holds it). */
  landing_waits: string | null;
  /** Green PRs held for a human's approving review. */
  awaiting_review: number[];
  /** Ready issues started later because in-flight work changes the paths they name. */
  overlap_held: Array<{ issue: number; paths: string[]; instead: number }>;
  /** Conflict retries waiting for the in-flight work that changes the same files to land. */
  conflict_held: Array<{ issue: number; pr: number; files: string[]; waiting_for: number[]; held_seconds: number; max_seconds: number }>;
  /** Pairs of in-flight work (PR heads, unproposed branches) that do not merge with each other. */
  conflict_pairs: Array<{ a: number; b: number; pr_a: number | null; pr_b: number | null; files: string[] }>;
  moved: boolean;
  error: string | null;
}

export function emptyReport(at: Date): TickReport {
  return {
    at: at.toISOString(),
    merged: [],
    escalated: [],
    closed: [],
    dispatched: [],
    reclaimed: [],
    released: [],
    in_flight: 0,
    frontier_remaining: 0,
    workers: 0,
    births_held: null,
    merges_held: [],
    landing_waits: null,
    awaiting_review: [],
    overlap_held: [],
    conflict_held: [],
    conflict_pairs: [],
    moved: false,
    error: null,
  };
}

/**
 * The working set as a tick left it, for status until the next tick: what it landed, escalated,
 * closed or released is no longer a claim of ours, and what it dispatched or reclaimed is no
 * longer dispatchable. So status never lists under "mine" an issue its last tick says it merged.
 */
export function afterTick(set: WorkingSet, report: TickReport): WorkingSet {
  const ended = new Set([...report.merged, ...report.escalated, ...report.closed, ...report.released]);
  const taken = new Set([...report.dispatched, ...report.reclaimed]);
  if (ended.size === 0 && taken.size === 0) return set;
  return {
    ...set,
    mine: set.mine.filter((m) => !ended.has(m.issue)),
    frontier: { ...set.frontier, dispatch: set.frontier.dispatch.filter((d) => !taken.has(d.number)) },
  };
}

/**
 * The counts a tick ends with, from its working set and what it did: the claims this host still
 * holds, what is in flight, what is left to start and whether anything moved.
 */
export function closeCounts(set: WorkingSet, report: TickReport, workers: number): Set<number> {
  const ended = new Set([...report.merged, ...report.escalated, ...report.closed, ...report.released]);
  const taken = [...report.dispatched, ...report.reclaimed];
  const ends = report.merged.length + report.escalated.length + report.closed.length + report.released.length;
  report.in_flight = set.mine.length + taken.length - ends;
  report.frontier_remaining = Math.max(0, set.frontier.dispatch.length - report.dispatched.length);
  report.workers = workers;
  report.moved = ends + taken.length > 0;
  return new Set([...set.mine.map((m) => m.issue), ...taken].filter((n) => !ended.has(n)));
}

export function summaryLine(r: TickReport): string {
  const parts = [
    r.merged.length ? `merged ${r.merged.map((n) => `#${n}`).join(" ")}` : "",
    r.dispatched.length ? `dispatched ${r.dispatched.map((n) => `#${n}`).join(" ")}` : "",
    r.escalated.length ? `escalated ${r.escalated.map((n) => `#${n}`).join(" ")}` : "",
    r.closed.length ? `closed ${r.closed.map((n) => `#${n}`).join(" ")}` : "",
    r.reclaimed.length ? `reclaimed ${r.reclaimed.map((n) => `#${n}`).join(" ")}` : "",
    `${r.in_flight} in flight`,
    `${r.workers} worker(s)`,
    `${r.frontier_remaining} ready`,
    r.births_held ? `births held: ${r.births_held}` : "",
    r.merges_held.length ? `merges held for ${r.merges_held.map((n) => `#${n}`).join(" ")}` : "",
    r.landing_waits ? `landing waits: ${r.landing_waits}` : "",
    r.awaiting_review.length ? `awaiting review: ${r.awaiting_review.map((n) => `#${n}`).join(" ")}` : "",
    r.overlap_held.length ? `held back for overlap: ${r.overlap_held.map((h) => `#${h.issue} (${h.paths.join(", ")})`).join(" ")}` : "",
    r.conflict_held.length
      ? `conflict retries waiting: ${r.conflict_held.map((h) => `#${h.issue} (for ${h.waiting_for.map((n) => `#${n}`).join(" ")})`).join(" ")}`
      : "",
    r.conflict_pairs.length ? `conflicting pairs: ${r.conflict_pairs.map((p) => `#${p.a}/#${p.b}`).join(" ")}` : "",
    r.error ? `error: ${r.error}` : "",
  ];
  return parts.filter(Boolean).join("; ");
}

/**
 * Where a tick's time went (milliseconds per phase and per action), for the monitor lane: the
 * bench reads it to tell the fleet's own overhead from waiting on workers and CI.
 */
export class PhaseTimer {
  private readonly spent: Record<string, number> = {};
  private readonly started = performance.now();
  private last = this.started;
  private current = "the heartbeat";
  private watch: NodeJS.Timeout | null = null;

  /** Names what the tick does from now on: a slow tick's warning says where it is. */
  doing(what: string): void {
    this.current = what;
  }

  /**
   * Calls `onSlow` once if the tick is still under way after `ms`. A tick normally takes
   * seconds (landings and workers run beside it); one that takes minutes is stuck on something
   * (a git or GitHub call running to its timeout), and the lane should say on what while it lasts.
   */
  watchdog(ms: number, onSlow: (seconds: number, doing: string) => void): void {
    this.watch = setTimeout(() => onSlow(Math.round((performance.now() - this.started) / 1000), this.current), ms);
    this.watch.unref();
  }

  /** The tick ended: no warning any more. */
  done(): void {
    if (this.watch) clearTimeout(this.watch);
    this.watch = null;
  }

  /** Charges the time since the previous mark to `phase` (added up when repeated). */
  mark(phase: string): void {
    const now = performance.now();
    this.spent[phase] = Math.round((this.spent[phase] ?? 0) + now - this.last);
    this.last = now;
  }

  phases(): Record<string, number> {
    return { ...this.spent };
  }
}
