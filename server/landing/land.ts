// Landing one green pull request, under the Not Rocket Science Rule (docs/architecture.md, invariant 2): the
// base branch only ever moves to a tree that passed the gate. A PR lands only when its gated
// head H contains the base tip B read just now, and the landing call names H: a merge pinned
// to `sha: H` (a squash of H onto B has exactly H's tree; so does a merge commit of B and H), or
// a fast-forward-only push of H with `--force-with-lease=refs/heads/<base>:<B>` (bors' move,
// which also closes the last race). A base that moved means sync (merge, never rebase) and
// gate again, never a blind merge.
//
// What GitHub does not let us close: between reading B and the merge call, the base can move,
// and GitHub merges anyway unless the base branch requires up-to-date branches (strict status
// checks), in which case it answers 405. So after every merge the landed tree is compared with
// H's tree; a difference comes back as `verified: false` for the caller to raise an alarm. The
// "push" strategy, or strict protection, closes that race.
//
// Only our own work lands (docs/architecture.md, invariant 3): the PR is re-read and must be open, from a fleet
// branch naming this issue in this very repository, opened by the fleet's login, against our
// base; every write is fenced by the claim's sha (a zombie lands nothing). Landings are
// serialized per repository in this process (the host's line, held-locks.ts) and across hosts (a lock ref
// `<namespace>/lock/landing`, created compare-and-swap, stale after a TTL, always released).
import type { MergeMethod, PullRequest } from "../gh/forge.js";
import { ForgeError } from "../gh/errors.js";
import { evaluateGate, type GateState } from "../state/gate.js";
import { landingStep } from "../state/decide/landing-step.js";
import { PushRejectedError, WorktreeError } from "../worktrees/worktrees.js";
import { checkEvidence } from "./ci-evidence.js";
import { LandingGit } from "./landing-git.js";
import { listDeadTrains, sweepDeadTrains } from "./dead-trains.js";
import { landThroughQueue } from "./merge-queue.js";
import { acquireLock, DEFAULT_LOCK_TTL_SECONDS, landingKey, landingLockRef, lockTakerOf } from "./landing-lock.js";
import { MAX_SYNC_ROUNDS, type GateEvidence, type LandingContext, type LandingStrategy, type LandInput, type LandResult } from "./land-types.js";
import { commandGateEvidence, runCommandGate, secretsOf, withReruns } from "./command-gate.js";
import { lostClaim, notOurs, readPull, vetoOf } from "./own-pulls.js";
import { closedByMerge, wrapUpLanded } from "./landed.js";

export { formatLandingLock, landingLockRef } from "./landing-lock.js";
export { readCheckEvidence } from "./ci-evidence.js";
export * from "./land-types.js";

const MAX_ITERATIONS = 10;

// ---- the landing --------------------------------------------------------------------------

/**
 * Lands one PR (see the module comment). Never merges anything that is not ours or not gated;
 * ForgeErrors and GitErrors other than the refusals handled here propagate (after the lock is
 * released) for the caller to log and retry on a later tick. Releasing the claim, the status
 * board and the worktree are the caller's.
 */
export function landPull(ctx: LandingContext, input: LandInput): Promise<LandResult> {
  return ctx.landings.line.run(landingKey(ctx), () => landSerialized(ctx, input));
}

