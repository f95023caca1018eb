// A daemon handing its fleets over to the one that replaces it (afk-mcp daemon restart): each
// fleet's loop ends after the tick under way, no claim is released and no worker is ended, so
// the next daemon, the same instance, resumes the registrations and adopts the workers exactly
// as after a crash. A landing lock held mid-landing is released so it blocks nobody.
import type { RepoFleet } from "../fleet/repo-fleet.js";
import type { LaneWriter } from "../lanes/index.js";
import { heldLandingLocks, releaseHeldLandingLocks } from "../landing/held-locks.js";

export async function handOver(fleets: Iterable<RepoFleet>, lanes: Iterable<LaneWriter>): Promise<string> {
  const running = [...fleets].filter((f) => !f.isStopped());
  for (const fleet of running) fleet.log("info", "handed_over", "handed over to the next daemon (afk-mcp daemon restart): workers run on and are adopted; claims kept");
  await Promise.all(running.map((f) => f.suspend()));
  const workers = running.reduce((n, f) => n + f.workerRows().filter((w) => w.pid !== null).length, 0);
  const claims = running.reduce((n, f) => n + f.heldClaims().length, 0);
  const locking = heldLandingLocks();
  const unlocked = locking > 0 ? await releaseHeldLandingLocks() : 0;
  for (const lane of lanes) lane.close();
  return `${running.length} fleet(s) paused, ${workers} worker(s) left running, ${claims} claim(s) kept${locking > 0 ? `, ${unlocked} of ${locking} landing lock(s) released` : ""}`;
}
