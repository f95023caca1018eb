// The host-wide budget: one daily USD budget and one `max_workers` shared by every registration
// this host (a daemon, or one afk-mcp process) runs, set in `<state dir>/host.json`
// (server/host/host-config.ts). Reaching either holds births in every fleet exactly like a quota
// pause (nothing is killed, no attempt is spent); `status` says which budget and when it resets.
import type { SpendSum } from "./spend-ledger.js";
import { nextUtcMidnight, utcDay, type BudgetHold } from "./spend-ledger.js";
import { usdText } from "../agent/spend.js";

export interface HostLimits {
  /** USD the host's fleets may spend together per UTC day; null: no limit. */
  usd_per_day: number | null;
  /** Workers alive at once summed over every fleet of the host; null: no limit. */
  max_workers: number | null;
}

/** What the host budget reads of one fleet. */
export interface BudgetedFleet {
  /** The fleet's spend on the UTC day of `at`. */
  spentOn(at: Date): SpendSum;
  /** Its workers alive now. */
  alive(): number;
}

export class HostBudget {
  private limits: HostLimits = { usd_per_day: null, max_workers: null };
  /** By repository: a fleet stopped today still counts what it spent (a restart replaces it, its spend restored from its lane). */
  private readonly fleets = new Map<string, BudgetedFleet>();
  /** Births under way (between the check and the worker's spawn): counted as alive. */
  private starting = 0;

  set(limits: HostLimits): void {
    this.limits = { ...limits };
  }

  current(): HostLimits {
    return { ...this.limits };
  }

  track(key: string, fleet: BudgetedFleet): void {
    this.fleets.set(key, fleet);
  }

  spentOn(at: Date): { usd: number; unknown_attempts: number; fleets: number } {
    let usd = 0;
    let unknown = 0;
    let fleets = 0;
    for (const fleet of this.fleets.values()) {
      const sum = fleet.spentOn(at);
      if (sum.attempts > 0) fleets += 1;
      usd += sum.usd;
      unknown += sum.unknown_attempts;
    }
    return { usd, unknown_attempts: unknown, fleets };
  }

  alive(): number {
    let n = this.starting;
    for (const fleet of this.fleets.values()) n += fleet.alive();
    return n;
  }

  /** The host day budget reached, or null: births stop on every fleet until the next UTC midnight. */
  dayHold(now: Date): BudgetHold | null {
    const cap = this.limits.usd_per_day;
    if (cap === null) return null;
    const spent = this.spentOn(now);
    if (spent.usd < cap) return null;
    return {
      reason: `host budget usd_per_day reached (host.json): ${usdText(spent.usd)} spent today (UTC ${utcDay(now)}) by this host's ${this.fleets.size} registration(s), of ${usdText(cap)}`,
      until: nextUtcMidnight(now),
    };
  }

  /** The host's max_workers reached, or null. No reset time: a slot frees when any worker exits. */
  workersHold(): BudgetHold | null {
    const cap = this.limits.max_workers;
    if (cap === null) return null;
    const alive = this.alive();
    if (alive < cap) return null;
    return {
      reason: `host max_workers reached (host.json): ${alive} worker(s) alive across this host's registrations, of ${cap}; births resume as workers exit`,
      until: null,
    };
  }

  /** The first host budget holding births, or null. */
  hold(now: Date): BudgetHold | null {
    return this.dayHold(now) ?? this.workersHold();
  }

  /** How many of `target` workers a fleet with `own` alive may have now under max_workers. */
  cappedTarget(target: number, own: number): number {
    const cap = this.limits.max_workers;
    if (cap === null) return target;
    return Math.min(target, own + Math.max(0, cap - this.alive()));
  }

  /**
   * Takes a slot for a birth about to start (synchronously: two fleets' births cannot both take
   * the last one). Null when none is free; else the release, called once the worker is counted alive
   * by its fleet (or did not start).
   */
  reserve(): (() => void) | null {
    if (this.limits.max_workers !== null && this.alive() >= this.limits.max_workers) return null;
    this.starting += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.starting -= 1;
    };
  }

  /** The host's budgets in words, for status: "" when none is set. */
  text(now: Date): string {
    const parts: string[] = [];
    if (this.limits.usd_per_day !== null)
      parts.push(`${usdText(this.limits.usd_per_day)} a day (UTC) for the host, ${usdText(this.spentOn(now).usd)} spent today`);
    if (this.limits.max_workers !== null) parts.push(`${this.limits.max_workers} workers for the host, ${this.alive()} alive`);
    return parts.join(", ");
  }
}
