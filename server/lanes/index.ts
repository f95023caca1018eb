// Structured log lanes (supervisor, worker, monitor, liveness): append with redaction and
// rotation, split worker output into lines, and read a lane's tail back.
export { laneDir, laneFile } from "./paths.js";
export { openLanes, LaneWriter, type LaneWriterOptions } from "./writer.js";
export { queryLane, parseSince, LaneQueryError, type LaneQuery } from "./query.js";
export { lineSplitter } from "./split.js";
export { createRedactor, redactText } from "../text/redact.js";
export { type LaneLevel } from "../../schemas/lanes.js";
export { Ledger, LEDGER_FILE, parseLedger, issueSummaries } from "./ledger.js";
export { buildReport, renderReport, durationText, type FinalReport } from "./ledger-report.js";
export { buildTimeline, type Timeline } from "./ledger-timeline.js";
export { type LedgerEntry, type LedgerEvent, type Spend } from "./ledger-types.js";
