// The ledger's views for the host: one issue's timeline and the final report as of now, read from
// the repository's ledger file on this machine (server/lanes/ledger.ts), running fleet or not.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LaneRecord } from "../../schemas/lanes.js";
import { buildReport, buildTimeline, LEDGER_FILE, parseLedger, type FinalReport, type Timeline } from "../lanes/index.js";
import type { RequestStats } from "../gh/etag-cache.js";

/** The good records of a ledger file; none when there is no file yet. Reading never repairs: the writer does. */
export function readLedger(dir: string): LaneRecord[] {
  let text = "";
  try {
    text = readFileSync(join(dir, LEDGER_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return parseLedger(text).records;
}

export function timelineOf(dir: string, repo: string, issue: number, now: Date): Timeline {
  return buildTimeline(readLedger(dir), repo, issue, now);
}

/** The timelines of the `limit` issues whose last record is newest, newest first: one read of the file for all. */
export function recentTimelines(dir: string, repo: string, limit: number, now: Date): Timeline[] {
  const records = readLedger(dir);
  const last = new Map<number, string>();
  for (const r of records) if (typeof r.issue === "number") last.set(r.issue, r.ts);
  const newest = [...last.entries()].sort((a, b) => (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : b[0] - a[0])).slice(0, limit);
  const byIssue = new Map<number, LaneRecord[]>();
  const wanted = new Set(newest.map(([n]) => n));
  for (const r of records) {
    if (typeof r.issue !== "number" || !wanted.has(r.issue)) continue;
    const list = byIssue.get(r.issue);
    if (list) list.push(r);
    else byIssue.set(r.issue, [r]);
  }
  return newest.map(([n]) => buildTimeline(byIssue.get(n) ?? [], repo, n, now));
}

export function reportOf(dir: string, repo: string, now: Date, live: RequestStats | null): FinalReport {
  return buildReport(readLedger(dir), { repo, reason: "on_demand", now, live });
}
