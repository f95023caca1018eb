// decide: the working set plus this host's local facts (its workers, their exits, the
// breaker, a quota pause, the landing slot) in; the ordered list of actions one tick takes out,
// each carrying every choice its effect needs (retry or escalate, start a worker or not, land
// alone or beside others). Pure: the effects (server/fleet/effects) are the only place with
// side effects and decide nothing again; a dry run is this list, not acted on.
import type { EpicDone } from "./epics.js";
import type { WorkingSet } from "./rebuild.js";
import type { MineClaim } from "./inflight.js";
import { classifyNoPr } from "./classify.js";
import type { VerdictKind } from "./markers.js";
import { pinnedHead } from "./review-stage.js";
import { earlyConflicts, overlapOrder, type OverlapHold } from "./overlap.js";
import { conflictWaitsFor, landingOrder, type ConflictHold, type ConflictWaitInput, type PairConflict, type PendingConflict } from "./conflicts.js";

export type WorkerState = "running" | "exited" | "none";

/** What this host knows of one of its claims beyond GitHub. */
export interface LocalClaim {
  worker: WorkerState;
  /** For a running worker: the liveness verdict ("kill" ends it). */
  liveness?: "active" | "stall_candidate" | "busy" | "kill";
  /** Seconds since the worker's newest activity (output, worktree write, commit). */
  idleSeconds?: number;
  /** Commits on the branch not on the base. */
  commitsAhead?: number;
  /** Whether the branch changes anything against the base (read for an exited worker, and whenever the verdict is already-satisfied). */
  changes?: boolean;
  /** The verdict the worker left (its file, or the fleet's marker comment). */
  verdict?: { kind: VerdictKind; reason: string } | null;
  /** For a blocked verdict: blockers still open. */
  blockersOpen?: number[];
  /** For a blocked verdict: every blocker known (linked in GitHub or named by the worker), open or not. */
  blockers?: number[];
  /** For an exited worker: its result ("commits": push and open the PR). */
  outcome?: "commits" | "verdict" | "nothing";
  /** Times this host killed the claim's workers for hanging. */
  kills?: number;
  /** Times this host dispatched the claim again after a blocked verdict whose blockers had closed. */
  redispatches?: number;
  /** For an exited worker: the fleet ended it (a stall, a stop), so its commits may be half-done. */
  killed?: boolean;
  /** The review stage: this host's reviewer for the claim's PR is running, or exited with a result to take. */
  reviewer?: "running" | "exited";
  /** The PR's head is not the pinned (reviewed) head but a clean sync merge of it with the base. */
  pinHolds?: boolean;
  /** For an exited worker: the fleet ended it past `budget.usd_per_attempt`, and what it spent: the attempt failed, whatever it committed. */
  overBudget?: string | null;
}

export interface DecideInput {
  set: WorkingSet;
  local: ReadonlyMap<number, LocalClaim>;
  /** Workers at once. */
  target: number;
  /** Retries after the first attempt. */
  retry: number;
  /** Landing is authorized (project_start's auto_merge). */
  autoMerge: boolean;
  /** Births are paused (breaker, quota, auth, stop): nothing new starts. */
  birthsPaused: boolean;
  /** Draining: release what has no PR, start nothing. */
  stopping: boolean;
  idleGraceSeconds: number;
  /** Free re-dispatches after "blocked" before a claim that keeps saying so is escalated. */
  maxRedispatches?: number;
  /** Kills of a hanging worker before the claim counts as a failed attempt. */
  maxKills?: number;
  /** The issue whose PR was synced with the base and waits for its CI: it lands next, the others wait. */
  landingSlot?: number | null;
  /** Required CI: one landing move (a merge or a sync) per tick, so CI restarts on one PR at a time. */
  oneLandingPerTick?: boolean;
  /** `landing.train.max`: more than 1 lets two or more green PRs land together as one train. */
  trainMax?: number;
  /** The review stage (`review.command` set): green PRs are reviewed before they land. */
  review?: { maxRounds: number } | null;
  /** Issue → its PR's head does not merge with the base (seen after a landing, at a sync, or when the base moved). */
  conflicts?: ReadonlyMap<number, PendingConflict>;
  /** Let a conflict retry wait for the in-flight work that changes its files (`conflicts.wait`); null: retry at once. */
  conflictWait?: ConflictWaitInput | null;
  /** Pairs of in-flight heads that do not merge with each other: the fewest conflicts land first. */
  pairs?: readonly PairConflict[];
  /** Epics whose sub-issues are all closed (`epics.close_when_done`): each is closed. */
  epicsDone?: readonly EpicDone[];
  /** Overlap-aware dispatch: paths each ready issue names, and the files in-flight PRs change. */
  overlap?: { pathsOf: ReadonlyMap<number, readonly string[]>; inFlight: ReadonlySet<string> } | null;
  /** Spend budgets (`budget`), as facts: see BudgetFacts. */
  budget?: BudgetFacts | null;
}

