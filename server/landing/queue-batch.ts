// Several green PRs into GitHub's merge queue at once, for a base that requires one: each is
// enqueued pinned to its gated head (merge-queue.ts) and all entries are watched together, so
// the queue can test and merge them back to back (or batch them, as GitHub's grouping allows)
// instead of the fleet waiting for one PR's merge before enqueueing the next. Bounded by
// `landing.train.max`; only our own PRs under claims still ours (own-pulls.ts); under the
// landing lock, held for the whole wait. The result has a train's shape, so the fleet takes it
// as it takes a train's (server/fleet/effects/land-train.ts), with no train landing named.
import { randomBytes } from "node:crypto";
import { LandingGit } from "./landing-git.js";
import { acquireLock, DEFAULT_LOCK_TTL_SECONDS, landingKey, landingLockRef, lockTakerOf } from "./landing-lock.js";
import type { LandingContext } from "./land-types.js";
import { wrapUpLanded } from "./landed.js";
import { secretsOf } from "./command-gate.js";
import { landThroughQueue, type QueueStep } from "./merge-queue.js";
import { lostClaim, screenPulls } from "./own-pulls.js";
import type { TrainMember, TrainMemberOutcome, TrainResult } from "./train.js";

/** Enqueues `members` together and watches their entries until GitHub decides each (or the gate timeout). */
export function landQueuedBatch(ctx: LandingContext, members: readonly TrainMember[]): Promise<TrainResult> {
  return ctx.landings.line.run(landingKey(ctx), () => batch(ctx, members));
}

async function batch(ctx: LandingContext, members: readonly TrainMember[]): Promise<TrainResult> {
  const result: TrainResult = {
    id: `queue-${randomBytes(3).toString("hex")}`,
    outcome: "ran",
    why: "",
    members: [],
    gateRuns: 0,
    restarts: 0,
    ciSilent: false,
    landings: [],
  };
  // No request under the fleet (its tick's rules are in ctx).
  const required = ctx.requiredChecks ?? (await ctx.forge.requiredChecks(ctx.base));
  const { riders, refused } = await screenPulls(ctx, members);
  result.members.push(...refused);
  if (riders.length === 0) return { ...result, why: "no member could be enqueued" };
  const ttl = ctx.lockTtlSeconds ?? (ctx.config.landing.lock_ttl_seconds ?? DEFAULT_LOCK_TTL_SECONDS) + ctx.config.gate.timeout_seconds;
  const lock = await acquireLock(lockTakerOf(ctx, ttl), riders[0]!.member.issue);
  if (!lock.held) return { ...result, outcome: "busy", why: lock.why, holder: lock.holder };
  const release = ctx.landings.hold(ctx.refs, landingLockRef(ctx.config.namespace), lock.sha);
  const lg = new LandingGit(ctx.workRepo, ctx.auth);
  try {
    const gate = { required, excerptBytes: ctx.config.gate.excerpt_bytes, secrets: secretsOf(ctx) };
    const beat = (): Promise<unknown> => ctx.lease.heartbeat().catch(() => false); // the wait may outlast a heartbeat period
    // Fenced again under the lock, just before the enqueue: a lost claim's work must not land.
    const enqueued: typeof riders = [];
    for (const rider of riders) {
      const lost = await lostClaim(ctx, rider.member);
      if (lost === null) enqueued.push(rider);
      else result.members.push({ outcome: "fenced", member: rider.member, why: lost });
    }
    // Each entry is enqueued and watched on its own; they wait side by side, in claim order.
    const steps = await Promise.all(
      enqueued.map(({ member }) =>
        landThroughQueue({
          forge: ctx.forge,
          pr: member.pr,
          head: member.head,
          gate,
          deadlineMs: ctx.config.gate.timeout_seconds * 1000,
          beat,
          stopping: ctx.stopping,
        }),
      ),
    );
    for (const [i, { member, branch }] of enqueued.entries()) result.members.push(await outcomeOf(ctx, lg, member, branch, steps[i]!));
  } finally {
    await release().catch(() => undefined);
  }
  const merged = result.members.filter((m) => m.outcome === "merged").length;
  return { ...result, why: `${merged} of ${members.length} landed through the merge queue, enqueued together` };
}

async function outcomeOf(ctx: LandingContext, lg: LandingGit, member: TrainMember, branch: string, step: QueueStep): Promise<TrainMemberOutcome> {
  if (step.kind === "red") return { outcome: "gate_red", member, evidence: step.evidence, gateRuns: 1, why: step.evidence.summary };
  if (step.kind === "wait") return { outcome: "retry_later", member, why: step.why };
  const { issueClosed, branchDeleted } = await wrapUpLanded(ctx, lg, member.issue, branch, member.head);
  const mergeSha = step.mergeSha ?? (await ctx.refs.read(`refs/heads/${ctx.base}`)) ?? "";
  // The queue's merge commit (merge or squash) has the base it moved on from as its first parent.
  return { outcome: "merged", member, train: "", mergeSha, baseBefore: mergeSha ? `${mergeSha}^1` : "", issueClosed, branchDeleted, queue: true };
}
