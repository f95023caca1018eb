// The one place every tool result is bounded. An MCP client keeps a whole JSON-RPC line in
// memory (the SDK's stdio client gives up at 10 MiB and closes the session), so no answer may
// grow with the backlog or a lane. Tools page on their own (status summary and cursor, logs
// cursor); this is the backstop that holds whatever a tool returns to the budget and says so.
import type { CallToolResult } from "@modelcontextprotocol/server";

export interface Budget {
  /** Bytes of the text content (UTF-8). */
  textBytes: number;
  /** Bytes of the structured content as JSON. */
  structuredBytes: number;
}

export const DEFAULT_BUDGET: Budget = { textBytes: 64 * 1024, structuredBytes: 96 * 1024 };

/** What the backstop removed, reported in the text and in `_meta["afk/trimmed"]`. */
export interface Trim {
  path: string;
  kept: number;
  total: number;
  unit: "items" | "characters";
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * The result as it goes to the client: structured content trimmed (largest list or string
 * first) until it fits, the text rendered from what is left, then cut at a line boundary.
 */
export function bound(
  structured: Record<string, unknown> | null,
  render: (s: Record<string, unknown>) => string,
  budget: Budget,
  isError = false,
): CallToolResult {
  const trims: Trim[] = [];
  let content = structured;
  if (content && byteLength(JSON.stringify(content)) > budget.structuredBytes) {
    content = structuredClone(content);
    trimToFit(content, budget.structuredBytes, trims);
  }
  let text = render(content ?? {});
  if (trims.length > 0) {
    text += `\n(answer trimmed to fit ${Math.round(budget.structuredBytes / 1024)} KB: ${trims.map(describeTrim).join("; ")}; ask for less or page with cursor)`;
  }
  text = cutText(text, budget.textBytes);
  return {
    ...(isError ? { isError: true } : {}),
    content: [{ type: "text", text }],
    ...(content ? { structuredContent: content } : {}),
    ...(trims.length > 0 ? { _meta: { "afk/trimmed": trims } } : {}),
  };
}

function describeTrim(t: Trim): string {
  return `${t.path} shows ${t.kept} of ${t.total} ${t.unit}`;
}

/** Cuts `text` to at most `limit` bytes, at a line boundary when one is near, with a marker saying how much was cut. */
export function cutText(text: string, limit: number): string {
  const size = byteLength(text);
  if (size <= limit) return text;
  const marker = (cut: number) => `\n… [${cut} more bytes cut: the answer is limited to ${Math.round(limit / 1024)} KB]`;
  const room = limit - byteLength(marker(size));
  let head = utf8Prefix(text, room);
  const newline = head.lastIndexOf("\n");
  if (newline > room / 2) head = head.slice(0, newline);
  return head + marker(size - byteLength(head));
}

/** The longest prefix of `text` within `bytes` bytes of UTF-8, never splitting a character. */
export function utf8Prefix(text: string, bytes: number): string {
  if (bytes <= 0) return "";
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= bytes) return text;
  let end = bytes;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character start.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

interface Site {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  path: string;
  size: number;
}

/** Halves the largest list (or shortens the longest string) until the JSON fits. */
function trimToFit(root: Record<string, unknown>, limit: number, trims: Trim[]): void {
  for (let round = 0; round < 200 && byteLength(JSON.stringify(root)) > limit; round++) {
    const site = largestSite(root);
    if (!site) return;
    const value = site.holder[site.key as never] as unknown;
    const existing = trims.find((t) => t.path === site.path);
    if (Array.isArray(value)) {
      const total = value.length;
      const kept = Math.floor(total / 2);
      value.length = kept;
      if (existing) existing.kept = kept;
      else trims.push({ path: site.path, kept, total, unit: "items" });
    } else if (typeof value === "string") {
      const over = byteLength(JSON.stringify(root)) - limit;
      const keep = Math.max(0, value.length - Math.max(over + 64, Math.ceil(value.length / 2)));
      (site.holder as Record<string | number, unknown>)[site.key] = `${value.slice(0, keep)}…[cut]`;
      if (existing) existing.kept = keep;
      else trims.push({ path: site.path, kept: keep, total: value.length, unit: "characters" });
    }
  }
}

function largestSite(root: Record<string, unknown>): Site | null {
  let best: Site | null = null;
  const visit = (holder: Record<string, unknown> | unknown[], key: string | number, path: string, value: unknown) => {
    if (Array.isArray(value)) {
      const size = value.length > 0 ? byteLength(JSON.stringify(value)) : 0;
      if (size > 0 && (!best || size > best.size)) best = { holder, key, path, size };
      value.forEach((item, i) => visit(value, i, `${path}[${i}]`, item));
    } else if (typeof value === "string") {
      if (value.length > 256 && (!best || value.length > best.size)) best = { holder, key, path, size: value.length };
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) visit(value as Record<string, unknown>, k, path ? `${path}.${k}` : k, v);
    }
  };
  for (const [k, v] of Object.entries(root)) visit(root, k, k, v);
  return best;
}
