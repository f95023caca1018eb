// land_train: two or more green PRs of ours land as one gated train (server/landing/train.ts),
// in the background (server/fleet/landings-in-flight.ts). Each member's outcome then moves its
// claim on as a single landing's would: merged (the board names the train), retried or
// escalated with its own red evidence, or left to a later tick.
import type { TrainMemberOutcome, TrainResult } from "../../landing/train.js";
import type { LandResult } from "../../landing/land-types.js";
import { defineEffect, type ActionOf, type FleetRuntime, type TickScope } from "./effect.js";
import { afterLanding, checkEarlyConflicts, landingBusy, landingPass } from "./land.js";
import { trainRiders } from "../../state/decide/landing.js";
import { noteLock } from "../landing-events.js";

export const landTrain = defineEffect("land_train", async (fleet, tick, action) => {
  // The members that ride at its turn, by the core's rules (state/decide/landing.ts); none: it waits.
  const riders = trainRiders(action, landingPass(fleet, tick));
  if (riders.length === 0) return;
  const members = riders.map((m) => ({ ...m, claimSha: m.sha, title: tick.issues.get(m.issue)?.title ?? `#${m.issue}` }));
  // A train waits for its gate: in the background, so the tick goes on; a later tick takes it.
  await fleet.inFlight.start(
    tick,
    riders.map((m) => m.issue),
    async () => {
      const result = await fleet.landing.train(members, tick.required);
      const moved = result.members.filter((m) => m.outcome !== "retry_later" && m.outcome !== "not_ours").map((m) => m.member.issue);
      return { moved, finish: (later) => trainEnded(fleet, later, action, riders, result) };
    },
  );
});

async function trainEnded(
  fleet: FleetRuntime,
  tick: TickScope,
  action: ActionOf<"land_train">,
  riders: ActionOf<"land_train">["members"],
  result: TrainResult,
): Promise<void> {
  if (result.outcome === "busy") {
    // Another host holds the landing lock: its landing moves the base, which wakes us.
    for (const m of riders) tick.events.blocked.push(m.issue);
    landingBusy(
      fleet,
      tick,
      riders.map((m) => m.issue),
      result.why,
      result.holder,
    );
    return;
  }
  noteLock(fleet, tick.events, null);
  fleet.log("info", "train", `train ${result.id}: ${result.why}`, riders[0]!.issue, {
    gateRuns: result.gateRuns,
    restarts: result.restarts,
    landings: result.landings,
    outcomes: result.members.map((m) => ({ issue: m.member.issue, outcome: m.outcome })),
    ...(result.swept?.length ? { swept: result.swept } : {}),
  });
  // Whether trains go off after it is decide's (state/decide/landing.ts trainsOffNow), from this fact.
  tick.events.landing.push({ kind: "train_ended", issue: riders[0]!.issue, end: result });
  for (const outcome of result.members) {
    const member = action.members.find((m) => m.issue === outcome.member.issue)!;
    const land: ActionOf<"land"> = { kind: "land", issue: member.issue, sha: member.sha, pr: member.pr, head: member.head, exclusive: false, background: true };
    const landing = result.landings.find((l) => l.issues.includes(member.issue));
    const note = landing ? `Landed in train ${landing.train} with ${landing.issues.map((n) => `#${n}`).join(", ")} (${landing.sha.slice(0, 12)})` : undefined;
    await afterLanding(fleet, tick, land, asLandResult(outcome), note ? { note } : {});
  }
  const last = result.landings[result.landings.length - 1];
  if (last) await checkEarlyConflicts(fleet, tick, last.issues[0]!, last.sha);
}

/** A member's outcome in the shape a single landing reports it. */
function asLandResult(o: TrainMemberOutcome): LandResult {
  switch (o.outcome) {
    case "merged":
      return {
        outcome: "merged",
        mergeSha: o.mergeSha,
        baseBefore: o.baseBefore,
        head: o.member.head,
        method: o.queue ? "queue" : "push",
        verified: true,
        verifyNote: null,
        issueClosed: o.issueClosed,
        branchDeleted: o.branchDeleted,
        syncs: 0,
        ...(o.mergedAt ? { mergedAt: o.mergedAt } : {}),
      };
    case "gate_red":
      return { outcome: "gate_red", head: o.member.head, evidence: o.evidence, why: o.why };
    case "conflict":
      return { outcome: "conflict", files: o.files, baseSha: null, why: o.why };
    default:
      return { outcome: o.outcome, why: o.why };
  }
}
