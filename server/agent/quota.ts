// Usage limits, expired logins, refusals and lost networks in a worker's output (docs/architecture.md,
// runtime lesson 7): recognise the message, work out when the limit resets, and pause births until then.
// Each is a pause, not a failure: it spends no attempt and trips no breaker.
//
// The messages themselves are config (`worker.quota_patterns`, `auth_patterns`,
// `refusal_patterns`, `network_patterns`); the reset-time forms every runtime prints are here,
// one parser each, table-tested.
import { stripAnsi } from "../text/text.js";

/**
 * quota: a usage limit (births resume at its reset); auth: a missing or expired login; refusal:
 * the runtime will not run as configured (bypass mode as root); network: it cannot reach its
 * API and retries in a loop (births resume after a backoff).
 */
export type QuotaKind = "quota" | "auth" | "refusal" | "network";
export type AgentRuntime = "claude" | "codex" | "gemini" | "cursor" | "aider" | "unknown";

export interface QuotaDetection {
  kind: QuotaKind;
  runtime: AgentRuntime;
  /** When the limit lifts, if the message says; null: unknown (back off). Always null for auth. */
  resetAt: Date | null;
  /** The matching line, without terminal escapes, bounded. */
  text: string;
  /** Set by QuotaScanner when a later line supplied the reset time of an earlier detection. */
  refined?: boolean;
}

export interface QuotaMatchers {
  quotaPatterns: readonly string[];
  authPatterns: readonly string[];
  refusalPatterns?: readonly string[];
  networkPatterns?: readonly string[];
  /** IANA zone for times printed without one. Default: the host's zone. */
  localTimeZone?: string;
}

const TEXT_MAX = 500;
const LINE_SCAN_MAX = 64 * 1024;

// ---- matching ----------------------------------------------------------------------------------

const compiled = new Map<string, RegExp[]>();

function regexes(patterns: readonly string[]): RegExp[] {
  const cacheKey = patterns.join("\u0000");
  let list = compiled.get(cacheKey);
  if (!list) {
    list = [];
    for (const source of patterns) {
      try {
        list.push(new RegExp(source, "i"));
      } catch {
        // The config schema validates patterns; one that slips through matches nothing.
      }
    }
    if (compiled.size > 64) compiled.clear();
    compiled.set(cacheKey, list);
  }
  return list;
}

export { stripAnsi };

// Structured (JSON-lines) events that carry what the agent read or said rather than what the
// runtime reports: tool results (file contents, command output), model text, codex items. An
// agent reading a file that quotes a limit message — this repository's own tests — must not
// pause the fleet.
const ECHO_TYPES = new Set(["user", "tool_use", "tool_result", "tool_call", "text", "reasoning", "thinking", "stream_event", "message"]);

function echoedContent(line: string): boolean {
  const t = line.trimStart();
  if (!t.startsWith("{")) return false;
  let value: unknown;
  try {
    value = JSON.parse(t);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null) return false;
  const event = value as Record<string, unknown>;
  const type = event.type;
  if (typeof type !== "string") return false;
  if (type.startsWith("item.")) return true; // codex --json: the agent's commands, edits, messages
  if (type === "assistant") {
    // Claude Code reports a usage limit as a synthetic assistant message; real model text is echo.
    const message = event.message as Record<string, unknown> | undefined;
    return message?.model !== "<synthetic>";
  }
  if (type === "message") {
    return event.role === "user" || event.role === "assistant";
  }
  return ECHO_TYPES.has(type);
}

/**
 * The words of a JSON event a CLI printed (Claude Code's result and synthetic message, Codex's
 * error events): what a pause reason should quote, instead of the event's envelope.
 */
export function eventWords(line: string): string {
  const t = line.trimStart();
  if (!t.startsWith("{")) return line;
  try {
    const event = JSON.parse(t) as Record<string, unknown>;
    if (typeof event.result === "string" && event.result.trim() !== "") return event.result;
    const message = event.message as { content?: Array<{ type?: string; text?: string }> } | string | undefined;
    if (typeof message === "string") return message;
    const texts = (message?.content ?? []).filter((c) => c.type === "text" && typeof c.text === "string").map((c) => c.text!);
    if (texts.length > 0) return texts.join(" ");
    const error = event.error as { message?: unknown } | undefined;
    if (typeof error?.message === "string") return error.message;
  } catch {
    // not JSON after all
  }
  return line;
}

