// Appends lane records to `<dir>/<lane>.jsonl`, redacted and bounded, rotating by size.
//
// Why synchronous writes on a held-open O_APPEND descriptor (fs.writeSync), not an async queue:
// - Order is program order, for free: no promise chain to keep serialized, no queue to drain
//   on shutdown, and a record is in the kernel by the time `append` returns, so a host that
//   crashes right after logging still leaves the line on disk (docs/architecture.md, invariant 5).
// - It is cheap: one write(2) of a few hundred bytes (microseconds), not the open+write+close
//   of fs.appendFileSync, and no per-record promise or closure.
// - Memory is bounded by construction: a slow disk slows the caller rather than growing a
//   queue without limit behind a chatty worker.
// O_APPEND also keeps whole lines intact if another process appends to the same file.
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { LANE_NAMES, type LaneEntry, type LaneName } from "../../schemas/lanes.js";
import { DEFAULT_MAX_LINE_BYTES, MIN_MAX_LINE_BYTES, encodeRecord } from "./encode.js";
import { isLaneName, laneFile, laneFileIndex } from "./paths.js";
import { createRedactor, type Redactor } from "../text/redact.js";
import { Ledger } from "./ledger.js";

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const DEFAULT_KEEP = 3;
/** How often a held descriptor is checked against the path (someone else rotated or deleted it). */
const IDENTITY_CHECK_MS = 1000;

export interface LaneWriterOptions {
  /** The project's lane directory (see `laneDir`); created on first append. */
  dir: string;
  /** Rotate a lane file before it would grow past this many bytes. Default 5 MiB. */
  maxBytes?: number;
  /** Rotated files kept per lane (`<lane>.1.jsonl` newest … `<lane>.<keep>.jsonl`). Default 3. */
  keep?: number;
  /** The strings that must never reach the disk (tokens); read on every append. */
  secrets: () => Iterable<string | null | undefined>;
  /** Record timestamps; defaults to the wall clock. */
  clock?: () => Date;
  /** Bound on one line in bytes (msg and data are cut to fit, with a marker). Default 8 KiB. */
  maxLineBytes?: number;
  /** Sees each record as written (redacted, stamped): how the host pushes warnings and ticks to sessions. */
  onRecord?: (lane: LaneName, line: string) => void;
  /** Told about a write that failed (disk full, directory removed). Default: ignore. */
  onError?: (error: Error, lane: LaneName) => void;
  /** The ledger's bounds (ledger.ts); its warnings go to the supervisor lane. */
  ledger?: { maxBytes?: number; maxAgeDays?: number };
}

export interface LaneWriterStats {
  written: number;
  failed: number;
  rotations: number;
}

interface OpenLane {
  fd: number;
  size: number;
  dev: number;
  ino: number;
  checkedAt: number;
}

export class LaneWriter {
  readonly dir: string;
  readonly maxBytes: number;
  readonly keep: number;
  readonly maxLineBytes: number;
  private readonly redactor: Redactor;
  private readonly clock: () => Date;
  private readonly onError: (error: Error, lane: LaneName) => void;
  private readonly onRecord: ((lane: LaneName, line: string) => void) | undefined;
  private readonly open = new Map<LaneName, OpenLane>();
  private readonly pruned = new Set<LaneName>();
  private dirReady = false;
  private ledgerFile: Ledger | null = null;
  private readonly counters: LaneWriterStats = { written: 0, failed: 0, rotations: 0 };

