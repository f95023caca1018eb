// What a tick's landings did that the fleet keeps past the pass (the slot a sync took, a wait
// for another host's landing lock), and decide's word on trains, applied in one place by the
// tick: the landing effects report events and never write the fleet's fields.
import type { LandingEvent, TickEvents } from "./effects/effect.js";
import type { SupervisorLog } from "./supervisor-log.js";

/** The fleet's fields a landing's events move on, and what the application logs. */
export interface LandingFields {
  landingSlot: number | null;
  trainsOff: string | null;
  landingWait: { holder: string; since: Date } | null;
  readonly log: SupervisorLog;
  readonly deps: { clock: () => Date };
}

/**
 * The landing slot as it stands in the pass: a sync earlier in it takes it (state/decide/landing.ts
 * landingTurn reads it at each landing's turn), else what decide left.
 */
export function slotInPass(fleet: Pick<LandingFields, "landingSlot">, events: Pick<TickEvents, "landing">): number | null {
  for (let i = events.landing.length - 1; i >= 0; i -= 1) {
    const e = events.landing[i]!;
    if (e.kind === "synced") return e.issue;
  }
  return fleet.landingSlot;
}

/** The trains whose ends the gather took: decide reads them (state/decide/landing.ts trainsOffNow). */
export function trainsEndedIn(events: Pick<TickEvents, "landing">): Array<Extract<LandingEvent, { kind: "train_ended" }>> {
  return events.landing.filter((e): e is Extract<LandingEvent, { kind: "train_ended" }> => e.kind === "train_ended");
}

/**
 * Decide's word on trains: once it turns them off (a CI that never runs on trains would hold every
 * landing for good), each PR lands alone from now on; said once in the supervisor lane.
 */
export function applyTrainsOff(fleet: Pick<LandingFields, "trainsOff" | "log">, trainsOff: string | null | undefined, issue?: number): void {
  if (!trainsOff || fleet.trainsOff === trainsOff) return;
  fleet.trainsOff = trainsOff;
  fleet.log("warn", "trains_off", `trains are off for this fleet: ${trainsOff}`, issue);
}

type LockWait = LandingFields["landingWait"];

/** The wait for another host's lock as it stands in the pass: the fleet's, moved on by the pass's lock events. */
export function lockWaitInPass(fleet: Pick<LandingFields, "landingWait">, events: Pick<TickEvents, "landing">): LockWait {
  let wait = fleet.landingWait;
  for (const e of events.landing) {
    if (e.kind === "lock_free") wait = null;
    else if (e.kind === "lock_busy" && wait?.holder !== e.holder) wait = { holder: e.holder, since: e.at };
  }
  return wait;
}

/**
 * A landing met another host's lock (`busy`), or got past it (or needed none). The supervisor lane
 * gets one record when a wait for a holder starts and one when it ends, not one per tick for as
 * long as it lasts, logged now (in order with the landing's own records); the fleet's field moves
 * when the tick applies the event.
 */
export function noteLock(
  fleet: Pick<LandingFields, "landingWait" | "log" | "deps">,
  events: Pick<TickEvents, "landing">,
  busy: { issues: readonly number[]; why: string; holder: string } | null,
): void {
  const before = lockWaitInPass(fleet, events);
  const now = fleet.deps.clock();
  if (busy) {
    const who = busy.holder || busy.why;
    events.landing.push({ kind: "lock_busy", holder: who, at: now });
    if (before?.holder === who) return;
    fleet.log("info", "land_busy", `${busy.issues.map((n) => `#${n}`).join(", ")}: waiting for the landing lock: ${busy.why}`, busy.issues[0], { holder: who });
    return;
  }
  events.landing.push({ kind: "lock_free" });
  if (!before) return;
  const seconds = Math.round((now.getTime() - before.since.getTime()) / 1000);
  fleet.log("info", "land_busy_ended", `the landing lock is ours to take again, after waiting ${seconds} s for ${before.holder}`, undefined, {
    holder: before.holder,
    waited_seconds: seconds,
  });
}

/** Applies the pass's events to the fleet's fields, and takes them (a second call applies only newer ones). */
export function applyLandingEvents(fleet: LandingFields, events: Pick<TickEvents, "landing">): void {
  fleet.landingSlot = slotInPass(fleet, events);
  fleet.landingWait = lockWaitInPass(fleet, events);
  events.landing.splice(0);
}
