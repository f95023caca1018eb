// What a tick's landings did, applied by the tick (server/fleet/landing-events.ts): the slot a
// sync took in the pass, the wait for another host's lock (one record when it starts, one when
// it ends, in order with the landing's records), decide's word on trains. No forge, no git.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { applyLandingEvents, applyTrainsOff, lockWaitInPass, noteLock, slotInPass, type LandingFields } from "../server/fleet/landing-events.js";
import type { TickEvents } from "../server/fleet/effects/effect.js";

function fleet(): LandingFields & { logged: string[]; at: number } {
  const f = {
    landingSlot: null as number | null,
    trainsOff: null as string | null,
    landingWait: null as LandingFields["landingWait"],
    logged: [] as string[],
    at: Date.parse("2026-01-01T00:00:00Z"),
    log: (_level: string, event: string, msg: string) => void f.logged.push(`${event}: ${msg}`),
    deps: { clock: () => new Date(f.at) },
  };
  return f;
}
const events = (): Pick<TickEvents, "landing"> => ({ landing: [] });
const waitOf = (f: LandingFields): LandingFields["landingWait"] => f.landingWait;

describe("the tick applies what its landings did", () => {
  it("the slot in the pass is the last sync's, else decide's; applied after the pass", () => {
    const f = fleet();
    f.landingSlot = 3;
    const e = events();
    assert.equal(slotInPass(f, e), 3, "decide's slot while nothing synced");
    e.landing.push({ kind: "synced", issue: 5 });
    assert.equal(slotInPass(f, e), 5, "a sync earlier in the pass takes it");
    assert.equal(f.landingSlot, 3, "the effect wrote nothing");
    applyLandingEvents(f, e);
    assert.equal(f.landingSlot, 5);
    assert.equal(e.landing.length, 0, "the events are taken: a second application changes nothing");
  });

  it("a wait for another host's lock: one record when it starts, none while it lasts, one when it ends; the field moves at the tick's application", () => {
    const f = fleet();
    const tick1 = events();
    noteLock(f, tick1, { issues: [1], why: "another host is landing: instance two", holder: "instance two on h2" });
    noteLock(f, tick1, { issues: [2], why: "another host is landing: instance two", holder: "instance two on h2" });
    assert.equal(f.landingWait, null, "the effect wrote nothing");
    assert.equal(lockWaitInPass(f, tick1)?.holder, "instance two on h2");
    applyLandingEvents(f, tick1);
    assert.equal(waitOf(f)?.holder, "instance two on h2", "the tick's application moved the field");
    const tick2 = events();
    noteLock(f, tick2, { issues: [1], why: "another host is landing: instance two", holder: "instance two on h2" });
    applyLandingEvents(f, tick2);
    f.at += 30_000;
    const tick3 = events();
    noteLock(f, tick3, null);
    noteLock(f, tick3, null);
    applyLandingEvents(f, tick3);
    assert.equal(f.landingWait, null);
    assert.deepEqual(f.logged, [
      "land_busy: #1: waiting for the landing lock: another host is landing: instance two",
      "land_busy_ended: the landing lock is ours to take again, after waiting 30 s for instance two on h2",
    ]);
  });

  it("a lock with no named holder is known by its reason; a new holder starts a new wait", () => {
    const f = fleet();
    const e = events();
    noteLock(f, e, { issues: [1], why: "the lock kept changing hands", holder: "" });
    noteLock(f, e, { issues: [1], why: "another host is landing", holder: "instance three on h3" });
    assert.equal(f.logged.length, 2);
    assert.equal(lockWaitInPass(f, e)?.holder, "instance three on h3");
  });

  it("decide's word on trains: set and said once; nothing when it says nothing", () => {
    const f = fleet();
    applyTrainsOff(f, null, 1);
    assert.equal(f.trainsOff, null);
    applyTrainsOff(f, "no CI ran on a train", 1);
    applyTrainsOff(f, "no CI ran on a train", 1);
    assert.equal(f.trainsOff, "no CI ran on a train");
    assert.deepEqual(f.logged, ["trains_off: trains are off for this fleet: no CI ran on a train"]);
  });
});
