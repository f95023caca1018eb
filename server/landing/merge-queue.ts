// Landing through GitHub's merge queue, for a base whose rules require one (the REST merge
// answers 405 there): the gated PR is enqueued pinned to its gated head, and the landing
// watches its queue entry until GitHub decides. Merged: the base moved to the merge group
// GitHub tested (the Not Rocket Science Rule is the queue's own: a group's tree is the base
// tip merged with the head, and the base only fast-forwards to a group whose checks passed).
// Removed: a red gate whose evidence is the queue's reason. Still queued when the wait ends:
// the next landing call watches on, it never enqueues twice.
import { setTimeout as wait } from "node:timers/promises";
import type { Forge, QueueStatus, RequiredChecks } from "../gh/forge.js";
import { ForgeError } from "../gh/errors.js";
import { evaluateGate } from "../state/gate.js";
import { checkEvidence, type CiEvidence } from "./ci-evidence.js";

export type QueueStep = { kind: "merged"; mergeSha: string | null } | { kind: "red"; evidence: CiEvidence } | { kind: "wait"; why: string };

export interface QueueWatch {
  forge: Forge;
  pr: number;
  head: string;
  /** The base's required checks: the head must pass them before it is enqueued. */
  gate: { required: RequiredChecks; excerptBytes: number; secrets: readonly string[] };
  /** Stop watching (and wait for the next landing call) after this long. */
  deadlineMs: number;
  /** Called on every look at the entry (the claim lease's heartbeat, which writes only when due). */
  beat?: () => Promise<unknown>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** True once the fleet stops: the watch ends at its next look (GitHub's queue goes on; a later tick sees what it decided). */
  stopping?: () => boolean;
}

const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 10_000;

function where(status: QueueStatus): string {
  return status.entry ? `position ${status.entry.position} of the merge queue (${status.entry.state})` : "not in the merge queue";
}

function removed(pr: number, reason: string): QueueStep {
  return { kind: "red", evidence: { kind: "ci", summary: `the merge queue removed PR #${pr}: ${reason}`, excerpt: reason, checks: [], queue: true } };
}

/**
 * Enqueues the PR at `head` (once its required checks passed) unless it is queued already, then
 * watches it until GitHub decides or the deadline passes.
 */
export async function landThroughQueue(w: QueueWatch): Promise<QueueStep> {
  // Conditional requests: the gate re-read at landing time (304 when the tick's read still holds).
  const checks = await w.forge.checksFor(w.head);
  const verdict = evaluateGate(checks, w.gate.required);
  if (verdict.state === "pending") return { kind: "wait", why: `checks on ${w.head.slice(0, 12)} are not finished: ${verdict.pending.join(", ")}` };
  if (verdict.state === "red")
    return {
      kind: "red",
      evidence: checkEvidence(
        checks,
        verdict.failing.map((f) => f.name),
        w.gate.excerptBytes,
        w.gate.secrets,
      ),
    };
  const now = w.now ?? Date.now;
  const sleep = w.sleep ?? wait;
  const until = now() + w.deadlineMs;
  // GraphQL requests (its own points budget; no conditional form): one to see the entry, one to
  // enqueue, then one per poll with a backoff to MAX_POLL_MS while GitHub's queue decides.
  let status = await w.forge.queueStatus(w.pr);
  let enqueued = status.entry !== null;
  for (let pause = FIRST_POLL_MS; ; pause = Math.min(MAX_POLL_MS, Math.round(pause * 1.5))) {
    if (status.state === "MERGED") {
      // One request: the merge commit's sha is on the PR, not in the queue entry.
      const detail = await w.forge.getPull(w.pr);
      return { kind: "merged", mergeSha: detail.mergeCommitSha };
    }
    if (status.state === "CLOSED") return { kind: "wait", why: `PR #${w.pr} was closed while in the merge queue` };
    if (status.entry === null) {
      // Out of the queue without merging: GitHub removed it (a failed group, a timeout, a
      // conflict). A removal recorded before we enqueued belongs to an earlier head.
      if (status.lastEvent?.kind === "removed" && (enqueued || status.head === w.head)) {
        return removed(w.pr, status.lastEvent.reason ?? "removed from the merge queue (GitHub gave no reason)");
      }
      if (enqueued && status.lastEvent?.kind !== "added") return removed(w.pr, "removed from the merge queue (GitHub gave no reason)");
      if (!enqueued) {
        if (status.head !== w.head)
          return { kind: "wait", why: `PR #${w.pr}'s head moved to ${status.head.slice(0, 12)}: the new head must pass the gate first` };
        try {
          // One GraphQL request per PR and head: the REST merge is refused on a queue-ruled base.
          await w.forge.enqueuePull(w.pr, w.head);
        } catch (error) {
          if (error instanceof ForgeError && error.kind === "validation") return { kind: "wait", why: `GitHub did not enqueue PR #${w.pr}: ${error.message}` };
          throw error;
        }
        enqueued = true;
      }
    }
    if (now() + pause > until) return { kind: "wait", why: `PR #${w.pr} is at ${where(status)}: still waiting for its merge group's checks` };
    if (w.stopping?.()) return { kind: "wait", why: `the fleet is stopping: PR #${w.pr} stays at ${where(status)}; a later tick sees what GitHub decided` };
    await sleep(pause);
    await w.beat?.();
    // One GraphQL request per poll (see above): the queue's decision has no cheaper signal.
    status = await w.forge.queueStatus(w.pr);
  }
}
