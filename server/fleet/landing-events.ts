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

/** Applies the events in the order they happened, and takes them (a second call applies only newer ones). */
export function applyLandingEvents(fleet: LandingFields, events: Pick<TickEvents, "landing">): void {
  for (const event of events.landing.splice(0)) applyOne(fleet, event);
}

function applyOne(fleet: LandingFields, event: LandingEvent): void {
  switch (event.kind) {
    case "synced":
      fleet.landingSlot = event.issue;
      return;
    case "train_ended":
      return; // a fact for decide (trainsEndedIn), which says whether trains go off

    case "lock_busy": {
      // Every tick says so in its report; the supervisor lane gets one record when a wait for a
      // holder starts, not one per tick for as long as it lasts.
      const who = event.holder || event.why;
      if (fleet.landingWait?.holder === who) return;
      fleet.landingWait = { holder: who, since: fleet.deps.clock() };
      fleet.log("info", "land_busy", `${event.issues.map((n) => `#${n}`).join(", ")}: waiting for the landing lock: ${event.why}`, event.issues[0], {
        holder: who,
      });
      return;
    }
    case "lock_free": {
      const wait = fleet.landingWait;
      if (!wait) return;
      fleet.landingWait = null;
      const seconds = Math.round((fleet.deps.clock().getTime() - wait.since.getTime()) / 1000);
      fleet.log("info", "land_busy_ended", `the landing lock is ours to take again, after waiting ${seconds} s for ${wait.holder}`, undefined, {
        holder: wait.holder,
        waited_seconds: seconds,
      });
    }
  }
}
