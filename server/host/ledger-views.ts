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

export function reportOf(dir: string, repo: string, now: Date, live: RequestStats | null): FinalReport {
  return buildReport(readLedger(dir), { repo, reason: "on_demand", now, live });
}
