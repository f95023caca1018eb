// Everything one tick observes of the repository, as plain data, plus the wire format of the
// claim and heartbeat commit messages that the snapshot's claims and heartbeats are parsed from.
// A message that does not parse is never trusted: it yields null, not a guess.

import type { Checks, IssueLink, PullRef, PullReview, RequiredChecks } from "./ports.js";

export interface SnapshotIssue {
  number: number;
  id: number;
  title: string;
  body: string;
  /** Label names as GitHub spells them (compared case-insensitively). */
  labels: string[];
  author: string;
  assignees: string[];
  /** Milestone title, if any. */
  milestone: string | null;
  /** Native "blocked by" links: fetched only when the issue's blockedByCount > 0. */
  blockedBy: IssueLink[];
  /** Numbers of the native sub-issues: fetched for issues that have some (epics). */
  subIssues: number[];
  /** From `sub_issues_summary.total`: an issue with sub-issues is an epic even if they were not fetched. */
  subIssueCount?: number;
  /** From `sub_issues_summary.completed`: how many of them are closed. */
  subIssuesCompleted?: number;
  /** Number of the parent issue, if any. */
  parent: number | null;
  /** GitHub's updated_at: part of the fingerprint (a new comment or edit is a change). */
  updatedAt?: string;
  /** How many comments it has, when the listing said. */
  comments?: number;
}

export interface SnapshotPull {
  number: number;
  title: string;
  body: string;
  author: string;
  draft: boolean;
  head: PullRef;
  /** The branch the PR targets. */
  baseRef: string;
  /** Checks on `head.sha`, read only for the heads that matter (the fleet's own PRs). */
  checks?: Checks;
  /** Reviews, read for the fleet's own PRs only when the base requires approvals. */
  reviews?: PullReview[];
  updatedAt?: string;
}

/**
 * A claim ref (`<namespace>/claim/<issue>`) and what its commit message says. `instance`, `host`
 * and `at` are null when the message did not parse: such a claim is nobody's we can prove.
 */
export interface ClaimRef {
  issue: number;
  /** The claim commit's sha: the fencing token. */
  sha: string;
  instance: string | null;
  host: string | null;
  /** ISO 8601 UTC. */
  at: string | null;
}

/** A heartbeat ref (`<namespace>/heartbeat/<instance>`), parsed. */
export interface Heartbeat {
  instance: string;
  sha: string;
  host: string;
  /** ISO 8601 UTC. */
  at: string;
}

export interface Snapshot {
  /** "owner/name". */
  repo: string;
  /** The fleet's own login: markers and assignments are read relative to it. */
  login: string;
  defaultBranch: string;
  /** The branch the fleet lands on. */
  base: string;
  /** The base tip when the snapshot was taken, if read. */
  baseSha?: string | null;
  /** When the snapshot was taken (ISO 8601). Informational: never part of the fingerprint. */
  takenAt: string;
  /** Open issues (pull requests excluded). */
  issues: SnapshotIssue[];
  /** Open pull requests. */
  pulls: SnapshotPull[];
  claims: ClaimRef[];
  heartbeats: Heartbeat[];
  requiredChecks: RequiredChecks;
  /** Numbers known to be closed (a fresher read than the open lists): they never block. */
  knownClosed?: number[];
  /**
   * Claims of this instance on open issues whose fleet PR merged after the claim was taken: a
   * landing a crash kept from its wrap-up (closing the issue, releasing the claim). Read only by
   * a restarted process's first gather. Absent: none.
   */
  landed?: LandedPull[];
}

export interface LandedPull {
  issue: number;
  pr: number;
  /** ISO 8601. */
  mergedAt: string;
  /** The PR's branch and its last head, for the wrap-up the crash skipped (the branch's deletion). */
  head?: { ref: string; sha: string };
}

// ---- instance ids ----------------------------------------------------------------------------

const INSTANCE_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

/** 1–40 characters of [a-z0-9-], not starting with "-": safe in ref names, labels and logs. */
export function isValidInstanceId(id: unknown): id is string {
  return typeof id === "string" && INSTANCE_ID.test(id);
}

export class InstanceIdError extends Error {
  override readonly name = "InstanceIdError";
  constructor(readonly id: unknown) {
    super(
      `invalid instance id ${JSON.stringify(id)}: use 1-40 characters of lowercase letters, digits and "-", ` +
        `starting with a letter or digit (e.g. "k3f9x2qa")`,
    );
  }
}

export function assertInstanceId(id: unknown): asserts id is string {
  if (!isValidInstanceId(id)) {
    throw new InstanceIdError(id);
  }
}

// ---- claim and heartbeat messages --------------------------------------------------------------

export const CLAIM_HEADER = "afk-claim";
export const HEARTBEAT_HEADER = "afk-heartbeat";

