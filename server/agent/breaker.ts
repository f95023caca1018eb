// The circuit breaker against a worker command that cannot run at all (a typo, a missing
// binary, an expired login that is not recognised): K fast deaths inside a sliding window park
// births until an operator resets it. Pure: the clock is passed in with every exit.

export interface CircuitOptions {
  /** Fast deaths that trip the breaker (`circuit.k`). */
  k: number;
  /** The sliding window they are counted in (`circuit.window_seconds`). */
  windowSeconds: number;
  /** An exit sooner than this after the start is a fast death (`circuit.fast_death_seconds`). */
  fastDeathSeconds: number;
}

export interface WorkerDeath {
  issue: number;
  /** Epoch ms of the exit. */
  at: number;
  durationMs: number;
}

export interface CircuitTrip {
  /** Epoch ms of the death that tripped it. */
  at: number;
  /** The fast deaths inside the window, oldest first. */
  deaths: WorkerDeath[];
}

export interface ExitRecord extends WorkerDeath {
  /** The worker hit a usage limit: a pause, not a broken command, so it never counts. */
  quota: boolean;
  /**
   * The worker left commits, a PR or a verdict: a quick `already-satisfied` is a good run, not a
   * death. Default false.
   */
  productive?: boolean;
  /** The fleet killed it (stall, stop): not the command's fault. Default false. */
  killed?: boolean;
}

export class CircuitBreaker {
  private deaths: WorkerDeath[] = [];
  private trip: CircuitTrip | null = null;

  constructor(private readonly opts: CircuitOptions) {
    if (!(opts.k >= 1) || !(opts.windowSeconds > 0) || !(opts.fastDeathSeconds > 0)) {
      throw new Error("circuit: k must be at least 1 and window_seconds, fast_death_seconds positive");
    }
  }

  /** Whether an exit counts as a fast death. */
  isFastDeath(exit: ExitRecord): boolean {
    return !exit.quota && !exit.productive && !exit.killed && exit.durationMs < this.opts.fastDeathSeconds * 1000;
  }

  /**
   * Records an exit. Returns the trip when this exit tripped the breaker, else null. Once
   * tripped it stays tripped (further exits are still recorded) until `reset`.
   */
  recordExit(exit: ExitRecord): CircuitTrip | null {
    if (!this.isFastDeath(exit)) return null;
    this.deaths.push({ issue: exit.issue, at: exit.at, durationMs: exit.durationMs });
    this.deaths.sort((a, b) => a.at - b.at);
    const latest = this.deaths[this.deaths.length - 1]!.at;
    const from = latest - this.opts.windowSeconds * 1000;
    this.deaths = this.deaths.filter((d) => d.at >= from);
    if (this.trip === null && this.deaths.length >= this.opts.k) {
      this.trip = { at: exit.at, deaths: this.deaths.map((d) => ({ ...d })) };
      return this.trip;
    }
    return null;
  }

  tripped(): CircuitTrip | null {
    return this.trip;
  }

  /** Fast deaths still inside the window at `now` (for status). */
  recentDeaths(now: number): WorkerDeath[] {
    const from = now - this.opts.windowSeconds * 1000;
    return this.deaths.filter((d) => d.at >= from && d.at <= now).map((d) => ({ ...d }));
  }

  /** `project_reset`: closes the breaker and forgets the deaths that tripped it. */
  reset(): void {
    this.trip = null;
    this.deaths = [];
  }
}
