// Turns what a caller hands to `append` into one JSONL line: fields normalised (the writer
// never throws on a hot path), every string redacted, and the line held to a byte bound.
import { LANE_EVENT_PATTERN, LANE_LEVELS, type LaneEntry, type LaneLevel, type LaneName } from "../../schemas/lanes.js";
import { REDACTED, isSensitiveKey, type RedactionPass, type Redactor } from "../text/redact.js";

/** The default bound on one serialized line, newline excluded. */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024;
/** Smaller bounds leave no room for the fixed fields. */
export const MIN_MAX_LINE_BYTES = 1024;

const MAX_DEPTH = 6;
const MAX_KEYS = 100;
const MAX_ITEMS = 100;
const MAX_INSTANCE = 128;

export function truncationMarker(dropped: number): string {
  return `…[truncated ${dropped} chars]`;
}

/** The bytes `ch` (one UTF-16 unit, or a surrogate pair starting at it) costs inside a JSON string. */
function jsonCost(text: string, i: number): [bytes: number, units: number] {
  const c = text.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return [2, 1];
  if (c < 0x20) return [c === 0x0a || c === 0x0d || c === 0x09 || c === 0x08 || c === 0x0c ? 2 : 6, 1];
  if (c < 0x80) return [1, 1];
  if (c < 0x800) return [2, 1];
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return [4, 2];
    return [6, 1];
  }
  if (c >= 0xdc00 && c <= 0xdfff) return [6, 1];
  return [3, 1];
}

/**
 * `text` cut so that, as a JSON string body with the marker, it costs at most `maxBytes`
 * bytes. Never splits a surrogate pair. Returns `text` itself when it already fits.
 */
export function cutToJsonBytes(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const [b, u] = jsonCost(text, i);
    if (bytes + b > maxBytes) break;
    bytes += b;
    i += u;
  }
  if (i >= text.length) return text;
  // Back off until the marker fits too (it is ASCII apart from the ellipsis, 3 bytes).
  for (;;) {
    const marker = truncationMarker(text.length - i);
    const markerBytes = Buffer.byteLength(marker);
    if (bytes + markerBytes <= maxBytes || i === 0) return text.slice(0, i) + marker;
    const back = text.charCodeAt(i - 1) >= 0xdc00 && text.charCodeAt(i - 1) <= 0xdfff && i >= 2 ? 2 : 1;
    i -= back;
    bytes -= jsonCost(text, i)[0];
  }
}

interface Context {
  redactor: RedactionPass;
  /** Strings longer than this are cut (after redaction) before the line is assembled. */
  maxString: number;
}

/**
 * Redacts, then cuts. Redacting a string of megabytes on every append would be a hot-path
 * cost, so very long text is first cut with a margin wider than any secret: a secret that
 * straddles the first cut lies wholly beyond the second and is dropped with it.
 */
function cleanString(text: string, ctx: Context): string {
  const margin = Math.max(512, ctx.redactor.longest + 16);
  const window = text.length > ctx.maxString + margin ? text.slice(0, ctx.maxString + margin) : text;
  const clean = ctx.redactor.text(window);
  const dropped = text.length - window.length;
  if (clean.length <= ctx.maxString && dropped === 0) return clean;
  let keep = Math.min(clean.length, ctx.maxString);
  const last = clean.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
  const removed = clean.length - keep + dropped;
  return removed > 0 ? clean.slice(0, keep) + truncationMarker(removed) : clean;
}

/** A JSON-safe, redacted copy of an arbitrary value (bigints, errors, cycles and depth handled). */
function cleanValue(value: unknown, ctx: Context, depth: number, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case "string":
      return cleanString(value, ctx);
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "boolean":
      return value;
    case "bigint":
      return value.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return null;
  const obj = value as object;
  if (ancestors.has(obj)) return "[circular]";
  if (depth >= MAX_DEPTH) return "[depth limit]";
  if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? "Invalid Date" : obj.toISOString();
  if (obj instanceof Uint8Array) return `[binary ${obj.byteLength} bytes]`;
  ancestors.add(obj);
  try {
    if (obj instanceof Error) {
      const err = obj as Error & { code?: unknown; status?: unknown };
      const out: Record<string, unknown> = { name: cleanString(err.name, ctx), message: cleanString(err.message, ctx) };
      if (err.code !== undefined) out.code = cleanValue(err.code, ctx, depth + 1, ancestors);
      if (err.status !== undefined) out.status = cleanValue(err.status, ctx, depth + 1, ancestors);
      return out;
    }
    if (Array.isArray(obj) || obj instanceof Set) {
      const items = Array.isArray(obj) ? obj : [...obj];
      const out = items.slice(0, MAX_ITEMS).map((item) => {
        const v = cleanValue(item, ctx, depth + 1, ancestors);
        return v === undefined ? null : v;
      });
      if (items.length > MAX_ITEMS) out.push(`[+${items.length - MAX_ITEMS} more]`);
      return out;
    }
    // URL and friends serialise through toJSON; honour it as JSON.stringify would.
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function" && !(obj instanceof Map)) {
      return cleanValue(toJSON.call(obj), ctx, depth + 1, ancestors);
    }
    const entries: Array<[unknown, unknown]> = obj instanceof Map ? [...obj.entries()] : Object.entries(obj);
    const out: Record<string, unknown> = {};
    let count = 0;
    for (const [rawKey, item] of entries) {
      if (count === MAX_KEYS) {
        out["[more keys]"] = entries.length - MAX_KEYS;
        break;
      }
      const key = cleanString(String(rawKey), ctx);
      const v = isSensitiveKey(key) && item !== null && item !== undefined && item !== "" ? REDACTED : cleanValue(item, ctx, depth + 1, ancestors);
      if (v !== undefined) {
        out[key] = v;
        count += 1;
      }
    }
    return out;
  } finally {
    ancestors.delete(obj);
  }
}

