// The status board: one comment per claimed issue, tagged with BOARD_MARKER, telling a human how
// far along the fleet is (claimed, coding, PR open, checks failed, waiting to land, merged,
// escalated), how long each phase took, and where the PR and its checks are. It is a projection
// of state the tick already computed: rendered, written when it changed, never read back.
//
// Rendering is a pure function of its input, and stable between ticks when nothing happened:
// finished phases show their duration, the current phase only its start and a coarse elapsed
// time (hours, then days), so a quiet issue gets at most one edit an hour. No issue text, no
// tokens: numbers, phases, times, check names and URLs (escaped), the instance and host, and a
// failed worker's last lines (redacted, fenced, markers neutralized: the evidence of a retry).
//
// Every other comment the fleet writes with untrusted text in it (CI output, check titles) goes
// through `neutralizeMarkers`: the fleet's own login honours `<!-- afk:... -->` markers, so a
// CI log that printed one must not turn into a verdict or a board when the fleet quotes it.
import { UsageError } from "../gh/errors.js";
import { safeUrl } from "../text/text.js";
import { fenced } from "../text/fenced.js";
import { BOARD_MARKER, DEFAULT_ESCALATE_LABEL, DEFAULT_READY_LABEL } from "../state/markers.js";

import { BOARD_PHASES, type BoardPhase } from "../state/board-phase.js";

export { BOARD_PHASES, type BoardPhase };

/** Tags the fleet's escalation comment (so a restarted host can see it already posted one). */
export const ESCALATION_MARKER = "<!-- afk:escalation -->";
/** Tags the fleet's note on a failed attempt. */
export const RETRY_MARKER = "<!-- afk:retry -->";

/** Characters of a failed worker's last lines a board quotes at most (a board stays a short read). */
const LAST_WORDS_CHARS = 1_500;

/** GitHub refuses comments longer than 65,536 characters; stay well inside. */
const MAX_COMMENT_CHARS = 60_000;

export interface BoardCheck {
  name: string;
  /** A check run's conclusion or status, or a commit status' state: success, failure, pending, ... */
  state: string;
  url?: string | null;
}

export interface BoardInput {
  issue: number;
  phase: BoardPhase;
  /** Retries so far: the `afk-attempt/<n>` number, 0 on the first attempt. Shown as attempt + 1. */
  attempt: number;
  /** Attempts in all (`retry` + 1). */
  maxAttempts: number;
  /** Phases entered, oldest first; `since` is an ISO 8601 time. */
  history: ReadonlyArray<{ phase: BoardPhase; since: string }>;
  now: Date | string;
  pr?: { number: number; url: string } | null;
  checks?: readonly BoardCheck[] | null;
  instance: string;
  host: string;
  /** Why the fleet let go (a released board), or which train landed it (merged): one line, fleet-written, never issue text. */
  note?: string | null;
  /** How its work conflicts with other in-flight work and what waits for what: fleet-written, never issue text. */
  conflict?: string | null;
  /** Why the last attempt failed, and which (fleet-written); `lastWords`: the worker's last lines, quoted. */
  failed?: { attempt: number; why: string; lastWords?: string };
  /** What the runtime set right for the issue without spending an attempt (fleet-written: a foreign push undone). */
  notice?: string | null;
  /**
   * A released board: where the issue stands once the fleet let go. `backlog` (the default): still
   * open and picked, a fleet takes it up again; `closed`: closed, nothing takes it up unless it is
   * reopened; `reserved`: a human took it back, and the fleet leaves it alone until it is handed back.
   */
  left?: ReleasedLeft;
  /** A live board's estimate, one fleet-written line (server/state/eta.ts `issueEtaLine`). */
  eta?: string | null;
}

export type ReleasedLeft = "backlog" | "closed" | "reserved";

/** A released board's title and closing sentence, by where the issue stands: they must not contradict each other. */
const RELEASED: Record<ReleasedLeft, { title: string; then: string }> = {
  backlog: { title: "Released: back in the backlog", then: "It stays in the backlog, and a fleet takes it up again when it is picked." },
  closed: { title: "Released: the issue is closed", then: "No fleet takes it up again unless it is reopened." },
  reserved: { title: "Released: a human took it back", then: "The fleet leaves it alone until a human hands it back." },
};

