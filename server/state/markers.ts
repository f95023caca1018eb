// Label names, prefixes and marker strings the fleet reads and writes, in one place. Labels are
// compared case-insensitively (GitHub treats "Ready-For-Agent" and "ready-for-agent" as one);
// markers in comments are honoured only when the fleet's own login wrote them.

export const DEFAULT_READY_LABEL = "ready-for-agent";
export const DEFAULT_ESCALATE_LABEL = "ready-for-human";
export const DEFAULT_ATTEMPT_PREFIX = "afk-attempt/";
export const TAG_LABEL_PREFIX = "tag:";
export const NEEDS_TRIAGE_LABEL = "needs-triage";
export const NEEDS_INFO_LABEL = "needs-info";

/** Worker branches are `afk/<issue>-<slug>` in the base repository (config: worktree.branch_prefix). */
export const FLEET_BRANCH_PREFIX = "afk/";

export const VERDICT_MARKER = "afk:verdict";
export const BOARD_MARKER = "<!-- afk:board -->";

export function sameLabel(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function hasLabel(labels: readonly string[], name: string): boolean {
  const wanted = name.toLowerCase();
  for (const label of labels) {
    if (label.length === wanted.length && label.toLowerCase() === wanted) return true;
  }
  return false;
}

/** Whether `text` starts with `lowerPrefix` (given in lower case), ignoring ASCII case, without allocating. */
export function startsWithIgnoreCase(text: string, lowerPrefix: string): boolean {
  if (text.length < lowerPrefix.length) return false;
  for (let i = 0; i < lowerPrefix.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== lowerPrefix.charCodeAt(i)) return false;
  }
  return true;
}

export function sameLogin(a: string | null | undefined, b: string | null | undefined): boolean {
  return typeof a === "string" && typeof b === "string" && a !== "" && a.toLowerCase() === b.toLowerCase();
}

// ---- the fleet's PR description ---------------------------------------------------------------

/** The line of a fleet PR's description that names the attempt (1-based) that opened it. */
export function openedOnLine(issue: number, attempt: number, instance: string): string {
  return `Opened by afk-mcp for #${issue} on attempt ${attempt} (instance \`${instance}\`).`;
}

/** The attempt a fleet PR's description says opened it (`openedOnLine`); null when it does not say (an older PR, an edit). */
export function openedOnAttempt(body: string): number | null {
  const m = /^Opened by afk-mcp for #\d+ on attempt ([1-9]\d{0,5}) /m.exec(body);
  return m ? Number(m[1]) : null;
}

// ---- attempt labels ----------------------------------------------------------------------------

/** "afk-attempt" and "afk-attempt/" both mean labels of the form "afk-attempt/<n>". */
function attemptPrefixOf(prefix: string): string {
  return (prefix.endsWith("/") ? prefix : `${prefix}/`).toLowerCase();
}

/** The attempt number an `afk-attempt/<n>` label carries, or null for any other label. */
export function parseAttemptLabel(label: string, prefix: string = DEFAULT_ATTEMPT_PREFIX): number | null {
  return attemptLabelParser(prefix)(label);
}

/** `parseAttemptLabel` with the prefix prepared once, for loops over many labels. */
export function attemptLabelParser(prefix: string = DEFAULT_ATTEMPT_PREFIX): (label: string) => number | null {
  const p = attemptPrefixOf(prefix);
  return (label) => {
    if (label.length <= p.length || !startsWithIgnoreCase(label, p)) {
      return null;
    }
    const rest = label.slice(p.length);
    return /^(?:0|[1-9]\d{0,5})$/.test(rest) ? Number(rest) : null;
  };
}

/** The highest attempt number among the labels; 0 when there is none. */
export function attemptFromLabels(labels: readonly string[], prefix: string = DEFAULT_ATTEMPT_PREFIX): number {
  let attempt = 0;
  for (const label of labels) {
    const n = parseAttemptLabel(label, prefix);
    if (n !== null && n > attempt) {
      attempt = n;
    }
  }
  return attempt;
}

export function attemptLabel(n: number, prefix: string = DEFAULT_ATTEMPT_PREFIX): string {
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`invalid attempt number ${n}: use a non-negative integer`);
  }
  return `${prefix.endsWith("/") ? prefix : `${prefix}/`}${n}`;
}

// ---- fleet branches ----------------------------------------------------------------------------

