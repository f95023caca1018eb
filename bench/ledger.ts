// What the ledger costs (server/lanes/ledger.ts): one record's append (a redacted, bounded line
// and one write(2), as the fleet appends), the file after 1,000 issues' lives, the same after
// compaction to a 1 MiB bound (per-issue summaries), and the final report built from it.
//
//   node dist/bench/run.js --only ledger
import { statSync } from "node:fs";
import { join } from "node:path";
import { buildReport, buildTimeline, createRedactor, Ledger, LEDGER_FILE, type LedgerEntry } from "../server/lanes/index.js";
import { quantile } from "./fleet-harness.js";
import { mib, round, type Section } from "./section.js";

const ISSUES = 1000;

/** One issue's records as a fleet writes them: queued to merged, with one retry. */
export function life(n: number): LedgerEntry[] {
  const sha = "a".repeat(40);
  const transcript = {
    lane: "worker",
    issue: n,
    attempt: 1,
    logs: `afk-mcp logs --lane worker --issue ${n}`,
    files: { stdout: `/state/runs/issue-${n}/stdout.log`, stderr: `/state/runs/issue-${n}/stderr.log` },
  };
  return [
    { event: "queued", issue: n, msg: `#${n}: in the frontier, ready to dispatch` },
    { event: "dispatch", issue: n, attempt: 1, msg: `#${n}: claimed for attempt 1`, data: { claim_sha: sha } },
    {
      event: "attempt_start",
      issue: n,
      attempt: 1,
      msg: `#${n}: worker started for attempt 1 (continue)`,
      data: { role: "worker", mode: "continue", engine: "unknown", model: "unknown", transcript },
    },
    {
      event: "attempt_end",
      issue: n,
      attempt: 1,
      msg: `#${n}: worker of attempt 1 ended after 412 s: commits`,
      data: {
        role: "worker",
        duration_ms: 412_000,
        exit_code: 0,
        kill_reason: null,
        outcome: "commits",
        quota: false,
        engine: "unknown",
        model: "unknown",
        spend: { usd: 0.42, tokens: { input: 120_000, output: 9_000 } },
      },
    },
    { event: "pr_opened", issue: n, msg: `#${n}: opened PR #${n + 1000}`, data: { source: "pr_opened", pr: n + 1000, head: sha } },
    { event: "retry", issue: n, msg: `#${n}: attempt 2 of 3 after: CI failed (test)`, data: { source: "retry", attempt: 2 } },
    {
      event: "attempt_start",
      issue: n,
      attempt: 2,
      msg: `#${n}: worker started for attempt 2 (fresh)`,
      data: { role: "worker", mode: "fresh", engine: "unknown", model: "unknown", transcript: { ...transcript, attempt: 2 } },
    },
    {
      event: "attempt_end",
      issue: n,
      attempt: 2,
      msg: `#${n}: worker of attempt 2 ended after 230 s: commits`,
      data: {
        role: "worker",
        duration_ms: 230_000,
        exit_code: 0,
        kill_reason: null,
        outcome: "commits",
        quota: false,
        engine: "unknown",
        model: "unknown",
        spend: "unknown",
      },
    },
    { event: "landing_start", issue: n, msg: `#${n}: landing PR #${n + 1000} at ${sha.slice(0, 12)}`, data: { pr: n + 1000, head: sha } },
    {
      event: "landing",
      issue: n,
      msg: `#${n}: landed PR #${n + 1000} as ${sha.slice(0, 12)}`,
      data: { source: "merged", pr: n + 1000, gated_sha: sha, merge_sha: sha, method: "push" },
    },
  ];
}

export const ledgerSection: Section = {
  name: "ledger",
  summary: "the ledger: append cost per record, its size after 1,000 issues, compaction, the final report",
  async run(ctx) {
    const dir = await ctx.tempDir("afk-bench-ledger-");
    let t = Date.parse("2026-01-01T00:00:00Z");
    const clock = () => new Date((t += 1000));
    const redactor = createRedactor(() => ["ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"]);
    const ledger = new Ledger({ dir, redactor, clock, maxBytes: 1024 * 1024 * 1024 });
    const perRecordUs: number[] = [];
    let records = 0;
    for (let n = 1; n <= ISSUES; n++) {
      for (const entry of life(n)) {
        const start = process.hrtime.bigint();
        ledger.record(entry, "bench-instance");
        perRecordUs.push(Number(process.hrtime.bigint() - start) / 1000);
        records += 1;
      }
    }
    const bytes = statSync(join(dir, LEDGER_FILE)).size;
    let start = performance.now();
    const all = ledger.read();
    const report = buildReport(all, { repo: "afk/bench", reason: "on_demand", now: new Date(t) });
    const reportMs = performance.now() - start;
    start = performance.now();
    buildTimeline(all, "afk/bench", 500, new Date(t));
    const timelineMs = performance.now() - start;
    ledger.close();
    const bounded = new Ledger({ dir, redactor, clock, maxBytes: 1024 * 1024 });
    start = performance.now();
    const compaction = bounded.compact();
    const compactMs = performance.now() - start;
    const compacted = statSync(join(dir, LEDGER_FILE)).size;
    const after = buildReport(bounded.read(), { repo: "afk/bench", reason: "on_demand", now: new Date(t) });
    bounded.close();
    if (after.totals.outcomes.merged !== ISSUES || report.totals.attempts !== after.totals.attempts) throw new Error("compaction changed the report");
    return {
      figures: [
        { key: "append_p50_us", label: "append one record, p50", value: round(quantile(perRecordUs, 0.5)!, 1), unit: "µs" },
        { key: "append_p99_us", label: "append one record, p99", value: round(quantile(perRecordUs, 0.99)!, 1), unit: "µs" },
        { key: "records", label: `records for ${ISSUES} issues`, value: records },
        { key: "size_mib", label: `ledger size after ${ISSUES} issues`, value: mib(bytes), unit: "MiB" },
        { key: "bytes_per_issue", label: "bytes per issue", value: Math.round(bytes / ISSUES), unit: "B" },
        { key: "report_ms", label: `read the ledger and build the report (${ISSUES} issues)`, value: round(reportMs, 1), unit: "ms" },
        { key: "timeline_ms", label: "one issue's timeline from the same records", value: round(timelineMs, 2), unit: "ms" },
        { key: "compacted_kib", label: "after compaction to a 1 MiB bound", value: round(compacted / 1024, 0), unit: "KiB" },
        { key: "compact_ms", label: "compaction", value: round(compactMs, 1), unit: "ms" },
      ],
      details: { compaction },
      notes: [
        `compaction folded ${compaction.folded} records into ${compaction.summaries} issue summaries and kept ${compaction.kept}; the report's totals are unchanged`,
      ],
    };
  },
};