async function landSerialized(ctx: LandingContext, input: LandInput): Promise<LandResult> {
  // A turn that can only sync (the usual one after another PR landed) pushes to our own branch,
  // fenced by the claim, and moves no base: the tick's listing names the branch and the PR is not
  // read. Any other turn reads it here, before the lock (whose ref push would change the list's
  // ETag), and landRounds reads it should the base turn out to be reachable after all.
  // The claim, and the lock where a sync could do without it, are read meanwhile (they overlap).
  const fencing = fence(ctx, input);
  fencing.catch(() => undefined); // awaited below; a turn that returns early must not leave it unhandled
  const lockless = input.listed !== undefined && ctx.config.gate.ci !== "local" && ctx.requiredChecks !== undefined && !ctx.requiredChecks.mergeQueue;
  const peek = lockless ? ctx.refs.read(landingLockRef(ctx.config.namespace)).catch(() => "unreadable") : null;
  // The runtime's word on who pushed the head comes first: a sync would take the head into the worktree.
  const early = input.listed ? await vetted(ctx, input, input.listed.headRef) : null;
  if (early) return early;
  const syncOnly = input.listed !== undefined && (await onlySyncs(ctx, input.head));
  if (syncOnly && peek && (await peek) === null) {
    const fenced = await fencing;
    if (fenced) return fenced;
    const synced = await syncUnlocked(ctx, input);
    if (synced.outcome !== "lands") return synced;
  }
  const pull = syncOnly ? null : await readPull(ctx.forge, input.pr);
  const refused = pull && screenPull(ctx, input, pull, input.head);
  if (refused) return refused;
  const vetoed = pull && !input.listed && (await vetted(ctx, input, pull.head.ref));
  if (vetoed) return vetoed;
  const fenced = await fencing;
  if (fenced) return fenced;

  // Read before the lock: a merge queue's wait runs under it, so the lock's TTL must cover it. A
  // request only when the caller brought no rules (the fleet passes its tick's; a CLI landing does not).
  if (ctx.config.gate.ci !== "local" && !ctx.requiredChecks) ctx = { ...ctx, requiredChecks: await ctx.forge.requiredChecks(ctx.base) };
  const lock = await acquireLock(lockTakerOf(ctx, lockTtl(ctx)), input.issue);
  if (!lock.held) return { outcome: "busy", why: lock.why, holder: lock.holder };
  const release = once(ctx.landings.hold(ctx.refs, landingLockRef(ctx.config.namespace), lock.sha));
  try {
    return await landLocked(ctx, input, pull, release);
  } finally {
    await release().catch(() => undefined);
  }
}

/**
 * A sync under required CI (the base moved since the head was gated) moves no base, so it takes
 * no landing lock: the lock serializes moves of the base (invariant 2), and the sync's push is
 * fenced by the claim like any other. Taking and releasing the lock cost two pushes on every
 * sync, which is every landing's turn after another PR landed. A lock held by anyone (another
 * host's landing will move the base again; a stale one to take over) sends the turn down the
 * usual locked path, which waits for it or takes it over; so does a head that contains the base
 * after all ("lands").
 */
async function syncUnlocked(ctx: LandingContext, input: LandInput): Promise<Round> {
  const lg = new LandingGit(ctx.workRepo, ctx.auth);
  try {
    return await landRounds(ctx, lg, input, null, null);
  } finally {
    await lg.dropPrivateRefs(input.issue).catch(() => undefined);
  }
}

/** The first call runs `f`; later calls get the same promise. */
function once(f: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  return () => (running ??= f());
}

/** Whether the base tip (ls-remote: no REST request) is certainly not in `head`. */
async function onlySyncs(ctx: LandingContext, head: string): Promise<boolean> {
  const tip = await ctx.refs.read(`refs/heads/${ctx.base}`).catch(() => null);
  return tip !== null && new LandingGit(ctx.workRepo, ctx.auth).lacksTip(tip, head);
}

/** Why the PR as read may not land at `head` now (not ours, a draft, its head moved), or null. */
function screenPull(ctx: LandingContext, input: LandInput, pull: PullRequest, head: string | null): LandResult | null {
  const foreign = notOurs(ctx, input, pull);
  if (foreign) return { outcome: "not_ours", why: foreign };
  if (pull.draft) return { outcome: "retry_later", why: `PR #${input.pr} is a draft` };
  if (head !== null && pull.head.sha !== head) {
    return { outcome: "retry_later", why: `PR #${input.pr}'s head moved from ${short(head)} to ${short(pull.head.sha)} since it was gated` };
  }
  return null;
}

/** The worker runtime's veto on the head (own-pulls.ts vetoOf), as a "retry_later". */
async function vetted(ctx: Pick<LandingContext, "vetHead">, input: LandInput, branch: string): Promise<LandResult | null> {
  const why = await vetoOf(ctx, input, branch);
  return why === null ? null : { outcome: "retry_later", why };
}

async function fence(ctx: LandingContext, input: LandInput): Promise<LandResult | null> {
  const lost = await lostClaim(ctx, input);
  return lost === null ? null : { outcome: "fenced", why: lost };
}

