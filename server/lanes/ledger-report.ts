// The final report: what became of each issue the ledger knows (outcome, attempts, time,
// spend), the totals, and the GitHub requests the fleet's runs spent. Built from the ledger
// alone (pure), so a drain's end, `afk-mcp run`'s exit and `afk-mcp report` all say the same.
import type { LaneRecord } from "../../schemas/lanes.js";
import { addSpend, summarize, type IssueOutcome, type IssueSummary, type Spend } from "./ledger-types.js";

export interface ReportIssue {
  issue: number;
  outcome: IssueOutcome;
  attempts: number;
  /** Of those, attempts that fixed a red PR forward on its branch instead of starting fresh (records folded by compaction are not counted). */
  fixes: number;
  /**
   * Red gates re-run before they counted (`gate.rerun_failed`), and of those, re-runs after which
   * the issue landed with no further attempt: attempts saved (records folded by compaction are not counted).
   */
  reruns: number;
  reruns_saved: number;
  /** From the first record about it to its outcome (or to its last record while in flight). */
  time_ms: number;
  worker_ms: number;
  spend: Spend;
  pr: number | null;
  merge_sha: string | null;
  faults: number;
  timeline: string;
}

export interface FinalReport {
  repo: string;
  generated_at: string;
  /** Why it was written: a drain or stop ended, `afk-mcp run` exited, or someone asked. */
  reason: "stop" | "run_exit" | "on_demand";
  issues: ReportIssue[];
  /** Issues left out of `issues` to keep the answer bounded (the totals count them). */
  issues_omitted: number;
  totals: {
    issues: number;
    outcomes: Record<IssueOutcome, number>;
    attempts: number;
    fixes: number;
    reruns: number;
    reruns_saved: number;
    worker_ms: number;
    spend: Spend;
    faults: number;
    pauses: number;
    breaker_trips: number;
    stops: number;
  };
  /** GitHub requests the fleet's runs spent, as their stops recorded them (and the running one's so far). */
  requests: { total: number; counted: number; not_modified: number };
  since: string | null;
}

export interface ReportOptions {
  repo: string;
  reason: FinalReport["reason"];
  now: Date;
  /** The running fleet's requests so far (not yet in a stop record). */
  live?: { total: number; counted: number; notModified: number } | null;
  /** At most this many issues listed (the newest first kept); default 1000. */
  maxIssues?: number;
}

const OUTCOMES: IssueOutcome[] = ["merged", "escalated", "closed_done", "released", "in_flight", "queued"];

export function buildReport(records: readonly LaneRecord[], o: ReportOptions): FinalReport {
  const summaries = [...summarize(records).values()].sort((a, b) => a.issue - b.issue);
  const outcomes = Object.fromEntries(OUTCOMES.map((k) => [k, 0])) as Record<IssueOutcome, number>;
  let spend: Spend = "unknown";
  let attempts = 0;
  let worker = 0;
  let faults = 0;
  for (const s of summaries) {
    outcomes[s.outcome] += 1;
    spend = addSpend(spend, s.spend);
    attempts += s.attempts;
    worker += s.worker_ms;
    faults += s.faults;
  }
  const requests = { total: 0, counted: 0, not_modified: 0 };
  let pauses = 0;
  let trips = 0;
  let stops = 0;
  const fixes = new Map<number, number>();
  const reruns = countReruns(records);
  for (const r of records) {
    if (r.event === "retry" && r.issue !== undefined && r.data?.mode === "fix") fixes.set(r.issue, (fixes.get(r.issue) ?? 0) + 1);
    if (r.event === "pause") pauses += 1;
    if (r.event === "breaker_trip") trips += 1;
    if (r.event === "fault" && r.issue === undefined) faults += 1;
    if (r.event === "stop") {
      stops += 1;
      addRequests(requests, r.data?.requests);
    }
    if (r.event === "summary" && r.issue === undefined && r.data) {
      const ev = (r.data.events ?? {}) as Record<string, number>;
      pauses += Number(ev.pause ?? 0);
      trips += Number(ev.breaker_trip ?? 0);
      stops += Number(ev.stop ?? 0);
      faults += Number(ev.fault ?? 0);
      requests.counted += Number(r.data.requests ?? 0);
    }
  }
  if (o.live) addRequests(requests, { total: o.live.total, counted: o.live.counted, not_modified: o.live.notModified });
  const max = o.maxIssues ?? 1000;
  const listed =
    summaries.length > max
      ? [...summaries]
          .sort((a, b) => (a.last_at < b.last_at ? 1 : -1))
          .slice(0, max)
          .sort((a, b) => a.issue - b.issue)
      : summaries;
  return {
    repo: o.repo,
    generated_at: o.now.toISOString(),
    reason: o.reason,
    issues: listed.map((s) => reportIssue(o.repo, s, o.now, fixes.get(s.issue) ?? 0, reruns.get(s.issue) ?? NO_RERUNS)),
    issues_omitted: summaries.length - listed.length,
    totals: {
      issues: summaries.length,
      outcomes,
      attempts,
      fixes: [...fixes.values()].reduce((a, b) => a + b, 0),
      reruns: [...reruns.values()].reduce((a, b) => a + b.reruns, 0),
      reruns_saved: [...reruns.values()].reduce((a, b) => a + b.saved, 0),
      worker_ms: worker,
      spend,
      faults,
      pauses,
      breaker_trips: trips,
      stops,
    },
    requests,
    since: records[0]?.ts ?? null,
  };
}

