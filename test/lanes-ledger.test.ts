// The ledger (server/lanes/ledger.ts): append-only records that survive a restart, a torn or
// corrupt file repaired with one warning, compaction by size and by age that keeps one summary
// per issue (the report says the same before and after), owner-only files, redaction; and the
// views built from it: one issue's timeline and the final report.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDirSync } from "./support/forge-fixtures.js";
import { buildReport, buildTimeline, createRedactor, Ledger, LEDGER_FILE, openLanes, queryLane, renderReport } from "../server/lanes/index.js";
import type { LedgerEntry } from "../server/lanes/index.js";
import { FleetLedger } from "../server/fleet/fleet-ledger.js";

const SECRET = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";

function ledgerIn(dir: string, clock: () => Date, warnings: string[], bounds: { maxBytes?: number; maxAgeDays?: number } = {}): Ledger {
  return new Ledger({ dir, redactor: createRedactor(() => [SECRET]), clock, onWarn: (m) => warnings.push(m), ...bounds });
}

/** A clock that moves one second per read, from a fixed start: records get distinct, ordered times. */
function steppingClock(start = Date.parse("2026-01-01T00:00:00Z")): () => Date {
  let t = start;
  return () => new Date((t += 1000));
}

/** One issue's life as the fleet records it: queued, dispatched, a failed attempt, a retry, a landing. */
function issueLife(n: number): LedgerEntry[] {
  return [
    { event: "queued", issue: n, msg: `#${n} queued` },
    { event: "dispatch", issue: n, attempt: 1, msg: `#${n} claimed`, data: { claim_sha: "c".repeat(40) } },
    {
      event: "attempt_start",
      issue: n,
      attempt: 1,
      msg: "worker",
      data: { role: "worker", mode: "continue", engine: "unknown", model: "unknown", transcript: { lane: "worker", issue: n, attempt: 1 } },
    },
    {
      event: "attempt_end",
      issue: n,
      attempt: 1,
      msg: "ended",
      data: { role: "worker", duration_ms: 4000, outcome: "commits", spend: { usd: 0.5, tokens: { total: 1000 } } },
    },
    { event: "pr_opened", issue: n, msg: "PR", data: { pr: 100 + n } },
    { event: "retry", issue: n, msg: "red CI" },
    { event: "attempt_start", issue: n, attempt: 2, msg: "worker", data: { role: "worker", mode: "fresh", engine: "unknown", model: "unknown" } },
    { event: "attempt_end", issue: n, attempt: 2, msg: "ended", data: { role: "worker", duration_ms: 6000, outcome: "commits", spend: "unknown" } },
    { event: "landing_start", issue: n, msg: "landing", data: { pr: 100 + n, head: "h".repeat(40) } },
    { event: "landing", issue: n, msg: "merged", data: { pr: 100 + n, gated_sha: "h".repeat(40), merge_sha: "m".repeat(40) } },
  ];
}

