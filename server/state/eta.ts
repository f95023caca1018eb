// Estimates from this fleet's own recent landings: how long an issue takes from its claim to
// its merge (the median of the last ETA_WINDOW landed, once ETA_MIN_SAMPLES have), when each
// running attempt should land, and when the queue is done. Pure: the durations, the claims'
// start times and now are arguments. The median is robust to the one issue that took an hour,
// and a claim → merged duration already holds the retries, CI and the landing queue it waited in.
//
// The queue's end is not remaining ÷ target × median: the issues in flight have come part of the
// way, so each slot is free at its running issue's due time (now, if it is overdue or idle), and
// each waiting issue takes the earliest free slot for one median.

/** Landed issues needed before any estimate is shown. */
export const ETA_MIN_SAMPLES = 3;
/** The most recent landed issues the median is taken over. */
export const ETA_WINDOW = 10;
/** Running issues named in the one-line text (the rest are counted). */
const TEXT_ISSUES = 5;

export interface EtaInput {
  /** Claim → merged durations of the issues this fleet landed, in ms, oldest first. */
  landedMs: readonly number[];
  /** The issues in flight and when each was claimed (ISO 8601). */
  running: ReadonlyArray<{ issue: number; startedAt: string }>;
  /** Dispatchable issues not yet claimed. */
  queued: number;
  /** Workers at once. */
  target: number;
  now: string;
}

export interface Eta {
  /** The median claim → merged over the window, or null: no estimate yet. */
  median_ms: number | null;
  /** Landed durations the median is taken over. */
  samples: number;
  /** Landed issues still needed before an estimate (0 once there is one). */
  needed: number;
  /** Each running issue's expected merge (null without an estimate); overdue when it is past. */
  running: { issue: number; due_at: string | null; overdue: boolean }[];
  /** In flight plus waiting, and when the last of them should land (null without an estimate or with nothing left). */
  queue: { remaining: number; done_at: string | null };
  /** The same in one line, for status and the board. */
  text: string;
}

/** The median of the last `window` durations, or null with fewer than ETA_MIN_SAMPLES. */
export function recentMedian(landedMs: readonly number[], window = ETA_WINDOW): { median: number | null; samples: number } {
  const recent = landedMs.filter((ms) => Number.isFinite(ms) && ms >= 0).slice(-window);
  if (recent.length < ETA_MIN_SAMPLES) return { median: null, samples: recent.length };
  const sorted = [...recent].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median: Math.round(median), samples: recent.length };
}

export function estimate(input: EtaInput): Eta {
  const now = Date.parse(input.now);
  const { median, samples } = recentMedian(input.landedMs);
  const remaining = input.running.length + Math.max(0, input.queued);
  if (median === null) {
    const needed = ETA_MIN_SAMPLES - samples;
    return {
      median_ms: null,
      samples,
      needed,
      running: input.running.map((r) => ({ issue: r.issue, due_at: null, overdue: false })),
      queue: { remaining, done_at: null },
      text: `ETA: no estimate yet (${samples} landed here so far, ${ETA_MIN_SAMPLES} needed)`,
    };
  }
  const running = input.running.map((r) => {
    const due = Date.parse(r.startedAt) + median;
    return { issue: r.issue, due, overdue: due < now };
  });
  // Each slot is free at its issue's due time (not before now); idle slots are free now.
  const slots = running.map((r) => Math.max(r.due, now));
  while (slots.length < Math.max(1, input.target)) slots.push(now);
  let last = slots.length > 0 && running.length > 0 ? Math.max(...slots.slice(0, running.length)) : now;
  for (let i = 0; i < Math.max(0, input.queued); i += 1) {
    slots.sort((a, b) => a - b);
    slots[0] = slots[0]! + median;
    last = Math.max(last, slots[0]);
  }
  const done = remaining > 0 ? new Date(last).toISOString() : null;
  const rows = running.map((r) => ({ issue: r.issue, due_at: new Date(r.due).toISOString(), overdue: r.overdue }));
  return {
    median_ms: median,
    samples,
    needed: 0,
    running: rows,
    queue: { remaining, done_at: done },
    text: etaText(median, samples, rows, remaining, input.queued, done),
  };
}

/** The line a running issue's board shows: stable while the median is (the due time is absolute). */
export function issueEtaLine(startedAt: string, landedMs: readonly number[]): string {
  const { median, samples } = recentMedian(landedMs);
  if (median === null) return `Estimate: no estimate yet (${samples} landed here so far, ${ETA_MIN_SAMPLES} needed).`;
  const due = new Date(Date.parse(startedAt) + median).toISOString();
  return `Estimate: lands around ${clock(due)} UTC (median claim → merged of the last ${samples} landed here: ${duration(median)}).`;
}

function etaText(median: number, samples: number, rows: Eta["running"], remaining: number, queued: number, done: string | null): string {
  const head = `ETA: median claim → merged ${duration(median)} over the last ${samples} landed`;
  if (done === null) return `${head}; nothing left in the queue`;
  const named = rows.slice(0, TEXT_ISSUES).map((r) => `#${r.issue} ${r.overdue ? `overdue since ${clock(r.due_at!)}` : `~${clock(r.due_at!)}`}`);
  const more = rows.length > TEXT_ISSUES ? [`${rows.length - TEXT_ISSUES} more`] : [];
  const flight = rows.length > 0 ? `; in flight: ${[...named, ...more].join(", ")}` : "";
  return `${head}; queue of ${remaining} (${rows.length} in flight, ${Math.max(0, queued)} waiting) done around ${clock(done)} UTC${flight}`;
}

// "2026-12-03 20:41" (UTC): with its date, since a queue may end on another day.
function clock(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** 45 s, 12 min, 1 h 5 min, 2 d 3 h. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ""}`;
}