function lockTtl(ctx: LandingContext): number {
  if (ctx.lockTtlSeconds !== undefined) return ctx.lockTtlSeconds;
  // A local gate runs under the lock, up to MAX_SYNC_ROUNDS times, each with its re-runs.
  const runs = MAX_SYNC_ROUNDS * (1 + (ctx.config.gate.rerun_failed ?? 0));
  const gate = ctx.config.gate.ci === "local" ? ctx.config.gate.timeout_seconds * runs : ctx.requiredChecks?.mergeQueue ? ctx.config.gate.timeout_seconds : 0;
  return (ctx.config.landing.lock_ttl_seconds ?? DEFAULT_LOCK_TTL_SECONDS) + gate;
}

async function landLocked(ctx: LandingContext, input: LandInput, pull: PullRequest | null, release: () => Promise<void>): Promise<LandResult> {
  const lg = new LandingGit(ctx.workRepo, ctx.auth);
  // Under the lock, a train branch on origin is a dead train's (dead-trains.ts): listed beside
  // the landing, swept after it (a branch listed now stays dead after the lock goes).
  const dead = listDeadTrains(lg);
  dead.catch(() => undefined);
  try {
    const round = await landRounds(ctx, lg, input, pull, release);
    const result: LandResult = round.outcome === "lands" ? { outcome: "retry_later", why: "the landing lock was not passed on" } : round;
    // Housekeeping: a listing or sweep that fails (tried again by the next landing) never turns
    // the landing's own outcome into a failure; the base may already have moved.
    const swept = await dead.then((found) => sweepDeadTrains(ctx, lg, found)).catch(() => [] as string[]);
    return swept.length > 0 ? { ...result, swept } : result;
  } finally {
    await lg.dropPrivateRefs(input.issue).catch(() => undefined);
  }
}

/** A landing's rounds may end in "lands" only without the lock: the head contains the base, and landing takes the lock. */
type Round = LandResult | { outcome: "lands" };

/**
 * `release`: the landing lock's, held by this landing (once the base moved, it goes while the
 * rest is tidied up). Null: no lock is held, so the rounds may sync the branch but never move the base.
 */
