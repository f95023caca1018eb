// The project's side of the status board: the phase history this host has seen for each
// issue (in memory: the board is a projection, never read back) and one upsert per change.
import type { Forge } from "../gh/forge.js";
import { BoardUpserter, renderBoard, type BoardPhase } from "./render.js";

export type { BoardPhase };

interface History {
  phases: { phase: BoardPhase; since: string }[];
  attempt: number;
}

export class Board {
  private readonly history = new Map<number, History>();
  private readonly upserter: BoardUpserter;

  constructor(
    forge: Forge,
    login: string,
    private readonly clock: () => Date,
    private readonly who: { instance: string; host: string } = { instance: "", host: "" },
  ) {
    this.upserter = new BoardUpserter(forge, login);
  }

  /** Records that an issue entered a phase (no request). */
  enter(issue: number, phase: BoardPhase, attempt?: number): History {
    let h = this.history.get(issue);
    if (!h) {
      h = { phases: [], attempt: attempt ?? 0 };
      this.history.set(issue, h);
    }
    if (attempt !== undefined && attempt !== h.attempt) {
      h.attempt = attempt;
    }
    if (h.phases[h.phases.length - 1]?.phase !== phase) h.phases.push({ phase, since: this.clock().toISOString() });
    return h;
  }

  /** Upserts the board for a live phase (a request only when the rendered text changed). */
  async show(issue: number, phase: BoardPhase, attempt: number, maxAttempts: number, pr: number | null, instance: string, host: string, hint: { noComments?: boolean; conflict?: string | null } = {}): Promise<void> {
    const h = this.enter(issue, phase, attempt);
    await this.upserter.upsert(issue, this.render(issue, phase, h, maxAttempts, pr, instance, host, undefined, hint.conflict), { ...(hint.noComments !== undefined ? { noComments: hint.noComments } : {}) });
  }

  /** The terminal board (merged, escalated), written before the claim is released. */
  async terminal(issue: number, phase: "merged" | "escalated", attempt: number, maxAttempts: number, extra: { pr?: number; note?: string } = {}): Promise<void> {
    const h = this.enter(issue, phase, attempt);
    await this.upserter.upsert(issue, this.render(issue, phase, h, maxAttempts, extra.pr ?? null, this.who.instance, this.who.host, extra.note));
    // The issue leaves the fleet: a later claim (a human handed it back) looks its board up anew.
    this.history.delete(issue);
    this.upserter.forget(issue);
  }

  /**
   * The board of a claim the fleet let go without finishing it (a stop, a breaker sweep, a human
   * taking it back): marked released, so it no longer says "Coding". A board only this fleet
   * wrote is edited; an issue without one gets none.
   */
  async released(issue: number, maxAttempts: number, note: string): Promise<void> {
    const h = this.enter(issue, "released");
    const body = this.render(issue, "released", h, maxAttempts, null, this.who.instance, this.who.host, note);
    try {
      await this.upserter.upsert(issue, body, { onlyExisting: true });
    } finally {
      this.history.delete(issue);
      this.upserter.forget(issue);
    }
  }

  private render(issue: number, phase: BoardPhase, h: History, maxAttempts: number, pr: number | null, instance: string, host: string, note?: string, conflict?: string | null): string {
    // Render with the time the phase began, not now: an unchanged phase renders the same text
    // tick after tick, so it costs no request.
    const last = h.phases[h.phases.length - 1];
    return renderBoard({
      issue,
      phase,
      attempt: h.attempt,
      maxAttempts,
      history: h.phases,
      now: last?.since ?? this.clock().toISOString(),
      pr: pr ? { number: pr, url: "" } : null,
      instance: instance || this.who.instance,
      host: host || this.who.host,
      ...(note ? { note } : {}),
      ...(conflict ? { conflict } : {}),
    });
  }
}
