// The two ways a host process leaves without draining its fleets. A hand-over (afk-mcp daemon
// restart): each fleet's loop ends after the tick under way, no claim is released and no worker
// is ended, so the next daemon, the same instance, resumes the registrations and adopts the
// workers exactly as after a crash. An abandon (a second signal during a drain): every worker
// group is ended at once. Either way a landing lock held mid-landing is released so it blocks
// nobody, and what is left is said in one line.
import type { RepoFleet } from "../fleet/repo-fleet.js";
import type { LaneWriter } from "../lanes/index.js";
import type { HostLandings } from "../landing/held-locks.js";
import type { RuntimeRegistry } from "../runtimes/registry.js";
import { runningWorkerCount } from "../fleet/worker-runs.js";

export async function handOver(fleets: Iterable<RepoFleet>, lanes: Iterable<LaneWriter>, landings: HostLandings): Promise<string> {
  const running = [...fleets].filter((f) => !f.isStopped());
  for (const fleet of running)
    fleet.log("info", "handed_over", "handed over to the next daemon (afk-mcp daemon restart): workers run on and are adopted; claims kept");
  await Promise.all(running.map((f) => f.suspend()));
  const workers = running.reduce((n, f) => n + runningWorkerCount(f.workerRows()), 0);
  const claims = running.reduce((n, f) => n + f.heldClaims().length, 0);
  const locks = await releaseLocks(lanes, landings);
  return `${running.length} fleet(s) paused, ${workers} worker(s) left running, ${claims} claim(s) kept; ${locks}`;
}

/** The process must exit now: end every worker group at once; claims stay for a restart or a peer. */
export async function abandon(fleets: Iterable<RepoFleet>, lanes: Iterable<LaneWriter>, runtimes: RuntimeRegistry, landings: HostLandings): Promise<string> {
  const held = [...fleets].flatMap((p) => p.heldClaims());
  const workers = runtimes.endAllWorkersNow();
  const locks = await releaseLocks(lanes, landings);
  const parts = [
    held.length > 0
      ? `left ${held.length} claim(s) (${held.map((n) => `#${n}`).join(", ")}): the same instance continues them when it restarts; any host reclaims them once the lease lapses, or at once with takeover`
      : "left no claim",
    `ended ${workers} worker process group(s)`,
    locks,
  ];
  return parts.join("; ");
}

async function releaseLocks(lanes: Iterable<LaneWriter>, landings: HostLandings): Promise<string> {
  const locking = landings.heldLocks();
  const unlocked = locking > 0 ? await landings.releaseHeld() : 0;
  for (const lane of lanes) lane.close();
  return locking === 0
    ? "no landing was in progress"
    : unlocked === locking
      ? "released the landing lock"
      : "could not release the landing lock: it lapses after landing.lock_ttl_seconds";
}
