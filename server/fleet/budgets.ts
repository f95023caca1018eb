// The budgets one fleet answers to: its own (`budget` in config: per attempt, per issue, per UTC
// day) and the host's (server/fleet/host-budget.ts: a daily USD budget and max_workers shared by
// every registration of the host). What decide is given, what status shows.
import type { BudgetFacts } from "../state/decide.js";
import type { HostBudget } from "./host-budget.js";
import { budgetFacts, budgetText, dayBudgetHold, type BudgetHold, type SpendLedger, type SpendView } from "./spend-ledger.js";

export interface BudgetSettings {
  usd_per_attempt: number | null;
  usd_per_issue: number | null;
  usd_per_day: number | null;
}

export class FleetBudgets {
  constructor(
    private readonly settings: () => BudgetSettings,
    private readonly spend: SpendLedger,
    /** Workers of this fleet alive now. */
    private readonly alive: () => number,
    private readonly host: HostBudget | null,
  ) {}

  /** decide's budget facts: the fleet's day budget, else the host's day budget or max_workers (a hold like a quota pause), and issues past theirs. */
  facts(now: Date): BudgetFacts {
    const own = budgetFacts(this.settings(), this.spend, now);
    if (own.dayHold !== null || !this.host) return own;
    const held = this.host.hold(now);
    return { ...own, dayHold: held ? `${held.reason}${held.until ? `; births resume at ${held.until.toISOString()}` : ""}` : null };
  }

  /** The fleet's target under the host's max_workers: room left on the host beside its own workers. */
  target(target: number): number {
    return this.host ? this.host.cappedTarget(target, this.alive()) : target;
  }

  /** What holds births, for status (after the breaker's and the quota's pauses). */
  hold(now: Date): BudgetHold | null {
    return dayBudgetHold(this.settings(), this.spend, now) ?? this.host?.hold(now) ?? null;
  }

  view(now: Date): SpendView {
    const view = this.spend.view(now, budgetText(this.settings()));
    const host = this.host?.text(now) ?? "";
    if (host === "") return view;
    const budget = view.budget === "none set" ? host : `${view.budget}; ${host}`;
    return { ...view, budget, text: `${view.text.slice(0, view.text.lastIndexOf("; budget: "))}; budget: ${budget}` };
  }

  /** A slot for one birth under the host's max_workers (see HostBudget.reserve); a no-op release when no host budget applies. */
  reserve(): (() => void) | null {
    return this.host ? this.host.reserve() : () => undefined;
  }
}
