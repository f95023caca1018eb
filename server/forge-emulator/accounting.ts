// Request accounting for tests and benchmarks: how many REST requests the fleet made, how
// many cost rate limit, how many were free 304s, per route template and per status; and what
// changed the forge (REST writes and git pushes), so a test can prove a call wrote nothing.

export interface Tally {
  total: number;
  counted: number;
  not_modified: number;
}

export class Accounting {
  private total = 0;
  private counted = 0;
  private notModified = 0;
  private byRoute = new Map<string, Tally>();
  private byStatus = new Map<string, number>();
  /** Per login, then per route: whose requests cost what (a fleet and its CI share a forge). */
  private byUser = new Map<string, Map<string, Tally>>();
  private writes = 0;
  private gitFetches = 0;
  private gitPushes = 0;

  /** A git smart-HTTP exchange (not a REST request: it costs no rate limit). */
  recordGit(service: "upload-pack" | "receive-pack"): void {
    if (service === "receive-pack") {
      this.gitPushes++;
      this.writes++;
    } else {
      this.gitFetches++;
    }
  }

  record(routeKey: string, status: number, counted: boolean, write = false, login = ""): void {
    if (write) this.writes++;
    const mine = this.byUser.get(login) ?? new Map<string, Tally>();
    this.byUser.set(login, mine);
    const u = mine.get(routeKey) ?? { total: 0, counted: 0, not_modified: 0 };
    mine.set(routeKey, u);
    u.total++;
    if (counted) u.counted++;
    if (status === 304) u.not_modified++;
    const t = this.byRoute.get(routeKey) ?? { total: 0, counted: 0, not_modified: 0 };
    this.byRoute.set(routeKey, t);
    this.total++;
    t.total++;
    if (counted) {
      this.counted++;
      t.counted++;
    }
    if (status === 304) {
      this.notModified++;
      t.not_modified++;
    }
    this.byStatus.set(String(status), (this.byStatus.get(String(status)) ?? 0) + 1);
  }

  reset(): void {
    this.total = 0;
    this.counted = 0;
    this.notModified = 0;
    this.byRoute = new Map();
    this.byStatus = new Map();
    this.byUser = new Map();
    this.writes = 0;
    this.gitFetches = 0;
    this.gitPushes = 0;
  }

  snapshot(): {
    total: number;
    counted: number;
    not_modified: number;
    by_route: Record<string, Tally>;
    by_status: Record<string, number>;
    by_user: Record<string, Record<string, Tally>>;
    writes: number;
    git: { fetches: number; pushes: number };
  } {
    return {
      writes: this.writes,
      git: { fetches: this.gitFetches, pushes: this.gitPushes },
      total: this.total,
      counted: this.counted,
      not_modified: this.notModified,
      by_route: Object.fromEntries([...this.byRoute].map(([k, v]) => [k, { ...v }])),
      by_status: Object.fromEntries(this.byStatus),
      by_user: Object.fromEntries([...this.byUser].map(([login, routes]) => [login, Object.fromEntries([...routes].map(([k, v]) => [k, { ...v }]))])),
    };
  }
}
