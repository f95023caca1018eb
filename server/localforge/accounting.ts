// Request accounting for tests and benchmarks: how many REST requests the fleet made, how
// many cost rate limit, how many were free 304s, per route template and per status.

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

  record(routeKey: string, status: number, counted: boolean): void {
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
  }

  snapshot(): { total: number; counted: number; not_modified: number; by_route: Record<string, Tally>; by_status: Record<string, number> } {
    return {
      total: this.total,
      counted: this.counted,
      not_modified: this.notModified,
      by_route: Object.fromEntries([...this.byRoute].map(([k, v]) => [k, { ...v }])),
      by_status: Object.fromEntries(this.byStatus),
    };
  }
}
