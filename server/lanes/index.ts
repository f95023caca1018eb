// Structured log lanes (supervisor, worker, monitor, liveness): append with redaction and
// rotation, split worker output into lines, and read a lane's tail back.
export { laneDir, laneFile } from "./paths.js";
export { openLanes, LaneWriter, DEFAULT_KEEP, DEFAULT_MAX_BYTES, type LaneWriterOptions, type LaneWriterStats } from "./writer.js";
export { queryLane, parseSince, LaneQueryError, DEFAULT_TAIL, MAX_TAIL, type LaneQuery, type LaneQueryResult } from "./query.js";
export { lineSplitter, DEFAULT_MAX_LINE_LENGTH, type LineSplitter, type LineSplitterOptions } from "./split.js";
export { createRedactor, redactText, REDACTED, type Redactor } from "../text/redact.js";
export { DEFAULT_MAX_LINE_BYTES, truncationMarker } from "./encode.js";
export { LANE_NAMES, LANE_LEVELS, type LaneEntry, type LaneLevel, type LaneName, type LaneRecord } from "../../schemas/lanes.js";
export { Ledger, LEDGER_FILE, parseLedger, issueSummaries, type LedgerOptions, type LedgerStats } from "./ledger.js";
export { buildReport, renderReport, spendText, durationText, type FinalReport, type ReportIssue } from "./ledger-report.js";
export { buildTimeline, type Timeline, type TimelinePhase, type TimelineAttempt } from "./ledger-timeline.js";
export { LEDGER_EVENTS, addSpend, type IssueOutcome, type IssueSummary, type LedgerEntry, type LedgerEvent, type Spend } from "./ledger-types.js";
