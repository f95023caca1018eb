// The ledger of one repository's fleet: `<lane dir>/ledger.jsonl`, append-only JSONL of the
// decisions and facts GitHub cannot re-derive (ledger-types.ts). Unlike a lane it does not
// rotate away: it is bounded by age and size by compaction, which folds the oldest records into
// one summary per issue, so the report still knows every issue after its records are gone.
//
// Written like a lane (writer.ts: one synchronous write(2) per record on an O_APPEND
// descriptor, redacted, bounded per line), so a crash right after a record keeps it. A file left
// torn or corrupt (a crash mid-line, a disk error, a hand edit) is repaired on open: its good
// records are kept, the rest dropped, and one warning says so.
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { laneRecord, type LaneRecord } from "../../schemas/lanes.js";
import { DEFAULT_MAX_LINE_BYTES, encodeRecord } from "./encode.js";
import type { Redactor } from "../text/redact.js";
import { foldRecord, summarize, type IssueSummary, type LedgerEntry } from "./ledger-types.js";
import { writeAtomicSync } from "../kit/atomic-file.js";

export const LEDGER_FILE = "ledger.jsonl";
export const DEFAULT_LEDGER_MAX_BYTES = 8 * 1024 * 1024;
export const DEFAULT_LEDGER_MAX_AGE_DAYS = 90;
const DAY_MS = 86_400_000;
/** A summary line's bytes beyond its data (ts, lane, event, msg), for the size bound. */
const SUMMARY_OVERHEAD = 160;

export interface LedgerOptions {
  /** The project's lane directory: the ledger lives beside the lanes. */
  dir: string;
  redactor: Redactor;
  clock?: () => Date;
  /** Compact once the file would pass this many bytes; compaction halves it. Default 8 MiB. */
  maxBytes?: number;
  /** Records older than this are folded into summaries, and summaries four times as old dropped. Default 90 days. */
  maxAgeDays?: number;
  maxLineBytes?: number;
  /** Told once per file repaired (torn or corrupt lines dropped) and about failed writes. */
  onWarn?: (message: string) => void;
}

export interface LedgerStats {
  written: number;
  failed: number;
  compactions: number;
  /** Lines dropped as torn or corrupt when the file was opened. */
  repaired: number;
}

export class Ledger {
  readonly path: string;
  readonly maxBytes: number;
  readonly maxAgeMs: number;
  private readonly clock: () => Date;
  private readonly maxLineBytes: number;
  private readonly onWarn: (message: string) => void;
  private fd: number | null = null;
  private size = 0;
  private checked = false;
  private readonly counters: LedgerStats = { written: 0, failed: 0, compactions: 0, repaired: 0 };

