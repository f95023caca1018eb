// A landing's next step (server/state/decide/landing-step.ts) as tables: one row per case of the
// default landing (a single PR under required CI), a local gate's, and the landing lock's
// standing. Each row is a fact set and the one step the landing takes from it. Pure: no forge, no git.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { landingStep, lockStanding, type LandingFacts, type LandingStep, type LockHolderFacts } from "../server/state/decide/landing-step.js";

const required = (over: Partial<LandingFacts>): LandingFacts => ({ containsBase: true, gate: "unknown", lock: "free", syncWithoutLock: true, ...over });
const local = (over: Partial<LandingFacts>): LandingFacts => required({ syncWithoutLock: false, ...over });

describe("a landing's next step: the default path (one PR, required CI)", () => {
  const table: Array<[string, LandingFacts, LandingStep]> = [
    ["fresh green PR not containing the base: sync, without the lock", required({ containsBase: false, gate: "green" }), { step: "sync" }],
    ["synced, its CI pending: wait (the wake plan watches the checks)", required({ gate: "pending" }), { step: "wait", on: "checks" }],
    ["synced and green (read under the lock), base unchanged: merge pinned to the head", required({ gate: "green", lock: "ours" }), { step: "merge" }],
    ["synced and green as the tick saw it, lock free: take the lock first", required({ gate: "green" }), { step: "take_lock", over: false }],
    ["under the lock, the verdict not read yet: gate (read the checks)", required({ lock: "ours" }), { step: "gate" }],
    [
      "the base moved since the sync (head no longer contains it): sync again",
      required({ containsBase: false, gate: "green", lock: "ours" }),
      { step: "sync" },
    ],
    ["the base moved and the lock is free: the re-sync needs no lock", required({ containsBase: false }), { step: "sync" }],
    ["CI red: failure (the claim's retry or escalation)", required({ gate: "red", lock: "ours" }), { step: "fail" }],
    ["CI red on a head behind the base: failure, not a sync", required({ containsBase: false, gate: "red" }), { step: "fail" }],
    ["lock held by another live host: wait for its landing", required({ gate: "green", lock: "live_peer" }), { step: "wait", on: "lock" }],
    ["lock held by another live host, head behind: wait, no sync", required({ containsBase: false, lock: "live_peer" }), { step: "wait", on: "lock" }],
    ["lock held by a dead host: take it over", required({ gate: "green", lock: "dead_peer" }), { step: "take_lock", over: true }],
    [
      "lock held by a dead host, head behind: take it over, then sync under it",
      required({ containsBase: false, lock: "dead_peer" }),
      { step: "take_lock", over: true },
    ],
    [
      "killed after the sync: the restart sees the synced head with pending CI and waits, no re-sync",
      required({ gate: "pending" }),
      { step: "wait", on: "checks" },
    ],
    [
      "killed after the sync, lock left by the dead host: still waits for CI first",
      required({ gate: "pending", lock: "dead_peer" }),
      { step: "wait", on: "checks" },
    ],
    ["a PR with pending CI behind the base: wait for its CI, then sync", required({ containsBase: false, gate: "pending" }), { step: "wait", on: "checks" }],
  ];
  for (const [name, facts, step] of table) it(name, () => assert.deepEqual(landingStep(facts), step));
});

describe("a landing's next step: a local gate (runs under the lock)", () => {
  const table: Array<[string, LandingFacts, LandingStep]> = [
    ["head behind the base, lock free: take the lock before the sync", local({ containsBase: false }), { step: "take_lock", over: false }],
    ["head behind the base, lock ours: sync", local({ containsBase: false, lock: "ours" }), { step: "sync" }],
    ["synced under the lock: run the gate on that tree", local({ lock: "ours" }), { step: "gate" }],
    ["the gate passed, base unchanged: merge", local({ gate: "green", lock: "ours" }), { step: "merge" }],
    ["the gate passed but the base moved while it ran: sync again", local({ containsBase: false, gate: "green", lock: "ours" }), { step: "sync" }],
    ["the gate failed: failure", local({ gate: "red", lock: "ours" }), { step: "fail" }],
  ];
  for (const [name, facts, step] of table) it(name, () => assert.deepEqual(landingStep(facts), step));
});

describe("the landing lock's standing: wait for a live holder, take over a dead one", () => {
  const now = Date.parse("2026-01-01T00:10:00Z");
  const ago = (s: number): string => new Date(now - s * 1000).toISOString();
  const held = (over: Partial<LockHolderFacts> = {}, at = ago(30), ttlSeconds = 600): LockHolderFacts => ({
    holder: { instance: "peer", host: "h2", at, ttlSeconds },
    self: { instance: "me", host: "h1" },
    now,
    leaseTtlSeconds: 90,
    ...over,
  });
  const table: Array<[string, LockHolderFacts, ReturnType<typeof lockStanding>]> = [
    ["another host beating within the lease: live", held({ heartbeatAt: ago(10) }), "live"],
    ["another host whose heartbeat is older than the lease: dead", held({ heartbeatAt: ago(200) }), "dead"],
    ["its heartbeat not read yet: ask for it", held(), "ask"],
    ["its heartbeat gone, the lock younger than the lease: live", held({ heartbeatAt: null }), "live"],
    ["its heartbeat gone, the lock older than the lease: dead", held({ heartbeatAt: null }, ago(120)), "dead"],
    ["older than its own TTL: dead, whatever the heartbeat", held({ heartbeatAt: ago(1) }, ago(700)), "dead"],
    ["no lease known: only the lock's TTL counts", held({ leaseTtlSeconds: undefined }, ago(300)), "live"],
    ["unreadable: dead (taken over)", held({ holder: null }), "dead"],
    [
      "our own instance on our own host: a crash's leftover, taken over",
      held({ holder: { instance: "me", host: "h1", at: ago(5), ttlSeconds: 600 }, heartbeatAt: ago(1) }),
      "dead",
    ],
    [
      "our instance id on another host: live (another process)",
      held({ holder: { instance: "me", host: "h2", at: ago(5), ttlSeconds: 600 }, heartbeatAt: ago(1) }),
      "live",
    ],
  ];
  for (const [name, facts, standing] of table) it(name, () => assert.equal(lockStanding(facts), standing));
});