async function landRounds(
  ctx: LandingContext,
  lg: LandingGit,
  input: LandInput,
  read: PullRequest | null,
  release: (() => Promise<void>) | null,
): Promise<Round> {
  const headRef = read?.head.ref ?? input.listed!.headRef;
  // Only our own work lands (invariant 3): before the base may move, the PR as GitHub has it now
  // (the tick's listing may be a human's close or retarget behind).
  // After a sync of its own (local gate) the branch tip, fetched by git, is the head to trust:
  // GitHub may show the PR's new head a moment later.
  let checked = read !== null;
  // The PR as last read: whether its description still says "Closes #n" when it merges.
  let pull = read;
  const refusal = async (head: string, synced: boolean): Promise<LandResult | null> => {
    if (checked) return null;
    checked = true;
    pull = await readPull(ctx.forge, input.pr);
    return screenPull(ctx, input, pull, synced ? null : head);
  };
  const local = ctx.config.gate.ci === "local";
  let expected = input.head;
  let syncs = 0;
  let fencing: Promise<LandResult | null> | null = null;
  if (!local && ctx.requiredChecks?.mergeQueue) return (await refusal(expected, false)) ?? landQueued(ctx, lg, input, headRef, release);

  // The gate's word on a head, read (or run) in this landing.
  let verdict: Verdict | null = null;
  let reruns = 0; // of the local gate, in this landing (the ledger counts them: command-gate.ts)
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration += 1) {
    const tips = await lg.fetchTips(ctx.base, headRef, input.issue);
    if (tips.head === null) return { outcome: "retry_later", why: `the branch ${headRef} is gone from the remote` };
    if (tips.head !== expected) {
      return { outcome: "retry_later", why: `${headRef} moved from ${short(expected)} to ${short(tips.head)}: the new head must pass the gate first` };
    }
    const baseTip = tips.base;
    const containsBase = await lg.isAncestor(baseTip, expected);
    // One step at a time, as the core's rule says (state/decide/landing-step.ts), until a step
    // needs the tips read again or ends the landing.
    for (;;) {
      const step = landingStep({
        containsBase,
        gate: verdict?.head === expected ? verdict.state : "unknown",
        lock: release === null ? "free" : "ours",
        syncWithoutLock: !local,
      });
      if (step.step === "take_lock") return { outcome: "lands" };
      if (step.step === "wait") return { outcome: "retry_later", why: `checks on ${short(expected)} are not finished: ${verdict?.pending ?? ""}` };
      if (step.step === "fail") return withReruns(gateRed(expected, verdict!.evidence!), reruns);
      if (step.step === "gate") {
        const refused = await refusal(expected, syncs > 0);
        if (refused) return refused;
        // The gate must have passed on exactly this tree.
        if (local) {
          const progress = await ctx.workRepo.progress(input.issue, ctx.base);
          const run = await runCommandGate(ctx, expected, progress.worktree ? ctx.workRepo.worktreePath(input.issue) : null);
          verdict = { head: expected, state: run.passed ? "green" : "red", ...(run.passed ? {} : { evidence: commandGateEvidence(run) }) };
          reruns += run.reruns;
          // Time passed while the gate ran: the base is read again before landing.
          if (run.passed && !run.cached && (await ctx.refs.read(`refs/heads/${ctx.base}`)) !== baseTip) break;
        } else {
          // The claim is re-checked right before the base moves; that read overlaps the checks'.
          fencing = fence(ctx, input);
          fencing.catch(() => undefined);
          verdict = await ciVerdict(ctx, expected);
        }
        continue;
      }
      if (step.step === "merge") {
        const fencedNow = await (fencing ?? fence(ctx, input));
        fencing = null;
        if (fencedNow) return fencedNow;
        const landed = await landHead(ctx, lg, input, expected, baseTip);
        if (landed.kind === "moved") break; // the next round syncs with the new base
        if (landed.kind === "retry") return { outcome: "retry_later", why: landed.why };
        if (landed.kind === "queue") return landQueued(ctx, lg, input, headRef, release);
        const merging = landed.method === "squash" || landed.method === "merge" ? pull : null;
        return withReruns(await finish(ctx, lg, input, headRef, expected, baseTip, landed, syncs, release, merging), reruns);
      }
      // Sync: H does not contain the base tip; bring the branch up to date (merge, never rebase).
      if (syncs >= MAX_SYNC_ROUNDS) {
        return { outcome: "retry_later", why: `the base kept moving: synced ${syncs} times in one landing` };
      }
      syncs += 1;
      const synced = await sync(ctx, lg, input, headRef, expected);
      if (synced.outcome !== "pushed") return synced.result;
      if (!local) {
        // The synced head's CI starts now: the landing ends here, and the wake plan waits for it.
        return {
          outcome: "synced",
          head: synced.head,
          previousHead: expected,
          baseSha: synced.baseSha,
          why: `${headRef} did not contain ${ctx.base} ${short(baseTip)}: merged the base in and pushed ${short(synced.head)}; its checks must pass before it lands`,
        };
      }
      expected = synced.head;
      break;
    }
  }
  return { outcome: "retry_later", why: "the base kept moving during the landing" };
}

/** The gate's word on a head: its evidence when red, the checks it waits for when pending. */
interface Verdict {
  head: string;
  state: GateState;
  evidence?: GateEvidence;
  pending?: string;
}

/**
 * The gate's verdict at the moment of landing: a conditional request, free (304) when the checks
 * are as this tick's gather read them; the rules come with the tick.
 */
async function ciVerdict(ctx: LandingContext, head: string): Promise<Verdict> {
  const required = ctx.requiredChecks ?? (await ctx.forge.requiredChecks(ctx.base));
  const checks = await ctx.forge.checksFor(head, required);
  const verdict = evaluateGate(checks, required);
  if (verdict.state === "pending") return { head, state: "pending", pending: verdict.pending.join(", ") };
  if (verdict.state === "green") return { head, state: "green" };
  const names = verdict.failing.map((f) => f.name);
  return { head, state: "red", evidence: checkEvidence(checks, names, ctx.config.gate.excerpt_bytes, secretsOf(ctx)) };
}