/**
 * What the spend budgets say this tick. A reached day budget holds births like a quota pause
 * (nothing killed, no attempt spent); an issue past its budget is escalated instead of retried.
 */
export interface BudgetFacts {
  /** Set once the fleet's spend today reached `budget.usd_per_day`: why, said in status. */
  dayHold: string | null;
  /** Issue → its spend, for issues past `budget.usd_per_issue`. */
  issuesOver: ReadonlyMap<number, string>;
}

export type FailureEvidence =
  | { kind: "ci"; pr: number; failing: string[] }
  | { kind: "verdict"; verdict: VerdictKind; reason: string }
  | { kind: "no_result"; why: string }
  | { kind: "hung"; kills: number }
  | { kind: "gate"; summary: string; excerpt: string }
  /** A human with write access asked for changes on the PR: their words are the evidence. */
  | { kind: "review"; pr: number; changes: Array<{ by: string; body: string }> }
  /** The review stage's reviewer refuted the PR: its findings are the evidence. */
  | { kind: "review_findings"; pr: number; findings: string };

export type Action =
  | { kind: "release"; issue: number; sha: string; why: string; killWorker: boolean }
  | { kind: "kill"; issue: number; why: string }
  /** `exclusive`: once a landing merged or synced this tick, this one waits for the next. */
  | { kind: "land"; issue: number; sha: string; pr: number; head: string; exclusive: boolean }
  /** Two or more green PRs (up to `landing.train.max`, in claim order) land as one gated train; `issue` is the first's. */
  | { kind: "land_train"; issue: number; members: Array<{ issue: number; sha: string; pr: number; head: string }> }
  | { kind: "hold"; issue: number; pr: number; why: string }
  /** Green but short of required human approvals: keep the claim, say on the PR what is needed. */
  | { kind: "await_review"; issue: number; pr: number; head: string; required: number; approvedBy: string[] }
  /** `startWorker`: the next attempt's worker starts now (false: births are held; a later tick recovers it). */
  | { kind: "retry"; issue: number; sha: string; attempt: number; pr: number | null; evidence: FailureEvidence; startWorker: boolean }
  | { kind: "escalate"; issue: number; sha: string; pr: number | null; why: string; evidence: FailureEvidence | null }
  | { kind: "open_pr"; issue: number; sha: string }
  | { kind: "close_done"; issue: number; sha: string; reason: string }
  /** An epic whose sub-issues are all closed: close it, listing them (no claim: an epic is never worked). */
  | { kind: "close_epic"; issue: number; children: number[] }
  | { kind: "redispatch"; issue: number; sha: string; why: string }
  | { kind: "recover"; issue: number; sha: string; why: string }
  | { kind: "reclaim"; issue: number; sha: string; from: string | null; thenRelease: boolean }
  /** The fleet's own open PR whose issue has no claim: claim the issue again and carry the PR on (no worker: the PR is the work). */
  | { kind: "adopt"; issue: number; pr: number; head: string; headRef: string }
  | { kind: "dispatch"; issue: number; title: string; attempt: number }
  /** Start a reviewer on the PR's head (a birth: it takes a worker slot). */
  | { kind: "review"; issue: number; sha: string; pr: number; head: string; round: number }
  /** A reviewer exited: post its verdict on the PR, push its fixes, or send the findings back. */
  | { kind: "review_result"; issue: number; sha: string; pr: number; head: string; round: number };