/** Which CLI printed it, from its wording. Codex and cursor share "You've hit your usage limit". */
export function inferRuntime(text: string): AgentRuntime {
  if (/litellm|retryDelay|aider|API provider is not able/i.test(text)) return "aider";
  if (
    /dangerously-skip-permissions|"subtype"\s*:\s*"api_retry"|Failed to authenticate\. API Error|API Error: Request rejected \(\d{3}\)|hit your session limit/i.test(
      text,
    )
  )
    return "claude";
  if (/Reconnecting\.\.\.|unexpected status \d{3}|responses_websocket/i.test(text)) return "codex";
  if (/set an Auth method|PERMISSION_DENIED|UNAUTHENTICATED|Retrying with backoff/i.test(text)) return "gemini";
  if (/\[unauthenticated\]|(?:cursor-agent|\bagent) login/i.test(text)) return "cursor";
  if (/claude|anthropic|rate_limit_event|\/login\b/i.test(text)) return "claude";
  if (/[∙·•]\s*resets\b|hit your (?:weekly )?limit\b/i.test(text)) return "claude";
  if (/monthly cycle|cursor/i.test(text)) return "cursor";
  if (/gemini|exhausted your (?:capacity|daily quota)|access resets at|quota will reset after|RESOURCE_EXHAUSTED/i.test(text)) return "gemini";
  if (/codex|openai|upgrade to (?:pro|plus)|try again (?:at|in|later)|quota exceeded\. check your plan|is at capacity/i.test(text)) return "codex";
  return "unknown";
}

/**
 * One line of worker output → a usage-limit, login, refusal or network problem, or null. Those
 * that need an operator are tried first (the stronger signal): a Codex 401 arrives inside a
 * "Reconnecting..." line, and is a login problem, not a network one.
 */
export function detectQuota(line: string, matchers: QuotaMatchers, now: Date): QuotaDetection | null {
  const text = stripAnsi(line.length > LINE_SCAN_MAX ? line.slice(0, LINE_SCAN_MAX) : line);
  const order: [QuotaKind, readonly string[] | undefined][] = [
    ["auth", matchers.authPatterns],
    ["refusal", matchers.refusalPatterns],
    ["quota", matchers.quotaPatterns],
    ["network", matchers.networkPatterns],
  ];
  const kind = order.find(([, patterns]) => patterns !== undefined && regexes(patterns).some((re) => re.test(text)))?.[0];
  if (kind === undefined) return null;
  if (echoedContent(text)) return null;
  const shown = eventWords(text).trim();
  return {
    kind,
    runtime: inferRuntime(text),
    resetAt: kind === "quota" ? parseResetTime(text, now, matchers.localTimeZone) : null,
    text: shown.length > TEXT_MAX ? `${shown.slice(0, TEXT_MAX)}…` : shown,
  };
}

// ---- reset times -------------------------------------------------------------------------------

type Zone = { iana: string } | { offsetMinutes: number };

/** Zone abbreviations the runtimes print (Gemini: "2:55 PM PST"). Fixed offsets: PST is -8 even in July. */
const ABBREVIATIONS: Readonly<Record<string, number>> = {
  UTC: 0,
  GMT: 0,
  WET: 0,
  WEST: 60,
  BST: 60,
  CET: 60,
  CEST: 120,
  EET: 120,
  EEST: 180,
  MSK: 180,
  IST: 330,
  SGT: 480,
  HKT: 480,
  AWST: 480,
  JST: 540,
  KST: 540,
  ACST: 570,
  ACDT: 630,
  AEST: 600,
  AEDT: 660,
  NZST: 720,
  NZDT: 780,
  HST: -600,
  AKST: -540,
  AKDT: -480,
  PST: -480,
  PDT: -420,
  MST: -420,
  MDT: -360,
  CST: -360,
  CDT: -300,
  EST: -300,
  EDT: -240,
};

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(zone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    } catch {
      return null; // not a zone this runtime knows
    }
    formatters.set(zone, f);
  }
  return f;
}

function hostZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** An IANA name (validated), a known abbreviation, or null. */
function zoneFrom(name: string | undefined): Zone | null {
  if (name === undefined) return null;
  const trimmed = name.trim();
  const offset = ABBREVIATIONS[trimmed.toUpperCase()];
  if (offset !== undefined && trimmed === trimmed.toUpperCase()) return { offsetMinutes: offset };
  if (/^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)+$|^UTC$|^Etc\//.test(trimmed) && formatter(trimmed) !== null) return { iana: trimmed };
  return null;
}

function localZone(localTimeZone: string | undefined): Zone {
  const name = localTimeZone ?? hostZone();
  return formatter(name) !== null ? { iana: name } : { iana: "UTC" };
}

interface CivilDate {
  y: number;
  mo: number; // 1-12
  d: number;
}

/** Milliseconds to add to UTC to get the zone's wall clock, at instant `ms`. */
function offsetMs(zone: Zone, ms: number): number {
  if ("offsetMinutes" in zone) return zone.offsetMinutes * 60_000;
  const parts = formatter(zone.iana)!.formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour") % 24, get("minute"), get("second"));
  return wall - Math.floor(ms / 1000) * 1000;
}

function civilDateAt(zone: Zone, ms: number): CivilDate {
  const wall = new Date(ms + offsetMs(zone, ms));
  return { y: wall.getUTCFullYear(), mo: wall.getUTCMonth() + 1, d: wall.getUTCDate() };
}

/** The instant at which the zone's wall clock reads the given date and time. */
function instantOf(zone: Zone, date: CivilDate, hour: number, minute: number): number {
  const guess = Date.UTC(date.y, date.mo - 1, date.d, hour, minute);
  const first = guess - offsetMs(zone, guess);
  const second = guess - offsetMs(zone, first);
  return second;
}

