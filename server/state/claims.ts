// The claim and lease protocol over refs: claim an issue with a create-only compare-and-swap,
// keep the lease alive with a heartbeat ref, reclaim a stale peer's claim from the sha we saw,
// take a dead fleet's claims over on a human's word, and fence every push or merge with the
// claim's sha so a zombie can land nothing. The refs themselves go through a RefStore
// (git `push --force-with-lease`, see server/gh/gitrefs.ts).
import type { RefEntry, RefStore } from "../gh/refstore.js";
import {
  assertInstanceId,
  claimRefFrom,
  formatClaimMessage,
  formatHeartbeatMessage,
  heartbeatFrom,
  type ClaimRef,
  type Heartbeat,
} from "./snapshot.js";

export interface LeaseSettings {
  /** e.g. "refs/afk" */
  namespace: string;
  ttlSeconds: number;
  heartbeatSeconds: number;
}

export type ClaimOutcome = { won: true; sha: string } | { won: false; holder: string | null };

/** Thrown when an operation for an issue finds the claim no longer holds our sha. */
export class FencedError extends Error {
  override readonly name = "FencedError";
  constructor(
    readonly issue: number,
    readonly expected: string,
    readonly actual: string | null,
  ) {
    super(
      `issue #${issue}: our claim ${expected.slice(0, 12)} no longer holds (the claim ref is ${
        actual === null ? "gone" : `at ${actual.slice(0, 12)}`
      }); another instance took it over, so nothing is pushed or merged for it`,
    );
  }
}

export interface InstanceRow {
  instance: string;
  host: string | null;
  claims: number[];
  heartbeatAt: string | null;
  heartbeatAgeSeconds: number | null;
  fresh: boolean;
  isMe: boolean;
}

export type TakeoverOutcome =
  | { action: "confirm"; instance: string; warning: string; claims: number[] }
  | { action: "none"; instance: string; reason: string }
  | { action: "taken"; instance: string; taken: { issue: number; sha: string }[]; lost: number[] };

export function claimRef(namespace: string, issue: number): string {
  if (!Number.isInteger(issue) || issue <= 0) throw new Error(`invalid issue number ${issue}`);
  return `${namespace}/claim/${issue}`;
}

export function heartbeatRef(namespace: string, instance: string): string {
  assertInstanceId(instance);
  return `${namespace}/heartbeat/${instance}`;
}

/** Claims and heartbeats parsed from one listing of the namespace. */
export function parseNamespace(namespace: string, entries: readonly RefEntry[]): { claims: ClaimRef[]; heartbeats: Heartbeat[] } {
  const claims: ClaimRef[] = [];
  const heartbeats: Heartbeat[] = [];
  const claimPrefix = `${namespace}/claim/`;
  const beatPrefix = `${namespace}/heartbeat/`;
  for (const entry of entries) {
    if (entry.ref.startsWith(claimPrefix)) {
      const tail = entry.ref.slice(claimPrefix.length);
      if (/^[1-9]\d{0,9}$/.test(tail)) claims.push(claimRefFrom(Number(tail), entry.sha, entry.message));
    } else if (entry.ref.startsWith(beatPrefix)) {
      const beat = heartbeatFrom(entry.ref.slice(beatPrefix.length), entry.sha, entry.message);
      if (beat) heartbeats.push(beat);
    }
  }
  return { claims, heartbeats };
}

export class Lease {
  /** The heartbeat ref's sha and time as we last wrote or saw them. */
  private beat: { sha: string; at: number } | null = null;

  constructor(
    private readonly refs: RefStore,
    private readonly settings: LeaseSettings,
    readonly instance: string,
    readonly host: string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    assertInstanceId(instance);
  }

  /** Adopt what a snapshot saw of our own heartbeat (after a restart, say). */
  observe(heartbeats: readonly Heartbeat[]): void {
    const mine = heartbeats.find((h) => h.instance === this.instance);
    if (mine && (!this.beat || Date.parse(mine.at) >= this.beat.at)) {
      this.beat = { sha: mine.sha, at: Date.parse(mine.at) };
    }
  }

  /** Create-only compare-and-swap of the claim ref: exactly one claimer wins. */
  async claim(issue: number): Promise<ClaimOutcome> {
    const message = formatClaimMessage({ instance: this.instance, host: this.host, at: this.clock() });
    const outcome = await this.refs.create(claimRef(this.settings.namespace, issue), message);
    return outcome.won ? { won: true, sha: outcome.sha } : { won: false, holder: outcome.current };
  }

  /** Deletes our claim, only if it still holds our sha (a reclaimed claim is not ours to drop). */
  async release(issue: number, sha: string): Promise<boolean> {
    const outcome = await this.refs.remove(claimRef(this.settings.namespace, issue), sha);
    return outcome.won;
  }

  /** Moves a stale claim from the sha we observed to a claim of ours; loses if it moved. */
  async reclaim(issue: number, observedSha: string): Promise<ClaimOutcome> {
    const message = formatClaimMessage({ instance: this.instance, host: this.host, at: this.clock() });
    const outcome = await this.refs.swap(claimRef(this.settings.namespace, issue), observedSha, message);
    return outcome.won ? { won: true, sha: outcome.sha } : { won: false, holder: outcome.current };
  }