export interface Decision {
  actions: Action[];
  /** Workers that would be running after the births this tick. */
  workers: number;
  /** Why no (more) births, when there was room: for status and the summary. */
  birthsHeld: string | null;
  /** Ready issues started later because in-flight work changes the paths they name. */
  overlapHolds: OverlapHold[];
  /** The landing slot after this tick's decisions: kept while its PR still waits for CI, else free. */
  landingSlot: number | null;
  /** Conflict retries that wait for in-flight work changing the same files to land. */
  conflictHolds: ConflictHold[];
}

/** The attempt a retry starts: one more than the retries so far (attempt labels count retries). */
function nextAttempt(claim: Pick<MineClaim, "attempt">): number {
  return claim.attempt + 1;
}

/** What the fleet does about a failed attempt: retry while attempts are left, else escalate. */
export function failureAction(
  claim: Pick<MineClaim, "issue" | "sha" | "pr" | "attempt">,
  input: Pick<DecideInput, "retry" | "birthsPaused" | "stopping" | "budget">,
  evidence: FailureEvidence,
): Extract<Action, { kind: "retry" | "escalate" }> {
  const over = input.budget?.issuesOver.get(claim.issue);
  if (over !== undefined) {
    return { kind: "escalate", issue: claim.issue, sha: claim.sha, pr: claim.pr, why: `over its budget: ${over}`, evidence };
  }
  if (claim.attempt < input.retry) {
    return { kind: "retry", issue: claim.issue, sha: claim.sha, attempt: nextAttempt(claim), pr: claim.pr, evidence, startWorker: !input.birthsPaused && !input.stopping };
  }
  const tries = claim.attempt + 1;
  return {
    kind: "escalate",
    issue: claim.issue,
    sha: claim.sha,
    pr: claim.pr,
    why: `failed ${tries} attempt${tries === 1 ? "" : "s"} (retry limit ${input.retry})`,
    evidence,
  };
}

/**
 * The review stage for a green PR: true when a passing review pins this head (or the head is a
 * clean sync of the pinned one) so it may land; otherwise the step it takes instead is pushed.
 */
function reviewPassed(claim: MineClaim, local: LocalClaim, input: DecideInput, actions: Action[], births: Action[]): boolean {
  const pr = claim.pr!;
  const head = claim.head!;
  const rounds = claim.reviewMarks.length;
  if (local.reviewer === "running") {
    if (local.liveness === "kill") {
      actions.push({ kind: "kill", issue: claim.issue, why: "the reviewer went quiet past the kill threshold with no busy child" });
      const kills = (local.kills ?? 0) + 1;
      if (kills >= (input.maxKills ?? 2)) actions.push(failureAction(claim, input, { kind: "hung", kills }));
    }
    return false;
  }
  if (local.reviewer === "exited") {
    actions.push({ kind: "review_result", issue: claim.issue, sha: claim.sha, pr, head, round: rounds + 1 });
    return false;
  }
  const pinned = pinnedHead(claim.reviewMarks);
  if (pinned !== null && (pinned === head || local.pinHolds === true)) return true;
  if (rounds >= input.review!.maxRounds) {
    actions.push({
      kind: "escalate",
      issue: claim.issue,
      sha: claim.sha,
      pr,
      why: `the review stage did not pass PR #${pr} at its head in ${rounds} round(s) (review.max_rounds ${input.review!.maxRounds})`,
      evidence: null,
    });
    return false;
  }
  if (!input.stopping) births.push({ kind: "review", issue: claim.issue, sha: claim.sha, pr, head, round: rounds + 1 });
  return false;
}

