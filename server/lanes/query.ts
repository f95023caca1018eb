// Reads the end of a lane: the last `tail` records that match, oldest first. Files are read
// backwards in blocks, newest file first, and reading stops as soon as the answer is known,
// so a query costs what it returns, not the size of the lane; memory holds at most `tail`
// records, one block and one line.
import { open, readdir } from "node:fs/promises";
import { LANE_LEVELS, LANE_NAMES, laneRecord, type LaneLevel, type LaneName, type LaneRecord } from "../../schemas/lanes.js";
import { isLaneName, laneFile, laneFileIndex } from "./paths.js";

export const DEFAULT_TAIL = 200;
export const MAX_TAIL = 5000;
const BLOCK_BYTES = 64 * 1024;
/** A line longer than this is not one the writer produced: it is skipped as malformed. */
const MAX_READ_LINE_BYTES = 1024 * 1024;
/**
 * Records are appended in clock order, but a clock may step back a little (NTP). Reading stops
 * only once records are this much older than `since`, so a small step does not hide records.
 */
const SINCE_SKEW_MS = 60_000;

/** A query the caller got wrong; the message names the field and the fix. */
export class LaneQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LaneQueryError";
  }
}

export interface LaneQuery {
  /** The project's lane directory (see `laneDir`). */
  dir: string;
  lane: LaneName;
  /** Only records about this issue. */
  issue?: number;
  /** An ISO time, or a duration before now: "90s", "15m", "2h", "1d", "1w". */
  since?: string;
  /** How many of the newest matching records to return. Default 200, at most 5000. */
  tail?: number;
  /** Only records at this level or worse (warn → warn and error). */
  level?: LaneLevel;
  /** "now" for a relative `since`; defaults to the wall clock. */
  now?: Date;
  /** Paging back: only records older than `ts` (epoch ms), and of those at exactly `ts` all but the newest `skip`. */
  before?: { ts: number; skip: number };
}

export interface LaneQueryResult {
  /** Matching records, oldest first; the last one is the newest. */
  records: LaneRecord[];
  /** True when older matching records exist beyond `tail`. */
  truncated: boolean;
  /** How many lane files were opened. */
  files_read: number;
  /** Lines skipped because they are not lane records (torn writes, foreign text). */
  malformed: number;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `since` as epoch milliseconds: an ISO time, or a duration ("15m", "2h", "1d") before `now`. */
export function parseSince(since: string, now: Date = new Date()): number {
  const text = since.trim();
  const duration = /^(\d{1,9})\s*([smhdw])$/i.exec(text);
  if (duration) return now.getTime() - Number(duration[1]) * UNIT_MS[duration[2]!.toLowerCase()]!;
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return at;
  }
  throw new LaneQueryError(
    `since ${JSON.stringify(since)} is neither an ISO time (e.g. "2025-01-31T12:00:00Z") nor a duration before now (e.g. "15m", "2h", "1d")`,
  );
}

function resolveTail(tail: number | undefined): number {
  if (tail === undefined) return DEFAULT_TAIL;
  if (!Number.isInteger(tail) || tail < 1) {
    throw new LaneQueryError(`tail ${tail} must be a positive whole number of records (at most ${MAX_TAIL})`);
  }
  return Math.min(tail, MAX_TAIL);
}

/** The lane's files, newest first: `<lane>.jsonl`, then `<lane>.1.jsonl`, `<lane>.2.jsonl`, … */
async function laneFiles(dir: string, lane: LaneName): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const indices: number[] = [];
  for (const name of names) {
    const index = laneFileIndex(name, lane);
    if (index !== null) indices.push(index);
  }
  return indices.sort((a, b) => a - b).map((index) => laneFile(dir, lane, index));
}

type Verdict = "continue" | "stop";

/**
 * Feeds the lines of `path` to `onLine`, last line first, until it answers "stop". A line
 * over MAX_READ_LINE_BYTES is reported as null. Newlines (0x0a) never occur inside a UTF-8
 * sequence, so splitting bytes before decoding is safe. Resolves false when the file is gone.
 */
