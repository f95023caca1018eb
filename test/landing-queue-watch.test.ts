// The merge queue's watch (server/landing/merge-queue.ts) in virtual time: a PR whose merge group's
// checks never conclude is watched until the deadline, or until the fleet stops, whichever comes
// first; a stop ends it at its next look and leaves the PR queued (GitHub's queue goes on).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { landThroughQueue, type QueueWatch } from "../server/landing/merge-queue.js";
import type { Checks, QueueStatus } from "../server/gh/forge.js";

const HEAD = "a".repeat(40);

/** A forge whose PR is green, queued at position 1, and never merged; it counts its reads. */
function queuedForge(): { forge: QueueWatch["forge"]; looks: () => number } {
  let looks = 0;
  const forge = {
    checksFor: async (): Promise<Checks> =>
      ({
        sha: HEAD,
        checkRuns: [{ id: 1, name: "test", status: "completed", conclusion: "success", app: null, startedAt: null, completedAt: null, output: null }],
        statuses: [],
      }) as unknown as Checks,
    queueStatus: async (): Promise<QueueStatus> => {
      looks += 1;
      return {
        state: "OPEN",
        head: HEAD,
        entry: { state: "AWAITING_CHECKS", position: 1 },
        lastEvent: { kind: "added", at: "2026-12-07T00:00:00Z", reason: null },
      };
    },
  } as unknown as QueueWatch["forge"];
  return { forge, looks: () => looks };
}

function watch(forge: QueueWatch["forge"], extra: Partial<QueueWatch>): QueueWatch {
  let t = 0;
  return {
    forge,
    pr: 7,
    head: HEAD,
    gate: { required: { contexts: ["test"], strict: false, source: "protection", readable: true }, excerptBytes: 1024, secrets: [] },
    deadlineMs: 3_600_000,
    now: () => t,
    sleep: async (ms) => void (t += ms),
    ...extra,
  };
}

describe("the merge queue's watch", () => {
  it("watches a queued PR until the deadline when nothing stops it", async () => {
    const { forge, looks } = queuedForge();
    const step = await landThroughQueue(watch(forge, { deadlineMs: 60_000 }));
    assert.equal(step.kind, "wait");
    assert.match((step as { why: string }).why, /position 1 of the merge queue .*still waiting/);
    assert.ok(looks() > 5, `looked ${looks()} times`);
  });

  it("ends at its next look once the fleet stops, the PR left in the queue", async () => {
    const { forge, looks } = queuedForge();
    let asked = 0;
    const step = await landThroughQueue(watch(forge, { stopping: () => ++asked > 2 }));
    assert.equal(step.kind, "wait");
    assert.match((step as { why: string }).why, /the fleet is stopping: PR #7 stays at position 1 of the merge queue/);
    assert.equal(asked, 3);
    assert.equal(looks(), 3, "one look per question, none after the stop");
  });
});
