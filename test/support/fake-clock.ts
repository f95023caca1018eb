// A virtual clock for tests: now() and timers that move only when the test says so. Time starts
// at a fixed instant and advances by `advance(ms)`, which fires every timer due on the way, in
// due order (ties in the order they were set), letting the promises each one settles run before
// the next fires. Nothing here reads the machine's clock, so a test on it passes the same on a
// loaded machine as on a quiet one.
//
// Where the fleet takes it today: `clock: () => Date` (FleetDeps.clock, Lease, Board, the
// notifier, the checkpoint, the garbage sweep, the conflict watch) — pass `clock.date`. What it
// cannot take yet (a seam is needed before a fleet runs in virtual time): the Waiter's sleep
// and deadline (server/fleet/waiter.ts: Date.now and setTimeout), a train's CI wait
// (server/landing/train.ts: Date.now and timers/promises), a worker's output and exit times in
// the local runtime. The merge queue's wait already takes `now` and `sleep`
// (server/landing/merge-queue.ts): pass `clock.nowMs` and `clock.sleep`.

/** 2026-01-01T00:00:00Z: a fixed start, so a test's dates are the same on every run. */
export const VIRTUAL_EPOCH = Date.UTC(2026, 0, 1);

interface Timer {
  id: number;
  at: number;
  fn: () => void;
  /** Set for an interval: fired again this long after each firing. */
  every: number | null;
}

export interface VirtualTimers {
  setTimeout(fn: () => void, ms: number): number;
  setInterval(fn: () => void, ms: number): number;
  clearTimeout(id: number): void;
}

export class VirtualClock implements VirtualTimers {
  private nowAt: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  constructor(start = VIRTUAL_EPOCH) {
    this.nowAt = start;
  }

  /** Epoch ms now (bound: pass it where a `() => number` is taken). */
  readonly nowMs = (): number => this.nowAt;

  /** Now as a Date (bound: pass it where a `clock: () => Date` is taken). */
  readonly date = (): Date => new Date(this.nowAt);

  setTimeout(fn: () => void, ms: number): number {
    return this.add(fn, ms, null);
  }

  setInterval(fn: () => void, ms: number): number {
    return this.add(fn, ms, Math.max(1, ms));
  }

  clearTimeout(id: number): void {
    this.timers.delete(id);
  }

  /** Resolves once the clock has been advanced `ms` past now (bound). */
  readonly sleep = (ms: number): Promise<void> => new Promise((resolve) => this.setTimeout(resolve, ms));

  /** Timers still waiting to fire. */
  pending(): number {
    return this.timers.size;
  }

  /** When the next timer fires (epoch ms), or null when none waits. */
  nextAt(): number | null {
    let next: number | null = null;
    for (const t of this.timers.values()) if (next === null || t.at < next) next = t.at;
    return next;
  }

  /**
   * Moves time forward by `ms`, firing each timer due on the way at its own instant (now() reads
   * that instant inside it) and settling what it started before the next one fires.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`advance: ${ms} is not a duration`);
    const until = this.nowAt + ms;
    await settle();
    for (;;) {
      const due = this.firstDue(until);
      if (!due) break;
      this.nowAt = Math.max(this.nowAt, due.at);
      if (due.every === null) this.timers.delete(due.id);
      else due.at += due.every;
      due.fn();
      await settle();
    }
    this.nowAt = until;
    await settle();
  }

  /** Advances to the next timer and fires it (and any due at the same instant); false when none waits. */
  async runNext(): Promise<boolean> {
    const at = this.nextAt();
    if (at === null) return false;
    await this.advance(at - this.nowAt);
    return true;
  }

  /**
   * Resolves with `probe`'s answer once it is truthy, advancing `stepMs` at a time between looks;
   * fails naming `what` once `withinMs` of virtual time passed without it (waitFor's twin in virtual time).
   */
  async until<T>(
    what: string,
    probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
    opts: { withinMs: number; stepMs?: number },
  ): Promise<T> {
    const step = opts.stepMs ?? 1000;
    for (let waited = 0; ; waited += step) {
      const value = await probe();
      if (value) return value;
      if (waited >= opts.withinMs) throw new Error(`${what} did not come within ${opts.withinMs} ms of virtual time`);
      await this.advance(step);
    }
  }

  private add(fn: () => void, ms: number, every: number | null): number {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.nowAt + Math.max(0, ms), fn, every });
    return id;
  }

  private firstDue(until: number): Timer | null {
    let first: Timer | null = null;
    for (const t of this.timers.values()) {
      if (t.at > until) continue;
      if (first === null || t.at < first.at || (t.at === first.at && t.id < first.id)) first = t;
    }
    return first;
  }
}

/** Lets pending promise callbacks run (a few turns of the microtask and immediate queues). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
