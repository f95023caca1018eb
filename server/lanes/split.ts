// Splits a worker's stdout/stderr chunks into lines for the `worker` lane: chunks end anywhere
// (mid-line, mid-"\r\n", mid-UTF-8 character), and one line must not grow without bound.
import { StringDecoder } from "node:string_decoder";
import { stripAnsi } from "../text/text.js";
import { truncationMarker } from "./encode.js";

export const DEFAULT_MAX_LINE_LENGTH = 8 * 1024;

export interface LineSplitterOptions {
  /** Longer lines keep their first `maxLineLength` characters and a marker. Default 8192. */
  maxLineLength?: number;
  /** Remove ANSI colour and cursor sequences. Default true. */
  stripAnsi?: boolean;
}

export interface LineSplitter {
  /** The lines this chunk completes (possibly none). */
  push(chunk: Buffer | Uint8Array | string): string[];
  /** The unterminated last line, if any; call once when the stream ends. */
  flush(): string[];
}

/**
 * Line breaks are "\n", "\r\n" and a lone "\r" (a progress bar's redraw). A "\r" that ends a
 * chunk ends its line at once; a "\n" opening the next chunk is then swallowed, not read as
 * an empty line. Over-long lines are cut, not split: a 10 MB minified blob becomes one marked
 * line, and the dropped part is only counted, so memory stays bounded by `maxLineLength`.
 */
export function lineSplitter(options: LineSplitterOptions = {}): LineSplitter {
  const max = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  if (!Number.isInteger(max) || max < 1) throw new Error(`lineSplitter: maxLineLength ${max} must be a positive integer`);
  const strip = options.stripAnsi ?? true;
  const decoder = new StringDecoder("utf8");
  let current = "";
  let dropped = 0;
  let afterCR = false;

  const add = (text: string): void => {
    if (text.length === 0) return;
    const room = max - current.length;
    if (text.length <= room) {
      current += text;
      return;
    }
    let keep = room;
    // Do not keep half of a surrogate pair.
    if (keep > 0) {
      const last = text.charCodeAt(keep - 1);
      if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
    }
    current += text.slice(0, keep);
    dropped += text.length - keep;
  };

  const take = (out: string[]): void => {
    let line = strip && current.includes("\x1b") ? stripAnsi(current) : current;
    if (dropped > 0) line += truncationMarker(dropped);
    out.push(line);
    current = "";
    dropped = 0;
  };

  const feed = (text: string, out: string[]): void => {
    let i = 0;
    if (afterCR && text.length > 0) {
      afterCR = false;
      if (text.charCodeAt(0) === 0x0a) i = 1;
    }
    while (i < text.length) {
      let j = i;
      while (j < text.length) {
        const c = text.charCodeAt(j);
        if (c === 0x0a || c === 0x0d) break;
        j += 1;
      }
      add(text.slice(i, j));
      if (j === text.length) return;
      take(out);
      if (text.charCodeAt(j) === 0x0d) {
        if (j + 1 === text.length) afterCR = true;
        else if (text.charCodeAt(j + 1) === 0x0a) j += 1;
      }
      i = j + 1;
    }
  };

  return {
    push(chunk) {
      const out: string[] = [];
      feed(typeof chunk === "string" ? chunk : decoder.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)), out);
      return out;
    },
    flush() {
      const out: string[] = [];
      feed(decoder.end(), out);
      if (current.length > 0 || dropped > 0) take(out);
      afterCR = false;
      return out;
    },
  };
}
