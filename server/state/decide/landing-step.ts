// A landing's next step, from facts alone: whether the head contains the base tip, the gate's
// word on that head, and who holds the landing lock. One step per call (sync, gate, merge, take
// the lock, wait, fail); the landing executes it, reads the facts again and asks again, so a
// host killed at any step resumes from what GitHub and the refs say (bors keeps its state in
// refs). Pure: the rules of server/landing/land.ts and landing-lock.ts, table-tested in
// test/core-landing-step.test.ts.
import type { GateState } from "../gate.js";

/** Who holds the landing lock, as it stands for us. */
type LockFact = "free" | "ours" | "live_peer" | "dead_peer";

export interface LandingFacts {
  /** The PR's head contains the base tip read now (the landing call would move the base to a gated tree). */
  containsBase: boolean;
  /** The gate's word on exactly this head; "unknown" until it was read (or run) in this landing. */
  gate: GateState | "unknown";
  lock: LockFact;
  /**
   * A sync may go without the lock: it moves no base and its gate runs elsewhere (required CI on
   * GitHub). A local gate runs under the lock, so its sync does too.
   */
  syncWithoutLock: boolean;
}

export type LandingStep =
  /** Nothing to do now: the wake plan waits for the checks to conclude, or for the lock's holder to land. */
  | { step: "wait"; on: "checks" | "lock" }
  /** The gate failed on this head: the claim's failure path (retry or escalate) takes it. */
  | { step: "fail" }
  /** Take the landing lock; `over`: from a holder that died (or our own leftover). */
  | { step: "take_lock"; over: boolean }
  /** Merge the base into the branch and push it (merge, never rebase); the new head is gated again. */
  | { step: "sync" }
  /** Read the head's checks (required CI) or run the local gate on its tree. */
  | { step: "gate" }
  /** Move the base to this gated head: a merge pinned to its sha, or a fast-forward push leased on the tip read. */
  | { step: "merge" };

/**
 * The next step. A verdict already known settles it first (red fails, pending waits for CI: a
 * synced head whose CI runs is waited on, never synced again); then the lock (another live
 * host's landing moves the base, which wakes us; a dead holder's lock is taken over); then a
 * head behind the base syncs; then the base moves only under the lock, on a verdict read under it.
 */
export function landingStep(f: LandingFacts): LandingStep {
  if (f.gate === "red") return { step: "fail" };
  if (f.gate === "pending") return { step: "wait", on: "checks" };
  if (f.lock === "live_peer") return { step: "wait", on: "lock" };
  if (f.lock === "dead_peer") return { step: "take_lock", over: true };
  if (!f.containsBase) return f.lock === "ours" || f.syncWithoutLock ? { step: "sync" } : { step: "take_lock", over: false };
  if (f.lock === "free") return { step: "take_lock", over: false };
  if (f.gate === "unknown") return { step: "gate" };
  return { step: "merge" };
}

/** The landing lock's ref as read: its message parsed (null: unreadable), and its holder's heartbeat. */
export interface LockHolderFacts {
  holder: { instance: string; host: string; at: string; ttlSeconds: number } | null;
  self: { instance: string; host: string };
  now: number;
  /** The claims' lease; without it only the lock's own TTL counts. */
  leaseTtlSeconds?: number | undefined;
  /** The holder's newest heartbeat: null when it has none, undefined when not read yet. */
  heartbeatAt?: string | null | undefined;
}

/**
 * Whether a lock held by someone else stands: "live" (wait), "dead" (take it over), or "ask"
 * (the holder's heartbeat is needed to tell, and was not read). Dead: unreadable; our own
 * instance on our own host (landings are serialized in a process, so it is a crash's leftover);
 * older than its TTL; or its holder's heartbeat older than the lease (a host killed mid-landing
 * stops beating; a live one beats even while its gate runs), the lock's own age standing in for
 * a heartbeat that is gone.
 */
export function lockStanding(f: LockHolderFacts): "live" | "dead" | "ask" {
  const h = f.holder;
  if (h === null) return "dead";
  if (h.instance === f.self.instance && h.host === f.self.host) return "dead";
  const age = f.now - Date.parse(h.at);
  if (!(age <= h.ttlSeconds * 1000)) return "dead";
  if (f.leaseTtlSeconds === undefined) return "live";
  if (f.heartbeatAt === undefined) return "ask";
  const beatAge = f.heartbeatAt === null ? age : f.now - Date.parse(f.heartbeatAt);
  return beatAge > f.leaseTtlSeconds * 1000 ? "dead" : "live";
}
