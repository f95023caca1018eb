// The loop's sleep between ticks: it ends early on a nudge (a worker's exit, a resize, a stop)
// or when something the wake plan watches changes — a watched head's required checks
// concluding, or the base tip moving. Each look is a conditional request (a 304 is free), and
// nothing is looked at when nothing waits, so an idle fleet still costs no requests.
import type { Forge, RequiredChecks } from "../gh/forge.js";
import type { RefStore } from "../gh/refstore.js";
import { evaluateGate } from "../state/gate.js";
import type { PacingConfig } from "../state/config.js";
import { watchDelay, type WakePlan } from "../state/wake.js";

export type WakeCause = "nudged" | "timeout" | "checks" | "base" | "stopped";

export interface WatchSource {
  forge: Pick<Forge, "checksFor">;
  refs: Pick<RefStore, "read">;
  base: string;
  required: RequiredChecks;
  pacing: Pick<PacingConfig, "watch_seconds">;
  timeScale: number;
}

export class Waiter {
  private wake: (() => void) | null = null;
  /** A nudge that came while no sleep was under way: the next sleep ends at once. */
  private pending = false;

  nudge(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  /** Sleeps up to `ms`, watching what `plan` names; says what ended it. */
  async wait(ms: number, plan: WakePlan | null, source: WatchSource): Promise<WakeCause> {
    const deadline = Date.now() + ms;
    const watching = plan !== null && (plan.heads.length > 0 || plan.base);
    let baseTip: string | null | undefined;
    if (watching && plan.base) baseTip = await source.refs.read(`refs/heads/${source.base}`).catch(() => undefined);
    for (let poll = 0; ; poll += 1) {
      const left = deadline - Date.now();
      if (left <= 0) return "timeout";
      const step = watching ? Math.min(left, watchDelay(poll, source.pacing) * 1000 * source.timeScale) : left;
      if (await this.sleep(step)) return "nudged";
      if (!watching || Date.now() >= deadline) continue;
      const changed = await look(plan, source, baseTip).catch(() => null);
      if (changed) return changed;
    }
  }

  /** Resolves true when nudged, false when the time ran out. */
  private sleep(ms: number): Promise<boolean> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const finish = (nudged: boolean): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve(nudged);
      };
      const timer = setTimeout(() => finish(false), Math.max(10, ms));
      timer.unref?.();
      this.wake = () => finish(true);
    });
  }
}

/** One look at what the plan watches: the first change found, or null. */
async function look(plan: WakePlan, source: WatchSource, baseTip: string | null | undefined): Promise<WakeCause | null> {
  if (plan.base && baseTip !== undefined) {
    // git ls-remote: no REST request at all.
    const now = await source.refs.read(`refs/heads/${source.base}`);
    if (now !== baseTip) return "base";
  }
  // Conditional requests per head (check runs; the status list once the runs pass): 304s while nothing changed.
  const verdicts = await Promise.all(
    plan.heads.map(async (watched) => evaluateGate(await source.forge.checksFor(watched.head, source.required), source.required).state),
  );
  return verdicts.some((state) => state !== "pending") ? "checks" : null;
}