describe("ledger", () => {
  it("appends records that a new process (a daemon restart) reads back and continues, owner-only and redacted", () => {
    const dir = join(tempDirSync("afk-ledger-"), "lanes", "acme", "widget");
    const clock = steppingClock();
    const warnings: string[] = [];
    const first = ledgerIn(dir, clock, warnings);
    for (const e of issueLife(1).slice(0, 4)) first.record(e, "inst-a");
    first.record({ event: "fault", msg: `tick failed: token ${SECRET} refused` }, "inst-a");
    first.close();
    const second = ledgerIn(dir, clock, warnings);
    for (const e of issueLife(1).slice(4)) second.record(e, "inst-b");
    const records = second.read();
    assert.equal(records.length, 11);
    assert.deepEqual(
      records.map((r) => r.event),
      ["queued", "dispatch", "attempt_start", "attempt_end", "fault", "pr_opened", "retry", "attempt_start", "attempt_end", "landing_start", "landing"],
    );
    assert.deepEqual([...new Set(records.map((r) => r.instance))], ["inst-a", "inst-b"]);
    assert.ok(!readFileSync(join(dir, LEDGER_FILE), "utf8").includes(SECRET), "the token never reaches the file");
    assert.equal(statSync(join(dir, LEDGER_FILE)).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(warnings, []);
  });

  it("keeps a retry's evidence, which a new process reads back for the attempt it started (a daemon restart between attempts)", () => {
    const dir = join(tempDirSync("afk-ledger-"), "lanes", "acme", "widget");
    const clock = steppingClock();
    const facts = { instance: "inst-a", runDir: dir };
    const first = new FleetLedger(ledgerIn(dir, clock, []), facts);
    const log = first.tap(() => undefined);
    const evidence = (summary: string, excerpt: string) => ({ evidence_kind: "stalled", summary, excerpt });
    log("info", "retry", "#7: attempt 2 of 3 after: quiet", 7, { attempt: 2, ...evidence("quiet", `stage: tests\nsent ${SECRET}`) });
    log("info", "retry", "#8: attempt 2 of 3 after: red", 8, { attempt: 2, evidence_kind: "ci", summary: "red", excerpt: "" });
    log("info", "retry", "#7: attempt 3 of 3 after: crashed", 7, { attempt: 3, ...evidence("crashed", "segfault") });
    first.ledger.close();
    const second = new FleetLedger(ledgerIn(dir, clock, []), facts);
    assert.deepEqual(second.failureBefore(7, 3), { kind: "stalled", summary: "crashed", excerpt: "segfault" });
    assert.deepEqual(second.failureBefore(8, 2), { kind: "ci", summary: "red", excerpt: "" });
    // Only the retry that sent the issue into this very attempt speaks for it.
    assert.equal(second.failureBefore(7, 2), null);
    assert.equal(second.failureBefore(9, 2), null);
    assert.ok(!readFileSync(join(dir, LEDGER_FILE), "utf8").includes(SECRET), "the excerpt is redacted on its way in");
  });

  it("a torn last line and a corrupt line: the good records are kept, one warning, and appends go on", async () => {
    const dir = tempDirSync("afk-ledger-");
    const clock = steppingClock();
    const warnings: string[] = [];
    const a = ledgerIn(dir, clock, warnings);
    for (const e of issueLife(7).slice(0, 3)) a.record(e);
    a.close();
    const path = join(dir, LEDGER_FILE);
    const lines = readFileSync(path, "utf8").split("\n");
    // Corrupt the second line, then a crash mid-write leaves half a record at the end.
    writeFileSync(path, [lines[0], "{not json", lines[2], ""].join("\n"));
    appendFileSync(path, lines[1]!.slice(0, 30));
    const b = ledgerIn(dir, clock, warnings);
    assert.deepEqual(
      b.read().map((r) => r.event),
      ["queued", "attempt_start"],
    );
    b.record(issueLife(7)[3]!);
    b.record(issueLife(7)[4]!);
    const c = ledgerIn(dir, clock, warnings);
    assert.deepEqual(
      c.read().map((r) => r.event),
      ["queued", "attempt_start", "attempt_end", "pr_opened"],
    );
    assert.equal(warnings.length, 1, warnings.join("\n"));
    assert.match(warnings[0]!, /2 torn or corrupt line\(s\) \(the last one cut short\): dropped them and kept the 2 good record\(s\)/);
    assert.equal(b.stats().repaired, 2);
    // The logs tool's reader sees the same records.
    const q = await queryLane({ dir, lane: "ledger", tail: 100 });
    assert.equal(q.records.length, 4);
    assert.equal(q.malformed, 0);
  });

  it("compacts by size into one summary per issue: the report's totals are the same before and after", () => {
    const dir = tempDirSync("afk-ledger-");
    const clock = steppingClock();
    const warnings: string[] = [];
    const big = ledgerIn(dir, clock, warnings, { maxBytes: 1024 * 1024 * 64 });
    for (let n = 1; n <= 60; n++) for (const e of issueLife(n)) big.record(e);
    big.record({ event: "stop", msg: "stopped", data: { requests: { total: 50, counted: 40, not_modified: 10 } } });
    big.close();
    const now = new Date(Date.parse("2026-01-01T12:00:00Z"));
    const before = buildReport(big.read(), { repo: "acme/widget", reason: "on_demand", now });
    const bytesBefore = statSync(join(dir, LEDGER_FILE)).size;
    const small = ledgerIn(dir, clock, warnings, { maxBytes: 64 * 1024 });
    const result = small.compact();
    assert.ok(result.folded > 0 && result.summaries > 0, JSON.stringify(result));
    const after = small.read();
    assert.ok(statSync(join(dir, LEDGER_FILE)).size <= 32 * 1024, `at most half the bound after compaction (was ${bytesBefore})`);
    assert.ok(after.filter((r) => r.event === "summary" && r.issue !== undefined).length === result.summaries);
    const report = buildReport(after, { repo: "acme/widget", reason: "on_demand", now });
    assert.deepEqual(report.totals, before.totals);
    assert.deepEqual(report.requests, before.requests);
    assert.deepEqual(
      report.issues.map((i) => [i.issue, i.outcome, i.attempts, i.worker_ms, i.pr]),
      before.issues.map((i) => [i.issue, i.outcome, i.attempts, i.worker_ms, i.pr]),
    );
    assert.equal(report.totals.outcomes.merged, 60);
    assert.equal(report.totals.attempts, 120);
    assert.deepEqual(report.totals.spend, { usd: 30, tokens: { total: 60000 } });
    assert.deepEqual(report.requests, { total: 50, counted: 40, not_modified: 10 });
    // Appending past the bound compacts on its own.
    for (let n = 61; n <= 80; n++) for (const e of issueLife(n)) small.record(e);
    assert.ok(small.stats().compactions >= 1);
    assert.ok(statSync(join(dir, LEDGER_FILE)).size <= 64 * 1024);
    assert.equal(buildReport(small.read(), { repo: "acme/widget", reason: "on_demand", now }).totals.outcomes.merged, 80);
    assert.deepEqual(warnings, []);
  });

  it("compacts by age on open: records past the bound become summaries, summaries past it go", () => {
    const dir = tempDirSync("afk-ledger-");
    const old = steppingClock(Date.parse("2025-01-01T00:00:00Z"));
    const warnings: string[] = [];
    const a = ledgerIn(dir, old, warnings);
    for (const e of issueLife(1)) a.record(e);
    a.close();
    const recent = steppingClock(Date.parse("2025-03-20T00:00:00Z"));
    const b = ledgerIn(dir, recent, warnings);
    for (const e of issueLife(2)) b.record(e);
    b.close();
    // 100 days after the first issue: its records are past the 90-day bound, the second's are not.
    const c = ledgerIn(dir, steppingClock(Date.parse("2025-04-11T00:00:00Z")), warnings);
    const records = c.read();
    assert.deepEqual(
      records.filter((r) => r.issue === 1).map((r) => r.event),
      ["summary"],
    );
    assert.equal(records.filter((r) => r.issue === 2).length, 10);
    const report = buildReport(records, { repo: "acme/widget", reason: "on_demand", now: new Date("2025-04-11T00:00:00Z") });
    assert.deepEqual(
      report.issues.map((i) => [i.issue, i.outcome, i.attempts]),
      [
        [1, "merged", 2],
        [2, "merged", 2],
      ],
    );
    // Four times the age bound on, nothing of either is kept.
    const d = ledgerIn(dir, steppingClock(Date.parse("2026-04-01T00:00:00Z")), warnings);
    d.compact();
    assert.deepEqual(
      d.read().filter((r) => r.issue !== undefined),
      [],
    );
  });

  it("is the lane writer's `ledger()`, which the rotating lanes refuse to write to", () => {
    const dir = tempDirSync("afk-ledger-");
    const lanes = openLanes({ dir, secrets: () => [SECRET] });
    assert.throws(() => lanes.append("ledger", { event: "x", msg: "y" }), /not a rotating lane/);
    lanes.ledger().record({ event: "pause", msg: `paused with ${SECRET}` });
    assert.equal(lanes.ledger(), lanes.ledger());
    assert.equal(lanes.ledger().read()[0]!.msg, "paused with [redacted]");
    lanes.close();
  });
});

describe("timeline and report", () => {
  it("lays one issue's records out as phases and attempts, each attempt with its transcript and spend", () => {
    const dir = tempDirSync("afk-ledger-");
    const l = ledgerIn(dir, steppingClock(), []);
    for (const e of issueLife(5)) l.record(e);
    for (const e of issueLife(6).slice(0, 3)) l.record(e);
    const records = l.read();
    const t = buildTimeline(records, "acme/widget", 5, new Date("2026-01-02T00:00:00Z"));
    assert.deepEqual(
      t.phases.map((p) => p.phase),
      ["queued", "claimed", "worker", "ci", "queued", "worker", "landing", "merged"],
    );
    assert.ok(
      t.phases.every((p) => p.end !== null),
      "every phase of a merged issue has ended",
    );
    assert.deepEqual(
      t.phases.map((p) => p.duration_ms),
      [1000, 1000, 1000, 1000, 1000, 1000, 1000, 0],
    );
    assert.deepEqual(
      t.phases.filter((p) => p.phase === "worker").map((p) => p.spend),
      [{ usd: 0.5, tokens: { total: 1000 } }, "unknown"],
    );
    assert.deepEqual(
      t.attempts.map((a) => [a.attempt, a.duration_ms, a.outcome, a.engine]),
      [
        [1, 4000, "commits", "unknown"],
        [2, 6000, "commits", "unknown"],
      ],
    );
    assert.deepEqual(t.attempts[0]!.transcript, { lane: "worker", issue: 5, attempt: 1 });
    assert.deepEqual([t.outcome, t.pr, t.gated_sha, t.merge_sha], ["merged", 105, "h".repeat(40), "m".repeat(40)]);
    assert.deepEqual(t.spend, { usd: 0.5, tokens: { total: 1000 } });
    // An issue in flight: its worker phase is open.
    const open = buildTimeline(records, "acme/widget", 6, new Date("2026-01-02T00:00:00Z"));
    assert.equal(open.outcome, "in_flight");
    assert.deepEqual([open.phases.at(-1)!.phase, open.phases.at(-1)!.end], ["worker", null]);
    assert.equal(buildTimeline(records, "acme/widget", 99, new Date()).outcome, "unknown");
  });

  it("reports per issue outcome, attempts, time and spend; the totals and the requests; the text says the same", () => {
    const dir = tempDirSync("afk-ledger-");
    const l = ledgerIn(dir, steppingClock(), []);
    for (const e of issueLife(1)) l.record(e);
    l.record({ event: "queued", issue: 2, msg: "q" });
    l.record({ event: "dispatch", issue: 2, msg: "d" });
    l.record({ event: "escalation", issue: 2, level: "warn", msg: "#2: escalated" });
    l.record({ event: "pause", msg: "usage limit", data: { kind: "quota" } });
    l.record({ event: "breaker_trip", msg: "tripped" });
    l.record({ event: "stop", msg: "stopped", data: { requests: { total: 12, counted: 9, not_modified: 3 } } });
    const r = buildReport(l.read(), {
      repo: "acme/widget",
      reason: "stop",
      now: new Date("2026-01-02T00:00:00Z"),
      live: { total: 5, counted: 4, notModified: 1 },
    });
    assert.deepEqual(
      r.issues.map((i) => [i.issue, i.outcome, i.attempts, i.time_ms]),
      [
        [1, "merged", 2, 9000],
        [2, "escalated", 0, 2000],
      ],
    );
    assert.deepEqual(r.totals.outcomes, { merged: 1, escalated: 1, closed_done: 0, released: 0, in_flight: 0, queued: 0 });
    assert.deepEqual([r.totals.pauses, r.totals.breaker_trips, r.totals.stops], [1, 1, 1]);
    assert.deepEqual(r.requests, { total: 17, counted: 13, not_modified: 4 });
    assert.equal(r.issues[0]!.timeline, "afk://acme/widget/issue/1/timeline");
    const text = renderReport(r);
    assert.match(text, /2 issue\(s\): 1 merged, 1 escalated/);
    assert.match(text, /GitHub requests: 13 counted against the rate limit, 4 answered 304, 17 sent/);
    assert.match(text, /#1 {2}merged {2}2 attempt\(s\) {2}9 s {2}\$0\.50, 1000 tokens {2}PR #101 as mmmmmmmmmmmm/);
    assert.match(text, /#2 {2}escalated {2}0 attempt\(s\)/);
  });

  it("counts re-runs of red checks per issue, and as saved those after which the issue landed with no further attempt", () => {
    const l = ledgerIn(tempDirSync("afk-ledger-"), steppingClock(), []);
    // #1: a re-run, then it landed (saved). #2: a re-run, its check red again, a retry; a second
    // re-run on the next attempt, then it landed (one of two saved). #3: a re-run, then escalated.
    l.record({ event: "rerun", issue: 1, msg: "re-ran test" });
    l.record({ event: "landing", issue: 1, msg: "landed" });
    l.record({ event: "rerun", issue: 2, msg: "re-ran test" });
    l.record({ event: "retry", issue: 2, msg: "retry" });
    l.record({ event: "rerun", issue: 2, msg: "re-ran test" });
    l.record({ event: "landing", issue: 2, msg: "landed" });
    l.record({ event: "rerun", issue: 3, msg: "re-ran local gate" });
    l.record({ event: "escalation", issue: 3, msg: "escalated" });
    const r = buildReport(l.read(), { repo: "acme/widget", reason: "on_demand", now: new Date("2026-01-02T00:00:00Z") });
    assert.deepEqual(
      r.issues.map((i) => [i.issue, i.reruns, i.reruns_saved]),
      [
        [1, 1, 1],
        [2, 2, 1],
        [3, 1, 0],
      ],
    );
    assert.deepEqual([r.totals.reruns, r.totals.reruns_saved], [4, 2]);
    const text = renderReport(r);
    assert.match(text, /4 check re-run\(s\) \(2 saved an attempt\)/);
    assert.match(text, /#2 {2}merged {2}0 attempt\(s\) \(2 re-run, 1 saved\)/);
  });
});