  constructor(options: LaneWriterOptions) {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const keep = options.keep ?? DEFAULT_KEEP;
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (!options.dir) throw new Error("lanes: `dir` is required: pass laneDir(stateDir, owner, name)");
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < MIN_MAX_LINE_BYTES) {
      throw new Error(`lanes: maxLineBytes ${maxLineBytes} is too small: use at least ${MIN_MAX_LINE_BYTES}`);
    }
    if (!Number.isSafeInteger(maxBytes) || maxBytes < maxLineBytes + 1) {
      throw new Error(`lanes: maxBytes ${maxBytes} must be an integer of at least one line (${maxLineBytes + 1} bytes)`);
    }
    if (!Number.isSafeInteger(keep) || keep < 0 || keep > 100) {
      throw new Error(`lanes: keep ${keep} must be an integer from 0 to 100 (rotated files per lane)`);
    }
    this.dir = options.dir;
    this.maxBytes = maxBytes;
    this.keep = keep;
    this.maxLineBytes = maxLineBytes;
    this.redactor = createRedactor(options.secrets);
    this.clock = options.clock ?? (() => new Date());
    this.onError = options.onError ?? (() => {});
    this.onRecord = options.onRecord;
    this.ledgerBounds = options.ledger ?? {};
  }

  private readonly ledgerBounds: { maxBytes?: number; maxAgeDays?: number };

  /** The project's ledger, beside its lanes, redacted like them; its warnings go to the supervisor lane. */
  ledger(): Ledger {
    this.ledgerFile ??= new Ledger({
      dir: this.dir,
      redactor: this.redactor,
      clock: this.clock,
      maxLineBytes: this.maxLineBytes,
      ...this.ledgerBounds,
      onWarn: (message) => this.append("supervisor", { level: "warn", event: "ledger_repaired", msg: message }),
    });
    return this.ledgerFile;
  }

  /** `text` as a lane would keep it: the configured secrets and the credential shapes we know replaced. */
  redact(text: string): string {
    return this.redactor.pass().text(text);
  }

  /**
   * Writes one record to `lane`, stamped with the clock. Never throws for I/O: a failed write
   * is counted and reported to `onError`, and the next append reopens the file.
   */
  append(lane: LaneName, entry: LaneEntry): void {
    if (!isLaneName(lane)) throw new TypeError(`lanes: unknown lane ${JSON.stringify(lane)}: expected one of ${LANE_NAMES.join(", ")}`);
    if (lane === "ledger") throw new TypeError("lanes: the ledger is not a rotating lane: write to it with ledger().record()");
    let ts: string;
    try {
      ts = this.clock().toISOString();
    } catch {
      ts = new Date().toISOString();
    }
    const line = encodeRecord(lane, entry, ts, { redactor: this.redactor, maxLineBytes: this.maxLineBytes }) + "\n";
    const bytes = Buffer.from(line, "utf8");
    try {
      let file = this.file(lane);
      if (file.size > 0 && file.size + bytes.length > this.maxBytes) {
        this.rotate(lane);
        file = this.file(lane);
      }
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(file.fd, bytes, offset, bytes.length - offset);
      file.size += bytes.length;
      this.counters.written += 1;
      this.onRecord?.(lane, line);
    } catch (error) {
      this.counters.failed += 1;
      this.release(lane);
      this.onError(error instanceof Error ? error : new Error(String(error)), lane);
    }
  }

  /** Counts since this writer was opened. */
  stats(): LaneWriterStats {
    return { ...this.counters };
  }

  /** Releases the file descriptors. A later append reopens its file. */
  close(): void {
    for (const lane of [...this.open.keys()]) this.release(lane);
    this.ledgerFile?.close();
  }

  private file(lane: LaneName): OpenLane {
    const now = Date.now();
    const held = this.open.get(lane);
    if (held) {
      if (now - held.checkedAt < IDENTITY_CHECK_MS) return held;
      held.checkedAt = now;
      if (this.stillCurrent(lane, held)) return held;
      this.release(lane);
    }
    if (!this.dirReady) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.dirReady = true;
    }
    if (!this.pruned.has(lane)) {
      this.pruned.add(lane);
      this.prune(lane);
    }
    const fd = openSync(laneFile(this.dir, lane), "a", 0o600);
    const st = fstatSync(fd);
    const opened: OpenLane = { fd, size: st.size, dev: st.dev, ino: st.ino, checkedAt: now };
    this.open.set(lane, opened);
    return opened;
  }

  /** False when the path now names another file (rotated by another writer) or none (deleted). */
  private stillCurrent(lane: LaneName, held: OpenLane): boolean {
    try {
      const st = statSync(laneFile(this.dir, lane));
      return st.ino === held.ino && st.dev === held.dev;
    } catch {
      return false;
    }
  }

  private release(lane: LaneName): void {
    const held = this.open.get(lane);
    this.open.delete(lane);
    if (!held) return;
    try {
      closeSync(held.fd);
    } catch {
      // Already closed or invalid: nothing left to release.
    }
  }

  /** worker.jsonl → worker.1.jsonl → … → worker.<keep>.jsonl; the oldest is overwritten by rename. */
  private rotate(lane: LaneName): void {
    this.release(lane);
    this.counters.rotations += 1;
    if (this.keep === 0) {
      unlinkQuiet(laneFile(this.dir, lane));
      return;
    }
    for (let i = this.keep - 1; i >= 0; i -= 1) {
      try {
        renameSync(laneFile(this.dir, lane, i), laneFile(this.dir, lane, i + 1));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }

  /** Drops rotated files beyond `keep`, left by an earlier run with a larger `keep`. */
  private prune(lane: LaneName): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const index = laneFileIndex(name, lane);
      if (index !== null && index > this.keep) unlinkQuiet(join(this.dir, name));
    }
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** Opens the lanes of one project directory. Files are opened lazily, on a lane's first append. */
export function openLanes(options: LaneWriterOptions): LaneWriter {
  return new LaneWriter(options);
}