/** The base requires GitHub's merge queue: the gated head is enqueued, never merged through REST or pushed. */
async function landQueued(ctx: LandingContext, lg: LandingGit, input: LandInput, headRef: string, release: (() => Promise<void>) | null): Promise<LandResult> {
  const fenced = await fence(ctx, input);
  if (fenced) return fenced;
  const baseBefore = (await ctx.refs.read(`refs/heads/${ctx.base}`)) ?? "";
  const gate = { required: ctx.requiredChecks!, excerptBytes: ctx.config.gate.excerpt_bytes, secrets: secretsOf(ctx) };
  const beat = (): Promise<unknown> => ctx.lease.heartbeat().catch(() => false); // the wait may outlast a heartbeat period
  const watch = { forge: ctx.forge, pr: input.pr, head: input.head, gate, beat, stopping: ctx.stopping };
  const step = await landThroughQueue({ ...watch, deadlineMs: ctx.config.gate.timeout_seconds * 1000 });
  if (step.kind === "wait") return { outcome: "retry_later", why: step.why };
  if (step.kind === "red") return gateRed(input.head, step.evidence);
  const mergeSha = step.mergeSha ?? (await ctx.refs.read(`refs/heads/${ctx.base}`)) ?? "";
  return finish(ctx, lg, input, headRef, input.head, baseBefore, { kind: "merged", mergeSha, method: "queue", verified: true, verifyNote: null }, 0, release);
}

type Landed =
  | {
      kind: "merged";
      mergeSha: string;
      method: LandingStrategy | "queue";
      verified: boolean;
      verifyNote: string | null;
      at?: Date;
      /** The check of what a merge call landed, run beside the wrap-up (it only reads). */
      verify?: () => Promise<{ verified: boolean; note: string | null }>;
    }
  | { kind: "moved" }
  | { kind: "queue" }
  | { kind: "retry"; why: string };

async function landHead(ctx: LandingContext, lg: LandingGit, input: LandInput, head: string, baseTip: string): Promise<Landed> {
  // The host resolves "auto" before a fleet starts (server/state/landing-choice.ts); left
  // unresolved, it means the one landing that can never put an ungated tree on the base.
  const strategy = ctx.config.landing.strategy === "auto" ? "push" : ctx.config.landing.strategy;
  if (strategy === "push") {
    // A fast-forward of the base, refused if the base is no longer B: to a landing commit of H's
    // tree (one gated tree per first-parent commit), or to H itself where the base requires
    // status checks, which a new commit would not carry.
    // No request under the fleet (its tick's rules are in ctx).
    const required = ctx.config.gate.ci === "local" ? [] : (ctx.requiredChecks ?? (await ctx.forge.requiredChecks(ctx.base))).contexts;
    const landing = required.length === 0 ? await lg.landingCommit(baseTip, head, `Land #${input.issue} (PR #${input.pr})`) : head;
    const pushed = await lg.pushRef(landing, `refs/heads/${ctx.base}`, baseTip);
    if (pushed.ok) return { kind: "merged", mergeSha: landing, method: "push", verified: true, verifyNote: null, at: new Date() };
    if (pushed.lostRace) return { kind: "moved" };
    return { kind: "retry", why: `the push of ${short(head)} to ${ctx.base} was refused: ${pushed.why}` };
  }
  const method: MergeMethod = strategy;
  let mergeSha: string;
  let at: Date;
  try {
    // The landing itself, one request, pinned to the gated head (GitHub answers 409 if it moved).
    const result = await ctx.forge.mergePull(input.pr, { sha: head, method });
    if (!result.merged || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(result.sha)) {
      return { kind: "retry", why: `GitHub did not merge PR #${input.pr}: ${result.message || "no reason given"}` };
    }
    mergeSha = result.sha;
    at = new Date();
  } catch (error) {
    if (error instanceof ForgeError && error.kind === "not_mergeable") {
      // The rules could not show the queue (unreadable), but GitHub says it is required.
      if (/through the merge queue/i.test(error.message)) return { kind: "queue" };
      const now = await ctx.refs.read(`refs/heads/${ctx.base}`);
      if (now !== null && now !== baseTip) return { kind: "moved" };
      return { kind: "retry", why: `GitHub refused to merge PR #${input.pr} (405): ${error.message}` };
    }
    if (error instanceof ForgeError && error.kind === "conflict") {
      return { kind: "retry", why: `GitHub refused to merge PR #${input.pr} (409): the head moved` };
    }
    throw error;
  }
  return {
    kind: "merged",
    mergeSha,
    method: strategy,
    verified: false,
    verifyNote: null,
    at,
    verify: () => lg.verifyLanded(ctx.base, mergeSha, head, baseTip),
  };
}

