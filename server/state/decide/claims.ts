// The per-claim decisions: for each claim we hold, in landing order, what its state asks for —
// release (closed, taken back), a conflict retry or its wait, the review stage, a landing (landing.ts),
// a hold for a human, a failed attempt's retry or escalation, and for a claim with no PR yet the
// fate of its worker (kill a hung one, open the PR of its commits, close, redispatch, recover).
// Births (recover, redispatch, review) come out separately: workers.ts places them by room.
import type { MineClaim } from "../inflight.js";
import { classifyNoPr } from "../classify.js";
import { pinnedHead } from "../review-stage.js";
import { earlyConflicts } from "../overlap.js";
import { conflictWaitsFor, landingOrder, type ConflictHold, type PendingConflict } from "../conflicts.js";
import { landGreen, type LandingPlan } from "./landing.js";
import type { Action, DecideInput, FailureEvidence, ClaimFacts } from "./types.js";

export interface ClaimDecisions {
  actions: Action[];
  births: Action[];
  /** Workers running after this tick's kills and releases. */
  running: number;
  conflictHolds: ConflictHold[];
}

/** The attempt a retry starts: one more than the retries so far (attempt labels count retries). */
function nextAttempt(claim: Pick<MineClaim, "attempt">): number {
  return claim.attempt + 1;
}

/**
 * Whether a failed attempt's retry fixes its PR forward: red checks on a PR this very attempt
 * opened. Fresh from the base instead after a fix attempt (the PR is older than the attempt), for
 * anything but red checks (a conflict the base made, a verdict, a review), or with fix_forward off.
 */
function fixesForward(
  claim: Pick<MineClaim, "pr" | "attempt"> & { prAttempt?: number | null },
  input: Pick<DecideInput, "fixForward" | "stopping">,
  evidence: FailureEvidence,
): boolean {
  return input.fixForward === true && !input.stopping && evidence.kind === "ci" && claim.pr !== null && claim.prAttempt === claim.attempt + 1;
}

/** A fix attempt's worker is under way (or its exit waits to be taken) on a red PR opened by an earlier attempt. */
function fixing(claim: MineClaim, local: ClaimFacts): boolean {
  return claim.pr !== null && claim.prAttempt !== null && claim.prAttempt <= claim.attempt && local.worker !== "none" && local.reviewer === undefined;
}

/**
 * The next step of a fix attempt: wait while its worker runs (ending it when it hangs), push its
 * new commits to the PR (its checks run again), or count it failed: a fix that failed too starts
 * fresh (failureAction: the PR is older than the attempt) or is escalated.
 */
function fixStep(claim: MineClaim, local: ClaimFacts, input: DecideInput, maxKills: number, actions: Action[], births: Action[]): "running" | "ended" {
  if (local.worker === "running") {
    if (local.liveness !== "kill") return "running";
    actions.push({ kind: "kill", issue: claim.issue, why: "quiet past the kill threshold with no busy child" });
    const kills = (local.kills ?? 0) + 1;
    if (kills >= maxKills) actions.push(failureAction(claim, input, { kind: "hung", kills }));
    else if (!input.stopping) births.push({ kind: "recover", issue: claim.issue, sha: claim.sha, why: `worker hung (kill ${kills} of ${maxKills})` });
    return "ended";
  }
  if (local.overBudget) actions.push(failureAction(claim, input, { kind: "no_result", why: local.overBudget }));
  else if (local.runtimeFault) actions.push(failureAction(claim, input, { kind: "no_result", why: local.runtimeFault.why }));
  else if (local.outcome === "commits" && local.moved === true && !local.killed) actions.push({ kind: "open_pr", issue: claim.issue, sha: claim.sha });
  else if (local.verdict) actions.push(failureAction(claim, input, { kind: "verdict", verdict: local.verdict.kind, reason: local.verdict.reason }));
  else actions.push(failureAction(claim, input, { kind: "no_result", why: `the fix attempt added no commits to PR #${claim.pr}` }));
  return "ended";
}