function normaliseEvent(event: unknown): string {
  if (typeof event === "string" && LANE_EVENT_PATTERN.test(event)) return event;
  let name = String(event ?? "")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^[^a-z]+/, "")
    .slice(0, 64);
  if (name === "") name = "event";
  return name;
}

function positiveInt(value: unknown, allowZero: boolean): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && (allowZero ? value >= 0 : value > 0) ? value : undefined;
}

export interface EncodeOptions {
  redactor: Redactor;
  maxLineBytes: number;
}

/**
 * One lane line (no trailing newline), at most `maxLineBytes` bytes of UTF-8. Field order is
 * fixed so lines read well with `tail -f`. Invalid optional numbers are dropped rather than
 * thrown on: a log call must never take the caller down.
 */
export function encodeRecord(lane: LaneName, entry: LaneEntry, ts: string, options: EncodeOptions): string {
  const { maxLineBytes } = options;
  const redactor = options.redactor.pass();
  const ctx: Context = { redactor, maxString: maxLineBytes };
  const level: LaneLevel = (LANE_LEVELS as readonly string[]).includes(entry.level as string) ? (entry.level as LaneLevel) : "info";
  const record: Record<string, unknown> = {
    ts,
    lane,
    level,
    event: normaliseEvent(entry.event),
    msg: cleanString(typeof entry.msg === "string" ? entry.msg : String(entry.msg ?? ""), ctx),
  };
  const issue = positiveInt(entry.issue, false);
  if (issue !== undefined) record.issue = issue;
  if (typeof entry.instance === "string") record.instance = cleanString(entry.instance, { redactor, maxString: MAX_INSTANCE });
  const attempt = positiveInt(entry.attempt, true);
  if (attempt !== undefined) record.attempt = attempt;
  const pid = positiveInt(entry.pid, false);
  if (pid !== undefined) record.pid = pid;
  const run = positiveInt(entry.run, false);
  if (run !== undefined) record.run = run;
  if (entry.data !== undefined && entry.data !== null) {
    const data = cleanValue(entry.data, ctx, 0, new Set());
    if (data !== undefined) record.data = typeof data === "object" && data !== null && !Array.isArray(data) ? data : { value: data };
  }

  let line = JSON.stringify(record);
  if (line.length * 3 > maxLineBytes && Buffer.byteLength(line) > maxLineBytes) line = shrink(record, maxLineBytes);
  // Last line of defence: a configured secret that survived string-wise redaction (it can only
  // straddle JSON structure, e.g. digits of a number) costs the record, never the secret.
  if (redactor.leaks(line)) {
    line = JSON.stringify({
      ts,
      lane,
      level: "warn",
      event: "record_withheld",
      // Nothing of the original record is repeated here: any field of it might be the leak.
      msg: "a record still matched a configured secret after redaction and was not written",
    });
  }
  return line;
}

/** Cuts `msg` to half the bound, then `data` to what is left, as a string preview. */
function shrink(record: Record<string, unknown>, maxLineBytes: number): string {
  record.truncated = true;
  const msg = record.msg as string;
  record.msg = cutToJsonBytes(msg, Math.floor(maxLineBytes / 2));
  const data = record.data;
  if (data !== undefined) {
    delete record.data;
    const rest = Buffer.byteLength(JSON.stringify(record));
    // `"data":{"preview":""},` costs about 24 bytes around the preview itself.
    const budget = maxLineBytes - rest - 32;
    if (budget >= 64) record.data = { preview: cutToJsonBytes(JSON.stringify(data), budget) };
    // Keep `truncated` last, where a reader's eye expects the marker.
    delete record.truncated;
    record.truncated = true;
  }
  let line = JSON.stringify(record);
  if (Buffer.byteLength(line) > maxLineBytes) {
    // Only a tiny bound gets here: keep the fixed fields and as much of msg as still fits.
    delete record.data;
    record.msg = "";
    const rest = Buffer.byteLength(JSON.stringify(record));
    record.msg = cutToJsonBytes(msg, Math.max(0, maxLineBytes - rest));
    line = JSON.stringify(record);
  }
  return line;
}
