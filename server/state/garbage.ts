// Which refs in the fleet's namespace nobody will ever use again: the heartbeat of an instance
// that holds no claim and whose lease expired more than one TTL ago (a host that died or was
// replaced), and a namespace probe older than ten minutes (a host killed mid-probe). Any host may
// delete them; the delete is a compare-and-swap from the sha seen, so a ref that moved since
// (an instance that came back) is left alone. Pure: entries and now in, refs to delete out.
import type { RefEntry } from "./ports.js";
import { parseNamespace } from "./claims.js";

/**
 * A probe lives for a second. Ten minutes leaves room for hosts whose clocks disagree, and
 * deleting a probe that is still in use costs its host nothing: its create already proved the
 * namespace writable, and deleting a ref that is gone counts as done (gh/gitrefs.ts).
 */
export const PROBE_MAX_AGE_SECONDS = 600;
export const PROBE_HEADER = "afk-probe";

export interface GarbageRef {
  ref: string;
  sha: string;
  why: string;
}

export interface GarbageInput {
  namespace: string;
  /** Every ref under `<namespace>/`, as listed. */
  entries: readonly RefEntry[];
  now: Date;
  ttlSeconds: number;
  /** This instance: its own heartbeat is never garbage. */
  me: string;
  /** Age past which a probe is garbage; PROBE_MAX_AGE_SECONDS unless the loop's time is scaled. */
  probeMaxAgeSeconds?: number;
}

export function formatProbeMessage(instance: string, at: Date): string {
  return `${PROBE_HEADER}\ninstance=${instance}\nat=${at.toISOString()}\n`;
}

/** The probe's time, or null when its message carries none (a probe of an older version). */
export function probeTime(message: string): number | null {
  const line = message.split("\n").find((l) => l.startsWith("at="));
  const at = line ? Date.parse(line.slice(3)) : Number.NaN;
  return Number.isNaN(at) ? null : at;
}

export function findGarbage(input: GarbageInput): GarbageRef[] {
  const out: GarbageRef[] = [];
  const now = input.now.getTime();
  const { claims, heartbeats } = parseNamespace(input.namespace, input.entries);
  const holding = new Set(claims.map((c) => c.instance).filter((i): i is string => i !== null));
  for (const beat of heartbeats) {
    if (beat.instance === input.me || holding.has(beat.instance)) continue;
    const age = (now - Date.parse(beat.at)) / 1000;
    if (age > 2 * input.ttlSeconds) {
      out.push({
        ref: `${input.namespace}/heartbeat/${beat.instance}`,
        sha: beat.sha,
        why: `instance ${beat.instance} holds no claim and its lease expired ${Math.round(age - input.ttlSeconds)}s ago`,
      });
    }
  }
  const probePrefix = `${input.namespace}/probe/`;
  for (const entry of input.entries) {
    if (!entry.ref.startsWith(probePrefix) || entry.ref === `${probePrefix}${input.me}`) continue;
    const at = probeTime(entry.message);
    // A probe lives for a second; one without a time predates timed probes, so it is old too.
    if (at === null || (now - at) / 1000 > (input.probeMaxAgeSeconds ?? PROBE_MAX_AGE_SECONDS)) {
      out.push({
        ref: entry.ref,
        sha: entry.sha,
        why:
          at === null
            ? "a namespace probe with no time (left by a host killed mid-probe)"
            : `a namespace probe written ${Math.round((now - at) / 60_000)} min ago`,
      });
    }
  }
  return out.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}