function addDays(date: CivilDate, days: number): CivilDate {
  const t = new Date(Date.UTC(date.y, date.mo - 1, date.d + days));
  return { y: t.getUTCFullYear(), mo: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

function monthIndex(name: string | undefined): number | null {
  if (name === undefined) return null;
  const i = MONTHS.indexOf(name.slice(0, 3).toLowerCase());
  return i < 0 ? null : i + 1;
}

function epoch(value: string): Date {
  const n = Number(value);
  return new Date(n >= 1e12 ? n : n * 1000);
}

const MONTH_RE = "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?";
// "resets 5pm (Europe/Warsaw)", "reset at 5pm", "resets Oct 31, 9am", "resets Jun 7, 4pm (Europe/Rome)",
// "try again at 7:10 AM.", "try again at Sep 19th, 2026 7:10 AM.", "Access resets at 2:55 PM PST."
const CLOCK_RE = new RegExp(
  `\\b(?:resets?|try again)\\s+(?:at\\s+)?` +
    `(?:${MONTH_RE}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(?:(\\d{4}),?\\s+)?(?:at\\s+)?)?` +
    `(\\d{1,2})(?::(\\d{2}))?\\s*(?:([ap])\\.?m\\b\\.?)?` +
    `(?:\\s*\\(([^)]{1,64})\\)|\\s+([A-Za-z]{2,5})\\b)?`,
  "i",
);
const DURATION_UNIT = "(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)";
const DURATION_RE = new RegExp(
  `(?:try again in|retry in|retry after|resets? in|reset after|"retryDelay"\\s*:\\s*")\\s*` +
    `((?:\\d+(?:\\.\\d+)?\\s*${DURATION_UNIT}(?![a-z])[\\s,]*(?:and\\s+)?)+)`,
  "i",
);
const CYCLE_DATE_RE = /\b(?:ends|resets?|renews?)\s+on\s+(\d{1,2})\/(\d{1,2})\/(\d{4})\b/i;
const RETRY_AFTER_RE = /\bretry-after:\s*(\d{1,7})\b/i;

/** Seconds in "5 days 22 hours 11 minutes", "8h44m7s", "5m", "44s", "43.6s"; null if none. */
export function parseDuration(text: string): number | null {
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/gi;
  let seconds = 0;
  let any = false;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const n = Number(m[1]);
    const unit = m[2]!.toLowerCase();
    const scale = /^d(?:ays?)?$/.test(unit)
      ? 86_400
      : /^h(?:ours?|rs?)?$/.test(unit)
        ? 3_600
        : /^m(?:in(?:ute)?s?)?$/.test(unit)
          ? 60
          : /^s(?:ec(?:ond)?s?)?$/.test(unit)
            ? 1
            : null;
    if (scale === null) continue;
    seconds += n * scale;
    any = true;
  }
  return any ? seconds : null;
}

/**
 * When a usage limit lifts, from any form the agent runtimes print; null when the text does not say
 * ("try again later"). Wall-clock times are read in the zone the text names (an IANA name in
 * parentheses, or an abbreviation such as PST), else in `localTimeZone` (default: the host's).
 * A time of day already past is tomorrow's; a month and day already past, next year's.
 */
export function parseResetTime(text: string, now: Date, localTimeZone?: string): Date | null {
  const nowMs = now.getTime();
  const epochMatch = /\|\s*(\d{9,13})(?!\d)/.exec(text) ?? /"resets_?at"\s*:\s*"?(\d{9,13})(?!\d)/i.exec(text);
  if (epochMatch) return epoch(epochMatch[1]!);

  const clock = CLOCK_RE.exec(text);
  if (clock) {
    const [, monthName, dayText, yearText, hourText, minuteText, meridiem, parenZone, abbreviation] = clock;
    // A bare number ("resets 5 ...") is not a time: need am/pm or minutes.
    if (meridiem !== undefined || minuteText !== undefined) {
      let hour = Number(hourText);
      const minute = minuteText === undefined ? 0 : Number(minuteText);
      if (meridiem !== undefined) {
        if (hour < 1 || hour > 12) return null;
        hour = (hour % 12) + (meridiem.toLowerCase() === "p" ? 12 : 0);
      }
      if (hour > 23 || minute > 59) return null;
      const zone = zoneFrom(parenZone) ?? zoneFrom(abbreviation) ?? localZone(localTimeZone);
      const month = monthIndex(monthName);
      if (month !== null) {
        const day = Number(dayText);
        const today = civilDateAt(zone, nowMs);
        let date: CivilDate = { y: yearText !== undefined ? Number(yearText) : today.y, mo: month, d: day };
        let at = instantOf(zone, date, hour, minute);
        if (yearText === undefined && at <= nowMs) {
          date = { ...date, y: date.y + 1 };
          at = instantOf(zone, date, hour, minute);
        }
        return new Date(at);
      }
      const today = civilDateAt(zone, nowMs);
      let at = instantOf(zone, today, hour, minute);
      if (at <= nowMs) at = instantOf(zone, addDays(today, 1), hour, minute);
      return new Date(at);
    }
  }

  const cycle = CYCLE_DATE_RE.exec(text);
  if (cycle) {
    const zone = localZone(localTimeZone);
    return new Date(instantOf(zone, { y: Number(cycle[3]), mo: Number(cycle[1]), d: Number(cycle[2]) }, 0, 0));
  }

  const duration = DURATION_RE.exec(text);
  if (duration) {
    const seconds = parseDuration(duration[1]!);
    if (seconds !== null) return new Date(nowMs + Math.round(seconds * 1000));
  }

  const retryAfter = RETRY_AFTER_RE.exec(text);
  if (retryAfter) return new Date(nowMs + Number(retryAfter[1]) * 1000);
  return null;
}

// ---- pausing births ----------------------------------------------------------------------------

export interface QuotaPause {
  /** Births stay paused until then; null: until an operator acts (an expired login). */
  until: Date | null;
  /** "reset": the message's reset time; "backoff": it gave none (or one already past); "capped": the reset is further than `maxPauseSeconds`; "operator": auth. */
  basis: "reset" | "backoff" | "capped" | "operator";
  resetAt: Date | null;
}

export interface QuotaPauseOptions {
  /** The pause when the message gives no usable reset time. */
  backoffSeconds: number;
  /** No pause is longer than this (a misread year must not park the fleet for a year). Default 8 days. */
  maxPauseSeconds?: number;
  /** How many detections in a row without a successful run: the backoff doubles each time. Default 1. */
  consecutive?: number;
  /** Added after a reset time: the limit lifts at the provider, not on our clock. Default 60 s. */
  slackSeconds?: number;
}

export const DEFAULT_MAX_PAUSE_SECONDS = 8 * 86_400;

/** How long births stay paused after a detection. Pure. */
export function quotaPause(detection: QuotaDetection, now: Date, opts: QuotaPauseOptions): QuotaPause {
  if (detection.kind === "auth" || detection.kind === "refusal") return { until: null, basis: "operator", resetAt: null };
  const nowMs = now.getTime();
  const max = (opts.maxPauseSeconds ?? DEFAULT_MAX_PAUSE_SECONDS) * 1000;
  const reset = detection.resetAt;
  if (reset !== null && reset.getTime() > nowMs) {
    const until = reset.getTime() + (opts.slackSeconds ?? 60) * 1000;
    if (until - nowMs > max) return { until: new Date(nowMs + max), basis: "capped", resetAt: reset };
    return { until: new Date(until), basis: "reset", resetAt: reset };
  }
  const doublings = Math.min(Math.max(0, Math.floor(opts.consecutive ?? 1) - 1), 20);
  const backoff = Math.min(opts.backoffSeconds * 1000 * 2 ** doublings, max);
  return { until: new Date(nowMs + backoff), basis: "backoff", resetAt: reset };
}

/** See QuotaScanner: Codex gives up after 5 reconnects, Claude Code after 10 retries. */
export const NETWORK_REPEATS = 3;

// ---- several lines -----------------------------------------------------------------------------

/**
 * Runs `detectQuota` over a worker's output, one line at a time, and remembers a detection that
 * gave no reset time for the next few lines: aider and other litellm runtimes print the error on
 * one line and the provider's `"retryDelay": "44s"` a few lines further into its JSON body.
 */
export class QuotaScanner {
  private pending: { detection: QuotaDetection; linesLeft: number } | null = null;
  private networkLines = 0;

  constructor(
    private readonly matchers: QuotaMatchers,
    private readonly lookahead = 20,
    /** Network lines before it counts as an outage: each runtime retries a blip by itself. */
    private readonly networkRepeats = NETWORK_REPEATS,
  ) {}

  /**
   * A new detection, a refinement of the last one (`refined: true`), or null — also for a line
   * that repeats a detection still waiting for its reset time (one error, one event).
   */
  push(line: string, now: Date): QuotaDetection | null {
    const detection = detectQuota(line, this.matchers, now);
    if (detection?.kind === "network") {
      this.networkLines += 1;
      return this.networkLines === this.networkRepeats ? detection : null;
    }
    if (detection) {
      const open = detection.kind === "quota" && detection.resetAt === null;
      if (open && this.pending) {
        // More of the same error (a JSON body repeating RESOURCE_EXHAUSTED): one event, not two.
        this.pending.linesLeft = this.lookahead;
        return null;
      }
      this.pending = open ? { detection, linesLeft: this.lookahead } : null;
      return detection;
    }
    if (this.pending) {
      const text = stripAnsi(line.slice(0, LINE_SCAN_MAX));
      const resetAt = echoedContent(text) ? null : parseResetTime(text, now, this.matchers.localTimeZone);
      if (resetAt) {
        const refined = { ...this.pending.detection, resetAt, refined: true };
        this.pending = null;
        return refined;
      }
      this.pending.linesLeft -= 1;
      if (this.pending.linesLeft <= 0) this.pending = null;
    }
    return null;
  }
}