/** The issue a fleet worker branch (`<prefix><n>` or `<prefix><n>-<slug>`) is for, or null. */
export function parseFleetBranch(ref: string, prefix: string = FLEET_BRANCH_PREFIX): number | null {
  if (!ref.startsWith(prefix)) {
    return null;
  }
  const m = /^([1-9]\d{0,9})(?:-|$)/.exec(ref.slice(prefix.length));
  return m ? Number(m[1]) : null;
}

export function fleetBranchName(issue: number, slug: string, prefix: string = FLEET_BRANCH_PREFIX): string {
  const clean = slug
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/g, "");
  return clean === "" ? `${prefix}${issue}` : `${prefix}${issue}-${clean}`;
}

// ---- verdict marker ----------------------------------------------------------------------------

export type VerdictKind = "already-satisfied" | "blocked" | "giving-up";
export const VERDICT_KINDS: readonly VerdictKind[] = ["already-satisfied", "blocked", "giving-up"];

export interface Verdict {
  kind: VerdictKind;
  reason: string;
  /** For `blocked`: the issues the worker found it waits on. */
  blockedBy?: number[];
}

export interface MarkerComment {
  author: string;
  body: string;
  createdAt?: string;
  id?: number;
}

/** `<!-- afk:verdict {json} -->`; "<" and ">" are escaped so no reason can close the comment. */
export function formatVerdict(verdict: Verdict): string {
  if (!VERDICT_KINDS.includes(verdict.kind)) {
    throw new Error(`invalid verdict kind ${JSON.stringify(verdict.kind)}: use one of ${VERDICT_KINDS.join(", ")}`);
  }
  const payload: Verdict = { kind: verdict.kind, reason: verdict.reason };
  if (verdict.blockedBy && verdict.blockedBy.length > 0) {
    payload.blockedBy = [...verdict.blockedBy];
  }
  const json = JSON.stringify(payload).replace(/</g, "\\u003c").replace(/>/g, "\\u003e");
  return `<!-- ${VERDICT_MARKER} ${json} -->`;
}

const VERDICT_RE = /<!--\s*afk:verdict\s+(\{[\s\S]*?\})\s*-->/;

/**
 * The verdict a comment carries, honoured only when the fleet's own login wrote it: anyone can
 * type the marker, and a forged "already-satisfied" would close an issue.
 */
export function parseVerdict(comment: MarkerComment, fleetLogin: string): Verdict | null {
  if (!sameLogin(comment.author, fleetLogin)) {
    return null;
  }
  const m = VERDICT_RE.exec(comment.body);
  if (!m) {
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(m[1]!);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) {
    return null;
  }
  const record = value as Record<string, unknown>;
  const kind = record.kind;
  if (typeof kind !== "string" || !(VERDICT_KINDS as readonly string[]).includes(kind)) {
    return null;
  }
  const reason = typeof record.reason === "string" ? record.reason : "";
  const verdict: Verdict = { kind: kind as VerdictKind, reason };
  if (Array.isArray(record.blockedBy)) {
    const numbers = record.blockedBy.filter((n): n is number => Number.isInteger(n) && (n as number) > 0);
    if (numbers.length > 0) {
      verdict.blockedBy = [...new Set(numbers)].sort((a, b) => a - b);
    }
  }
  return verdict;
}

/** The newest honoured verdict among an issue's comments (by createdAt, then id), or null. */
export function latestVerdict(comments: readonly MarkerComment[], fleetLogin: string): Verdict | null {
  let best: { comment: MarkerComment; verdict: Verdict } | null = null;
  for (const comment of comments) {
    const verdict = parseVerdict(comment, fleetLogin);
    if (verdict && (best === null || newer(comment, best.comment))) {
      best = { comment, verdict };
    }
  }
  return best?.verdict ?? null;
}

function newer(a: MarkerComment, b: MarkerComment): boolean {
  const ta = timeOf(a.createdAt);
  const tb = timeOf(b.createdAt);
  if (ta !== tb) {
    return ta > tb;
  }
  return (a.id ?? 0) > (b.id ?? 0);
}

function timeOf(iso: string | undefined): number {
  const t = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/** Whether a comment is the fleet's status board for its issue (the fleet's own, marker-tagged). */
export function isBoardComment(comment: MarkerComment, fleetLogin: string): boolean {
  return sameLogin(comment.author, fleetLogin) && comment.body.includes(BOARD_MARKER);
}