async function scanBackward(path: string, onLine: (line: Buffer | null) => Verdict): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    // Rotated away between listing and opening: the records moved to a file we read next.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  try {
    let pos = (await handle.stat()).size;
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let overlong = false;
    const emit = (line: Buffer | null): Verdict => {
      if (line !== null && line.length === 0) return "continue";
      return onLine(line);
    };
    while (pos > 0) {
      const length = Math.min(BLOCK_BYTES, pos);
      pos -= length;
      const block = Buffer.allocUnsafe(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await handle.read(block, got, length - got, pos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      let end = got;
      for (let i = got > 0 ? block.lastIndexOf(0x0a, got - 1) : -1; i >= 0; i = i > 0 ? block.lastIndexOf(0x0a, i - 1) : -1) {
        const line = overlong ? null : carry.length === 0 ? block.subarray(i + 1, end) : Buffer.concat([block.subarray(i + 1, end), ...carry]);
        carry = [];
        carryBytes = 0;
        overlong = false;
        if (emit(line) === "stop") return true;
        end = i;
      }
      if (!overlong && end > 0) {
        carry.unshift(block.subarray(0, end));
        carryBytes += end;
        if (carryBytes > MAX_READ_LINE_BYTES) {
          carry = [];
          carryBytes = 0;
          overlong = true;
        }
      }
    }
    if (overlong || carry.length > 0) emit(overlong ? null : Buffer.concat(carry));
    return true;
  } finally {
    await handle.close();
  }
}

/**
 * The last `tail` records of `lane` in `dir` that match `issue`, `since` and `level`, oldest
 * first. A missing directory or lane is an empty answer, not an error.
 */
export async function queryLane(query: LaneQuery): Promise<LaneQueryResult> {
  if (!isLaneName(query.lane)) {
    throw new LaneQueryError(`lane ${JSON.stringify(query.lane)} is not a lane: use one of ${LANE_NAMES.join(", ")}`);
  }
  if (query.issue !== undefined && (!Number.isInteger(query.issue) || query.issue < 1)) {
    throw new LaneQueryError(`issue ${query.issue} must be a positive issue number`);
  }
  if (query.level !== undefined && !LANE_LEVELS.includes(query.level)) {
    throw new LaneQueryError(`level ${JSON.stringify(query.level)} is not a level: use one of ${LANE_LEVELS.join(", ")}`);
  }
  const tail = resolveTail(query.tail);
  const sinceMs = query.since === undefined ? undefined : parseSince(query.since, query.now ?? new Date());
  const minRank = query.level === undefined ? 0 : LANE_LEVELS.indexOf(query.level);

  const newestFirst: LaneRecord[] = [];
  let truncated = false;
  let malformed = 0;
  let filesRead = 0;
  let done = false;
  let skipAtBefore = query.before?.skip ?? 0;

  const onLine = (line: Buffer | null): Verdict => {
    if (line === null) {
      malformed += 1;
      return "continue";
    }
    let raw: unknown;
    try {
      raw = JSON.parse(line.toString("utf8"));
    } catch {
      malformed += 1;
      return "continue";
    }
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      malformed += 1;
      return "continue";
    }
    const fields = raw as Record<string, unknown>;
    const at = typeof fields.ts === "string" ? Date.parse(fields.ts) : Number.NaN;
    if (Number.isNaN(at)) {
      malformed += 1;
      return "continue";
    }
    // Cheap filters on the raw fields first; only a record that matches pays for validation.
    if (sinceMs !== undefined && at < sinceMs) {
      if (at < sinceMs - SINCE_SKEW_MS) {
        done = true;
        return "stop";
      }
      return "continue";
    }
    if (fields.lane !== query.lane) return "continue";
    if (query.before !== undefined && at >= query.before.ts) {
      if (at > query.before.ts) return "continue";
      if (skipAtBefore > 0 && (query.issue === undefined || fields.issue === query.issue)) {
        skipAtBefore -= 1;
        return "continue";
      }
    }
    if (query.issue !== undefined && fields.issue !== query.issue) return "continue";
    if (minRank > 0 && LANE_LEVELS.indexOf(fields.level as LaneLevel) < minRank) return "continue";
    const parsed = laneRecord.safeParse(raw);
    if (!parsed.success) {
      malformed += 1;
      return "continue";
    }
    if (newestFirst.length === tail) {
      // One more match than asked for: older records exist, and that is all we need to know.
      truncated = true;
      done = true;
      return "stop";
    }
    newestFirst.push(parsed.data);
    return "continue";
  };

  for (const path of await laneFiles(query.dir, query.lane)) {
    if (done) break;
    if (await scanBackward(path, onLine)) filesRead += 1;
  }
  return { records: newestFirst.reverse(), truncated, files_read: filesRead, malformed };
}
