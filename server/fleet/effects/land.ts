// land: a green PR of ours lands (see server/landing), one landing slot at a time under
// required CI; the outcome moves the claim on (merged, retried, escalated) or waits.
import type { LandOutcome } from "../../landing/fleet-landing.js";
import { checkLines, landedChanges, renderValidation, upsertValidation } from "./validation.js";
import { afterActions, defineEffect, type ActionOf, type FleetRuntime, type TickScope } from "./effect.js";
import { clearRunnerError, failedAttempt, removeWorktree } from "./failure.js";
import { conflictingFiles } from "../../landing/early-conflicts.js";
import { landingTurn, type LandingPass } from "../../state/decide/landing.js";
import { noteLock, slotInPass } from "../landing-events.js";

/** The pass as it stands at a landing's turn: what the core's landing rules read. */
export function landingPass(fleet: FleetRuntime, tick: TickScope): LandingPass {
  return {
    inFlight: fleet.inFlight.pending(),
    slot: slotInPass(fleet, tick.events),
    blocked: tick.events.blocked.length,
    conflicted: (n) => fleet.conflicts.has(n),
  };
}

export const land = defineEffect("land", async (fleet, tick, action) => {
  // Whether it goes at its turn, by the core's rules (state/decide/landing.ts), given the pass so far.
  if (!landingTurn(action, landingPass(fleet, tick)).go) return;
  const issue = tick.issues.get(action.issue);
  fleet.ledger.landingStart(action.issue, action.pr, action.head);
  // The PR's branch as this tick listed it: a turn that only syncs needs no read of the PR.
  const claim = tick.set.mine.find((m) => m.issue === action.issue && m.pr === action.pr && m.head === action.head);
  const input = {
    issue: action.issue,
    title: issue?.title ?? `#${action.issue}`,
    claimSha: action.sha,
    pr: action.pr,
    head: action.head,
    ...(claim?.headRef ? { listed: { headRef: claim.headRef } } : {}),
  };
  const required = tick.required;
  if (action.background) {
    // It waits (the local gate runs, or the merge queue decides): in the background, so the
    // tick goes on; a later tick takes the outcome.
    await fleet.inFlight.start(tick, [action.issue], async () => {
      const outcome = await fleet.landing.land(input, required);
      const moved = outcome.outcome === "busy" || outcome.outcome === "retry_later" || outcome.outcome === "not_ours" ? [] : [action.issue];
      return { moved, finish: (later) => landed(fleet, later, action, outcome) };
    });
    return;
  }
  // Under required CI a landing never waits (pending checks come back as "retry later"): inline,
  // and the next PR in line may sync in this very pass (its wrap-up waits for that).
  await landed(fleet, tick, action, await fleet.landing.land(input, required), true);
});

async function landed(fleet: FleetRuntime, tick: TickScope, action: ActionOf<"land">, outcome: LandOutcome, inline = false): Promise<void> {
  if (outcome.swept?.length) {
    fleet.log(
      "info",
      "dead_trains_swept",
      `deleted dead trains' branches ${outcome.swept.join(", ")} and closed their draft PRs (their hosts died mid-train)`,
      undefined,
      { swept: outcome.swept },
    );
  }
  if (outcome.outcome === "synced") {
    tick.events.landing.push({ kind: "synced", issue: action.issue });
    // The synced head's checks start now: the wait watches them.
    tick.events.pushed.push({ issue: action.issue, pr: action.pr, head: outcome.head });
  } else if (outcome.outcome === "busy") {
    // Another host holds the landing lock: its landing moves the base, which wakes us.
    tick.events.blocked.push(action.issue);
    landingBusy(fleet, tick, [action.issue], outcome.why, outcome.holder);
    return;
  }
  noteLock(fleet, tick.events, null);
  await afterLanding(fleet, tick, action, outcome, { deferWrapUp: inline });
}

/**
 * What a landing's outcome does to the claim; `note` says on the board which train landed it.
 * `deferWrapUp`: a merged PR's board, claim and worktree wait for the tick's other actions.
 */
