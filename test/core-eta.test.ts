// The ETA from this fleet's recent landings (server/state/eta.ts): one row per case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { estimate, issueEtaLine, recentMedian, ETA_MIN_SAMPLES, ETA_WINDOW } from "../server/state/eta.js";

const MIN = 60_000;
const NOW = "2026-12-03T20:00:00.000Z";
const at = (minutesFromNow: number) => new Date(Date.parse(NOW) + minutesFromNow * MIN).toISOString();

test("recentMedian: rows", () => {
  const rows: { name: string; landed: number[]; median: number | null; samples: number }[] = [
    { name: "nothing landed", landed: [], median: null, samples: 0 },
    { name: "fewer than the minimum", landed: [10 * MIN, 20 * MIN], median: null, samples: 2 },
    { name: "odd count: the middle one", landed: [30 * MIN, 10 * MIN, 20 * MIN], median: 20 * MIN, samples: 3 },
    { name: "even count: the mean of the middle two", landed: [10 * MIN, 20 * MIN, 30 * MIN, 40 * MIN], median: 25 * MIN, samples: 4 },
    { name: "one very slow issue moves it little", landed: [10 * MIN, 11 * MIN, 12 * MIN, 600 * MIN], median: 11.5 * MIN, samples: 4 },
    {
      name: "only the last window counts",
      landed: [...Array(ETA_WINDOW).fill(999 * MIN), ...Array(ETA_WINDOW).fill(5 * MIN)],
      median: 5 * MIN,
      samples: ETA_WINDOW,
    },
    { name: "junk durations are dropped", landed: [Number.NaN, -5, 10 * MIN, 10 * MIN, 10 * MIN], median: 10 * MIN, samples: 3 },
  ];
  for (const row of rows) assert.deepEqual(recentMedian(row.landed), { median: row.median, samples: row.samples }, row.name);
});

test("estimate: rows", () => {
  const ten = [10 * MIN, 10 * MIN, 10 * MIN];
  const rows: {
    name: string;
    landed: number[];
    running: { issue: number; startedAt: string }[];
    queued: number;
    target: number;
    due: (string | null)[];
    overdue?: boolean[];
    done: string | null;
    remaining: number;
    text: RegExp;
  }[] = [
    {
      name: "no estimate yet: nothing is timed",
      landed: [10 * MIN],
      running: [{ issue: 4, startedAt: at(-5) }],
      queued: 6,
      target: 2,
      due: [null],
      done: null,
      remaining: 7,
      text: /^ETA: no estimate yet \(1 landed here so far, 3 needed\)$/,
    },
    { name: "an empty queue", landed: ten, running: [], queued: 0, target: 3, due: [], done: null, remaining: 0, text: /nothing left in the queue$/ },
    {
      name: "one running, claimed 4 min ago: due in 6",
      landed: ten,
      running: [{ issue: 7, startedAt: at(-4) }],
      queued: 0,
      target: 1,
      due: [at(6)],
      done: at(6),
      remaining: 1,
      text: /queue of 1 \(1 in flight, 0 waiting\) done around 2026-12-03 20:06 UTC; in flight: #7 ~2026-12-03 20:06$/,
    },
    {
      name: "waiting issues fill the earliest free slot",
      landed: ten,
      running: [
        { issue: 1, startedAt: at(-8) },
        { issue: 2, startedAt: at(-1) },
      ],
      queued: 3,
      target: 2,
      due: [at(2), at(9)],
      done: at(22),
      remaining: 5,
      text: /done around 2026-12-03 20:22 UTC/,
    },
    {
      name: "idle slots start now",
      landed: ten,
      running: [],
      queued: 4,
      target: 2,
      due: [],
      done: at(20),
      remaining: 4,
      text: /queue of 4 \(0 in flight, 4 waiting\) done around 2026-12-03 20:20 UTC$/,
    },
    {
      name: "an overdue issue frees its slot no earlier than now",
      landed: ten,
      running: [{ issue: 3, startedAt: at(-30) }],
      queued: 1,
      target: 1,
      due: [at(-20)],
      overdue: [true],
      done: at(10),
      remaining: 2,
      text: /#3 overdue since 2026-12-03 19:40/,
    },
    {
      name: "target 0 (paused) still counts one slot",
      landed: ten,
      running: [],
      queued: 2,
      target: 0,
      due: [],
      done: at(20),
      remaining: 2,
      text: /done around 2026-12-03 20:20 UTC/,
    },
  ];
  for (const row of rows) {
    const eta = estimate({ landedMs: row.landed, running: row.running, queued: row.queued, target: row.target, now: NOW });
    assert.deepEqual(
      eta.running.map((r) => r.due_at),
      row.due,
      `${row.name}: due times`,
    );
    if (row.overdue)
      assert.deepEqual(
        eta.running.map((r) => r.overdue),
        row.overdue,
        `${row.name}: overdue`,
      );
    assert.equal(eta.queue.done_at, row.done, `${row.name}: queue done`);
    assert.equal(eta.queue.remaining, row.remaining, `${row.name}: remaining`);
    assert.match(eta.text, row.text, `${row.name}: text`);
    assert.equal(eta.needed, eta.median_ms === null ? ETA_MIN_SAMPLES - Math.min(row.landed.length, ETA_MIN_SAMPLES) : 0, `${row.name}: needed`);
  }
});

test("the text names at most five running issues and counts the rest", () => {
  const running = Array.from({ length: 8 }, (_, i) => ({ issue: i + 1, startedAt: at(-i) }));
  const eta = estimate({ landedMs: [MIN, MIN, MIN], running, queued: 0, target: 8, now: NOW });
  assert.match(eta.text, /#5 [^,]+, 3 more$/);
  assert.ok(!eta.text.includes("#6"));
});

test("issueEtaLine: absolute, so the same between ticks; no estimate before enough landed", () => {
  assert.equal(issueEtaLine(at(-4), [MIN]), "Estimate: no estimate yet (1 landed here so far, 3 needed).");
  const line = issueEtaLine(at(-4), [10 * MIN, 12 * MIN, 14 * MIN]);
  assert.equal(line, "Estimate: lands around 2026-12-03 20:08 UTC (median claim → merged of the last 3 landed here: 12 min).");
  assert.equal(issueEtaLine(at(-4), [10 * MIN, 12 * MIN, 14 * MIN]), line);
});