const TITLES: Record<BoardPhase, string> = {
  claimed: "Claimed: starting a worker",
  coding: "Coding: a worker is implementing this issue",
  pr_open: "PR open: checks, then landing",
  ci_failed: "Checks failed: retrying",
  awaiting_review: "Green: waiting for a human's approving review (see the PR)",
  awaiting_merge: "Green: waiting to land",
  merged: "Merged",
  escalated: "Escalated: needs a human",
  released: "Released: back in the backlog",
};

const NAMES: Record<BoardPhase, string> = {
  claimed: "Claimed",
  coding: "Coding",
  pr_open: "PR open",
  ci_failed: "Checks failed",
  awaiting_review: "Waiting for review",
  awaiting_merge: "Waiting to land",
  merged: "Merged",
  escalated: "Escalated",
  released: "Released",
};

const TERMINAL = new Set<BoardPhase>(["merged", "escalated", "released"]);

// The checklist a reader follows, and how far each phase has come along it.
const STEPS = ["Claimed", "Coding", "PR open", "Checks green", "Merged"] as const;
const REACHED: Record<BoardPhase, number> = {
  claimed: 1,
  coding: 2,
  pr_open: 3,
  ci_failed: 3,
  awaiting_review: 4,
  awaiting_merge: 4,
  merged: 5,
  escalated: 0,
  released: 0,
};

/** History rows shown at most (the oldest are summarized). */
const MAX_HISTORY_ROWS = 20;

/** The board comment's body; starts with BOARD_MARKER. */
export function renderBoard(input: BoardInput): string {
  assertPhase(input.phase);
  const now = toTime(input.now, "now");
  const attempt = Math.max(0, Math.floor(input.attempt)) + 1;
  const maxAttempts = Math.max(attempt, Math.floor(input.maxAttempts));
  if (input.left !== undefined && !Object.hasOwn(RELEASED, input.left)) {
    throw new UsageError(`board: unknown released state ${JSON.stringify(input.left)}: use one of ${Object.keys(RELEASED).join(", ")}`);
  }
  const released = input.phase === "released" ? RELEASED[input.left ?? "backlog"] : null;
  const lines: string[] = [BOARD_MARKER, `### afk-mcp: ${released ? released.title : TITLES[input.phase]}`, ""];

  const facts = [`Issue #${input.issue}`, `attempt ${attempt} of ${maxAttempts}`];
  const pr = input.pr ? prLink(input.pr) : null;
  if (pr) facts.push(`PR ${pr}`);
  lines.push(facts.join(" · "), "");

  if (input.phase === "escalated") {
    lines.push("The fleet stopped working on this issue; the comment below says where it got stuck.", "");
  } else if (released) {
    lines.push(`No fleet is working on this issue now${input.note ? `: ${escapeInline(input.note)}` : ""}. ${released.then}`, "");
  } else {
    const reached = REACHED[input.phase];
    STEPS.forEach((step, i) => {
      const done = i < reached;
      const failed = input.phase === "ci_failed" && step === "Checks green";
      lines.push(`- [${done ? "x" : " "}] ${step}${failed ? " (failed on this attempt)" : ""}`);
    });
    lines.push("");
    if (input.eta && !TERMINAL.has(input.phase)) lines.push(escapeInline(input.eta), "");
    // Which train landed it (a fleet-written line).
    if (input.phase === "merged" && input.note) lines.push(escapeInline(input.note), "");
    // Its work conflicts with other in-flight work (fleet-written, naming issues and paths).
    if (input.conflict) lines.push(`> ${escapeText(input.conflict)}`, "");
    // Why the last attempt failed (fleet-written: a runner's fault, a red gate, a hang).
    if (input.failed) lines.push(`Attempt ${input.failed.attempt} failed: ${escapeInline(input.failed.why, 600)}`, "");
    const words = quoted(input.failed?.lastWords, LAST_WORDS_CHARS);
    if (words.length > 0) lines.push("The worker's last lines:", "", ...words, "");
    // What the runtime set right without spending an attempt (fleet-written).
    if (input.notice) lines.push(`> Note: ${escapeText(input.notice.replace(/[\r\n]+/g, " ").slice(0, 600))}`, "");
  }

  const checks = (input.checks ?? []).slice(0, 50);
  if (checks.length > 0) {
    lines.push("| Check | State |", "|---|---|");
    for (const check of [...checks].sort((a, b) => compare(a.name, b.name))) {
      const name = escapeInline(check.name);
      const url = safeUrl(check.url);
      lines.push(`| ${url ? `[${name}](${url})` : name} | ${stateIcon(check.state)} ${escapeInline(check.state)} |`);
    }
    if ((input.checks?.length ?? 0) > checks.length) lines.push(`| … | ${(input.checks?.length ?? 0) - checks.length} more |`);
    lines.push("");
  }

  const history = [...input.history].filter((h) => BOARD_PHASES.includes(h.phase));
  if (history.length > 0) {
    lines.push("| Phase | Since | Time |", "|---|---|---|");
    const rows: string[] = [];
    history.forEach((entry, i) => {
      const since = toTime(entry.since, "history.since");
      const next = history[i + 1];
      let time: string;
      if (next) time = formatDuration(toTime(next.since, "history.since") - since);
      else if (TERMINAL.has(entry.phase)) time = "—";
      else time = `${formatElapsed(now - since)} so far`;
      rows.push(`| ${NAMES[entry.phase]} | ${formatTime(since)} | ${time} |`);
    });
    if (rows.length > MAX_HISTORY_ROWS) {
      const hidden = rows.length - MAX_HISTORY_ROWS;
      lines.push(`| … | ${hidden} earlier phase${hidden === 1 ? "" : "s"} | |`, ...rows.slice(-MAX_HISTORY_ROWS));
    } else {
      lines.push(...rows);
    }
    lines.push("");
  }

  lines.push(
    `<sub>Kept up to date by afk-mcp instance \`${codeSafe(input.instance)}\` on \`${codeSafe(input.host)}\`. ` +
      `This comment only shows the fleet's state; editing it changes nothing.</sub>`,
  );
  return `${lines.join("\n")}\n`;
}

