// One issue's timeline from its ledger records (pure): the phases it went through with start and
// end (queued, claimed, worker, PR/CI, review, landing, then merged, escalated or closed), each
// attempt with its worker transcript reference, and time and spend per phase. A phase ends where
// the next begins; the last one of an issue still in flight is open (end null).
import type { LaneRecord } from "../../schemas/lanes.js";
import { addSpend, readSpend, summarize, type IssueOutcome, type Spend } from "./ledger-types.js";

export type PhaseName = "queued" | "claimed" | "worker" | "reviewer" | "ci" | "review" | "landing" | "merged" | "escalated" | "closed_done" | "released";

export interface TimelinePhase {
  phase: PhaseName;
  start: string;
  /** Null while the phase lasts. */
  end: string | null;
  duration_ms: number | null;
  attempt: number | null;
  /** A worker's or reviewer's spend ("unknown" until its engine reports it); null where no agent ran. */
  spend: Spend | null;
}

export interface TimelineAttempt {
  attempt: number;
  role: "worker" | "reviewer";
  start: string;
  end: string | null;
  duration_ms: number | null;
  outcome: string | null;
  engine: string;
  model: string;
  spend: Spend;
  /** Where its output is: the worker lane's records for it, and its output files while they exist. */
  transcript: unknown;
}

export interface Timeline {
  repo: string;
  issue: number;
  outcome: IssueOutcome | "unknown";
  start: string | null;
  end: string | null;
  duration_ms: number | null;
  phases: TimelinePhase[];
  attempts: TimelineAttempt[];
  spend: Spend;
  pr: number | null;
  merge_sha: string | null;
  gated_sha: string | null;
  /** Records read; `compacted` when older ones were folded into a summary (their phases are gone). */
  records: number;
  compacted: boolean;
}

/** Which phase a record opens (null: it opens none, e.g. a fault or a verdict). */
function opens(r: LaneRecord): PhaseName | null {
  switch (r.event) {
    case "queued":
      return "queued";
    case "dispatch":
    case "reclaim":
      return "claimed";
    case "attempt_start":
      return r.data?.role === "reviewer" ? "reviewer" : "worker";
    case "pr_opened":
      return "ci";
    case "review":
      return "review";
    case "landing_start":
      return "landing";
    case "landing":
      return "merged";
    case "escalation":
      return "escalated";
    case "closed_done":
      return "closed_done";
    case "released":
      return "released";
    case "retry":
      return "queued";
    default:
      return null;
  }
}

const INSTANT = new Set<PhaseName>(["merged", "escalated", "closed_done", "released"]);
/** At most this many phases (a long retry ladder of reviews): the newest kept. */
const MAX_PHASES = 200;

export function buildTimeline(all: readonly LaneRecord[], repo: string, issue: number, now: Date): Timeline {
  const records = all.filter((r) => r.issue === issue);
  const summary = summarize(records).get(issue);
  const phases: TimelinePhase[] = [];
  const attempts: TimelineAttempt[] = [];
  const close = (at: string): void => {
    const open = phases.at(-1);
    if (open && open.end === null && !INSTANT.has(open.phase)) {
      open.end = at;
      open.duration_ms = Math.max(0, Date.parse(at) - Date.parse(open.start));
    }
  };
  for (const r of records) {
    if (r.event === "attempt_end") {
      const a = [...attempts]
        .reverse()
        .find((x) => x.attempt === r.attempt && x.end === null && x.role === (r.data?.role === "reviewer" ? "reviewer" : "worker"));
      if (a) {
        a.end = r.ts;
        a.duration_ms = typeof r.data?.duration_ms === "number" ? r.data.duration_ms : Math.max(0, Date.parse(r.ts) - Date.parse(a.start));
        a.outcome = typeof r.data?.outcome === "string" ? r.data.outcome : null;
        a.spend = readSpend(r.data?.spend);
        if (typeof r.data?.engine === "string") a.engine = r.data.engine;
        if (typeof r.data?.model === "string") a.model = r.data.model;
        const phase = [...phases].reverse().find((p) => (p.phase === "worker" || p.phase === "reviewer") && p.attempt === a.attempt);
        if (phase) phase.spend = a.spend;
        if (phase && phase === phases.at(-1)) close(r.ts);
      }
      continue;
    }
    const phase = opens(r);
    if (!phase) continue;
    const last = phases.at(-1);
    // A phase opened again (another review round, a re-queue seen twice) continues the open one.
    if (last && last.phase === phase && last.end === null && phase !== "worker" && phase !== "reviewer") continue;
    close(r.ts);
    const attempt = r.attempt ?? null;
    phases.push({
      phase,
      start: r.ts,
      end: INSTANT.has(phase) ? r.ts : null,
      duration_ms: INSTANT.has(phase) ? 0 : null,
      attempt,
      spend: phase === "worker" || phase === "reviewer" ? "unknown" : null,
    });
    if (r.event === "attempt_start") {
      attempts.push({
        attempt: r.attempt ?? 0,
        role: r.data?.role === "reviewer" ? "reviewer" : "worker",
        start: r.ts,
        end: null,
        duration_ms: null,
        outcome: null,
        engine: typeof r.data?.engine === "string" ? r.data.engine : "unknown",
        model: typeof r.data?.model === "string" ? r.data.model : "unknown",
        spend: "unknown",
        transcript: r.data?.transcript ?? null,
      });
    }
  }
  const start = records[0]?.ts ?? null;
  const ended = summary?.ended_at ?? null;
  const end = ended ?? (summary && summary.outcome === "released" ? summary.last_at : null);
  let spend: Spend = "unknown";
  for (const a of attempts) spend = addSpend(spend, a.spend);
  if (summary && attempts.length === 0) spend = summary.spend;
  return {
    repo,
    issue,
    outcome: summary?.outcome ?? "unknown",
    start,
    end,
    duration_ms: start ? Math.max(0, Date.parse(end ?? now.toISOString()) - Date.parse(start)) : null,
    phases: phases.slice(-MAX_PHASES),
    attempts: attempts.slice(-MAX_PHASES),
    spend,
    pr: summary?.pr ?? null,
    merge_sha: summary?.merge_sha ?? null,
    gated_sha: summary?.gated_sha ?? null,
    records: records.length,
    compacted: records.some((r) => r.event === "summary"),
  };
}
