// The ledger's vocabulary: the facts a fleet records that GitHub cannot re-derive (why it paused,
// what an attempt cost, which sha a landing gated), and the per-issue summary that compaction
// folds old records into. Pure: no I/O, so the report, the timeline and compaction share it.
import type { LaneRecord } from "../../schemas/lanes.js";

export const LEDGER_EVENTS = [
  "queued",
  "dispatch",
  "reclaim",
  "attempt_start",
  "attempt_end",
  "verdict",
  "pr_opened",
  "review",
  "retry",
  "rerun",
  "landing_start",
  "landing",
  "closed_done",
  "released",
  "escalation",
  "pause",
  "pause_cleared",
  "breaker_trip",
  "fault",
  "stop",
  "report",
  "summary",
] as const;
export type LedgerEvent = (typeof LEDGER_EVENTS)[number];

/** What an attempt cost, as far as its engine tells: "unknown" until an engine profile reads it. */
export type Spend = { usd?: number; tokens?: { input?: number; output?: number; cache_read?: number; cache_write?: number; total?: number } } | "unknown";

/** One record to append; the ledger stamps ts, lane and instance. */
export interface LedgerEntry {
  event: LedgerEvent;
  msg: string;
  level?: "info" | "warn" | "error";
  issue?: number;
  attempt?: number;
  data?: Record<string, unknown>;
}

export type IssueOutcome = "merged" | "escalated" | "closed_done" | "released" | "in_flight" | "queued";

/** Everything the report needs of one issue, and what compaction keeps of records it drops. */
export interface IssueSummary {
  issue: number;
  outcome: IssueOutcome;
  first_at: string;
  last_at: string;
  /** When the issue reached its outcome (merged, escalated, closed), else null. */
  ended_at: string | null;
  attempts: number;
  worker_ms: number;
  spend: Spend;
  pr: number | null;
  merge_sha: string | null;
  gated_sha: string | null;
  faults: number;
  /** Records folded into this summary (the records themselves may be gone after compaction). */
  records: number;
}

export function emptySummary(issue: number, at: string): IssueSummary {
  return {
    issue,
    outcome: "queued",
    first_at: at,
    last_at: at,
    ended_at: null,
    attempts: 0,
    worker_ms: 0,
    spend: "unknown",
    pr: null,
    merge_sha: null,
    gated_sha: null,
    faults: 0,
    records: 0,
  };
}