export interface Evidence {
  kind?: string;
  summary: string;
  excerpt?: string | null;
}

export interface Link {
  label: string;
  url: string;
}

export interface EscalationInput {
  issue: number;
  /** Where it got stuck, in a sentence. */
  why: string;
  /** Attempts made. */
  attempts: number;
  evidence?: Evidence | null;
  pr?: { number: number; url: string } | null;
  links?: readonly Link[];
  /** Label names, for the "hand it back" line. */
  labels?: { ready: string; escalate: string };
  /** Characters of the excerpt quoted at most. Default 4,000. */
  excerptChars?: number;
}

/** The comment posted when the fleet gives an issue up to a human. */
export function renderEscalation(input: EscalationInput): string {
  const labels = input.labels ?? { ready: DEFAULT_READY_LABEL, escalate: DEFAULT_ESCALATE_LABEL };
  const attempts = Math.max(1, Math.floor(input.attempts));
  const lines = [
    ESCALATION_MARKER,
    `### afk-mcp handed this issue to a human`,
    "",
    `The fleet stopped working on #${input.issue} after ${attempts} attempt${attempts === 1 ? "" : "s"} and labelled it \`${codeSafe(labels.escalate)}\`.`,
    "",
    `**Where it got stuck:** ${escapeText(input.why)}`,
  ];
  lines.push(...evidenceLines(input.evidence, input.excerptChars ?? 4_000));
  const links = linkLines(input.pr, input.links);
  if (links.length > 0) lines.push("", "**Links**", "", ...links);
  lines.push(
    "",
    `To hand it back to the fleet, fix what is described above (or clarify the issue), then remove \`${codeSafe(labels.escalate)}\` and add \`${codeSafe(labels.ready)}\`.`,
  );
  return bounded(lines.join("\n"));
}

export interface RetryNoteInput {
  issue: number;
  /** The attempt that failed, 1-based. */
  attempt: number;
  maxAttempts: number;
  why: string;
  evidence?: Evidence | null;
  pr?: { number: number; url: string } | null;
  excerptChars?: number;
  fix?: boolean /** the next attempt fixes the PR forward (it stays open), not fresh */;
}

/** The note left (on the PR or the issue) when an attempt failed and another one starts. */
export function renderRetryNote(input: RetryNoteInput): string {
  const attempt = Math.max(1, Math.floor(input.attempt));
  const max = Math.max(attempt, Math.floor(input.maxAttempts));
  const next =
    attempt >= max
      ? "That was the last attempt."
      : `Attempt ${attempt + 1} of ${max} ${input.fix ? "fixes this pull request forward, on its branch" : "starts fresh from the base branch"}.`;
  const lines = [RETRY_MARKER, `**afk-mcp: attempt ${attempt} of ${max} failed.** ${next}`, "", `**Why:** ${escapeText(input.why)}`];
  lines.push(...evidenceLines(input.evidence, input.excerptChars ?? 4_000));
  const links = linkLines(input.pr, []);
  if (links.length > 0) lines.push("", ...links);
  return bounded(lines.join("\n"));
}

