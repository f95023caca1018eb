// Landing through GitHub's merge queue, for a base whose rules require one (the REST merge
// answers 405 there): the gated PR is enqueued pinned to its gated head, and the landing
// watches its queue entry until GitHub decides. Merged: the base moved to the merge group
// GitHub tested (the Not Rocket Science Rule is the queue's own: a group's tree is the base
// tip merged with the head, and the base only fast-forwards to a group whose checks passed).
// Removed: a red gate whose evidence is the queue's reason. Still queued when the wait ends:
// the next landing call watches on, it never enqueues twice.
import type { Forge, QueueStatus } from "../gh/forge.js";
import { ForgeError } from "../gh/errors.js";

export type QueueStep =
  | { kind: "merged"; mergeSha: string | null }
  | { kind: "removed"; reason: string }
  | { kind: "wait"; why: string };

export interface QueueWatch {
  forge: Forge;
  pr: number;
  head: string;
  /** Stop watching (and wait for the next landing call) after this long. */
  deadlineMs: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 10_000;

function where(status: QueueStatus): string {
  return status.entry ? `position ${status.entry.position} of the merge queue (${status.entry.state})` : "not in the merge queue";
}

/** Enqueues the PR at `head` unless it is queued already, then watches it until GitHub decides or the deadline passes. */
export async function landThroughQueue(w: QueueWatch): Promise<QueueStep> {
  const now = w.now ?? Date.now;
  const sleep = w.sleep ?? ((ms: number) => new Promise<void>((ok) => setTimeout(ok, ms)));
  const until = now() + w.deadlineMs;
  let status = await w.forge.queueStatus(w.pr);
  let enqueued = status.entry !== null;
  for (let pause = FIRST_POLL_MS; ; pause = Math.min(MAX_POLL_MS, Math.round(pause * 1.5))) {
    if (status.state === "MERGED") {
      const detail = await w.forge.getPull(w.pr);
      return { kind: "merged", mergeSha: detail.mergeCommitSha };
    }
    if (status.state === "CLOSED") return { kind: "wait", why: `PR #${w.pr} was closed while in the merge queue` };
    if (status.entry === null) {
      // Out of the queue without merging: GitHub removed it (a failed group, a timeout, a
      // conflict). A removal recorded before we enqueued belongs to an earlier head.
      if (status.lastEvent?.kind === "removed" && (enqueued || status.head === w.head)) {
        return { kind: "removed", reason: status.lastEvent.reason ?? "removed from the merge queue (GitHub gave no reason)" };
      }
      if (enqueued && status.lastEvent?.kind !== "added") return { kind: "removed", reason: "removed from the merge queue (GitHub gave no reason)" };
      if (!enqueued) {
        if (status.head !== w.head) return { kind: "wait", why: `PR #${w.pr}'s head moved to ${status.head.slice(0, 12)}: the new head must pass the gate first` };
        try {
          await w.forge.enqueuePull(w.pr, w.head);
        } catch (error) {
          if (error instanceof ForgeError && error.kind === "validation") return { kind: "wait", why: `GitHub did not enqueue PR #${w.pr}: ${error.message}` };
          throw error;
        }
        enqueued = true;
      }
    }
    if (now() + pause > until) return { kind: "wait", why: `PR #${w.pr} is at ${where(status)}: still waiting for its merge group's checks` };
    await sleep(pause);
    status = await w.forge.queueStatus(w.pr);
  }
}
