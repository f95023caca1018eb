// The births and the claims that start no worker: the retries, recovers and redispatches the
// claims asked for, taken in order while there is room under the target; the fleet's own PRs
// with no claim (adopt); dead peers' claims (reclaim); then the frontier's ready issues, ordered
// around the paths in-flight work changes (overlap.ts). A stop starts nothing and releases a
// claim left between two attempts. The result is the tick's Decision.
import { overlapOrder, type OverlapHold } from "../overlap.js";
import { landingsFirst } from "./landing.js";
import type { ClaimDecisions } from "./claims.js";
import type { Sweep } from "./sweeps.js";
import type { Action, DecideInput, Decision } from "./types.js";

/**
 * `input`: as decide sees it (a reached day budget counts as paused births); `given`: as the
 * caller passed it (status says which hold it was); `dayHold`: the day budget's reason, if reached.
 */
export function placeBirths(
  input: DecideInput,
  given: DecideInput,
  dayHold: string | null,
  claims: ClaimDecisions,
  landingSlot: number | null,
  sweeps: Sweep[],
): Decision {
  const { actions, births, running, conflictHolds } = claims;
  // Retries start a fresh worker too: they take a slot like any birth.
  for (const action of actions) if (action.kind === "retry") births.push(action);
  const ordered: Action[] = landingsFirst(actions.filter((a) => a.kind !== "retry"));
  if (input.stopping) {
    // Draining: the retry's bookkeeping stands (attempt label, PR closed with its evidence), but
    // no worker starts, so the claim would sit between two attempts with no PR: release it, and
    // a later run dispatches the next attempt from the backlog.
    for (const retry of births) {
      if (retry.kind !== "retry") continue;
      ordered.push(retry, { kind: "release", issue: retry.issue, sha: retry.sha, why: "the project is stopping between two attempts", killWorker: false });
    }
    return { actions: ordered, sweeps, workers: running, birthsHeld: "stopping", overlapHolds: [], landingSlot, conflictHolds };
  }

  for (const epic of input.epicsDone ?? []) ordered.push({ kind: "close_epic", issue: epic.issue, children: epic.children });
  let room = Math.max(0, input.target - running);
  let birthsHeld: string | null = null;
  let overlapHolds: OverlapHold[] = [];
  const canBirth = !input.birthsPaused && !input.stopping;
  if (!canBirth) birthsHeld = input.stopping ? "stopping" : given.birthsPaused ? "births are paused" : (dayHold ?? "births are paused");

  // Claims already held come first: they are work in flight.
  for (const birth of births) {
    if (canBirth && room > 0) {
      ordered.push(birth);
      room -= 1;
    } else if (birth.kind === "retry") {
      // The retry decision stands (labels, PR closed) even when the worker must wait a tick.
      ordered.push(birth);
    }
  }
  // The fleet's own open PR with no claim on its issue (a claim a human or a takeover released, a
  // lost race): nothing else picks it up, so claim it again (no slot: no worker starts; the PR's
  // state decides what follows, as for any claim with a PR). A fleet whose births are held takes
  // no new claim, this one included.
  if (canBirth && input.target > 0) {
    for (const orphan of input.set.orphans ?? [])
      ordered.push({ kind: "adopt", issue: orphan.issue, pr: orphan.pr, head: orphan.head, headRef: orphan.headRef });
  }
  // A dead peer's claim on a closed issue is a phantom lock: take it and drop it (no slot).
  for (const stale of input.set.stale) {
    if (!stale.issueOpen && !input.stopping) ordered.push({ kind: "reclaim", issue: stale.issue, sha: stale.sha, from: stale.instance, thenRelease: true });
  }
  if (canBirth) {
    for (const stale of input.set.stale) {
      if (!stale.issueOpen) continue;
      // One carried by the fleet's open PR starts no worker, so it takes no slot.
      const carried = stale.pr !== undefined && stale.pr !== null;
      if (!carried && room <= 0) continue;
      ordered.push({ kind: "reclaim", issue: stale.issue, sha: stale.sha, from: stale.instance, thenRelease: false });
      if (!carried) room -= 1;
    }
    const { order, holds } = input.overlap
      ? overlapOrder(input.set.frontier.dispatch, room, input.overlap.pathsOf, input.overlap.inFlight)
      : { order: input.set.frontier.dispatch, holds: [] };
    overlapHolds = holds;
    for (const item of order) {
      if (room <= 0) break;
      ordered.push({ kind: "dispatch", issue: item.number, title: item.title, attempt: item.attempt });
      room -= 1;
    }
  }
  const workers = input.target - room;
  return { actions: ordered, sweeps, workers: Math.min(input.target, Math.max(workers, running)), birthsHeld, overlapHolds, landingSlot, conflictHolds };
}
