// What the dashboard shows, read from the Host (the same calls the MCP tools make): per running
// fleet its status (worker scope: no GitHub request), the final report as of now, the newest
// issues' timelines and the ledger's newest records. Read once per board change and cached, so a
// page costs a render, not a ledger read; a fleet that fails to read says why instead.
import type { FinalReport, Host, HostEvent, StatusResult, Timeline } from "../host/api.js";

export interface LedgerFilter {
  /** A repository to show besides the running fleets (its ledger outlives its fleet). */
  repo: string | null;
  issue: number | null;
  event: string | null;
}

export interface FleetView {
  repo: string;
  status: StatusResult | null;
  report: FinalReport | null;
  timelines: Timeline[];
  ledger: Array<Record<string, unknown>>;
  /** Spend of the attempts that ended today (UTC), or "unknown"; `partial` when the ledger read was cut. */
  spendToday: { usd: number | null; tokens: number | null; partial: boolean } | "unknown";
  error: string | null;
}

export interface DashboardData {
  at: string;
  fleets: FleetView[];
}

export const LIMITS = { fleets: 16, timelines: 30, ledger: 200, reportRows: 200, workers: 64 } as const;

async function fleetView(host: Host, repo: string, filter: LedgerFilter, now: Date): Promise<FleetView> {
  const view: FleetView = { repo, status: null, report: null, timelines: [], ledger: [], spendToday: "unknown", error: null };
  const errors: string[] = [];
  const attempt = async <T>(what: string, read: () => Promise<T>): Promise<T | null> => {
    try {
      return await read();
    } catch (error) {
      errors.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  };
  const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
  const [status, report, timelines, ledger, today] = await Promise.all([
    attempt("status", () => host.status({ repo, scope: "worker" })),
    attempt("report", () => host.report({ repo })),
    attempt("timelines", () => host.timelines({ repo, limit: LIMITS.timelines })),
    attempt("ledger", () =>
      host.logs({ repo, lane: "ledger", tail_lines: filter.event ? 5000 : LIMITS.ledger, ...(filter.issue ? { issue: filter.issue } : {}) }),
    ),
    attempt("spend today", () => host.logs({ repo, lane: "ledger", since: midnight, tail_lines: 5000 })),
  ]);
  view.status = status;
  view.report = report;
  view.timelines = timelines ?? [];
  view.ledger = (ledger?.records ?? []).filter((r) => !filter.event || r.event === filter.event).slice(-LIMITS.ledger);
  if (today) view.spendToday = spendOf(today.records, today.truncated || today.held_back > 0);
  view.error = errors.length ? errors.join("; ") : null;
  return view;
}

/** The attempts' spend in these records; "unknown" when none told its spend. */
export function spendOf(records: ReadonlyArray<Record<string, unknown>>, partial: boolean): FleetView["spendToday"] {
  let usd: number | null = null;
  let tokens: number | null = null;
  for (const r of records) {
    if (r.event !== "attempt_end") continue;
    const spend = (r.data as { spend?: unknown } | undefined)?.spend;
    if (!spend || typeof spend !== "object") continue;
    const s = spend as { usd?: unknown; tokens?: Record<string, unknown> };
    if (typeof s.usd === "number") usd = (usd ?? 0) + s.usd;
    if (s.tokens && typeof s.tokens === "object") {
      const t = typeof s.tokens.total === "number" ? s.tokens.total : Object.values(s.tokens).reduce<number>((a, b) => a + (typeof b === "number" ? b : 0), 0);
      tokens = (tokens ?? 0) + t;
    }
  }
  return usd === null && tokens === null ? "unknown" : { usd, tokens, partial };
}

/**
 * The data, cached per filter until the host says a board changed (or `maxAgeMs` passed: a
 * ledger grows between board changes too). Concurrent readers of a stale entry share one read.
 */
export class DashboardCache {
  private readonly entries = new Map<string, { at: number; data: Promise<DashboardData> }>();
  constructor(
    private readonly host: Host,
    private readonly maxAgeMs = 5000,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  invalidate(event: HostEvent): boolean {
    if (event.kind !== "board" && event.kind !== "repos") return false;
    this.entries.clear();
    return true;
  }

  get(filter: LedgerFilter): Promise<DashboardData> {
    const key = `${filter.repo ?? ""}|${filter.issue ?? ""}|${filter.event ?? ""}`;
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && now.getTime() - hit.at < this.maxAgeMs) return hit.data;
    if (this.entries.size > 32) this.entries.clear();
    const data = this.read(filter, now);
    this.entries.set(key, { at: now.getTime(), data });
    data.catch(() => this.entries.delete(key));
    return data;
  }

  clear(): void {
    this.entries.clear();
  }

  /** A fresh read, past the cache. */
  async read(filter: LedgerFilter, now: Date = this.clock()): Promise<DashboardData> {
    const running = (await this.host.repos()).running;
    const wanted = filter.repo && !running.some((r) => r.toLowerCase() === filter.repo!.toLowerCase()) ? [filter.repo, ...running] : running;
    const repos = wanted.slice(0, LIMITS.fleets);
    return { at: now.toISOString(), fleets: await Promise.all(repos.map((repo) => fleetView(this.host, repo, filter, now))) };
  }
}
