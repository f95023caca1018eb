// The circuit breaker: K fast deaths inside the window trip it; quota deaths, slow deaths,
// productive exits and fleet kills never count. Pure: the clock is in every record.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { CircuitBreaker, type ExitRecord } from "../server/agent/breaker.js";

const T0 = Date.UTC(2026, 5, 5, 10, 0, 0);
const at = (seconds: number) => T0 + seconds * 1000;
const opts = { k: 3, windowSeconds: 600, fastDeathSeconds: 60 };
const fast = (issue: number, seconds: number, extra: Partial<ExitRecord> = {}): ExitRecord => ({
  issue,
  at: at(seconds),
  durationMs: 5_000,
  quota: false,
  ...extra,
});

interface Row {
  name: string;
  exits: ExitRecord[];
  /** Index of the exit that trips it, or null. */
  tripsAt: number | null;
}

const rows: Row[] = [
  { name: "K fast deaths inside the window trip on the K-th", exits: [fast(1, 0), fast(2, 100), fast(3, 200)], tripsAt: 2 },
  { name: "K-1 fast deaths do not trip", exits: [fast(1, 0), fast(2, 100)], tripsAt: null },
  { name: "deaths spread wider than the window do not trip", exits: [fast(1, 0), fast(2, 400), fast(3, 700), fast(4, 1100)], tripsAt: null },
  {
    name: "the window slides: the old death falls out, two new ones and one recent trip",
    exits: [fast(1, 0), fast(2, 500), fast(3, 900), fast(4, 1000)],
    tripsAt: 3,
  },
  { name: "exactly at the window edge still counts", exits: [fast(1, 0), fast(2, 300), fast(3, 600)], tripsAt: 2 },
  {
    name: "quota deaths never count",
    exits: [fast(1, 0, { quota: true }), fast(2, 10, { quota: true }), fast(3, 20, { quota: true }), fast(4, 30)],
    tripsAt: null,
  },
  {
    name: "slow deaths never count",
    exits: [fast(1, 0, { durationMs: 60_000 }), fast(2, 10, { durationMs: 3_600_000 }), fast(3, 20), fast(4, 30)],
    tripsAt: null,
  },
  { name: "a quick productive exit (verdict, commits) is not a death", exits: [fast(1, 0, { productive: true }), fast(2, 10), fast(3, 20)], tripsAt: null },
  { name: "fleet kills are not the command's fault", exits: [fast(1, 0, { killed: true }), fast(2, 10), fast(3, 20)], tripsAt: null },
  {
    name: "mixed: quota deaths in between do not stop fast deaths from counting",
    exits: [fast(1, 0), fast(2, 5, { quota: true }), fast(3, 10), fast(4, 15)],
    tripsAt: 3,
  },
  { name: "exits recorded out of order still count by time", exits: [fast(1, 200), fast(2, 0), fast(3, 100)], tripsAt: 2 },
];

describe("CircuitBreaker", () => {
  for (const row of rows) {
    it(row.name, () => {
      const breaker = new CircuitBreaker(opts);
      let trippedAt: number | null = null;
      row.exits.forEach((exit, i) => {
        const trip = breaker.recordExit(exit);
        if (trip && trippedAt === null) trippedAt = i;
      });
      assert.equal(trippedAt, row.tripsAt);
      assert.equal(breaker.tripped() !== null, row.tripsAt !== null);
    });
  }

  it("the trip names the deaths; it stays tripped until reset", () => {
    const breaker = new CircuitBreaker(opts);
    breaker.recordExit(fast(11, 0));
    breaker.recordExit(fast(12, 30));
    const trip = breaker.recordExit(fast(13, 60, { durationMs: 1_500 }));
    assert.deepEqual(trip, {
      at: at(60),
      deaths: [
        { issue: 11, at: at(0), durationMs: 5_000 },
        { issue: 12, at: at(30), durationMs: 5_000 },
        { issue: 13, at: at(60), durationMs: 1_500 },
      ],
    });
    assert.equal(breaker.recordExit(fast(14, 70)), null, "already tripped: no second trip");
    assert.deepEqual(breaker.tripped(), trip);
    breaker.reset();
    assert.equal(breaker.tripped(), null);
    assert.deepEqual(breaker.recentDeaths(at(80)), []);
    breaker.recordExit(fast(15, 90));
    assert.equal(breaker.tripped(), null, "reset forgets the old deaths");
  });

  it("recentDeaths reports the window at a given time", () => {
    const breaker = new CircuitBreaker(opts);
    breaker.recordExit(fast(1, 0));
    breaker.recordExit(fast(2, 300));
    assert.deepEqual(
      breaker.recentDeaths(at(700)).map((d) => d.issue),
      [2],
    );
  });

  it("k = 1 trips on the first fast death", () => {
    const breaker = new CircuitBreaker({ ...opts, k: 1 });
    assert.ok(breaker.recordExit(fast(1, 0)));
  });

  it("refuses nonsense options", () => {
    assert.throws(() => new CircuitBreaker({ k: 0, windowSeconds: 60, fastDeathSeconds: 1 }), /circuit/);
  });
});
