// One toolkit for text that comes from outside (worker output, CI logs, issue titles, check
// URLs) and goes somewhere bounded: byte-bounded heads and tails cut on a code point boundary,
// one-line renderings, http(s) URLs fit for a markdown link (never one carrying credentials),
// and terminal escapes stripped.
import { stripVTControlCharacters } from "node:util";

/**
 * C0 controls other than tab and newline, and DEL: terminal escapes and NULs have no business in
 * a prompt, a board or a log line (a carriage return is made a newline before it is applied).
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
export const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

export interface Cut {
  text: string;
  /** Whether anything was cut. */
  cut: boolean;
  /** The whole text's length in bytes. */
  bytes: number;
}

/** The first `maxBytes` of `text` in UTF-8, cut on a code point boundary. */
export function headBytes(text: string, maxBytes: number): Cut {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return { text, cut: false, bytes: buf.length };
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) so no code point is split.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end -= 1;
  return { text: buf.subarray(0, end).toString("utf8"), cut: true, bytes: buf.length };
}

/** The last `maxBytes` of `text` in UTF-8, cut on a code point boundary. */
export function tailBytes(text: string, maxBytes: number): Cut {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return { text, cut: false, bytes: buf.length };
  let start = buf.length - Math.max(0, maxBytes);
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start += 1;
  return { text: buf.subarray(start).toString("utf8"), cut: true, bytes: buf.length };
}

const ELLIPSIS_BYTES = 3; // "…" in UTF-8

/** At most `limit` bytes of the start of `text`; a cut is marked with "…" (within the limit). */
export function clipHead(text: string, limit: number): string {
  if (byteLength(text) <= limit) return text;
  if (limit <= ELLIPSIS_BYTES) return "";
  return `${headBytes(text, limit - ELLIPSIS_BYTES).text}…`;
}

/** At most `limit` bytes of the end of `text`; a cut is marked with "…" (within the limit). */
export function clipTail(text: string, limit: number): string {
  if (byteLength(text) <= limit) return text;
  if (limit <= ELLIPSIS_BYTES) return "";
  return `…${tailBytes(text, limit - ELLIPSIS_BYTES).text}`;
}

/** `text` on one line: control characters gone, whitespace runs one space, at most `max` characters ("…" marks a cut). */
export function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\r\n?/g, "\n").replace(CONTROL_CHARACTERS, " ").replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join("")}…` : flat;
}

/**
 * An http(s) URL safe inside a markdown link target, or null: other schemes, unparsable text,
 * and URLs carrying credentials (`https://user:token@host`) are refused.
 */
export function safeUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return null;
    if (parsed.username || parsed.password) return null;
    return parsed.href.replace(/\(/g, "%28").replace(/\)/g, "%29").replace(/</g, "%3C").replace(/>/g, "%3E");
  } catch {
    return null;
  }
}

/** `text` without terminal escape sequences (colour, cursor moves, OSC titles and links). */
export function stripAnsi(text: string): string {
  return text.includes("\u001b") || text.includes("\u009b") ? stripVTControlCharacters(text) : text;
}
