// A stable hash of what a tick observes: equal fingerprints mean a tick would see the same
// world, so the host may skip deciding and acting. Order of the forge's answers and the time the
// snapshot was taken never change it; a heartbeat counts only as fresh or not, so the fleet's
// own heartbeat refresh does not look like news. Bodies count through what rebuild reads from
// them (blockers, PRD references, closing keywords) and through `updatedAt`, which any edit or
// new comment moves: hashing megabytes of prose would cost more than the rest of a rebuild.

import { createHash } from "node:crypto";
import type { Checks } from "./ports.js";
import type { IssueFacts } from "./facts.js";
import type { ClaimSets } from "./inflight.js";
import type { Snapshot } from "./snapshot.js";

const FORMAT = "afk-fingerprint/1";

function sortedStrings(values: readonly string[]): string[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function sortedNumbers(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/**
 * Two independent 32-bit lanes (FNV-1a and a multiply-xorshift) over typed tokens: strings are
 * length-prefixed and null has its own tag, so distinct field sequences feed distinct streams.
 */
class LaneHash {
  // Int32 lanes in a typed array: plain number fields would box every out-of-Smi-range value.
  private readonly lanes = new Int32Array(2);

  get a(): number {
    return this.lanes[0]!;
  }

  get b(): number {
    return this.lanes[1]!;
  }

  reset(): void {
    this.lanes[0] = 0x811c9dc5;
    this.lanes[1] = 0x9747b28c;
  }

  private mix(x: number): void {
    const lanes = this.lanes;
    lanes[0] = Math.imul(lanes[0]! ^ x, 0x01000193);
    const b = Math.imul(lanes[1]! ^ x, 0x5bd1e995);
    lanes[1] = b ^ (b >>> 15);
  }

  num(n: number): void {
    this.mix(0x4e); // "N"
    this.mix(n | 0);
    this.mix(Math.floor(n / 0x100000000) | 0);
  }

  str(s: string | null | undefined): void {
    if (s === null || s === undefined) {
      this.mix(0x7e); // "~"
      return;
    }
    this.mix(0x53); // "S"
    this.mix(s.length);
    const lanes = this.lanes;
    let a = lanes[0]!;
    let b = lanes[1]!;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    lanes[0] = a;
    lanes[1] = b;
  }

  nums(values: readonly number[]): void {
    this.mix(0x4c);
    this.mix(values.length);
    for (const n of values) this.num(n);
  }

  /**
   * An unordered collection: each member is hashed alone and the digests are summed, so the
   * order the forge listed them in cannot matter and nothing needs sorting (or allocating).
   */
  set(values: readonly (string | number)[], lower = false): void {
    const lanes = this.lanes;
    const a0 = lanes[0]!;
    const b0 = lanes[1]!;
    let sumA = 0;
    let sumB = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      this.reset();
      if (typeof v === "number") this.num(v);
      else this.str(lower ? v.toLowerCase() : v);
      sumA = (sumA + lanes[0]!) | 0;
      sumB = (sumB + lanes[1]!) | 0;
    }
    lanes[0] = a0;
    lanes[1] = b0;
    this.mix(0x1f); // set marker
    this.mix(values.length);
    this.mix(sumA);
    this.mix(sumB);
  }
}

const NONE: readonly number[] = [];

function checksDigest(checks: Checks | undefined): unknown {
  if (!checks) return null;
  // The latest run per name and the first (newest) status per context, as the gate reads them.
  const runs = new Map<string, { id: number; status: string; conclusion: string | null }>();
  for (const run of checks.checkRuns) {
    const seen = runs.get(run.name);
    if (!seen || run.id > seen.id) runs.set(run.name, { id: run.id, status: run.status, conclusion: run.conclusion });
  }
  const statuses = new Map<string, string>();
  for (const status of checks.statuses) {
    if (!statuses.has(status.context)) statuses.set(status.context, status.state);
  }
  return [
    checks.sha,
    sortedStrings([...runs.keys()]).map((name) => [name, runs.get(name)!.status, runs.get(name)!.conclusion]),
    sortedStrings([...statuses.keys()]).map((context) => [context, statuses.get(context)]),
  ];
}

export interface FingerprintFacts {
  /** What rebuild derived from each issue, aligned with `snapshot.issues`. */
  issueFacts: readonly IssueFacts[];
  /** Pull number → the issues its title and body close. */
  closes: ReadonlyMap<number, readonly number[]>;
  /** Instances whose latest heartbeat is fresh at `now`. */
  freshInstances: ReadonlySet<string>;
}

/**
 * Hashes a canonical snapshot (see `canonicalSnapshot`) together with what rebuild derived from
 * it, where each claim landed, and which instances' leases are fresh at `now`.
 */
export function fingerprintOf(snapshot: Snapshot, sets: ClaimSets, facts: FingerprintFacts): string {
  const lines: string[] = [];
  const line = (value: unknown): void => {
    lines.push(JSON.stringify(value));
  };
  line([FORMAT, snapshot.repo.toLowerCase(), snapshot.login.toLowerCase(), snapshot.base, snapshot.baseSha ?? null]);
  const rc = snapshot.requiredChecks;
  line(["required", sortedStrings(rc.contexts), rc.strict, rc.source, rc.readable, rc.approvals ?? 0, rc.dismissStaleApprovals ?? false]);
  line(["closed", sortedNumbers(snapshot.knownClosed ?? [])]);
  // Issues dominate a large snapshot: each is folded into a 64-bit digest computed in place
  // (no per-issue strings to build, join and re-encode), and the digests go into sha256 with
  // the rest. A 64-bit collision between two states of one issue is beyond practical concern
  // here: the worst it could do is make one tick look like no news.
  const digests = new Uint32Array(snapshot.issues.length * 2);
  const h = new LaneHash();
  let k = 0;
  for (let i = 0; i < snapshot.issues.length; i++) {
    const issue = snapshot.issues[i]!;
    const derived = facts.issueFacts[i];
    h.reset();
    h.num(issue.number);
    h.str(issue.title);
    h.set(issue.labels);
    h.str(issue.author);
    h.set(issue.assignees, true);
    h.str(issue.milestone);
    h.nums(derived ? derived.blockers : NONE);
    h.nums(derived ? derived.openLinks : NONE);
    h.set(derived && derived.prdRefs.size > 0 ? [...derived.prdRefs] : NONE);
    h.set(issue.subIssues);
    h.num(issue.subIssueCount ?? -1);
    h.num(issue.parent ?? -1);
    h.str(issue.updatedAt);
    digests[k++] = h.a >>> 0;
    digests[k++] = h.b >>> 0;
  }
  for (const pull of snapshot.pulls) {
    line([
      "pull",
      pull.number,
      facts.closes.get(pull.number) ?? [],
      pull.author,
      pull.draft,
      pull.head.ref,
      pull.head.sha,
      pull.head.repoFullName,
      pull.baseRef,
      pull.updatedAt ?? null,
      checksDigest(pull.checks),
      (pull.reviews ?? []).map((r) => [r.id, r.state, r.commitId]),
    ]);
  }
  // Claims with the set each landed in: a lease lapsing is a change even if no ref moved.
  const claimLines: unknown[][] = [
    ...sets.mine.map((c) => [c.issue, c.sha, c.instance, c.host, c.at, "mine"]),
    ...sets.peer_live.map((c) => [c.issue, c.sha, c.instance, c.host, c.at, "peer_live"]),
    ...sets.stale.map((c) => [c.issue, c.sha, c.instance, c.host, c.at, `stale:${c.reason}`]),
  ];
  claimLines.sort((a, b) => (a[0] as number) - (b[0] as number) || ((a[1] as string) < (b[1] as string) ? -1 : (a[1] as string) > (b[1] as string) ? 1 : 0));
  for (const claim of claimLines) line(["claim", ...claim]);
  line(["fresh", sortedStrings([...facts.freshInstances])]);
  return createHash("sha256").update(lines.join("\n")).update(new Uint8Array(digests.buffer)).digest("hex");
}
