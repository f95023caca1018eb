// A session's renewals: what it started, it renews now and then every half TTL (as the daemon
// says), for as long as the daemon says it holds any, so a closed laptop or a closed session lets
// them lapse instead of polling on for nobody. Once stopped, it neither renews nor schedules.

/** The daemon's answer to `renew`: how many registrations it extended, and when to renew next. */
export interface RenewAnswer {
  registrations: number;
  renew_ms: number;
}

/** Until the daemon has said when: try again this soon (a registration outlives a few missed renewals). */
const RETRY_MS = 5_000;

export class Renewal {
  private timer: NodeJS.Timeout | null = null;
  /** This session holds registrations: keep renewing (and let `once` restart a crashed daemon to do so). */
  private holding = false;
  private stopped = false;

  /** `once(restart)` renews once over the daemon's connection (null: no daemon runs); with `restart`, it may start a crashed daemon again. */
  constructor(private readonly once: (restart: boolean) => Promise<RenewAnswer | null>) {}

  /** Renews now, then on. */
  soon(): void {
    if (this.stopped) return;
    this.holding = true;
    this.schedule(0);
  }

  /** One renewal; returns how many registrations it extended. */
  async renew(): Promise<number> {
    if (this.stopped) return 0;
    let next = RETRY_MS;
    let count = 0;
    try {
      const answer = await this.once(this.holding);
      count = answer?.registrations ?? 0;
      next = answer?.renew_ms ?? next;
      this.holding = count > 0;
    } catch {
      // Unreachable for now: try again soon.
    }
    if (this.holding) this.schedule(next);
    return count;
  }

  /** No more renewals: the session's registrations lapse after their TTL unless another renews them. */
  stop(): void {
    this.stopped = true;
    this.holding = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.renew(), ms);
    this.timer.unref();
  }
}