function addRequests(into: { total: number; counted: number; not_modified: number }, value: unknown): void {
  if (typeof value === "number") {
    into.counted += value;
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const v = value as Record<string, unknown>;
  const n = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0);
  into.total += n(v.total);
  into.counted += n(v.counted);
  into.not_modified += n(v.not_modified ?? v.notModified);
}

const NO_RERUNS = { reruns: 0, saved: 0 };

/**
 * Per issue, the re-runs of its failing checks and those that saved an attempt: re-runs after
 * which it landed with no retry or escalation in between (a re-run followed by a retry did not).
 */
function countReruns(records: readonly LaneRecord[]): Map<number, { reruns: number; saved: number }> {
  const out = new Map<number, { reruns: number; saved: number; open: number }>();
  for (const r of records) {
    if (r.issue === undefined) continue;
    const c = out.get(r.issue) ?? { reruns: 0, saved: 0, open: 0 };
    if (r.event === "rerun") Object.assign(c, { reruns: c.reruns + 1, open: c.open + 1 });
    else if (r.event === "retry" || r.event === "escalation") c.open = 0;
    else if (r.event === "landing") Object.assign(c, { saved: c.saved + c.open, open: 0 });
    else continue;
    out.set(r.issue, c);
  }
  return out;
}

function reportIssue(repo: string, s: IssueSummary, now: Date, fixes: number, reruns: { reruns: number; saved: number }): ReportIssue {
  const end = s.ended_at ?? (s.outcome === "in_flight" ? now.toISOString() : s.last_at);
  return {
    issue: s.issue,
    outcome: s.outcome,
    attempts: s.attempts,
    fixes,
    reruns: reruns.reruns,
    reruns_saved: reruns.saved,
    time_ms: Math.max(0, Date.parse(end) - Date.parse(s.first_at)),
    worker_ms: s.worker_ms,
    spend: s.spend,
    pr: s.pr,
    merge_sha: s.merge_sha,
    faults: s.faults,
    timeline: `afk://${repo}/issue/${s.issue}/timeline`,
  };
}

export function spendText(spend: Spend): string {
  if (spend === "unknown") return "spend unknown";
  const parts = [
    spend.usd !== undefined ? `$${spend.usd.toFixed(2)}` : "",
    spend.tokens?.total !== undefined ? `${spend.tokens.total} tokens` : spend.tokens ? `${Object.values(spend.tokens).reduce((a, b) => a + b, 0)} tokens` : "",
  ];
  return parts.filter(Boolean).join(", ") || "spend unknown";
}

export function durationText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** The report as text: one line per issue, then the totals. Says what the JSON says. */
export function renderReport(r: FinalReport, maxLines = 400): string {
  const t = r.totals;
  const head = [
    `afk-mcp report for ${r.repo} (${r.reason === "stop" ? "the drain or stop ended" : r.reason === "run_exit" ? "afk-mcp run exited" : "on demand"}, ${r.generated_at})${r.since ? `, ledger since ${r.since}` : ""}`,
    `${t.issues} issue(s): ${
      OUTCOMES.filter((k) => t.outcomes[k] > 0)
        .map((k) => `${t.outcomes[k]} ${k.replace("_", " ")}`)
        .join(", ") || "none"
    }`,
    `${t.attempts} attempt(s)${t.fixes > 0 ? ` (${t.fixes} fixing a red PR forward)` : ""}${t.reruns > 0 ? `, ${t.reruns} check re-run(s) (${t.reruns_saved} saved an attempt)` : ""}, ${durationText(t.worker_ms)} of worker time, ${spendText(t.spend)}; ${t.faults} fault(s), ${t.pauses} pause(s), ${t.breaker_trips} breaker trip(s)`,
    `GitHub requests: ${r.requests.counted} counted against the rate limit, ${r.requests.not_modified} answered 304, ${r.requests.total} sent${t.stops > 0 ? ` (over ${t.stops} run(s))` : ""}`,
    "",
  ];
  const rows = r.issues.map(
    (i) =>
      `#${i.issue}  ${i.outcome}  ${i.attempts} attempt(s)${i.fixes > 0 ? ` (${i.fixes} fix)` : ""}${i.reruns > 0 ? ` (${i.reruns} re-run, ${i.reruns_saved} saved)` : ""}  ${durationText(i.time_ms)}  ${spendText(i.spend)}${i.pr ? `  PR #${i.pr}` : ""}${i.merge_sha ? ` as ${i.merge_sha.slice(0, 12)}` : ""}`,
  );
  const shown = rows.slice(0, maxLines);
  const more = rows.length - shown.length + r.issues_omitted;
  return [...head, ...shown, ...(more > 0 ? [`… and ${more} more issue(s) (the JSON report lists ${r.issues.length})`] : [])].join("\n");
}