/** What the fleet does about a failed attempt: retry while attempts are left, else escalate. */
export function failureAction(
  claim: Pick<MineClaim, "issue" | "sha" | "pr" | "attempt"> & { prAttempt?: number | null },
  input: Pick<DecideInput, "retry" | "birthsPaused" | "stopping" | "budget" | "fixForward">,
  evidence: FailureEvidence,
): Extract<Action, { kind: "retry" | "escalate" }> {
  const over = input.budget?.issuesOver.get(claim.issue);
  if (over !== undefined) {
    return { kind: "escalate", issue: claim.issue, sha: claim.sha, pr: claim.pr, why: `over its budget: ${over}`, evidence };
  }
  if (claim.attempt < input.retry) {
    return {
      kind: "retry",
      issue: claim.issue,
      sha: claim.sha,
      attempt: nextAttempt(claim),
      pr: claim.pr,
      evidence,
      startWorker: !input.birthsPaused && !input.stopping,
      ...(fixesForward(claim, input, evidence) ? { fix: true, resume: true } : {}),
    };
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
function reviewPassed(claim: MineClaim, local: ClaimFacts, input: DecideInput, actions: Action[], births: Action[]): boolean {
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

export function decideClaims(input: DecideInput, plan: LandingPlan): ClaimDecisions {
  const actions: Action[] = [];
  const births: Action[] = [];
  const maxKills = input.maxKills ?? 2;
  let running = 0;
  const pending = input.conflicts ?? new Map<number, PendingConflict>();
  const conflicted = new Map(earlyConflicts(input.set.mine, new Map([...pending].map(([n, c]) => [n, c.files]))).map((c) => [c.issue, c]));
  const conflictHolds: ConflictHold[] = [];

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
        conflictHolds.push({
          issue: claim.issue,
          pr: conflict.pr,
          files: conflict.files,
          waitingFor,
          heldSeconds: seen.heldSeconds,
          maxSeconds: input.conflictWait!.maxSeconds,
        });
        continue;
      }
      const files = conflict.files.join(", ");
      const where =
        seen.source === "landing"
          ? `merging the base into PR #${conflict.pr} conflicts in ${files}`
          : `the base moved and merging it into PR #${conflict.pr} conflicts in ${files} (seen early, ${seen.source === "early" ? "after a landing" : "the base moved"})`;
      actions.push(failureAction(claim, input, { kind: "gate", summary: where, excerpt: conflict.files.join("\n") }));
      continue;
    }
    switch (claim.status) {
      case "awaiting_merge":
        if (input.review && claim.pr !== null && claim.head !== null && !reviewPassed(claim, local, input, actions, births)) continue;
        landGreen(plan, claim, input.autoMerge, actions);
        continue;
      case "awaiting_review":
        // Held for a human: the claim stays, no worker runs, nothing else waits on it.
        if (claim.pr !== null && claim.head !== null && claim.review) {
          actions.push({
            kind: "await_review",
            issue: claim.issue,
            pr: claim.pr,
            head: claim.head,
            required: claim.review.required,
            approvedBy: claim.review.approvedBy,
          });
        }
        continue;
      case "changes_requested":
        actions.push(
          failureAction(claim, input, { kind: "review", pr: claim.pr ?? 0, changes: (claim.review?.changes ?? []).map((c) => ({ by: c.by, body: c.body })) }),
        );
        continue;
      case "awaiting_ci":
        continue;
      case "failure":
        if (fixing(claim, local)) {
          if (fixStep(claim, local, input, maxKills, actions, births) === "ended" && local.worker === "running") running -= 1;
          continue;
        }
        if (claim.rerun && claim.pr !== null && claim.head !== null && !input.stopping && !local.rerunRefused) {
          // A flaky check costs no attempt: its jobs run again on the same head, and the wait goes on.
          actions.push({ kind: "rerun_checks", issue: claim.issue, sha: claim.sha, pr: claim.pr, head: claim.head, checks: claim.rerun });
          continue;
        }
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
    if (local.worker === "exited" && local.runtimeFault && !local.overBudget) {
      // The runner failed, not the worker (it died, its run was cancelled elsewhere): the attempt
      // is spent, and the next one continues from what it had pushed, unless the fault says otherwise.
      const failure = failureAction(claim, input, { kind: "no_result", why: local.runtimeFault.why });
      actions.push(failure.kind === "retry" && local.runtimeFault.resume ? { ...failure, resume: true } : failure);
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
            ? failureAction(claim, input, {
                kind: "verdict",
                verdict: "already-satisfied",
                reason: "the branch changes files, which refutes already-satisfied",
              })
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

  return { actions, births, running, conflictHolds };
}
