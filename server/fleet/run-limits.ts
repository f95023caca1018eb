// When a registration asks for less than "until stopped": one pass (`afk-mcp run --once`) or a
// number of issues brought to an end (`--max-issues N`: landed, escalated or closed as done).
// Reached, the fleet drains itself as project_stop does without ending workers: nothing more is
// born, the workers and landings under way finish and are handled, then the project ends and
// its registration goes.
import type { TickReport } from "./tick-report.js";

export interface RunLimitsInput {
  once: boolean;
  /** null: no cap. */
  maxIssues: number | null;
}

type Ends = Pick<TickReport, "merged" | "escalated" | "closed">;

const ends = (report: Ends): number => report.merged.length + report.escalated.length + report.closed.length;

export class RunLimits {
  private ended = 0;

  constructor(private readonly limits: RunLimitsInput) {}

  /**
   * Before a tick decides: the cap reached with the ends this tick has seen so far (a landing
   * that finished beside the loop, a merge GitHub closed), so the same tick births nothing more.
   */
  capReached(report: Ends): string | null {
    const max = this.limits.maxIssues;
    const ended = this.ended + ends(report);
    return max !== null && ended >= max ? `${ended} issue(s) reached an end, max_issues is ${max}` : null;
  }

  /** After a tick: counts its ends; says why the fleet must drain now, or null. */
  after(report: Ends): string | null {
    this.ended += ends(report);
    if (this.limits.once) return "one pass asked for (once)";
    return this.capReached({ merged: [], escalated: [], closed: [] });
  }

  /** Issues this fleet brought to an end so far. */
  endedCount(): number {
    return this.ended;
  }
}
