// The fleet's sweep of dead refs (see server/state/garbage.ts for which): at most once per
// heartbeat period, one listing of the namespace and a compare-and-swap delete per dead ref.
import type { RefStore } from "../gh/refstore.js";
import { findGarbage } from "../state/garbage.js";
import { periodDue } from "../state/decide/sweeps.js";
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

  /** When the sweep last ran and how often it may: the core says when it is due (state/decide/sweeps.ts). */
  facts(): { lastAt: number | null; everyMs: number } {
    return { lastAt: this.lastAt, everyMs: this.deps.everyMs };
  }

  /** Deletes dead refs when due; returns the refs it deleted. */
  async collectIfDue(): Promise<string[]> {
    return periodDue(this.lastAt, this.deps.clock().getTime(), this.deps.everyMs) ? this.collect() : [];
  }

  /** Deletes dead refs now; returns the refs it deleted. */
  async collect(): Promise<string[]> {
    const now = this.deps.clock();
    this.lastAt = now.getTime();
    const entries = await this.deps.refs.list(`${this.deps.namespace}/`);
    const deleted: string[] = [];
    for (const dead of findGarbage({
      namespace: this.deps.namespace,
      entries,
      now,
      ttlSeconds: this.deps.ttlSeconds,
      me: this.deps.instance,
      probeMaxAgeSeconds: this.deps.probeMaxAgeSeconds,
    })) {
      const outcome = await this.deps.refs.remove(dead.ref, dead.sha);
      if (!outcome.won) continue; // it moved: somebody uses it after all
      deleted.push(dead.ref);
      this.deps.log("info", "garbage_deleted", `deleted ${dead.ref}: ${dead.why}`, undefined, { ref: dead.ref });
    }
    return deleted;
  }
}