async function finish(
  ctx: LandingContext,
  lg: LandingGit,
  input: LandInput,
  headRef: string,
  head: string,
  baseTip: string,
  landed: Extract<Landed, { kind: "merged" }>,
  syncs: number,
  release: (() => Promise<void>) | null,
  /** The PR as read, when it merged through the merge API (GitHub may close its issue). */
  mergedPull: PullRequest | null = null,
): Promise<LandResult> {
  const byMerge = closedByMerge(ctx, mergedPull, input.issue);
  // The base moved: what remains only reads (the check) or tidies up, side by side, and the
  // lock goes meanwhile (it serializes moves of the base; the next may start).
  const [{ issueClosed, branchDeleted }, check] = await Promise.all([
    wrapUpLanded(ctx, lg, input.issue, headRef, head, byMerge),
    landed.verify ? landed.verify() : { verified: landed.verified, note: landed.verifyNote },
    release?.().catch(() => undefined),
  ]);
  return {
    outcome: "merged",
    mergeSha: landed.mergeSha,
    baseBefore: baseTip,
    head,
    method: landed.method,
    verified: check.verified,
    verifyNote: check.note,
    issueClosed,
    ...(byMerge ? { closedByMerge: true } : {}),
    branchDeleted,
    syncs,
    mergedAt: (landed.at ?? new Date()).toISOString(),
  };
}

type SyncStep = { outcome: "pushed"; head: string; baseSha: string } | { outcome: "stop"; result: LandResult };

async function sync(ctx: LandingContext, lg: LandingGit, input: LandInput, headRef: string, head: string): Promise<SyncStep> {
  const stop = (result: LandResult): SyncStep => ({ outcome: "stop", result });
  const wr = ctx.workRepo;
  let progress = await wr.progress(input.issue, ctx.base);
  if (!progress.worktree) {
    // No worktree here (a takeover from another machine, a cleanup): recreate it at the pushed tip.
    await wr.prepare({ issue: input.issue, title: input.title, base: ctx.base });
    progress = await wr.progress(input.issue, ctx.base);
  }
  if (!progress.worktree || progress.branch !== headRef || progress.head === null) {
    return stop({
      outcome: "retry_later",
      why: `the worktree of #${input.issue} is on ${progress.branch ?? "no branch"}, not on the PR's branch ${headRef}`,
    });
  }
  const path = wr.worktreePath(input.issue);
  if (!(await lg.isAncestor(head, progress.head))) {
    // The worktree is behind the PR's head (the branch was pushed from elsewhere): catch up, fast-forward only.
    if (!(await lg.isAncestor(progress.head, head)) || !(await lg.fastForward(path, head))) {
      return stop({ outcome: "retry_later", why: `the worktree of #${input.issue} (${short(progress.head)}) has diverged from the PR's head ${short(head)}` });
    }
  }
  // The claim is read while the base merges in; the push below waits for it (the fencing token).
  const fencing = fence(ctx, input);
  fencing.catch(() => undefined);
  const merged = await wr.syncWithBase(input.issue, ctx.base);
  if (!merged.ok) {
    if (merged.reason === "conflict") {
      const baseSha = await ctx.refs.read(`refs/heads/${ctx.base}`).catch(() => null);
      return stop({
        outcome: "conflict",
        files: merged.conflicts,
        baseSha,
        why: `merging ${ctx.base} into ${headRef} conflicts in ${merged.conflicts.join(", ")}`,
      });
    }
    return stop({ outcome: "retry_later", why: `the worktree of #${input.issue} has uncommitted changes in ${merged.dirty.join(", ")}: nothing was synced` });
  }
  const fenced = await fencing;
  if (fenced) return stop(fenced);
  try {
    const pushed = await wr.push(input.issue);
    if (pushed.branch !== headRef) {
      return stop({ outcome: "retry_later", why: `pushed ${pushed.branch}, which is not the PR's branch ${headRef}` });
    }
    const baseSha = (await lg.revParse(`refs/remotes/origin/${ctx.base}`)) ?? "";
    return { outcome: "pushed", head: pushed.sha, baseSha };
  } catch (error) {
    if (error instanceof PushRejectedError || error instanceof WorktreeError) {
      return stop({ outcome: "retry_later", why: `the synced branch could not be pushed: ${error.message}` });
    }
    throw error;
  }
}

function gateRed(head: string, evidence: GateEvidence): LandResult {
  return { outcome: "gate_red", head, evidence, why: evidence.summary };
}

function short(sha: string): string {
  return sha.slice(0, 12);
}
