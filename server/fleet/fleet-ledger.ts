// The fleet's side of the ledger (server/lanes/ledger.ts): which supervisor records are ledger
// facts (the tap below: the decision was made and logged once, the ledger keeps its durable
// part), and the facts no supervisor record carries (an issue first queued, an attempt's start
// and end with engine, model and spend, a verdict, a stop with the requests it spent). Events
// that need a human also go to the notifier (notify.ts).
import { join } from "node:path";
import { issueSummaries, type Ledger, type LedgerEntry, type LedgerEvent, type Spend } from "../lanes/index.js";
import { outputFiles } from "../worker-port/port.js";
import type { SupervisorLog } from "./supervisor-log.js";
import { utcDay } from "./spend-ledger.js";

/** Supervisor events whose record is a ledger fact, and the ledger event it becomes. */
const TAPPED: Record<string, LedgerEvent> = {
  merged: "landing",
  escalated: "escalation",
  retry: "retry",
  rerun: "rerun",
  closed_done: "closed_done",
  released: "released",
  pr_opened: "pr_opened",
  pr_adopted: "reclaim",
  reclaimed: "reclaim",
  reclaimed_pr: "reclaim",
  awaiting_review: "review",
  review_refuted: "review",
  review_none: "review",
  breaker_tripped: "breaker_trip",
  quota: "pause",
  auth_expired: "pause",
  runtime_refused: "pause",
  network_down: "pause",
  reset: "pause_cleared",
  action_failed: "fault",
  tick_failed: "fault",
  birth_failed: "fault",
  base_moved_during_merge: "fault",
  heartbeat_failed: "fault",
  drain_failed: "fault",
  sweep_failed: "fault",
  fenced: "fault",
  claim_lost: "fault",
};

/** Data keys a tapped record keeps when their values are scalars (the rest stays in the supervisor lane). */
const KEPT = [
  "pr",
  "attempt",
  "kind",
  "runtime",
  "status",
  "round",
  "head",
  "reason",
  "method",
  "train",
  "evidence_kind",
  "summary",
  "excerpt",
  "mode",
  "checks",
];

export interface LedgerFacts {
  readonly instance: string;
  readonly runDir: string;
  /** Told about each ledger event that needs a human (escalations, pauses, breaker trips). */
  notify?: (entry: LedgerEntry) => void;
  /** The fleet's clock (the ledger stamps its records with it): which UTC day a landing falls on. */
  clock?: () => Date;
}

export const NOTIFIED: ReadonlySet<LedgerEvent> = new Set(["escalation", "pause", "breaker_trip"]);

export class FleetLedger {
  private queued: Set<number> | null = null;
  /** The head each issue's landing began at: a landing retried every tick (pending checks) is recorded once. */
  private readonly landing = new Map<number, string>();
  /** The UTC day each landed issue landed on: read from the ledger once, then kept as landings are recorded. */
  private landed: Map<number, string> | null = null;

  constructor(
    readonly ledger: Ledger,
    private readonly facts: LedgerFacts,
  ) {}

  record(entry: LedgerEntry): void {
    this.ledger.record(entry, this.facts.instance);
    if (entry.event === "landing" && entry.issue !== undefined) this.landed?.set(entry.issue, utcDay(this.now()));
    if (NOTIFIED.has(entry.event)) this.facts.notify?.(entry);
  }

  /** How many issues landed on `at`'s UTC day, by this machine's ledger (a restarted daemon counts what the last one landed). */
  landedOn(at: Date): number {
    this.landed ??= new Map(
      issueSummaries(this.ledger.read()).flatMap((s) => (s.outcome === "merged" && s.ended_at ? [[s.issue, s.ended_at.slice(0, 10)]] : [])),
    );
    const day = utcDay(at);
    return [...this.landed.values()].filter((d) => d === day).length;
  }

  private now(): Date {
    return this.facts.clock?.() ?? new Date();
  }

  /** The supervisor's voice, with each record that is a ledger fact also kept in the ledger. */
  tap(log: SupervisorLog): SupervisorLog {
    return (level, event, msg, issue, data) => {
      log(level, event, msg, issue, data);
      const kind = TAPPED[event];
      // A claim lost at dispatch is a race, not a fault; at a running worker (warn) it is one.
      if (!kind || (event === "claim_lost" && level === "info")) return;
      this.record({ event: kind, msg, level: level === "debug" ? "info" : level, ...(issue !== undefined ? { issue } : {}), data: ledgerData(event, data) });
    };
  }

