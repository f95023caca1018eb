// Landings that wait — a local gate, a train's gate, a merge queue's verdict — run beside the
// loop, not inside a tick: the tick starts one and returns, so dispatch, liveness and exits go
// on while the gate runs; its end wakes the loop like a worker's exit, and a later tick takes
// its outcome (board, claim, retry or escalation). One runs at a time (landings are serialized
// per repository anyway). Nothing here is durable: what a host killed mid-landing leaves is in
// GitHub as before (the landing lock ref, a train branch, a queue entry), and a restart recovers
// from that, not from this memory.

/** A landing's end, for a later tick to take. */
export interface LandingDone<Scope> {
  /**
   * It moved something (landed, red, a conflict, a lost claim): the loop wakes now, and these
   * issues are settled for the tick that takes it. A landing that only has to be tried again
   * (busy, retry later) wakes nothing: a later tick tries it, as it would have inline.
   */
  moved: number[];
  /** The bookkeeping, in the tick that takes it (board, claim, retry, report). */
  finish(scope: Scope): Promise<void>;
}

export class LandingsInFlight<Scope> {
  private running: number[] | null = null;
  private idleNow: Promise<void> = Promise.resolve();
  private readonly done: Array<LandingDone<Scope>> = [];

  constructor(
    private readonly hooks: {
      /** True while the fleet stops: a landing then runs inline, so the stop's tick ends it. */
      inline: () => boolean;
      /** A landing moved something: wake the loop. */
      wake: () => void;
      /** The landing threw (a forge or git error): logged now, tried again by a later tick. */
      failed: (issues: number[], error: unknown) => void;
    },
  ) {}

  /** A landing runs (its completion wakes the loop). */
  busy(): boolean {
    return this.running !== null;
  }

  /** A landing runs, or ended and waits for a tick to take it: no other starts before. */
  pending(): boolean {
    return this.running !== null || this.done.length > 0;
  }

  /** Issues a landing holds: running, or ended and not yet taken by a tick. */
  holding(): Set<number> {
    return new Set([...(this.running ?? []), ...this.done.flatMap((d) => d.moved)]);
  }

  /** Starts `work` in the background (inline while the fleet stops: then `scope` takes it at once). */
  async start(scope: Scope, issues: number[], work: () => Promise<LandingDone<Scope>>): Promise<void> {
    if (this.hooks.inline()) {
      await (await work()).finish(scope);
      return;
    }
    this.running = issues;
    this.idleNow = work().then(
      (done) => {
        this.running = null;
        this.done.push(done);
        if (done.moved.length > 0) this.hooks.wake();
      },
      (error: unknown) => {
        this.running = null;
        this.hooks.failed(issues, error);
      },
    );
  }

  /** Takes every ended landing into `scope`; returns the issues they settled. */
  async finish(scope: Scope): Promise<Set<number>> {
    const settled = new Set<number>();
    for (const done of this.done.splice(0)) {
      for (const n of done.moved) settled.add(n);
      // One landing's failed bookkeeping must not lose the others'; a later tick sees what stands in GitHub.
      await done.finish(scope).catch((error: unknown) => this.hooks.failed(done.moved, error));
    }
    return settled;
  }

  /** Resolves once no landing runs (ended ones may still wait for a tick to take them). */
  idle(): Promise<void> {
    return this.idleNow;
  }
}