  /** Whether the heartbeat is due: never written, or older than the cadence. */
  heartbeatDue(): boolean {
    if (!this.beat) return true;
    return this.clock().getTime() - this.beat.at >= this.settings.heartbeatSeconds * 1000;
  }

  /** Refreshes the heartbeat ref when due (or forced). Returns whether it wrote. */
  async heartbeat(force = false): Promise<boolean> {
    if (!force && !this.heartbeatDue()) return false;
    const ref = heartbeatRef(this.settings.namespace, this.instance);
    const now = this.clock();
    const message = formatHeartbeatMessage({ instance: this.instance, host: this.host, at: now });
    let expected = this.beat?.sha ?? (await this.refs.read(ref));
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const outcome = expected === null ? await this.refs.create(ref, message) : await this.refs.swap(ref, expected, message);
      if (outcome.won) {
        this.beat = { sha: outcome.sha, at: now.getTime() };
        return true;
      }
      // Only this instance writes its heartbeat, so a loss means our memory was stale (a
      // restart, a cleanup): start again from what the ref holds now.
      expected = outcome.current ?? (await this.refs.read(ref));
    }
    throw new Error(`heartbeat ${ref}: the ref kept moving under us; is another process running as instance ${this.instance}?`);
  }

  /** Deletes our heartbeat (a clean stop, once no claim is held). */
  async retire(): Promise<void> {
    const ref = heartbeatRef(this.settings.namespace, this.instance);
    const sha = this.beat?.sha ?? (await this.refs.read(ref));
    if (sha) await this.refs.remove(ref, sha);
    this.beat = null;
  }

  /** Reads the claim ref now and throws FencedError unless it still holds `sha`. */
  async fence(issue: number, sha: string): Promise<void> {
    const current = await this.refs.read(claimRef(this.settings.namespace, issue));
    if (current !== sha) throw new FencedError(issue, sha, current);
  }

  /** Every instance GitHub still remembers: its host, claims and heartbeat age. */
  instances(claims: readonly ClaimRef[], heartbeats: readonly Heartbeat[]): InstanceRow[] {
    return listInstances(claims, heartbeats, this.instance, this.clock(), this.settings.ttlSeconds);
  }

  /**
   * Takes every claim of `from` by the same compare-and-swap a stale reclaim uses, skipping
   * only the staleness gate. A fresh lease is refused unless `confirm`: the human is the
   * oracle that knows the other fleet is dead, and a fleet that is not still wins the race.
   */
  async takeover(from: string, claims: readonly ClaimRef[], heartbeats: readonly Heartbeat[], confirm: boolean): Promise<TakeoverOutcome> {
    assertInstanceId(from);
    if (from === this.instance) return { action: "none", instance: from, reason: "that is this instance: its claims are already ours" };
    const row = this.instances(claims, heartbeats).find((r) => r.instance === from);
    if (!row || row.claims.length === 0) {
      return { action: "none", instance: from, reason: `instance ${from} holds no claims (nothing to take)` };
    }
    if (row.fresh && !confirm) {
      const age = row.heartbeatAgeSeconds === null ? "unknown" : `${row.heartbeatAgeSeconds}s`;
      return {
        action: "confirm",
        instance: from,
        claims: row.claims,
        warning:
          `instance ${from} on ${row.host ?? "an unknown host"} looks alive: its heartbeat is ${age} old, ` +
          `within the ${this.settings.ttlSeconds}s lease. Taking its ${row.claims.length} claim(s) while it runs ` +
          `means two workers on one issue until it notices. Call again with confirm: true only if you know it is dead.`,
      };
    }
    const taken: { issue: number; sha: string }[] = [];
    const lost: number[] = [];
    for (const claim of claims.filter((c) => c.instance === from).sort((a, b) => a.issue - b.issue)) {
      const outcome = await this.reclaim(claim.issue, claim.sha);
      if (outcome.won) taken.push({ issue: claim.issue, sha: outcome.sha });
      else lost.push(claim.issue);
    }
    return { action: "taken", instance: from, taken, lost };
  }
}

export function listInstances(
  claims: readonly ClaimRef[],
  heartbeats: readonly Heartbeat[],
  me: string,
  now: Date,
  ttlSeconds: number,
): InstanceRow[] {
  const rows = new Map<string, InstanceRow>();
  const row = (instance: string): InstanceRow => {
    let found = rows.get(instance);
    if (!found) {
      found = { instance, host: null, claims: [], heartbeatAt: null, heartbeatAgeSeconds: null, fresh: false, isMe: instance === me };
      rows.set(instance, found);
    }
    return found;
  };
  for (const beat of heartbeats) {
    const r = row(beat.instance);
    if (r.heartbeatAt === null || beat.at > r.heartbeatAt) {
      r.heartbeatAt = beat.at;
      r.host = beat.host;
    }
  }
  for (const claim of claims) {
    if (claim.instance === null) continue;
    const r = row(claim.instance);
    r.claims.push(claim.issue);
    r.host ??= claim.host;
  }
  for (const r of rows.values()) {
    r.claims.sort((a, b) => a - b);
    if (r.heartbeatAt !== null) {
      r.heartbeatAgeSeconds = Math.max(0, Math.round((now.getTime() - Date.parse(r.heartbeatAt)) / 1000));
      r.fresh = r.heartbeatAgeSeconds <= ttlSeconds;
    }
  }
  return [...rows.values()].sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0));
}