export interface LeaseMessage {
  instance: string;
  host: string;
  /** ISO 8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
  at: string;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;
// Host names travel in a one-line key=value field: printable, no line breaks, bounded.
const HOST = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export function formatClaimMessage(input: { instance: string; host: string; at: Date | string }): string {
  return formatLease(CLAIM_HEADER, input);
}

export function formatHeartbeatMessage(input: { instance: string; host: string; at: Date | string }): string {
  return formatLease(HEARTBEAT_HEADER, input);
}

export function parseClaimMessage(message: string): LeaseMessage | null {
  return parseLease(CLAIM_HEADER, message);
}

export function parseHeartbeatMessage(message: string): LeaseMessage | null {
  return parseLease(HEARTBEAT_HEADER, message);
}

/** A claim ref's facts from its commit message; an unreadable message leaves them null. */
export function claimRefFrom(issue: number, sha: string, message: string): ClaimRef {
  const parsed = parseClaimMessage(message);
  return { issue, sha, instance: parsed?.instance ?? null, host: parsed?.host ?? null, at: parsed?.at ?? null };
}

/**
 * A heartbeat from its ref's instance and commit message: null when the message does not parse
 * or names another instance than the ref it sits on (never trusted).
 */
export function heartbeatFrom(refInstance: string, sha: string, message: string): Heartbeat | null {
  const parsed = parseHeartbeatMessage(message);
  if (!parsed || parsed.instance !== refInstance) {
    return null;
  }
  return { instance: parsed.instance, sha, host: parsed.host, at: parsed.at };
}

function formatLease(header: string, input: { instance: string; host: string; at: Date | string }): string {
  assertInstanceId(input.instance);
  if (!HOST.test(input.host)) {
    throw new Error(`invalid host ${JSON.stringify(input.host)} for a ${header} message: use 1-255 printable ASCII characters on one line`);
  }
  const at = typeof input.at === "string" ? new Date(input.at) : input.at;
  if (Number.isNaN(at.getTime())) {
    throw new Error(`invalid time ${JSON.stringify(String(input.at))} for a ${header} message: pass a Date or an ISO 8601 string`);
  }
  return `${header}\ninstance=${input.instance}\nhost=${input.host}\nat=${at.toISOString()}\n`;
}

function parseLease(header: string, message: string): LeaseMessage | null {
  if (typeof message !== "string" || message.length > 4096) {
    return null;
  }
  const lines = message.replace(/\r\n/g, "\n").split("\n");
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") {
    lines.pop();
  }
  if (lines[0]?.trim() !== header) {
    return null;
  }
  const fields = new Map<string, string>();
  for (const line of lines.slice(1)) {
    if (line.trim() === "") {
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) {
      return null;
    }
    const key = line.slice(0, eq).trim();
    if (fields.has(key)) {
      return null; // two answers to one question: trust neither
    }
    fields.set(key, line.slice(eq + 1).trim());
  }
  // Unknown keys are ignored, so a later version may add fields without orphaning older readers.
  const instance = fields.get("instance");
  const host = fields.get("host");
  const at = fields.get("at");
  if (!isValidInstanceId(instance) || host === undefined || !HOST.test(host) || at === undefined || !ISO_UTC.test(at)) {
    return null;
  }
  const time = Date.parse(at);
  // Date.parse rolls "02-30" over to March: a date that does not round-trip is not a date.
  if (Number.isNaN(time) || new Date(time).toISOString().slice(0, 19) !== at.slice(0, 19)) {
    return null;
  }
  return { instance, host, at: new Date(time).toISOString() };
}

// ---- canonical order ---------------------------------------------------------------------------

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One entry per number; a duplicate (a paging overlap) resolves to the newest, then by content. */
function uniqueByNumber<T extends { number: number; updatedAt?: string }>(items: readonly T[]): T[] {
  // The forge lists newest first (descending) or oldest first: then there is nothing to resolve.
  if (strictlyMonotonic(items, 1)) {
    return [...items];
  }
  if (strictlyMonotonic(items, -1)) {
    return [...items].reverse();
  }
  const byNumber = new Map<number, T>();
  for (const item of items) {
    const seen = byNumber.get(item.number);
    if (seen === undefined || preferred(item, seen)) {
      byNumber.set(item.number, item);
    }
  }
  return [...byNumber.values()].sort((a, b) => a.number - b.number);
}

function strictlyMonotonic(items: readonly { number: number }[], direction: 1 | -1): boolean {
  for (let i = 1; i < items.length; i++) {
    if ((items[i]!.number - items[i - 1]!.number) * direction <= 0) return false;
  }
  return true;
}

function preferred<T extends { updatedAt?: string }>(candidate: T, incumbent: T): boolean {
  const a = candidate.updatedAt ?? "";
  const b = incumbent.updatedAt ?? "";
  if (a !== b) {
    return a > b;
  }
  return compareStrings(JSON.stringify(candidate), JSON.stringify(incumbent)) < 0;
}

/**
 * The snapshot with every list in a canonical order and duplicates resolved, so that nothing
 * computed from it can depend on the order the forge happened to answer in.
 */
export function canonicalSnapshot(snapshot: Snapshot): Snapshot {
  const claims = new Map<string, ClaimRef>();
  for (const claim of snapshot.claims) {
    const key = `${claim.issue}\u0000${claim.sha}`;
    const seen = claims.get(key);
    if (!seen || compareStrings(JSON.stringify(claim), JSON.stringify(seen)) < 0) {
      claims.set(key, claim);
    }
  }
  return {
    ...snapshot,
    issues: uniqueByNumber(snapshot.issues),
    pulls: uniqueByNumber(snapshot.pulls),
    claims: [...claims.values()].sort((a, b) => a.issue - b.issue || compareStrings(a.sha, b.sha)),
    heartbeats: [...snapshot.heartbeats].sort(
      (a, b) => compareStrings(a.instance, b.instance) || compareStrings(a.at, b.at) || compareStrings(a.sha, b.sha) || compareStrings(a.host, b.host),
    ),
    knownClosed: [...new Set(snapshot.knownClosed ?? [])].sort((a, b) => a - b),
  };
}
