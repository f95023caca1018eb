// The landing lock: landings are serialized per repository in this process (the host's line, held-locks.ts)
// and across hosts (a lock ref `<namespace>/lock/landing`, created compare-and-swap, stale after
// a TTL, always released by its holder).
import type { RefStore } from "../gh/refstore.js";
import { assertInstanceId, heartbeatFrom } from "../state/snapshot.js";
import { lockStanding, type LockHolderFacts } from "../state/decide/landing-step.js";

export const DEFAULT_LOCK_TTL_SECONDS = 600;

export const LANDING_LOCK_HEADER = "afk-landing-lock";

export function landingLockRef(namespace: string): string {
  return `${namespace}/lock/landing`;
}

export interface LandingLockMessage {
  instance: string;
  host: string;
  at: string;
  issue: number;
  ttlSeconds: number;
}

export function formatLandingLock(lock: LandingLockMessage): string {
  assertInstanceId(lock.instance);
  const host = lock.host.replace(/[^\x21-\x7e]/g, "?").slice(0, 255) || "?";
  return `${LANDING_LOCK_HEADER}\ninstance=${lock.instance}\nhost=${host}\nat=${lock.at}\nissue=${lock.issue}\nttl=${lock.ttlSeconds}\n`;
}

/** The lock's facts, or null when the message is not a landing lock we can read. */
export function parseLandingLock(message: string): LandingLockMessage | null {
  const lines = message
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (lines[0] !== LANDING_LOCK_HEADER) return null;
  const fields = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const at = fields.get("at") ?? "";
  const ttl = Number(fields.get("ttl"));
  const issue = Number(fields.get("issue"));
  if (Number.isNaN(Date.parse(at))) return null;
  return {
    instance: fields.get("instance") ?? "?",
    host: fields.get("host") ?? "?",
    at,
    issue: Number.isInteger(issue) ? issue : 0,
    // A TTL from another host's config is honoured, within sane bounds.
    ttlSeconds: Number.isFinite(ttl) ? Math.min(Math.max(ttl, 60), 86_400) : DEFAULT_LOCK_TTL_SECONDS,
  };
}

/**
 * What landings are serialized on in this process: the repository and the fleet instance (one
 * per repository in a real process; two instances in one test process meet at the lock ref, as
 * two hosts would).
 */
export function landingKey(ctx: { forge: { repo: { owner: string; name: string } }; instance: string }): string {
  return `${ctx.forge.repo.owner}/${ctx.forge.repo.name}#${ctx.instance}`.toLowerCase();
}

/** Who takes the lock, and where. */
export interface LockTaker {
  refs: RefStore;
  namespace: string;
  instance: string;
  host: string;
  ttlSeconds: number;
  now: () => Date;
  /**
   * The claims' lease (`lease.ttl_seconds`): a holder whose heartbeat is older than this is dead
   * (its claims are anybody's), so its lock is too, whatever the lock's own TTL says.
   */
  leaseTtlSeconds?: number;
}

/** The LockTaker of a landing: its context, and the lock's TTL for this kind of landing. */
export function lockTakerOf(
  ctx: { refs: RefStore; config: { namespace: string; lease?: { ttl_seconds: number } }; instance: string; host: string; now?: () => Date },
  ttlSeconds: number,
): LockTaker {
  return {
    refs: ctx.refs,
    namespace: ctx.config.namespace,
    instance: ctx.instance,
    host: ctx.host,
    ttlSeconds,
    now: ctx.now ?? (() => new Date()),
    ...(ctx.config.lease ? { leaseTtlSeconds: ctx.config.lease.ttl_seconds } : {}),
  };
}

export interface HeldLock {
  held: true;
  sha: string;
}

/** Takes the landing lock for `issue`, taking over a stale one; or says who holds it. */
/** Not held: why, and who holds it (`instance X on host`; "" when the lock only kept changing hands). */
export type LockRefusal = { held: false; why: string; holder: string };

export async function acquireLock(ctx: LockTaker, issue: number): Promise<HeldLock | LockRefusal> {
  const ref = landingLockRef(ctx.namespace);
  const now = ctx.now;
  const ttlSeconds = ctx.ttlSeconds;
  const message = (): string => formatLandingLock({ instance: ctx.instance, host: ctx.host, at: now().toISOString(), issue, ttlSeconds });
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const created = await ctx.refs.create(ref, message());
    if (created.won) return { held: true, sha: created.sha };
    const entry = (await ctx.refs.list(`${ctx.namespace}/lock/`)).find((e) => e.ref === ref);
    if (!entry) continue; // released meanwhile: try again
    const holder = parseLandingLock(entry.message);
    // Whether the holder's lock stands is the core's rule (state/decide/landing-step.ts); its
    // heartbeat is read only when the rule asks for it.
    const facts: LockHolderFacts = { holder, self: { instance: ctx.instance, host: ctx.host }, now: now().getTime(), leaseTtlSeconds: ctx.leaseTtlSeconds };
    let standing = lockStanding(facts);
    if (standing === "ask") standing = lockStanding({ ...facts, heartbeatAt: await heartbeatOf(ctx, holder!.instance) });
    if (holder && standing === "live") {
      return {
        held: false,
        holder: `instance ${holder.instance} on ${holder.host}`,
        why: `another host is landing: instance ${holder.instance} on ${holder.host} holds ${ref} since ${holder.at} (issue #${holder.issue})`,
      };
    }
    // Stale (its holder died mid-landing) or unreadable: take it over from the sha we saw.
    const swapped = await ctx.refs.swap(ref, entry.sha, message());
    if (swapped.won) return { held: true, sha: swapped.sha };
  }
  return { held: false, holder: "", why: `the landing lock ${ref} kept changing hands; trying again next tick` };
}

/**
 * The newest heartbeat of the lock's holder, or null when it has none (a clean stop retires it,
 * the garbage sweep drops a dead one). Read only to tell a live holder from a dead one: a lock
 * held through a long local gate or a train's CI would otherwise block every other host's
 * landings for its whole TTL after a crash, while the dead host's claims were reclaimed long before.
 */
async function heartbeatOf(ctx: LockTaker, instance: string): Promise<string | null> {
  const prefix = `${ctx.namespace}/heartbeat/`;
  const entry = (await ctx.refs.list(prefix)).find((e) => e.ref === `${prefix}${instance}`);
  return (entry ? heartbeatFrom(instance, entry.sha, entry.message) : null)?.at ?? null;
}

/**
 * Renews a lock this host holds (a new `at`, so it does not go stale during a long gate):
 * a compare-and-swap from the sha it holds. Null: the lock was taken over meanwhile.
 */
export async function renewLock(ctx: LockTaker, sha: string, issue: number): Promise<string | null> {
  const message = formatLandingLock({ instance: ctx.instance, host: ctx.host, at: ctx.now().toISOString(), issue, ttlSeconds: ctx.ttlSeconds });
  const swapped = await ctx.refs.swap(landingLockRef(ctx.namespace), sha, message);
  return swapped.won ? swapped.sha : null;
}