export function decide(given: DecideInput): Decision {
  const dayHold = given.budget?.dayHold ?? null;
  // A reached day budget holds births exactly as a pause does; status says which budget.
  const input: DecideInput = dayHold !== null && !given.birthsPaused ? { ...given, birthsPaused: true } : given;
  const actions: Action[] = [];
  const births: Action[] = [];
  const maxKills = input.maxKills ?? 2;
  let running = 0;
  const pending = input.conflicts ?? new Map<number, PendingConflict>();
  const conflicted = new Map(earlyConflicts(input.set.mine, new Map([...pending].map(([n, c]) => [n, c.files]))).map((c) => [c.issue, c]));
  const conflictHolds: ConflictHold[] = [];
  // A PR synced with the base whose CI still runs holds the landing slot: the others wait.
  const slot = input.landingSlot ?? null;
  const slotHolder = slot === null ? undefined : input.set.mine.find((m) => m.issue === slot && m.issueOpen && m.status !== "failure");
  const landingSlot = slotHolder && slotHolder.status !== "awaiting_merge" ? slotHolder.issue : null;
  // Green PRs that may ride a train, and where in the order their landing goes.
  const trainMax = input.trainMax ?? 1;
  const riders: Array<Extract<Action, { kind: "land" }>> = [];
  let trainAt = -1;

  for (const claim of landingOrder(input.set.mine, input.pairs ?? [])) {
    const local = input.local.get(claim.issue) ?? { worker: "none" as const };
    if (local.worker === "running") running += 1;

    if (!claim.issueOpen || claim.reservedByHuman) {
      actions.push({
        kind: "release",
        issue: claim.issue,
        sha: claim.sha,
        why: claim.reservedByHuman ? "a human took the issue back" : "the issue is closed",
        killWorker: local.worker === "running",
      });
      if (local.worker === "running") running -= 1;
      continue;
    }

    const conflict = conflicted.get(claim.issue);
    if (conflict) {
      // The PR no longer merges with the base: retry with the paths named, instead of spending
      // its CI run and its landing turn to find out; but first wait for the in-flight work that
      // changes the same files to land, or the retry conflicts again.
      const seen = pending.get(claim.issue)!;
      const waitingFor = input.conflictWait && !input.stopping ? conflictWaitsFor(claim.issue, seen, input.set.mine, pending, input.conflictWait) : [];
      if (waitingFor.length > 0) {
        conflictHolds.push({ issue: claim.issue, pr: conflict.pr, files: conflict.files, waitingFor, heldSeconds: seen.heldSeconds, maxSeconds: input.conflictWait!.maxSeconds });
        continue;
      }
      const files = conflict.files.join(", ");
      const where = seen.source === "landing" ? `merging the base into PR #${conflict.pr} conflicts in ${files}` : `the base moved and merging it into PR #${conflict.pr} conflicts in ${files} (seen early, ${seen.source === "early" ? "after a landing" : "the base moved"})`;
      actions.push(failureAction(claim, input, { kind: "gate", summary: where, excerpt: conflict.files.join("\n") }));
      continue;
    }
    switch (claim.status) {
      case "awaiting_merge":
        if (input.review && claim.pr !== null && claim.head !== null && !reviewPassed(claim, local, input, actions, births)) continue;
        if (!input.autoMerge || claim.pr === null || claim.head === null) {
          actions.push({ kind: "hold", issue: claim.issue, pr: claim.pr ?? 0, why: "merges are held: the project was started without auto_merge" });
        } else if (trainMax > 1 && !slotHolder) {
          if (trainAt < 0) trainAt = actions.length;
          riders.push({ kind: "land", issue: claim.issue, sha: claim.sha, pr: claim.pr, head: claim.head, exclusive: input.oneLandingPerTick ?? false });
        } else if (!slotHolder || slotHolder.issue === claim.issue || (slotHolder.status === "awaiting_merge" && trainMax <= 1)) {
          // A slot holder that turned green lands first; without trains the next green PR may
          // then take the slot in the same pass (its sync starts CI at once instead of a tick
          // later). With trains the others wait for the next pass, which makes them one train.
          const land: Action = { kind: "land", issue: claim.issue, sha: claim.sha, pr: claim.pr, head: claim.head, exclusive: input.oneLandingPerTick ?? false };
          const first = slotHolder?.issue === claim.issue ? actions.findIndex((a) => a.kind === "land") : -1;
          if (first >= 0) actions.splice(first, 0, land);
          else actions.push(land);
        }
        continue;
      case "awaiting_review":
        // Held for a human: the claim stays, no worker runs, nothing else waits on it.
        if (claim.pr !== null && claim.head !== null && claim.review) {
          actions.push({ kind: "await_review", issue: claim.issue, pr: claim.pr, head: claim.head, required: claim.review.required, approvedBy: claim.review.approvedBy });
        }
        continue;
      case "changes_requested":
        actions.push(failureAction(claim, input, { kind: "review", pr: claim.pr ?? 0, changes: (claim.review?.changes ?? []).map((c) => ({ by: c.by, body: c.body })) }));
        continue;
      case "awaiting_ci":
        continue;
      case "failure":
        actions.push(failureAction(claim, input, { kind: "ci", pr: claim.pr ?? 0, failing: claim.failing }));
        continue;
      case "no_pr":
        break;
    }

    // No PR yet: still coding, finished one way or another, or dead.
    if (local.worker === "running" && local.liveness === "kill") {
      actions.push({ kind: "kill", issue: claim.issue, why: "quiet past the kill threshold with no busy child" });
      running -= 1;
      const kills = (local.kills ?? 0) + 1;
      if (kills >= maxKills) actions.push(failureAction(claim, input, { kind: "hung", kills }));
      else if (!input.stopping) births.push({ kind: "recover", issue: claim.issue, sha: claim.sha, why: `worker hung (kill ${kills} of ${maxKills})` });
      continue;
    }
    if (local.worker === "running") continue;

    if (input.stopping) {
      // A worker that finished on its own while the project drains has a result: propose it,
      // and the claim is kept with its PR. A killed one's commits may be half-done: release.
      if (local.worker === "exited" && local.outcome === "commits" && !local.killed) actions.push({ kind: "open_pr", issue: claim.issue, sha: claim.sha });
      else actions.push({ kind: "release", issue: claim.issue, sha: claim.sha, why: "the project is stopping and the claim has no PR", killWorker: false });
      continue;
    }
    if (local.worker === "exited" && local.overBudget) {
      actions.push(failureAction(claim, input, { kind: "no_result", why: local.overBudget }));
      continue;
    }
    if (local.worker === "exited" && local.outcome === "commits") {
      // Commits are the worker's result: push them and open the PR (a verdict of
      // already-satisfied is refuted by them; see server/workers/outcome.ts).
      actions.push({ kind: "open_pr", issue: claim.issue, sha: claim.sha });
      continue;
    }
    const verdict = local.verdict ?? null;
    const blockersOpen = (local.blockersOpen ?? []).length > 0;
    const classified = classifyNoPr({
      workerAlive: false,
      idleSeconds: local.idleSeconds ?? Number.POSITIVE_INFINITY,
      graceSeconds: input.idleGraceSeconds,
      verdict: verdict?.kind ?? null,
      commitsAhead: local.commitsAhead ?? 0,
      blockersOpen,
    });
    switch (classified.action) {
      case "verify_empty_then_close":
        actions.push(
          local.changes
            ? failureAction(claim, input, { kind: "verdict", verdict: "already-satisfied", reason: "the branch changes files, which refutes already-satisfied" })
            : { kind: "close_done", issue: claim.issue, sha: claim.sha, reason: verdict?.reason ?? "already satisfied" },
        );
        break;
      case "redispatch":
        if ((local.blockers ?? []).length === 0) {
          // "Blocked" on nothing anyone can name: running it again would only say so again, for
          // free and forever. A human has to find the dependency.
          actions.push({
            kind: "escalate",
            issue: claim.issue,
            sha: claim.sha,
            pr: null,
            why: "blocked, but neither the worker nor the issue's links name what it waits for: a gap in the dependency graph",
            evidence: verdict ? { kind: "verdict", verdict: verdict.kind, reason: verdict.reason } : null,
          });
          break;
        }
        if ((local.redispatches ?? 0) >= (input.maxRedispatches ?? 2)) {
          // Its blockers closed and it still says "blocked": a redispatch is free, so without a
          // bound it would loop forever. A human has to find what it really waits for.
          actions.push({
            kind: "escalate",
            issue: claim.issue,
            sha: claim.sha,
            pr: null,
            why: `still blocked after ${local.redispatches ?? 0} re-dispatch(es) once its blockers closed: a gap in the dependency graph`,
            evidence: verdict ? { kind: "verdict", verdict: verdict.kind, reason: verdict.reason } : null,
          });
          break;
        }
        births.push({ kind: "redispatch", issue: claim.issue, sha: claim.sha, why: classified.why });
        break;
      case "escalate_dependency":
        actions.push({
          kind: "escalate",
          issue: claim.issue,
          sha: claim.sha,
          pr: null,
          why: `blocked by open issue(s) ${(local.blockersOpen ?? []).map((n) => `#${n}`).join(", ")}: a gap in the dependency graph`,
          evidence: verdict ? { kind: "verdict", verdict: verdict.kind, reason: verdict.reason } : null,
        });
        break;
      case "retry_or_escalate":
        actions.push(
          failureAction(
            claim,
            input,
            verdict ? { kind: "verdict", verdict: verdict.kind, reason: verdict.reason } : { kind: "no_result", why: classified.why },
          ),
        );
        break;
      case "recover":
        if (local.worker === "exited") {
          // It ran and exited with no commits and no verdict: that is a failed attempt, not a death.
          actions.push(failureAction(claim, input, { kind: "no_result", why: "the worker exited with no commits and no verdict" }));
        } else {
          births.push({ kind: "recover", issue: claim.issue, sha: claim.sha, why: "no worker is running for this claim" });
        }
        break;
      case "leave":
        break;
    }
  }

  if (riders.length === 1) actions.splice(trainAt, 0, riders[0]!);
  // The ones past `max` wait for the next train.
  else if (riders.length > 1) actions.splice(trainAt, 0, { kind: "land_train", issue: riders[0]!.issue, members: riders.slice(0, trainMax).map(({ issue, sha, pr, head }) => ({ issue, sha, pr, head })) });

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
    return { actions: ordered, workers: running, birthsHeld: "stopping", overlapHolds: [], landingSlot, conflictHolds };
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
    for (const orphan of input.set.orphans ?? []) ordered.push({ kind: "adopt", issue: orphan.issue, pr: orphan.pr, head: orphan.head, headRef: orphan.headRef });
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
    const { order, holds } = input.overlap ? overlapOrder(input.set.frontier.dispatch, room, input.overlap.pathsOf, input.overlap.inFlight) : { order: input.set.frontier.dispatch, holds: [] };
    overlapHolds = holds;
    for (const item of order) {
      if (room <= 0) break;
      ordered.push({ kind: "dispatch", issue: item.number, title: item.title, attempt: item.attempt });
      room -= 1;
    }
  }
  const workers = input.target - room;
  return { actions: ordered, workers: Math.min(input.target, Math.max(workers, running)), birthsHeld, overlapHolds, landingSlot, conflictHolds };
}

/**
 * Landings go right after the releases, before the PRs opened or closed in the same pass: each
 * landing reads the open-PR list again (server/landing/own-pulls.ts), a conditional read that is
 * free (304) while the list is as the snapshot read it, and a 200 after a PR of this very pass.
 * The order within each kind stands.
 */
function landingsFirst(actions: readonly Action[]): Action[] {
  const lands = (a: Action): boolean => a.kind === "land" || a.kind === "land_train";
  return [...actions.filter((a) => a.kind === "release"), ...actions.filter(lands), ...actions.filter((a) => a.kind !== "release" && !lands(a))];
}
