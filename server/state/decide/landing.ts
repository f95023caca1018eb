// The landing policy, all of it: which green PR lands this tick (the landing slot, one landing
// move per tick under required CI), alone or in a train and how many ride (trainMax, trains off),
// inline or beside the loop (a gate that waits), and the rules a landing's turn in the pass obeys
// (landingTurn, trainRiders). Pure: the land and land_train effects execute what these say.
import type { MineClaim } from "../inflight.js";
import type { Action, DecideInput, TrainEnd } from "./types.js";

type Land = Extract<Action, { kind: "land" }>;
type Train = Extract<Action, { kind: "land_train" }>;

/**
 * The most PRs landed together here: `landing.train.max`, but 1 when PRs do not land by push
 * (the merge API: "squash", "merge"). A base that requires GitHub's merge queue takes up to as
 * many PRs into its queue at once instead (landing/queue-batch.ts): the queue tests and merges them.
 */
export function trainMax(config: { landing: { strategy: string; train: { max: number } } }, required: { mergeQueue?: boolean | undefined }): number {
  const strategy = config.landing.strategy;
  if (required.mergeQueue !== true && (strategy === "squash" || strategy === "merge")) return 1;
  return config.landing.train.max;
}

/** How many PRs one train may carry this tick: 1 once trains are off (see trainsOffAfter). */
export function trainSize(input: Pick<DecideInput, "trainMax" | "trainsOff">): number {
  return input.trainsOff ? 1 : (input.trainMax ?? 1);
}

/** Whether trains are off from this tick on: they stay off once off; a train that just ended with CI silent turns them off. */
export function trainsOffNow(input: Pick<DecideInput, "trainsOff" | "trainsEnded">): string | null {
  if (input.trainsOff) return input.trainsOff;
  for (const ended of input.trainsEnded ?? []) {
    const off = trainsOffAfter(ended);
    if (off !== null) return off;
  }
  return null;
}

/**
 * A train's result turns trains off for the fleet when CI never reported on it (a CI that never
 * runs on train branches would hold every landing for good): why, from the member left waiting.
 * Null: the result says nothing about trains (the fleet keeps what it had).
 */
export function trainsOffAfter(result: TrainEnd): string | null {
  if (!result.ciSilent) return null;
  const stuck = result.members.find((m) => m.outcome === "retry_later");
  return stuck?.why !== undefined ? stuck.why : "no CI ran on a train";
}

/** This tick's landing frame: the slot, the train size, and the green PRs that may ride a train. */
export interface LandingPlan {
  /** The claim holding the landing slot (synced with the base, its CI running), if it still may. */
  slotHolder: MineClaim | undefined;
  /** The slot after this tick: kept while its PR still waits for CI, else free. */
  landingSlot: number | null;
  /** Why trains are off from this tick on (trainsOffNow), or null. */
  trainsOff: string | null;
  trainMax: number;
  exclusive: boolean;
  background: boolean;
  riders: Land[];
  /** Where in the actions the train (or the lone rider) goes. */
  trainAt: number;
}

export function planLanding(input: DecideInput): LandingPlan {
  // A PR synced with the base whose CI still runs holds the landing slot: the others wait. So
  // does one whose failing checks are re-run now (a flaky check: its CI runs again).
  const slot = input.landingSlot ?? null;
  const slotHolder = slot === null ? undefined : input.set.mine.find((m) => m.issue === slot && m.issueOpen && (m.status !== "failure" || m.rerun));
  const landingSlot = slotHolder && slotHolder.status !== "awaiting_merge" ? slotHolder.issue : null;
  const trainsOff = trainsOffNow(input);
  return {
    slotHolder,
    landingSlot,
    trainsOff,
    trainMax: trainSize({ trainMax: input.trainMax, trainsOff }),
    exclusive: input.oneLandingPerTick ?? false,
    background: input.landingWaits ?? false,
    riders: [],
    trainAt: -1,
  };
}