  /** Issues in the frontier, each recorded once (the first time this ledger sees it queued). */
  queuedNow(issues: readonly number[]): void {
    if (issues.length === 0) return;
    this.queued ??= new Set(
      this.ledger
        .read()
        .filter((r) => r.event === "queued" && r.issue !== undefined)
        .map((r) => r.issue!),
    );
    for (const n of issues) {
      if (this.queued.has(n)) continue;
      this.queued.add(n);
      this.record({ event: "queued", issue: n, msg: `#${n}: in the frontier, ready to dispatch` });
    }
  }

  attemptStart(issue: number, attempt: number, role: "worker" | "reviewer", mode: string, route?: { engine: string; model: string | null }): void {
    this.record({
      event: "attempt_start",
      issue,
      attempt,
      msg: `#${issue}: ${role} started for attempt ${attempt} (${mode})${route ? ` with ${route.engine}${route.model ? ` ${route.model}` : ""}` : ""}`,
      data: { role, mode, engine: route?.engine ?? "unknown", model: route?.model ?? "unknown", transcript: transcriptOf(this.facts.runDir, issue, attempt) },
    });
  }

  attemptEnd(
    issue: number,
    attempt: number,
    role: "worker" | "reviewer",
    end: {
      durationMs: number;
      code: number | null;
      killReason: string | null;
      outcome: string;
      quota: boolean;
      spend?: Spend;
      engine?: string;
      model?: string;
    },
  ): void {
    this.record({
      event: "attempt_end",
      issue,
      attempt,
      msg: `#${issue}: ${role} of attempt ${attempt} ended after ${Math.round(end.durationMs / 1000)} s: ${end.outcome}${end.killReason ? ` (killed: ${end.killReason})` : ""}`,
      data: {
        role,
        duration_ms: end.durationMs,
        exit_code: end.code,
        kill_reason: end.killReason,
        outcome: end.outcome,
        quota: end.quota,
        engine: end.engine ?? "unknown",
        model: end.model ?? "unknown",
        spend: end.spend ?? "unknown",
      },
    });
  }

  /**
   * The evidence of the failure that sent `issue` into `attempt` (its retry record), for a brief
   * written after this host forgot it (a daemon restarted between the retry and the birth).
   */
  failureBefore(issue: number, attempt: number): { kind: string; summary: string; excerpt: string } | null {
    const records = this.ledger.read();
    for (let i = records.length - 1; i >= 0; i--) {
      const r = records[i]!;
      if (r.event !== "retry" || r.issue !== issue) continue;
      const data = (r.data ?? {}) as Record<string, unknown>;
      if (data.attempt !== attempt || typeof data.evidence_kind !== "string") return null;
      return { kind: data.evidence_kind, summary: String(data.summary ?? r.msg), excerpt: typeof data.excerpt === "string" ? data.excerpt : "" };
    }
    return null;
  }

  landingStart(issue: number, pr: number, head: string): void {
    if (this.landing.get(issue) === head) return;
    this.landing.set(issue, head);
    this.record({ event: "landing_start", issue, msg: `#${issue}: landing PR #${pr} at ${head.slice(0, 12)}`, data: { pr, head } });
  }

  verdict(issue: number, attempt: number, verdict: { kind: string; reason?: string }): void {
    this.record({
      event: "verdict",
      issue,
      attempt,
      msg: `#${issue}: the worker's verdict: ${verdict.kind}`,
      data: { verdict: verdict.kind, ...(verdict.reason ? { reason: verdict.reason.slice(0, 500) } : {}) },
    });
  }
}

/** Where an attempt's transcript is: the worker lane's records for it, and its output files while the run dir keeps them. */
export function transcriptOf(
  runDir: string,
  issue: number,
  attempt: number,
): { lane: "worker"; issue: number; attempt: number; logs: string; files: { stdout: string; stderr: string } } {
  return { lane: "worker", issue, attempt, logs: `afk-mcp logs --lane worker --issue ${issue}`, files: outputFiles(join(runDir, `issue-${issue}`)) };
}

function ledgerData(event: string, data: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { source: event };
  if (!data) return out;
  for (const k of KEPT) if (data[k] !== undefined && (typeof data[k] !== "object" || data[k] === null)) out[k] = data[k];
  if (event === "merged") {
    out.merge_sha = data.mergeSha ?? null;
    out.gated_sha = data.head ?? null;
  }
  return out;
}
