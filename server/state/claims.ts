// The claim and lease protocol's pure half: claim and heartbeat ref names, parsing one listing
// of the namespace into claims and heartbeats, the instance table, and the fencing error. The
// half that writes refs (claim, heartbeat, reclaim, fence, takeover) is server/gh/lease.ts.
import type { RefEntry } from "./ports.js";
import { assertInstanceId, claimRefFrom, heartbeatFrom, type ClaimRef, type Heartbeat } from "./snapshot.js";

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

export function listInstances(claims: readonly ClaimRef[], heartbeats: readonly Heartbeat[], me: string, now: Date, ttlSeconds: number): InstanceRow[] {
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
