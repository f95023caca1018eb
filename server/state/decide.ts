// decide: the working set plus this host's local facts (its workers, their exits, the
// breaker, a quota pause, the landing slot, what its housekeeping remembers) in; the ordered
// list of actions one tick takes out, each carrying every choice its effect needs (retry or
// escalate, start a worker or not, land alone or beside others, inline or in the background),
// and the housekeeping sweeps applied before them. Pure: the effects (server/fleet/effects) are
// the only place with side effects and decide nothing again; a dry run is this list, not acted on.
//
// By concern, in server/state/decide/: claims.ts (each claim's next step), landing.ts (the
// landing policy: slot, trains, the rules of a landing's turn), workers.ts (births by room,
// adoption, reclaims, dispatch), sweeps.ts (the housekeeping), types.ts (the vocabulary).
import { decideClaims } from "./decide/claims.js";
import { placeTrain, planLanding } from "./decide/landing.js";
import { decideSweeps, setAside } from "./decide/sweeps.js";
import { placeBirths } from "./decide/workers.js";
import type { DecideInput, Decision } from "./decide/types.js";

export type { Action, BudgetFacts, DecideInput, Decision, FailureEvidence, ClaimFacts } from "./decide/types.js";
export { failureAction } from "./decide/claims.js";

export function decide(given: DecideInput): Decision {
  const dayHold = given.budget?.dayHold ?? null;
  // A reached day budget holds births exactly as a pause does; status says which budget.
  const paused: DecideInput = dayHold !== null && !given.birthsPaused ? { ...given, birthsPaused: true } : given;
  // The breaker's claims, merged ones waiting for GitHub's close, and the claims a landing under
  // way holds: nothing is decided on them this tick.
  const aside = new Set([...(given.sweeps ? setAside(given.sweeps) : []), ...(given.landingHeld ?? [])]);
  const input: DecideInput = aside.size > 0 ? { ...paused, set: { ...paused.set, mine: paused.set.mine.filter((m) => !aside.has(m.issue)) } } : paused;
  const sweeps = given.sweeps ? decideSweeps(given.sweeps) : [];
  const plan = planLanding(input);
  const claims = decideClaims(input, plan);
  placeTrain(plan, claims.actions);
  return { ...placeBirths(input, given, dayHold, claims, plan.landingSlot, sweeps), trainsOff: plan.trainsOff };
}