function evidenceLines(evidence: Evidence | null | undefined, excerptChars: number): string[] {
  if (!evidence) return [];
  const lines = ["", `**Evidence${evidence.kind ? ` (${escapeText(evidence.kind)})` : ""}:** ${escapeText(evidence.summary)}`];
  const excerpt = quoted(evidence.excerpt, excerptChars);
  if (excerpt.length > 0) lines.push("", ...excerpt);
  return lines;
}

/** Outside text's last `chars` characters in a fence, its markers neutralized; none for blank text. */
function quoted(text: string | null | undefined, chars: number): string[] {
  const trimmed = (text ?? "").trimEnd();
  if (trimmed.trim() === "") return [];
  return [fenced(neutralizeMarkers(trimmed.length > chars ? `…${trimmed.slice(trimmed.length - chars)}` : trimmed), "text")];
}

function linkLines(pr: { number: number; url: string } | null | undefined, links: readonly Link[] | undefined): string[] {
  const out: string[] = [];
  const prLine = pr ? prLink(pr) : null;
  if (prLine) out.push(`- Pull request ${prLine}`);
  for (const link of links ?? []) {
    const url = safeUrl(link.url);
    if (url) out.push(`- [${escapeInline(link.label)}](${url})`);
  }
  return out;
}

/**
 * Breaks every `<!--` so no quoted text can carry an afk marker (a verdict, a board) under the
 * fleet's login. A zero-width space is invisible to a reader and breaks every marker pattern.
 */
export function neutralizeMarkers(text: string): string {
  return text.replace(/<!--/g, "<!\u200b--").replace(/-->/g, "--\u200b>");
}

function bounded(text: string): string {
  const body = text.endsWith("\n") ? text : `${text}\n`;
  return body.length <= MAX_COMMENT_CHARS ? body : `${body.slice(0, MAX_COMMENT_CHARS - 2)}…\n`;
}

// ---- formatting helpers -------------------------------------------------------------------

function assertPhase(phase: string): asserts phase is BoardPhase {
  if (!(BOARD_PHASES as readonly string[]).includes(phase)) {
    throw new UsageError(`unknown board phase ${JSON.stringify(phase)}: use one of ${BOARD_PHASES.join(", ")}`);
  }
}

function toTime(value: Date | string, what: string): number {
  const time = typeof value === "string" ? Date.parse(value) : value.getTime();
  if (Number.isNaN(time)) throw new UsageError(`board: ${what} ${JSON.stringify(String(value))} is not a time`);
  return time;
}

/** "2026-01-02 03:04 UTC". */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A finished phase's duration: "under a minute", "12 min", "3 h 5 min", "2 d 4 h". */
export function formatDuration(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes < 1) return "under a minute";
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** The current phase's elapsed time, coarse so the board changes at most hourly: "under an hour", "5 h", "3 d". */
export function formatElapsed(ms: number): string {
  const hours = Math.floor(Math.max(0, ms) / 3_600_000);
  if (hours < 1) return "under an hour";
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

function prLink(pr: { number: number; url: string }): string | null {
  if (!Number.isSafeInteger(pr.number) || pr.number <= 0) return null;
  const url = safeUrl(pr.url);
  return url ? `[#${pr.number}](${url})` : `#${pr.number}`;
}

function stateIcon(state: string): string {
  const s = state.toLowerCase();
  if (s === "success" || s === "neutral" || s === "skipped") return "✅";
  if (s === "failure" || s === "error" || s === "timed_out" || s === "cancelled" || s === "action_required" || s === "startup_failure" || s === "stale")
    return "❌";
  return "⏳";
}

/** Text for a table cell or link label: one line, markdown and HTML inert, bounded. */
function escapeInline(text: string, max = 100): string {
  const line = text.replace(/[\r\n\t]+/g, " ").trim();
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  return cut
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_[\]|#!~]/g, (c) => `\\${c}`);
}

/** Free text in a sentence: markers and HTML inert, bounded. */
function escapeText(text: string): string {
  const clean = neutralizeMarkers(text.replace(/\r/g, "")).replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return clean.length > 2_000 ? `${clean.slice(0, 1_999)}…` : clean;
}

/** Inside a code span: no backticks, one line. */
function codeSafe(text: string): string {
  return neutralizeMarkers(text.replace(/[`\r\n]/g, "").slice(0, 255)) || "?";
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
