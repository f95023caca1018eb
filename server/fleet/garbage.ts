// The fleet's sweep of dead refs (see server/state/garbage.ts for which): at most once per
// heartbeat period, one listing of the namespace and a compare-and-swap delete per dead ref.
import type { RefStore } from "../gh/refstore.js";
import { findGarbage } from "../state/garbage.js";
import type { SupervisorLog } from "./supervisor-log.js";

export interface GarbageDeps {
  refs: RefStore;
  namespace: string;
  instance: string;
  ttlSeconds: number;
  /** Age past which a namespace probe is garbage (state/garbage.ts). */
  probeMaxAgeSeconds: number;
  /** How often at most (ms). */
  everyMs: number;
  clock: () => Date;
  log: SupervisorLog;
}

export class GarbageCollector {
  private lastAt: number | null = null;

  constructor(private readonly deps: GarbageDeps) {}

  /** Deletes dead refs when due; returns the refs it deleted. */
  async collectIfDue(): Promise<string[]> {
    const now = this.deps.clock();
    if (this.lastAt !== null && now.getTime() - this.lastAt < this.deps.everyMs) return [];
    this.lastAt = now.getTime();
    const entries = await this.deps.refs.list(`${this.deps.namespace}/`);
    const deleted: string[] = [];
    for (const dead of findGarbage({ namespace: this.deps.namespace, entries, now, ttlSeconds: this.deps.ttlSeconds, me: this.deps.instance, probeMaxAgeSeconds: this.deps.probeMaxAgeSeconds })) {
      const outcome = await this.deps.refs.remove(dead.ref, dead.sha);
      if (!outcome.won) continue; // it moved: somebody uses it after all
      deleted.push(dead.ref);
      this.deps.log("info", "garbage_deleted", `deleted ${dead.ref}: ${dead.why}`, undefined, { ref: dead.ref });
    }
    return deleted;
  }
}