  constructor(private readonly options: LedgerOptions) {
    this.path = join(options.dir, LEDGER_FILE);
    this.maxBytes = options.maxBytes ?? DEFAULT_LEDGER_MAX_BYTES;
    this.maxAgeMs = (options.maxAgeDays ?? DEFAULT_LEDGER_MAX_AGE_DAYS) * DAY_MS;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!Number.isSafeInteger(this.maxBytes) || this.maxBytes < 4 * this.maxLineBytes) {
      throw new Error(`ledger: maxBytes ${this.maxBytes} must be an integer of at least four lines (${4 * this.maxLineBytes} bytes)`);
    }
    this.clock = options.clock ?? (() => new Date());
    this.onWarn = options.onWarn ?? (() => {});
  }

  /** Appends one record. Never throws for I/O: a failed write is counted and warned about. */
  record(entry: LedgerEntry, instance?: string): void {
    const ts = this.clock().toISOString();
    const line =
      encodeRecord(
        "ledger",
        {
          event: entry.event,
          msg: entry.msg,
          level: entry.level ?? "info",
          ...(entry.issue !== undefined ? { issue: entry.issue } : {}),
          ...(entry.attempt !== undefined ? { attempt: entry.attempt } : {}),
          ...(instance ? { instance } : {}),
          ...(entry.data ? { data: entry.data } : {}),
        },
        ts,
        { redactor: this.options.redactor, maxLineBytes: this.maxLineBytes },
      ) + "\n";
    const bytes = Buffer.from(line, "utf8");
    try {
      let fd = this.open();
      if (this.size + bytes.length > this.maxBytes) {
        this.compact();
        fd = this.open();
      }
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      this.size += bytes.length;
      this.counters.written += 1;
    } catch (error) {
      this.counters.failed += 1;
      this.release();
      this.onWarn(`ledger: a record was not written to ${this.path}: ${(error as Error).message}`);
    }
  }

  /** Every good record, oldest first (the file repaired first if it needs it). */
  read(): LaneRecord[] {
    this.repairOnce();
    return parseLedger(readQuiet(this.path)).records;
  }

  /**
   * Folds the oldest records into per-issue summaries until the file (summaries included) is at
   * most half its bound and holds no record older than the age bound; drops the summaries of
   * issues last seen four times the age bound ago. Summaries alone past half the bound (tens of
   * thousands of issues) leave a file of summaries only.
   */
  compact(): { folded: number; kept: number; summaries: number } {
    this.repairOnce();
    const records = parseLedger(readQuiet(this.path)).records;
    const now = this.clock().getTime();
    const cutoff = new Date(now - this.maxAgeMs).toISOString();
    const forgotten = new Date(now - 4 * this.maxAgeMs).toISOString();
    const sizes = records.map((r) => Buffer.byteLength(JSON.stringify(r)) + 1);
    let remaining = sizes.reduce((a, b) => a + b, 0);
    const target = Math.floor(this.maxBytes / 2);
    const summaries = new Map<number, IssueSummary>();
    const summaryBytes = new Map<number, number>();
    let folded = 0;
    let fleet: Record<string, unknown> | null = null;
    let i = 0;
    for (; i < records.length; i++) {
      const r = records[i]!;
      if (!(r.ts < cutoff || remaining + folded > target)) break;
      remaining -= sizes[i]!;
      if (r.issue !== undefined) {
        const s = foldRecord(summaries.get(r.issue), r);
        summaries.set(r.issue, s);
        const bytes = SUMMARY_OVERHEAD + Buffer.byteLength(JSON.stringify(s));
        folded += bytes - (summaryBytes.get(r.issue) ?? 0);
        summaryBytes.set(r.issue, bytes);
      } else fleet = foldFleet(fleet, r);
    }
    const kept = records.slice(i);
    const lines: string[] = [];
    if (fleet)
      lines.push(
        JSON.stringify({ ts: String(fleet.last_at), lane: "ledger", level: "info", event: "summary", msg: "fleet records folded by compaction", data: fleet }),
      );
    for (const s of [...summaries.values()].sort((a, b) => a.issue - b.issue)) {
      if (s.last_at < forgotten && !kept.some((r) => r.issue === s.issue)) continue;
      lines.push(
        JSON.stringify({
          ts: s.last_at,
          lane: "ledger",
          level: "info",
          event: "summary",
          msg: `#${s.issue}: ${s.outcome}, ${s.attempts} attempt(s) (compacted)`,
          issue: s.issue,
          data: { ...s },
        }),
      );
    }
    for (const r of kept) lines.push(JSON.stringify(r));
    this.rewrite(lines);
    this.counters.compactions += 1;
    return { folded: i, kept: kept.length, summaries: summaries.size };
  }

  stats(): LedgerStats {
    return { ...this.counters };
  }

  close(): void {
    this.release();
  }

  private open(): number {
    if (this.fd !== null) return this.fd;
    this.repairOnce();
    const fd = openSync(this.path, "a", 0o600);
    this.fd = fd;
    this.size = fstatSync(fd).size;
    return fd;
  }

  private release(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed: nothing to release.
    }
    this.fd = null;
  }

  /** Once per process: a torn or corrupt file is cut back to its good records, with one warning. */
  private repairOnce(): void {
    if (this.checked) return;
    mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
    this.checked = true;
    const text = readQuiet(this.path);
    if (text === "") return;
    const parsed = parseLedger(text);
    const torn = !text.endsWith("\n");
    if (parsed.malformed === 0 && !torn) {
      if (parsed.records.length > 0 && parsed.records[0]!.ts < new Date(this.clock().getTime() - this.maxAgeMs).toISOString()) this.compact();
      return;
    }
    this.counters.repaired += parsed.malformed;
    this.rewrite(parsed.records.map((r) => JSON.stringify(r)));
    this.onWarn(
      `ledger: ${this.path} had ${parsed.malformed} torn or corrupt line(s)${torn ? " (the last one cut short)" : ""}: dropped them and kept the ${parsed.records.length} good record(s)`,
    );
  }

  /** Replaces the file whole (a temporary file, fsynced, renamed over it): a crash leaves the old or the new one. */
  private rewrite(lines: string[]): void {
    this.release();
    writeAtomicSync(this.path, lines.length > 0 ? lines.join("\n") + "\n" : "", { durable: true });
  }
}

/** What compaction keeps of records about no issue: counts per event, the requests their stops spent. */
function foldFleet(prev: Record<string, unknown> | null, r: LaneRecord): Record<string, unknown> {
  const out = prev ?? (r.event === "summary" && r.data ? { ...r.data } : { first_at: r.ts, last_at: r.ts, records: 0, events: {}, requests: 0 });
  if (prev === null && r.event === "summary") return out;
  if (r.event === "summary" && r.data) {
    const events = { ...(out.events as Record<string, number>) };
    for (const [k, v] of Object.entries((r.data.events as Record<string, number>) ?? {})) events[k] = (events[k] ?? 0) + (typeof v === "number" ? v : 0);
    return {
      ...out,
      events,
      records: Number(out.records) + Number(r.data.records ?? 0),
      requests: Number(out.requests) + Number(r.data.requests ?? 0),
      last_at: r.ts,
    };
  }
  const events = { ...(out.events as Record<string, number>) };
  events[r.event] = (events[r.event] ?? 0) + 1;
  const requests = r.event === "stop" && typeof r.data?.requests === "number" ? r.data.requests : 0;
  return { ...out, events, records: Number(out.records) + 1, requests: Number(out.requests) + requests, last_at: r.ts };
}

function readQuiet(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw error;
  }
}

/** The good records of a ledger's text, and how many lines were not records (a torn last line included). */
export function parseLedger(text: string): { records: LaneRecord[]; malformed: number } {
  const records: LaneRecord[] = [];
  let malformed = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const parsed = laneRecord.safeParse(JSON.parse(line));
      if (parsed.success && parsed.data.lane === "ledger") records.push(parsed.data);
      else malformed += 1;
    } catch {
      malformed += 1;
    }
  }
  return { records, malformed };
}

/** Every issue's summary in a ledger's records (summaries written by compaction included), by issue. */
export function issueSummaries(records: readonly LaneRecord[]): IssueSummary[] {
  return [...summarize(records).values()].sort((a, b) => a.issue - b.issue);
}