/** Two spends added: anything known beats "unknown"; unknown parts stay absent. */
export function addSpend(a: Spend, b: Spend): Spend {
  if (a === "unknown") return b === "unknown" ? "unknown" : { ...b, ...(b.tokens ? { tokens: { ...b.tokens } } : {}) };
  if (b === "unknown") return a;
  const usd = a.usd !== undefined || b.usd !== undefined ? round6((a.usd ?? 0) + (b.usd ?? 0)) : undefined;
  const keys = new Set([...Object.keys(a.tokens ?? {}), ...Object.keys(b.tokens ?? {})]) as Set<keyof NonNullable<Exclude<Spend, "unknown">["tokens"]>>;
  const tokens: Record<string, number> = {};
  for (const k of keys) tokens[k] = (a.tokens?.[k] ?? 0) + (b.tokens?.[k] ?? 0);
  return { ...(usd !== undefined ? { usd } : {}), ...(keys.size > 0 ? { tokens } : {}) };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** A spend field read back from a record: anything not of the shape is "unknown". */
export function readSpend(value: unknown): Spend {
  if (typeof value !== "object" || value === null) return "unknown";
  const v = value as { usd?: unknown; tokens?: unknown };
  const out: Exclude<Spend, "unknown"> = {};
  if (typeof v.usd === "number" && Number.isFinite(v.usd) && v.usd >= 0) out.usd = v.usd;
  if (typeof v.tokens === "object" && v.tokens !== null) {
    const tokens: Record<string, number> = {};
    for (const [k, n] of Object.entries(v.tokens))
      if (["input", "output", "cache_read", "cache_write", "total"].includes(k) && typeof n === "number" && Number.isFinite(n) && n >= 0) tokens[k] = n;
    if (Object.keys(tokens).length > 0) out.tokens = tokens;
  }
  return out.usd === undefined && out.tokens === undefined ? "unknown" : out;
}

const TERMINAL: Partial<Record<string, IssueOutcome>> = { landing: "merged", escalation: "escalated", closed_done: "closed_done" };

/** Folds one record about an issue into its summary (records in ledger order). */
export function foldRecord(summary: IssueSummary | undefined, record: LaneRecord): IssueSummary {
  const issue = record.issue!;
  if (record.event === "summary") return mergeSummaries(summary, readSummary(issue, record));
  const s = summary ? { ...summary } : emptySummary(issue, record.ts);
  s.records += 1;
  if (record.ts < s.first_at) s.first_at = record.ts;
  if (record.ts > s.last_at) s.last_at = record.ts;
  const data = record.data ?? {};
  switch (record.event) {
    case "queued":
      break;
    case "dispatch":
    case "reclaim":
      if (s.outcome === "queued" || s.outcome === "released") s.outcome = "in_flight";
      break;
    case "attempt_start":
      if (data.role !== "reviewer") s.attempts += 1;
      s.outcome = "in_flight";
      break;
    case "attempt_end":
      if (typeof data.duration_ms === "number") s.worker_ms += data.duration_ms;
      s.spend = addSpend(s.spend, readSpend(data.spend));
      break;
    case "pr_opened":
      if (typeof data.pr === "number") s.pr = data.pr;
      break;
    case "released":
      if (s.ended_at === null) s.outcome = "released";
      break;
    case "fault":
      s.faults += 1;
      break;
    default:
      break;
  }
  const terminal = TERMINAL[record.event];
  if (terminal) {
    s.outcome = terminal;
    s.ended_at = record.ts;
    if (record.event === "landing") {
      if (typeof data.pr === "number") s.pr = data.pr;
      if (typeof data.merge_sha === "string") s.merge_sha = data.merge_sha;
      if (typeof data.gated_sha === "string") s.gated_sha = data.gated_sha;
    }
  }
  return s;
}

/** A summary written by compaction, read back; fields of the wrong shape take their empty value. */
export function readSummary(issue: number, record: LaneRecord): IssueSummary {
  const d = (record.data ?? {}) as Record<string, unknown>;
  const base = emptySummary(issue, typeof d.first_at === "string" ? d.first_at : record.ts);
  const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
  const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  const outcomes: IssueOutcome[] = ["merged", "escalated", "closed_done", "released", "in_flight", "queued"];
  return {
    ...base,
    outcome: outcomes.includes(d.outcome as IssueOutcome) ? (d.outcome as IssueOutcome) : "queued",
    last_at: str(d.last_at) ?? record.ts,
    ended_at: str(d.ended_at),
    attempts: num(d.attempts),
    worker_ms: num(d.worker_ms),
    spend: readSpend(d.spend),
    pr: typeof d.pr === "number" ? d.pr : null,
    merge_sha: str(d.merge_sha),
    gated_sha: str(d.gated_sha),
    faults: num(d.faults),
    records: num(d.records),
  };
}

/** An older summary followed by a newer one (compaction runs more than once). */
export function mergeSummaries(older: IssueSummary | undefined, newer: IssueSummary): IssueSummary {
  if (!older) return newer;
  const ended = newer.ended_at ?? older.ended_at;
  return {
    issue: newer.issue,
    outcome: newer.outcome === "queued" ? older.outcome : newer.outcome,
    first_at: older.first_at < newer.first_at ? older.first_at : newer.first_at,
    last_at: older.last_at > newer.last_at ? older.last_at : newer.last_at,
    ended_at: ended,
    attempts: older.attempts + newer.attempts,
    worker_ms: older.worker_ms + newer.worker_ms,
    spend: addSpend(older.spend, newer.spend),
    pr: newer.pr ?? older.pr,
    merge_sha: newer.merge_sha ?? older.merge_sha,
    gated_sha: newer.gated_sha ?? older.gated_sha,
    faults: older.faults + newer.faults,
    records: older.records + newer.records,
  };
}

/** Every issue's summary from records in ledger order. */
export function summarize(records: readonly LaneRecord[]): Map<number, IssueSummary> {
  const out = new Map<number, IssueSummary>();
  for (const r of records) if (r.issue !== undefined) out.set(r.issue, foldRecord(out.get(r.issue), r));
  return out;
}
