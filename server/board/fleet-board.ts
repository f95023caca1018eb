// The project's side of the status board: the phase history this host has seen for each
// issue (in memory: the board is a projection, never read back) and one upsert per change.
import type { Forge } from "../gh/forge.js";
import { renderBoard, type BoardPhase, type ReleasedLeft } from "./render.js";
import { BoardUpserter } from "./upsert.js";
import { ETA_WINDOW, estimate, issueEtaLine, recentMedian, type Eta } from "../state/eta.js";

export type { BoardPhase };

interface History {
  phases: { phase: BoardPhase; since: string }[];
  attempt: number;
  /**
   * The estimate line, taken when the phase changed (a board is written anyway then, so a landing
   * that moves the median costs no edit of every live board), and once more when the first
   * estimate becomes possible: at most one edit more per board for the whole attempt.
   */
  eta: string;
  timed: boolean;
  /** Why the last attempt failed (a retry's reason, the worker's last lines), shown until the issue leaves the board. */
  failed?: { attempt: number; why: string; lastWords?: string };
  /** What the runtime set right without spending an attempt, shown until the issue leaves the board. */
  notice?: string;
}

export class Board {
  private readonly history = new Map<number, History>();
  private readonly upserter: BoardUpserter;
  /** Claim → merged of the issues this fleet landed, oldest first (the last ETA_WINDOW): the ETA's evidence. */
  private readonly landedMs: number[] = [];

  constructor(
    forge: Forge,
    login: string,
    private readonly clock: () => Date,
    private readonly who: { instance: string; host: string } = { instance: "", host: "" },
    /**
     * How long a live phase must have lasted before it is written (`board.settle_seconds`): real
     * time, never compressed by the bench's or demo's time scale, since it is a human's reading time.
     */
    private readonly settleMs: () => number = () => 0,
  ) {
    this.upserter = new BoardUpserter(forge, login);
  }

  /** Records that an issue entered a phase (no request). */
  enter(issue: number, phase: BoardPhase, attempt?: number): History {
    let h = this.history.get(issue);
    if (!h) {
      h = { phases: [], attempt: attempt ?? 0, eta: "", timed: false };
      this.history.set(issue, h);
    }
    if (attempt !== undefined && attempt !== h.attempt) {
      h.attempt = attempt;
    }
    const changed = h.phases[h.phases.length - 1]?.phase !== phase;
    if (changed) h.phases.push({ phase, since: this.clock().toISOString() });
    if (changed || !h.timed) {
      h.timed = recentMedian(this.landedMs).median !== null;
      h.eta = issueEtaLine(h.phases[0]!.since, this.landedMs);
    }
    return h;
  }

  /** Records why an attempt failed (no request): the next write of the board says it. */
  failed(issue: number, attempt: number, why: string, lastWords?: string): void {
    this.enter(issue, "ci_failed").failed = { attempt, why, ...(lastWords?.trim() ? { lastWords } : {}) };
  }

  /** Records what the runtime set right for the issue without spending an attempt (no request): the next write says it. */
  noted(issue: number, text: string): void {
    (this.history.get(issue) ?? this.enter(issue, "coding")).notice = text;
  }

  /**
   * A claim just taken on an issue that had no comment at all when this tick listed it: it has no
   * board either, so the first write creates one without listing the comments (one request less).
   */
  claimed(issue: number, hint: { noComments?: boolean } = {}): void {
    this.enter(issue, "claimed");
    if (hint.noComments) this.upserter.noBoard(issue);
  }

  /**
   * Upserts the board for a live phase (a request only when the rendered text changed), once the
   * phase has lasted the settle time: a phase over within seconds (a scripted worker, a CI that
   * answers at once, a PR that lands as soon as it is green) would cost a write, and with the
   * first write a comment, that nobody reads; the terminal board still lists it with its time.
   */
  async show(
    issue: number,
    phase: BoardPhase,
    attempt: number,
    maxAttempts: number,
    pr: number | null,
    instance: string,
    host: string,
    hint: { noComments?: boolean; conflict?: string | null } = {},
  ): Promise<void> {
    const h = this.enter(issue, phase, attempt);
    const since = Date.parse(h.phases[h.phases.length - 1]!.since);
    if (this.clock().getTime() - since < this.settleMs()) return;
    await this.upserter.upsert(issue, this.render(issue, phase, h, maxAttempts, pr, instance, host, undefined, hint.conflict), {
      ...(hint.noComments !== undefined ? { noComments: hint.noComments } : {}),
    });
  }

  /**
   * The terminal board (merged, escalated), written before the claim is released: even where no
   * live phase lasted long enough to open a board, the issue ends with one saying what became of
   * it (which PR or train landed it), with every phase it went through in its history. One
   * request per finished issue: a comment, or an edit of the board. `ifShown`: only where a board
   * was opened (an escalation whose own comment tells the rest).
   */
  async terminal(
    issue: number,
    phase: "merged" | "escalated",
    attempt: number,
    maxAttempts: number,
    extra: { pr?: number; note?: string; ifShown?: boolean } = {},
  ): Promise<void> {
    const h = this.enter(issue, phase, attempt);
    const first = h.phases[0];
    if (phase === "merged" && extra.pr !== undefined && first) this.landed(this.clock().getTime() - Date.parse(first.since));
    const body = this.render(issue, phase, h, maxAttempts, extra.pr ?? null, this.who.instance, this.who.host, extra.note);
    await this.upserter.upsert(issue, body, { onlyExisting: extra.ifShown === true });
    // The issue leaves the fleet: a later claim (a human handed it back) looks its board up anew.
    this.history.delete(issue);
    this.upserter.forget(issue);
  }

  /**
   * The board of a claim the fleet let go without finishing it (a stop, a breaker sweep, a human
   * taking it back): marked released, so it no longer says "Coding". A board only this fleet
   * wrote is edited; an issue without one gets none.
   */
  async released(issue: number, maxAttempts: number, note: string, left: ReleasedLeft = "backlog"): Promise<void> {
    const h = this.enter(issue, "released");
    const body = this.render(issue, "released", h, maxAttempts, null, this.who.instance, this.who.host, note, undefined, left);
    try {
      await this.upserter.upsert(issue, body, { onlyExisting: true });
    } finally {
      this.history.delete(issue);
      this.upserter.forget(issue);
    }
  }

  /** A landed issue's claim → merged time, as this host saw it (kept in memory: a restart starts over). */
  landed(ms: number): void {
    this.landedMs.push(ms);
    if (this.landedMs.length > ETA_WINDOW) this.landedMs.splice(0, this.landedMs.length - ETA_WINDOW);
  }

  /** The ETA of the issues on a live board (from when this host first saw each) and of `queued` more, `target` at once. */
  eta(queued: number, target: number): Eta {
    const now = this.clock().toISOString();
    const running = [...this.history].map(([issue, h]) => ({ issue, startedAt: h.phases[0]?.since ?? now })).sort((a, b) => a.issue - b.issue);
    return estimate({ landedMs: this.landedMs, running, queued, target, now });
  }

  private render(
    issue: number,
    phase: BoardPhase,
    h: History,
    maxAttempts: number,
    pr: number | null,
    instance: string,
    host: string,
    note?: string,
    conflict?: string | null,
    left?: ReleasedLeft,
  ): string {
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
      ...(left ? { left } : {}),
      ...(h.eta ? { eta: h.eta } : {}),
      ...(h.failed ? { failed: h.failed } : {}),
      ...(h.notice ? { notice: h.notice } : {}),
    });
  }
}
