// The claim and lease protocol over the ref store: claim an issue with a create-only
// compare-and-swap, keep the lease alive with a heartbeat ref, reclaim a stale peer's claim
// from the sha we saw, take a dead fleet's claims over on a human's word, and fence every push
// or merge with the claim's sha so a zombie can land nothing. The refs go through a RefStore
// (git `push --force-with-lease`, see gitrefs.ts); the names and parsing are server/state/claims.ts.
import { claimRef, FencedError, heartbeatRef, listInstances, type InstanceRow } from "../state/claims.js";
import type { RefStore } from "../state/ports.js";
import { assertInstanceId, formatClaimMessage, formatHeartbeatMessage, type ClaimRef, type Heartbeat } from "../state/snapshot.js";

export interface LeaseSettings {
  /** e.g. "refs/afk" */
  namespace: string;
  ttlSeconds: number;
  heartbeatSeconds: number;
}

export type ClaimOutcome = { won: true; sha: string } | { won: false; holder: string | null };

export type TakeoverOutcome =
  | { action: "confirm"; instance: string; warning: string; claims: number[] }
  | { action: "none"; instance: string; reason: string }
  | { action: "taken"; instance: string; taken: { issue: number; sha: string }[]; lost: number[] };

export class Lease {
  /** The heartbeat ref's sha and time as we last wrote or saw them. */
  private beat: { sha: string; at: number } | null = null;
  /** The heartbeat write in flight: the tick, a landing wait and keepAlive share it. */
  private beating: Promise<boolean> | null = null;

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

  /**
   * Refreshes the heartbeat ref every period on a timer of its own until the returned function
   * is called, so a slow tick (a loaded machine, a slow GitHub, a long landing) cannot let the
   * lease lapse while the host is alive: a peer would reclaim the claims of a working host.
   */
  keepAlive(onError: (error: unknown) => void): () => void {
    // A quarter period: the write happens within a quarter period of falling due.
    const timer = setInterval(() => void this.heartbeat().catch(onError), Math.max(250, (this.settings.heartbeatSeconds * 1000) / 4));
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Refreshes the heartbeat ref when due (or forced). Returns whether it wrote. */
  async heartbeat(force = false): Promise<boolean> {
    // One write at a time: two CAS writes from one remembered sha would race each other.
    while (this.beating) await this.beating.catch(() => false);
    if (!force && !this.heartbeatDue()) return false;
    this.beating = this.writeBeat();
    try {
      return await this.beating;
    } finally {
      this.beating = null;
    }
  }

  private async writeBeat(): Promise<boolean> {
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
    while (this.beating) await this.beating.catch(() => false);
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
