// The `logs` answer: the newest records of one lane, oldest first, within a byte budget. A
// record too large to show whole is cut with a marker; what does not fit is one cursor away.
import type { LaneRecord } from "../../schemas/lanes.js";
import { queryLane, LaneQueryError, type LaneQuery } from "../lanes/index.js";
import { UsageError } from "../gh/errors.js";
import type { LogsInput, LogsResult } from "./api.js";

/** The records of one answer, as JSON: well inside the tool result budget (server/tools/budget.ts). */
export const LOGS_PAGE_BYTES = 48 * 1024;
/** One record's share at most: a chatty worker line never crowds out the rest. */
export const LOGS_RECORD_BYTES = 4 * 1024;

export async function readLogs(dir: string, input: LogsInput): Promise<LogsResult> {
  const before = input.cursor === undefined ? undefined : parseCursor(input.cursor);
  const query: LaneQuery = { dir, lane: input.lane, tail: input.tail_lines ?? 200 };
  if (input.issue !== undefined) query.issue = input.issue;
  if (input.since !== undefined) query.since = input.since;
  if (before) query.before = before;
  let result;
  try {
    result = await queryLane(query);
  } catch (error) {
    if (error instanceof LaneQueryError) throw new UsageError(`logs: ${error.message}`);
    throw error;
  }
  // Newest first until the page is full; the rest stays behind the cursor.
  const kept: Record<string, unknown>[] = [];
  let bytes = 0;
  let i = result.records.length - 1;
  for (; i >= 0; i--) {
    const record = fitRecord(result.records[i]!);
    const size = Buffer.byteLength(JSON.stringify(record));
    if (kept.length > 0 && bytes + size > LOGS_PAGE_BYTES) break;
    kept.push(record);
    bytes += size;
  }
  const more = i >= 0 || result.truncated;
  kept.reverse();
  return { lane: input.lane, records: kept, truncated: more, held_back: i + 1, next_cursor: more && kept.length > 0 ? cursorAfter(kept, before) : null };
}

/** A record within LOGS_RECORD_BYTES: `msg` shortened and `data` dropped, marked `truncated`. */
export function fitRecord(record: LaneRecord): Record<string, unknown> {
  const size = Buffer.byteLength(JSON.stringify(record));
  if (size <= LOGS_RECORD_BYTES) return record as Record<string, unknown>;
  const { data: _data, ...rest } = record;
  const room = Math.max(256, LOGS_RECORD_BYTES - Buffer.byteLength(JSON.stringify({ ...rest, msg: "" })) - 120);
  const msg =
    record.msg.length > room
      ? `${record.msg.slice(0, room)}… [record cut: ${size} bytes in the lane]`
      : `${record.msg} [record cut: data dropped, ${size} bytes in the lane]`;
  return { ...rest, msg, truncated: true };
}

/** The cursor for what comes before the oldest kept record: its time, and how many at that time were shown. */
function cursorAfter(kept: Record<string, unknown>[], before: { ts: number; skip: number } | undefined): string {
  const oldest = Date.parse(String(kept[0]!.ts));
  let skip = kept.filter((r) => Date.parse(String(r.ts)) === oldest).length;
  if (before && before.ts === oldest) skip += before.skip;
  return `${new Date(oldest).toISOString()}~${skip}`;
}

function parseCursor(cursor: string): { ts: number; skip: number } {
  const match = /^(\d{4}-\d{2}-\d{2}T[\d:.]+Z)~(\d{1,6})$/.exec(cursor);
  const ts = match ? Date.parse(match[1]!) : Number.NaN;
  if (!match || Number.isNaN(ts)) {
    throw new UsageError(
      `logs: cursor ${JSON.stringify(cursor)} is not one logs gave: pass the next_cursor of the previous answer, or omit cursor for the newest records`,
    );
  }
  return { ts, skip: Number(match[2]) };
}