export async function afterLanding(
  fleet: FleetRuntime,
  tick: TickScope,
  action: ActionOf<"land">,
  outcome: LandOutcome,
  { note, deferWrapUp = false }: { note?: string; deferWrapUp?: boolean } = {},
): Promise<void> {
  const n = action.issue;
  const cfg = fleet.registration.config;
  // The local gate's re-runs, one ledger record each, before the landing or the failure they led to (the report counts what they saved).
  const reruns = outcome.outcome === "merged" || outcome.outcome === "gate_red" ? (outcome.gateReruns ?? 0) : 0;
  for (let round = 1; round <= reruns; round += 1) {
    fleet.log("info", "rerun", `#${n}: the local gate was red on ${action.head.slice(0, 12)}: ran it again (re-run ${round} of ${cfg.gate.rerun_failed})`, n, {
      pr: action.pr,
      head: action.head,
      checks: "local gate",
      round,
    });
  }
  switch (outcome.outcome) {
    case "merged": {
      // Logged when the base moved, before the bookkeeping below (the bench times landings by it).
      fleet.log("info", "merged", `#${n}: landed PR #${action.pr} as ${outcome.mergeSha?.slice(0, 12) ?? "?"}`, n, {
        ...outcome,
        pr: action.pr,
        head: action.head,
      });
      tick.report.merged.push(n);
      if (!note) await checkEarlyConflicts(fleet, tick, n, outcome.mergeSha); // a train checks once, after its last landing
      const wrapUp = async (): Promise<void> => {
        // Every landing ends with its board saying what landed it: the train, or the PR and how.
        await fleet.board.terminal(n, "merged", tick.set.mine.find((m) => m.issue === n)?.attempt ?? 0, cfg.retry + 1, {
          pr: action.pr,
          note: note ?? landedNote(action.pr, outcome, fleet.registration.base),
        });
        await validationNote(fleet, tick, action, outcome);
        if (cfg.worktree.cleanup) await removeWorktree(fleet, n);
        // The claim goes last: once it is gone, nothing of the issue is left on this host. GitHub
        // closes the issue itself ("Closes #n" merged onto the default branch): the claim then
        // waits for a listing to show it closed instead of a request of ours closing it.
        if (outcome.closedByMerge) fleet.closes.expect(n, action.pr, action.sha);
        else await fleet.deps.lease.release(n, action.sha);
        await clearRunnerError(fleet, tick, n);
        fleet.memory.forget(n);
      };
      // After an inline landing, the next PR in line syncs with the moved base first (its CI
      // starts that much sooner). A host that dies in between leaves a claim on a landed issue,
      // which a later tick releases (invariant 4).
      if (deferWrapUp) await afterActions(tick, n, wrapUp);
      else await wrapUp();
      if (outcome.verified === false) {
        fleet.log(
          "error",
          "base_moved_during_merge",
          `#${n}: the base moved inside the merge call, so the landed tree was not the gated one; use landing.strategy "push" or require up-to-date branches`,
          n,
        );
      }
      return;
    }
    case "conflict":
      // In-flight work changes the same files: the retry waits for it to land (server/state/conflicts.ts).
      if (fleet.conflicts.waitsNow(n, action.pr, action.head, outcome.files, tick.set)) return;
      await failedAttempt(fleet, tick, action, {
        kind: "gate",
        summary: `merging ${fleet.registration.base} into the branch conflicts in ${outcome.files.join(", ")}`,
        excerpt: outcome.files.join("\n"),
      });
      return;
    case "gate_red":
      await failedAttempt(fleet, tick, action, {
        kind: "gate",
        summary:
          outcome.evidence.kind === "ci" && outcome.evidence.queue
            ? outcome.evidence.summary
            : `${outcome.evidence.kind === "local" ? "the local gate" : "CI"} failed on the synced head: ${outcome.evidence.summary}`,
        excerpt: outcome.evidence.excerpt,
      });
      return;
    case "fenced":
      fleet.memory.forget(n);
      fleet.log("warn", "fenced", `#${n}: our claim was taken over; nothing landed`, n);
      return;
    default:
      fleet.log("info", `land_${outcome.outcome}`, `#${n}: ${outcome.why ?? outcome.outcome}`, n);
  }
}

/** The board's line for a PR that landed alone: which PR, how, and the commit the base moved to. */
function landedNote(pr: number, outcome: Extract<LandOutcome, { outcome: "merged" }>, base: string): string {
  const how = outcome.method === "queue" ? "through the merge queue" : outcome.method === "push" ? "by a fast-forward push" : `by a ${outcome.method} merge`;
  return `Landed PR #${pr} on ${base} ${how} (${outcome.mergeSha?.slice(0, 12) ?? "?"})`;
}

/** Another host holds the landing lock: every tick's report says so; the lane once per wait (landing-events.ts noteLock). */
export function landingBusy(fleet: FleetRuntime, tick: TickScope, issues: readonly number[], why: string, holder = ""): void {
  tick.report.landing_waits = why;
  noteLock(fleet, tick.events, { issues, why, holder });
}

/**
 * After a landing, every other in-flight PR of ours is merged with the new base tip in the work
 * repository (git merge-tree: no checkout, no request). One that no longer merges is retried on
 * the next pass with the conflicting paths named, instead of at its landing turn.
 */
export async function checkEarlyConflicts(fleet: FleetRuntime, tick: TickScope, landed: number, baseTip: string | undefined): Promise<void> {
  if (!baseTip || !fleet.registration.config.conflicts.early) return;
  for (const m of tick.set.mine) {
    if (m.issue === landed || m.pr === null || m.head === null) continue;
    const files = await conflictingFiles(fleet.deps.workRepo.repoDir, baseTip, m.head).catch(() => null);
    if (!files || files.length === 0) continue;
    fleet.conflicts.note(m.issue, m.pr, m.head, files, "early");
    fleet.log(
      "info",
      "early_conflict",
      `#${m.issue}: PR #${m.pr} no longer merges with ${fleet.registration.base} after #${landed} landed: conflicts in ${files.join(", ")}`,
      m.issue,
      { pr: m.pr, files, landed, source: "early" },
    );
  }
}

/** The landed PR's one validation comment: checks, commits, files (validation.ts). Never fails the wrap-up. */
async function validationNote(
  fleet: FleetRuntime,
  tick: TickScope,
  action: ActionOf<"land">,
  outcome: Extract<LandOutcome, { outcome: "merged" }>,
): Promise<void> {
  const cfg = fleet.registration.config;
  try {
    const changes = await landedChanges(fleet.deps.workRepo, outcome.baseBefore, outcome.head);
    const checks = checkLines(tick.pulls?.find((p) => p.number === action.pr)?.checks, cfg.gate.ci === "local" ? cfg.gate.local_command : null);
    const body = renderValidation({ pr: action.pr, head: outcome.head, mergeSha: outcome.mergeSha, checks, ...changes });
    // Requests in upsertValidation: one listing, then one write only when the note is new or changed.
    await upsertValidation(fleet.deps.conn.forge, fleet.deps.conn.login, action.pr, body);
  } catch (error) {
    fleet.log(
      "warn",
      "validation_note_failed",
      `#${action.issue}: PR #${action.pr}'s validation comment was not posted: ${(error as Error).message}`,
      action.issue,
    );
  }
}
