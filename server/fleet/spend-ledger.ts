// Spend of a running fleet: every attempt's figures as its engine reported them (worker-runs.ts
// records each in the worker lane too), summed per issue and per fleet per UTC day. An attempt
// whose cost is unknown is counted as unknown, never added as 0.
import type { Spend } from "../agent/spend.js";
import { usdText } from "../agent/spend.js";

export interface SpendSum {
  /** Sum of the attempts whose cost is known. */
  usd: number;
  attempts: number;
  /** Attempts whose cost nobody reported: `usd` is then a lower bound. */
  unknown_attempts: number;
  input_tokens: number;
  output_tokens: number;
}

export interface SpendView {
  /** The UTC day the day figures are for, YYYY-MM-DD. */
  day: string;
  today: SpendSum;
  issues: Array<{ issue: number; usd: number; attempts: number; unknown_attempts: number }>;
  /** The budgets in force (config `budget`), in words: "none set" when every one is null. */
  budget: string;
  text: string;
}

/** The config's budgets in words, each that is set. */
export function budgetText(budget: { usd_per_attempt: number | null; usd_per_issue: number | null; usd_per_day: number | null }): string {
  const parts = [
    budget.usd_per_day !== null ? `${usdText(budget.usd_per_day)} a day (UTC)` : "",
    budget.usd_per_issue !== null ? `${usdText(budget.usd_per_issue)} an issue` : "",
    budget.usd_per_attempt !== null ? `${usdText(budget.usd_per_attempt)} an attempt` : "",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : "none set";
}

const empty = (): SpendSum => ({ usd: 0, attempts: 0, unknown_attempts: 0, input_tokens: 0, output_tokens: 0 });

function add(sum: SpendSum, spend: Spend): void {
  sum.attempts += 1;
  if (spend.usd === null) sum.unknown_attempts += 1;
  else sum.usd += spend.usd;
  sum.input_tokens += spend.input_tokens ?? 0;
  sum.output_tokens += spend.output_tokens ?? 0;
}

export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** The next UTC midnight after `at`: when a day budget resets. */
export const nextUtcMidnight = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));

/** "$0.0180 over 2 attempts (1 of unknown cost)". */
export function sumText(sum: SpendSum): string {
  if (sum.attempts === 0) return "nothing spent";
  const unknown =
    sum.unknown_attempts === 0 ? "" : sum.unknown_attempts === sum.attempts ? " (cost unknown)" : ` (${sum.unknown_attempts} of unknown cost: at least this)`;
  const usd = sum.unknown_attempts === sum.attempts ? "unknown" : usdText(sum.usd);
  return `${usd} over ${sum.attempts} attempt${sum.attempts === 1 ? "" : "s"}${unknown}, ${sum.input_tokens} input and ${sum.output_tokens} output tokens`;
}

export class SpendLedger {
  private readonly byIssue = new Map<number, SpendSum>();
  private readonly byDay = new Map<string, SpendSum>();

  record(issue: number, spend: Spend, at: Date): void {
    const i = this.byIssue.get(issue) ?? empty();
    add(i, spend);
    this.byIssue.set(issue, i);
    const key = utcDay(at);
    const d = this.byDay.get(key) ?? empty();
    add(d, spend);
    this.byDay.set(key, d);
  }

  issue(n: number): SpendSum {
    return { ...(this.byIssue.get(n) ?? empty()) };
  }

  day(at: Date): SpendSum {
    return { ...(this.byDay.get(utcDay(at)) ?? empty()) };
  }

  view(at: Date, budget: string): SpendView {
    const today = this.day(at);
    const issues = [...this.byIssue.entries()]
      .sort(([a], [b]) => a - b)
      .map(([issue, sum]) => ({ issue, usd: sum.usd, attempts: sum.attempts, unknown_attempts: sum.unknown_attempts }));
    return { day: utcDay(at), today, issues, budget, text: `spend today (${utcDay(at)}, UTC): ${sumText(today)}; budget: ${budget}` };
  }
}

export interface BudgetHold {
  reason: string;
  /** When it lifts by itself; null: when a worker exits (max_workers). */
  until: Date | null;
}

/** The day budget reached, or null: births stop until the next UTC midnight. */
export function dayBudgetHold(budget: { usd_per_day: number | null }, ledger: SpendLedger, now: Date): BudgetHold | null {
  if (budget.usd_per_day === null) return null;
  const today = ledger.day(now);
  if (today.usd < budget.usd_per_day) return null;
  return {
    reason: `budget.usd_per_day reached: ${usdText(today.usd)} spent today (UTC ${utcDay(now)}) of ${usdText(budget.usd_per_day)}`,
    until: nextUtcMidnight(now),
  };
}

/** The budget facts of decide (server/state/decide.ts): the day hold, and each issue past its budget. */
export function budgetFacts(
  budget: { usd_per_day: number | null; usd_per_issue: number | null },
  ledger: SpendLedger,
  now: Date,
): { dayHold: string | null; issuesOver: Map<number, string> } {
  const hold = dayBudgetHold(budget, ledger, now);
  const issuesOver = new Map<number, string>();
  if (budget.usd_per_issue !== null) {
    for (const row of ledger.view(now, "").issues) {
      if (row.usd >= budget.usd_per_issue)
        issuesOver.set(row.issue, `${sumText(ledger.issue(row.issue))} (budget.usd_per_issue ${usdText(budget.usd_per_issue)})`);
    }
  }
  return { dayHold: hold ? `${hold.reason}; births resume at ${hold.until!.toISOString()}` : null, issuesOver };
}
