// dispatch: claim a frontier issue (create-only, so one worker per issue) and start its worker.
import { ForgeError } from "../../gh/errors.js";
import type { SnapshotIssue } from "../../state/snapshot.js";
import { defineEffect, type FleetRuntime } from "./effect.js";

/**
 * A dispatch acts on a snapshot a peer may have overtaken: the claim's compare-and-swap only says
 * nobody holds the issue now, and a peer that claimed it after our listing, finished it (closed,
 * escalated) and released its claim leaves it unclaimed again. The chaos run's two-host drain saw
 * it: a tick slowed by a landing claimed #9 some 25 s after its snapshot, after the other host had
 * closed it as already satisfied, and started a worker on a closed issue. So once the claim is won
 * the issue is read again (one request) when a peer's lease was live at the snapshot, however
 * quick the dispatch: the next run saw a peer claim, work and close #42 within the 10 s a landing
 * held our tick. With no live peer only a peer that started since could overtake us, which takes
 * longer than this: past it the issue is read again too. A lone fleet pays nothing.
 */
const STALE_DISPATCH_MS = 15_000;

export const dispatch = defineEffect("dispatch", async (fleet, tick, action) => {
  const issue = tick.issues.get(action.issue);
  // A tick that decided before births were held (a stop, a breaker trip) claims nothing new.
  if (!issue || fleet.birthsHeld()) return;
  const claimed = await fleet.deps.lease.claim(action.issue);
  if (!claimed.won) {
    fleet.log("info", "claim_lost", `#${action.issue}: a peer claimed it first`, action.issue);
    return;
  }
  const overtakable = (tick.set.live_peers?.length ?? 0) > 0 || fleet.deps.clock().getTime() - Date.parse(tick.set.now) > STALE_DISPATCH_MS;
  const changed = overtakable ? await changedSince(fleet, issue) : null;
  if (changed !== null) {
    await fleet.deps.lease.release(action.issue, claimed.sha);
    fleet.log("info", "dispatch_stale", `#${action.issue}: ${changed} since this tick's snapshot; claim let go, the next tick decides`, action.issue);
    return;
  }
  tick.report.dispatched.push(action.issue);
  fleet.ledger.record({
    event: "dispatch",
    issue: action.issue,
    attempt: action.attempt + 1,
    msg: `#${action.issue}: claimed for attempt ${action.attempt + 1}`,
    data: { claim_sha: claimed.sha },
  });
  fleet.board.claimed(action.issue, { noComments: issue.comments === 0 });
  await fleet.birthFor(issue, action.attempt + 1, "continue", claimed.sha);
});

/** What changed on the issue since the snapshot listed it (closed, relabelled), or null. */
async function changedSince(fleet: FleetRuntime, listed: SnapshotIssue): Promise<string | null> {
  // One request, only when the snapshot is older than the dispatch's freshness bound (a slow tick):
  // a worker started on a closed or relabelled issue would cost far more.
  const now = await fleet.deps.conn.forge.getIssue(listed.number).catch((error: unknown) => {
    if (error instanceof ForgeError && (error.kind === "not_found" || error.status === 410)) return null;
    throw error;
  });
  if (now === null || now.state !== "open") return "the issue was closed";
  const labels = (list: readonly string[]): string =>
    [...list]
      .map((l) => l.toLowerCase())
      .sort()
      .join("\n");
  return labels(now.labels) === labels(listed.labels) ? null : "the issue's labels changed";
}
