// The final report of a fleet's run (server/lanes/ledger-report.ts), written when a drain or stop
// ends: beside the ledger as report.json and report.txt (owner-only), recorded in the ledger, and
// posted as a comment on `report.comment_issue` when the config names one.
import { writeAtomicSync } from "../kit/atomic-file.js";
import { join } from "node:path";
import { buildReport, renderReport, type FinalReport } from "../lanes/index.js";
import { clipHead } from "../text/text.js";
import type { FleetRuntime } from "./effects/effect.js";
import { errorText } from "./supervisor-log.js";

export const REPORT_JSON = "report.json";
export const REPORT_TEXT = "report.txt";
/** A GitHub comment holds 65,536 characters; the report's text is cut well inside it. */
const COMMENT_BYTES = 60_000;

/** The requests this fleet's connection has sent so far, in the shape the ledger keeps. */
export function requestsOf(fleet: Pick<FleetRuntime, "deps">): { total: number; counted: number; not_modified: number } {
  const s = fleet.deps.conn.forge.stats();
  return { total: s.total, counted: s.counted, not_modified: s.notModified };
}

/** Records the stop (with the requests its run spent), then writes and posts the report. */
export async function finalReport(fleet: FleetRuntime, reason: FinalReport["reason"]): Promise<FinalReport> {
  fleet.ledger.record({ event: "stop", msg: `the fleet stopped (${reason})`, data: { reason, requests: requestsOf(fleet) } });
  const report = buildReport(fleet.ledger.ledger.read(), { repo: fleet.registration.repo, reason, now: fleet.deps.clock() });
  const text = renderReport(report);
  writeReport(fleet.deps.lanes.dir, report, text);
  const t = report.totals.outcomes;
  fleet.ledger.record({
    event: "report",
    msg: `final report: ${report.totals.issues} issue(s), ${t.merged} merged, ${t.escalated} escalated`,
    data: { reason, issues: report.totals.issues, merged: t.merged, escalated: t.escalated, file: join(fleet.deps.lanes.dir, REPORT_JSON) },
  });
  const target = fleet.registration.config.notify.report_issue;
  if (target > 0) {
    // One request per stop, only when configured.
    await fleet.deps.conn.forge
      .createComment(target, `**afk-mcp final report**\n\n\`\`\`text\n${clipHead(text, COMMENT_BYTES).replace(/```/g, "`\u200b``")}\n\`\`\``)
      .catch((error: unknown) => fleet.log("warn", "report_failed", `the final report was not posted on #${target}: ${errorText(error)}`, target));
  }
  return report;
}

/** report.json and report.txt, each replaced whole (a reader never sees half of one). */
export function writeReport(dir: string, report: FinalReport, text: string): void {
  for (const [name, body] of [
    [REPORT_JSON, JSON.stringify(report, null, 2) + "\n"],
    [REPORT_TEXT, text + "\n"],
  ] as const) {
    writeAtomicSync(join(dir, name), body);
  }
}