/** A green PR (its review, if any, passed): held, a train rider, landed now, or left for the slot holder. */
export function landGreen(plan: LandingPlan, claim: MineClaim, autoMerge: boolean, actions: Action[]): void {
  const { slotHolder, trainMax } = plan;
  if (!autoMerge || claim.pr === null || claim.head === null) {
    actions.push({ kind: "hold", issue: claim.issue, pr: claim.pr ?? 0, why: "merges are held: the project was started without auto_merge" });
    return;
  }
  const land: Land = {
    kind: "land",
    issue: claim.issue,
    sha: claim.sha,
    pr: claim.pr,
    head: claim.head,
    exclusive: plan.exclusive,
    background: plan.background,
  };
  if (trainMax > 1 && !slotHolder) {
    if (plan.trainAt < 0) plan.trainAt = actions.length;
    plan.riders.push(land);
  } else if (!slotHolder || slotHolder.issue === claim.issue || (slotHolder.status === "awaiting_merge" && trainMax <= 1)) {
    // A slot holder that turned green lands first; without trains the next green PR may
    // then take the slot in the same pass (its sync starts CI at once instead of a tick
    // later). With trains the others wait for the next pass, which makes them one train.
    const first = slotHolder?.issue === claim.issue ? actions.findIndex((a) => a.kind === "land") : -1;
    if (first >= 0) actions.splice(first, 0, land);
    else actions.push(land);
  }
}

/** The riders, in claim order: one lands alone, two or more as one train (the ones past `max` wait for the next). */
export function placeTrain(plan: LandingPlan, actions: Action[]): void {
  const { riders, trainAt } = plan;
  if (riders.length === 1) actions.splice(trainAt, 0, riders[0]!);
  else if (riders.length > 1)
    actions.splice(trainAt, 0, {
      kind: "land_train",
      issue: riders[0]!.issue,
      members: riders.slice(0, plan.trainMax).map(({ issue, sha, pr, head }) => ({ issue, sha, pr, head })),
    });
}

/**
 * Landings go right after the releases, before the PRs opened or closed in the same pass: each
 * landing reads the open-PR list again (server/landing/own-pulls.ts), a conditional read that is
 * free (304) while the list is as the snapshot read it, and a 200 after a PR of this very pass.
 * The order within each kind stands.
 */
export function landingsFirst(actions: readonly Action[]): Action[] {
  const lands = (a: Action): boolean => a.kind === "land" || a.kind === "land_train";
  return [...actions.filter((a) => a.kind === "release"), ...actions.filter(lands), ...actions.filter((a) => a.kind !== "release" && !lands(a))];
}

/**
 * What the pass has done so far that a landing's turn depends on. The actions of one tick apply
 * in order, and a landing earlier in the pass can move the slot, meet another host's lock or leave
 * a PR unmergeable: so these rules are asked at the landing's turn, by the effect, with the pass as
 * it stands. They are the core's rules all the same: the effect only reports the pass.
 */
export interface LandingPass {
  /** A landing runs beside the loop, or ended and waits for a tick to take it. */
  inFlight: boolean;
  /** The landing slot now (a sync earlier in this pass takes it). */
  slot: number | null;
  /** Green PRs this pass could not land: another host holds the landing lock. */
  blocked: number;
  /** PRs seen not to merge with the base (a landing earlier in this pass may have added one). */
  conflicted: (issue: number) => boolean;
}

export type LandingTurn = { go: true } | { go: false; why: "in_flight" | "exclusive" | "conflict" };

/** Whether a single landing goes at its turn in the pass, or waits for a later one. */
export function landingTurn(action: Pick<Land, "issue" | "exclusive">, pass: LandingPass): LandingTurn {
  // A landing in the background holds the line; its end wakes the loop for the next one.
  if (pass.inFlight) return { go: false, why: "in_flight" };
  // Decide made this landing exclusive (required CI): one sync per pass. Syncing every waiting
  // PR after each landing would restart CI on all of them for nothing; but after a merge, the
  // next green PR in line syncs now (its CI starts at once, not a tick later). A landing lock
  // held by another host holds the rest of the line too.
  if (action.exclusive && (pass.slot !== null || pass.blocked > 0)) return { go: false, why: "exclusive" };
  // A landing earlier in this pass left it unmergeable: the next pass retries it.
  if (pass.conflicted(action.issue)) return { go: false, why: "conflict" };
  return { go: true };
}

/** The members a train takes at its turn (none: it waits for a later pass). */
export function trainRiders(action: Pick<Train, "members">, pass: LandingPass): Train["members"] {
  // A landing in the background holds the line; a synced PR whose CI runs lands first.
  if (pass.inFlight || pass.slot !== null) return [];
  return action.members.filter((m) => !pass.conflicted(m.issue));
}
