// Landing overhead: what the fleet adds between a worker's birth and its PR's merge when the
// work and the CI take no time at all. N ready issues, workers that commit one file and exit at
// once, target 3, auto_merge, squash landings. Per issue, from the supervisor lane:
//   claim to merge  = worker_born → merged
//   worker time     = worker_born → worker_exited (every attempt)
//   CI time         = the check runs' durations on the PR (required-CI variant only)
//   overhead        = claim to merge − worker time − CI time
// which holds the tick cadence, the PR, the serialized landing queue (sync with the base, the
// gate, the merge, its verification) and the board. Landings are serialized, so that figure
// grows with the queue; the fleet's own overhead per landed issue (issue 11's figure) is
//   fleet overhead  = time since the previous landing − the landed PR's CI runs in that span
// (the first landing: since project_start, minus its worker too). Also: wall time from project_start until
// the last issue landed, landings per minute, and REST requests per landed issue (the forge's
// accounting, minus the CI runner's own requests in the required-CI variant).
//
// AFK_BENCH_TIMELINE=<file> writes both lanes of the run merged in time order (ms since
// project_start, with each tick's phase_ms) to see where the time goes.
//
// Two variants, each on a fresh forge child process: gate.ci "local" with `true` (instant local
// gate), and gate.ci "required" with the demo's CI runner posting a "test" check run after an
// instant `true`.
import { writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { startCiRunner, type CiRunner } from "../server/demo/ci-runner.js";
import { api } from "../test/support/forge-fixtures.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";
import { benchFleet, forgeAccounting, lane, pause, quantile, readyForge, requireTestCheck, type LaneRecord, type StartConfig } from "./fleet-harness.js";

export interface LandingSpec {
  issues: number;
  target: number;
  timeScale: number;
  /** A variant still landing after this long is reported as it stands. */
  timeoutSeconds: number;
  /** The CI runner's poll interval (required-CI variant). */
  ciPollMs: number;
  /** "default": the config a new user gets (no pacing override); "brisk": busy/idle ticks of 5 s. */
  pacing?: "default" | "brisk";
  /**
   * "squash" (default): one PR at a time through the merge API, the base requiring up-to-date
   * branches. "default": no landing config at all (strategy "auto", trains of up to 4) on a base
   * that requires the check but not up-to-date branches, where "auto" lands by push and trains apply.
   */
  strategy?: "squash" | "default";
}

type Mode = "local" | "required";

export const DEFAULT_LANDING: Record<Mode, LandingSpec> = {
  local: { issues: 10, target: 3, timeScale: 0.05, timeoutSeconds: 90, ciPollMs: 200 },
  required: { issues: 10, target: 3, timeScale: 0.05, timeoutSeconds: 100, ciPollMs: 200 },
};

/** Issue 11's figures: time scale 1, the default config, required CI answering at once. */
export const REAL_TIME_LANDING: LandingSpec = { issues: 6, target: 3, timeScale: 1, timeoutSeconds: 240, ciPollMs: 200, pacing: "default" };

/** The same with the default landing (trains), measured beside it in the same section. */
export const REAL_TIME_TRAINS: LandingSpec = { ...REAL_TIME_LANDING, strategy: "default" };

const WORKER_SCRIPT = [
  "#!/bin/sh",
  "cat > /dev/null",
  'echo "work for $AFK_ISSUE" > "work-$AFK_ISSUE.txt"',
  'git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm "work for #$AFK_ISSUE"',
  "",
].join("\n");

interface IssueTimes {
  issue: number;
  claimToMergeMs: number;
  workerMs: number;
  ciMs: number;
  ciRuns: number;
  overheadMs: number;
  /** worker_exited → pr_opened */
  exitToPrMs: number | null;
  /** pr_opened → merged */
  prToMergeMs: number | null;
  /** The landed head's last check run completed → merged (required CI). */
  checkToMergeMs: number | null;
  attempts: number;
}

interface VariantResult {
  mode: Mode;
  landed: number;
  wallMs: number;
  /** First to last landing, for the steady rate. */
  spanMs: number;
  ticks: number;
  /** Syncs with the base: inside local-gate landings, plus land_synced records (required CI). */
  syncs: number;
  /** Gaps between two landings in the same tick: one landing's own duration, queue excluded. */
  serviceMs: number[];
  /**
   * Per landing, in landing order: the time since the previous landing (the first: since
   * project_start) minus the CI runs of its PR inside that span (and, for the first, its
   * worker's time). What the fleet itself adds per landed issue when landings queue.
   */
  intervalOverheadMs: number[];
  issues: IssueTimes[];
  requests: { total: number; counted: number; not_modified: number };
  ci: { requests: number; counted: number; runs: number } | null;
  escalated: number[];
  closedOnForge: number;
  byRoute: Record<string, { total: number; counted: number; not_modified: number }>;
  /** The 1-minute load average when the variant started and when it ended (the machine is shared). */
  load: [number, number];
  /** The size of each train that landed (default strategy). */
  trains: number[];
  /** Squash's steady cycle, per landing after the first (ms): see `cyclePhases`. */
  phases: { mergedToSynced: number[]; syncedToSeen: number[]; seenToMerged: number[] };
}

/**
 * Where a squash landing's cycle goes, from the lanes: the previous landing's merge → this PR
 * synced with the moved base (pushed, its CI starts) → its concluded check seen (the watch's
 * wake) → merged. The first span is all fleet; the second holds the CI run; the third is the
 * tick that lands it (gather, decide, the merge itself).
 */
function cyclePhases(records: LaneRecord[], monitor: LaneRecord[]): VariantResult["phases"] {
  const out: VariantResult["phases"] = { mergedToSynced: [], syncedToSeen: [], seenToMerged: [] };
  const merges = records.filter((r) => r.event === "merged").sort((a, b) => mergedMs(a) - mergedMs(b));
  const wakes = monitor.filter((r) => r.event === "wake").map((r) => ms(r.ts));
  for (let i = 1; i < merges.length; i++) {
    const prev = mergedMs(merges[i - 1]!);
    const at = mergedMs(merges[i]!);
    const synced = records.find((r) => r.event === "land_synced" && r.issue === merges[i]!.issue && ms(r.ts) >= prev && ms(r.ts) <= at);
    if (!synced) continue;
    const seen = wakes.find((w) => w >= ms(synced.ts) && w <= at);
    out.mergedToSynced.push(ms(synced.ts) - prev);
    if (seen === undefined) continue;
    out.syncedToSeen.push(seen - ms(synced.ts));
    out.seenToMerged.push(at - seen);
  }
  return out;
}

/** Counts the REST requests made with one token through globalThis.fetch (the CI runner's). */
export function countRequestsOf(token: string): { stats: { requests: number; counted: number }; restore: () => void } {
  const original = globalThis.fetch;
  const stats = { requests: 0, counted: 0 };
  const authOf = (init: RequestInit | undefined): string | null => {
    const h = init?.headers;
    if (!h) return null;
    if (h instanceof Headers) return h.get("authorization");
    if (Array.isArray(h)) return h.find(([k]) => k.toLowerCase() === "authorization")?.[1] ?? null;
    const rec = h as Record<string, string>;
    return rec.authorization ?? rec.Authorization ?? null;
  };
  globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const res = await original(input, init);
    if (authOf(init)?.includes(token)) {
      stats.requests++;
      if (res.status !== 304) stats.counted++;
    }
    return res;
  };
  return { stats, restore: () => void (globalThis.fetch = original) };
}

const TRAIN = -1;

function ms(ts: string): number {
  return Date.parse(ts);
}

/** When a landing moved the base: the merge call's return, which the lane records before the bookkeeping. */
function mergedMs(r: LaneRecord): number {
  return typeof r.data?.mergedAt === "string" ? ms(r.data.mergedAt) : ms(r.ts);
}

/** Per-issue times from the supervisor lane, and the CI runs' durations per issue. */
function perIssue(records: LaneRecord[], ciByIssue: Map<number, { ms: number; runs: number }>): IssueTimes[] {
  const byIssue = new Map<number, LaneRecord[]>();
  for (const r of records) {
    if (r.issue === undefined) continue;
    const list = byIssue.get(r.issue) ?? [];
    list.push(r);
    byIssue.set(r.issue, list);
  }
  const out: IssueTimes[] = [];
  for (const [issue, list] of byIssue) {
    const merged = list.find((r) => r.event === "merged");
    const born = list.filter((r) => r.event === "worker_born");
    if (!merged || born.length === 0) continue;
    let workerMs = 0;
    let lastExit: number | null = null;
    for (const b of born) {
      const exit = list.find((r) => r.event === "worker_exited" && ms(r.ts) >= ms(b.ts));
      if (exit) {
        workerMs += ms(exit.ts) - ms(b.ts);
        lastExit = ms(exit.ts);
      }
    }
    const pr = list.filter((r) => r.event === "pr_opened").at(-1);
    const claimToMergeMs = mergedMs(merged) - ms(born[0]!.ts);
    const ci = ciByIssue.get(issue) ?? { ms: 0, runs: 0 };
    out.push({
      issue,
      claimToMergeMs,
      workerMs,
      ciMs: ci.ms,
      ciRuns: ci.runs,
      overheadMs: claimToMergeMs - workerMs - ci.ms,
      exitToPrMs: pr && lastExit !== null ? ms(pr.ts) - lastExit : null,
      prToMergeMs: pr ? mergedMs(merged) - ms(pr.ts) : null,
      checkToMergeMs: null,
      attempts: born.length,
    });
  }
  return out.sort((a, b) => a.issue - b.issue);
}

async function runVariant(ctx: BenchContext, spec: LandingSpec, mode: Mode): Promise<VariantResult> {
  const repo = `bench/landing-${mode}`;
  ctx.log(`landing (${mode} gate): starting the forge with ${spec.issues} ready issues`);
  const forge = await readyForge(ctx, { repo, issues: spec.issues, ...(mode === "required" ? { users: ["ci"] } : {}) });
  const workDir = await ctx.tempDir("afk-bench-landing-");
  const worker = join(workDir, "worker.sh");
  await writeFile(worker, WORKER_SCRIPT);

  // CI: required "test" checks on main, and the demo's runner posting them with its own token.
  let ci: CiRunner | null = null;
  let ciCount: ReturnType<typeof countRequestsOf> | null = null;
  const ciStarted = new Map<number, { at: number; issue: number }>();
  const ciByIssue = new Map<number, { ms: number; runs: number; spans: [number, number][] }>();
  // A train's candidate is tested on its draft PR (afk/train/...): its runs are no issue's, and
  // count as CI time in the gap they fall in.
  const trainCi: [number, number][] = [];
  // A local gate with squash landings: main requires up-to-date branches and no check, as a user
  // of the merge API must set it (the start refuses squash otherwise).
  if (mode === "local" && spec.strategy !== "default") await requireTestCheck(forge, repo, true, []);
  if (mode === "required") {
    const ciToken = forge.users.ci;
    if (!ciToken) throw new Error("the forge has no user ci");
    await requireTestCheck(forge, repo, spec.strategy !== "default");
    ciCount = countRequestsOf(ciToken);
    ctx.defer(ciCount.restore);
    ci = startCiRunner({
      apiUrl: forge.apiUrl,
      token: ciToken,
      repo,
      gitUrl: forge.gitUrl,
      workDir: join(workDir, "ci"),
      intervalMs: spec.ciPollMs,
      testCommand: ["true"],
      onLog: (line) => {
        const now = Date.now();
        const start = /^ci: testing #(\d+) (\S+) @ /.exec(line);
        const issue = start ? /^afk\/(\d+)-/.exec(start[2]!) : null;
        if (start) ciStarted.set(Number(start[1]), { at: now, issue: issue ? Number(issue[1]) : TRAIN });
        const end = /^ci: #(\d+) @ [0-9a-f]+: /.exec(line);
        const began = end ? ciStarted.get(Number(end[1])) : undefined;
        if (end && began && began.issue === TRAIN) {
          trainCi.push([began.at, now]);
          ciStarted.delete(Number(end[1]));
        } else if (end && began) {
          const t = ciByIssue.get(began.issue) ?? { ms: 0, runs: 0, spans: [] };
          ciByIssue.set(began.issue, { ms: t.ms + (now - began.at), runs: t.runs + 1, spans: [...t.spans, [began.at, now]] });
          ciStarted.delete(Number(end[1]));
        }
      },
    });
    const runner = ci;
    ctx.defer(() => runner.stop());
  }

  const fleet = await benchFleet(ctx, forge, { instance: `bench-land-${mode}`, timeScale: spec.timeScale });
  const loadAtStart = loadavg()[0]!;
  const config: StartConfig = {
    gate: mode === "local" ? { ci: "local", local_command: "true" } : { ci: "required" },
    ...(spec.strategy === "default" ? {} : { landing: { strategy: "squash" } }),
    ...(spec.pacing === "default" ? {} : { pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 } }),
  };
  await forgeAccounting(forge, true);
  if (ciCount) ciCount.stats.requests = ciCount.stats.counted = 0;

  const t0 = Date.now();
  await fleet.host.start({ repo, worker_command: `sh ${worker}`, target: spec.target, auto_merge: true, config });
  const deadline = t0 + spec.timeoutSeconds * 1000;
  let records: LaneRecord[] = [];
  let merged: LaneRecord[] = [];
  let escalated: number[] = [];
  for (;;) {
    records = await lane(fleet, "supervisor");
    merged = records.filter((r) => r.event === "merged");
    escalated = [...new Set(records.filter((r) => r.event === "escalated").map((r) => r.issue!))];
    if (merged.length + escalated.length >= spec.issues || Date.now() > deadline) break;
    await pause(100);
  }
  // Read the counts at once: what the fleet spends idling afterwards is not landing.
  const acc = await forgeAccounting(forge);
  const ciStats = ciCount ? { ...ciCount.stats } : null;
  const monitor = await lane(fleet, "monitor");
  if (process.env.AFK_BENCH_TIMELINE) {
    const all = [...records.map((r) => ({ lane: "S", ...r })), ...monitor.map((r) => ({ lane: "M", ...r }))].sort((a, b) => ms(a.ts) - ms(b.ts));
    await writeFile(
      process.env.AFK_BENCH_TIMELINE,
      `# t0 ${t0}\n` +
        all
          .map(
            (r) =>
              `${String(ms(r.ts) - t0).padStart(7)} ${r.lane} ${r.event} ${r.issue ?? ""} ${r.msg.slice(0, 160)}${r.data?.phase_ms ? ` ${JSON.stringify(r.data.phase_ms)}` : ""}`,
          )
          .join("\n") +
        "\n",
    );
  }
  const tickEnds = monitor.filter((r) => r.event === "tick" && ms(r.ts) >= t0).map((r) => ms(r.ts));
  ctx.log(`  ${merged.length} landed${escalated.length ? `, ${escalated.length} escalated` : ""} after ${Date.now() - t0} ms; stopping`);

  await fleet.shutdown();
  const ciRuns = ci?.stats().runs ?? 0;
  await ci?.stop();
  ciCount?.restore();
  const issues = (await api<{ state: string; pull_request?: unknown }[]>(forge, "GET", `/repos/${repo}/issues?state=all&per_page=100`)).body.filter(
    (i) => !i.pull_request,
  );
  const times = perIssue(records, ciByIssue);
  if (mode === "required") {
    // When the last check on the commit that landed concluded (the forge's completed_at) until
    // the merge: a train's candidate (the base now points at it), else the PR's head.
    const concluded = async (sha: string): Promise<number[]> =>
      (await api<{ check_runs: { completed_at: string | null }[] }>(forge, "GET", `/repos/${repo}/commits/${sha}/check-runs`)).body.check_runs
        .map((r) => (r.completed_at ? ms(r.completed_at) : NaN))
        .filter((x) => !Number.isNaN(x));
    for (const t of times) {
      const m = merged.find((r) => r.issue === t.issue);
      const head = typeof m?.data?.head === "string" ? m.data.head : null;
      if (!m || !head) continue;
      const landedSha = typeof m.data?.mergeSha === "string" ? m.data.mergeSha : null;
      let done = landedSha && landedSha !== head ? await concluded(landedSha) : [];
      if (done.length === 0) done = await concluded(head);
      if (done.length > 0) t.checkToMergeMs = mergedMs(m) - Math.max(...done);
    }
  }
  await forge.close();

  const intervalOverheadMs: number[] = [];
  let previous = t0;
  for (const landing of [...merged].sort((a, b) => mergedMs(a) - mergedMs(b))) {
    const at = mergedMs(landing);
    const spans = [...(ciByIssue.get(landing.issue!)?.spans ?? []), ...trainCi];
    const ci = spans.filter(([a, b]) => a >= previous && b <= at).reduce((sum, [a, b]) => sum + b - a, 0);
    const worker = previous === t0 ? (times.find((t) => t.issue === landing.issue)?.workerMs ?? 0) : 0;
    intervalOverheadMs.push(at - previous - ci - worker);
    previous = at;
  }
  const mergedTs = merged.map(mergedMs).sort((a, b) => a - b);
  const last = mergedTs.at(-1) ?? Date.now();
  const serviceMs: number[] = [];
  for (let i = 1; i < mergedTs.length; i++) {
    const [a, b] = [mergedTs[i - 1]!, mergedTs[i]!];
    if (!tickEnds.some((t) => t > a && t < b)) serviceMs.push(b - a);
  }
  return {
    mode,
    landed: merged.length,
    wallMs: last - t0,
    spanMs: mergedTs.length > 1 ? last - mergedTs[0]! : 0,
    ticks: tickEnds.filter((t) => t <= last).length + 1,
    serviceMs,
    intervalOverheadMs,
    syncs: records.filter((r) => r.event === "land_synced").length + merged.reduce((sum, r) => sum + (typeof r.data?.syncs === "number" ? r.data.syncs : 0), 0),
    issues: times,
    requests: {
      total: acc.total - (ciStats?.requests ?? 0),
      counted: acc.counted - (ciStats?.counted ?? 0),
      not_modified: acc.not_modified,
    },
    ci: ciStats ? { ...ciStats, runs: ciRuns } : null,
    escalated,
    closedOnForge: issues.filter((i) => i.state === "closed").length,
    byRoute: acc.by_route,
    load: [loadAtStart, loadavg()[0]!],
    phases: cyclePhases(records, monitor),
    trains: records
      .filter((r) => r.event === "train")
      .flatMap((r) => (Array.isArray(r.data?.landings) ? (r.data.landings as Array<{ issues: number[] }>).map((l) => l.issues.length) : [])),
  };
}

function figuresOf(spec: LandingSpec, v: VariantResult): Figure[] {
  const q = (values: number[], at: number): number | null => {
    const x = quantile(values, at);
    return x === null ? null : round(x, 0);
  };
  const overhead = v.issues.map((i) => i.overheadMs);
  const perIssue = (n: number): number | null => (v.landed ? round(n / v.landed, 1) : null);
  const figures: Figure[] = [
    {
      key: "landed",
      label: "issues landed",
      value: `${v.landed} of ${spec.issues}`,
      goal: `${spec.issues}`,
      ok: v.landed === spec.issues && v.closedOnForge === spec.issues,
    },
    { key: "wall_ms", label: "project_start until the last landing", value: round(v.wallMs, 0), unit: "ms" },
    { key: "landings_per_min", label: "landings per minute (over that wall)", value: v.wallMs > 0 ? round((v.landed * 60_000) / v.wallMs, 1) : null },
    {
      key: "steady_landings_per_min",
      label: "landings per minute (first to last landing)",
      value: v.spanMs > 0 ? round(((v.landed - 1) * 60_000) / v.spanMs, 1) : null,
    },
    {
      key: "claim_to_merge_ms_median",
      label: "worker_born → merged, median",
      value: q(
        v.issues.map((i) => i.claimToMergeMs),
        0.5,
      ),
      unit: "ms",
    },
    {
      key: "worker_ms_median",
      label: "worker time (born → exited), median",
      value: q(
        v.issues.map((i) => i.workerMs),
        0.5,
      ),
      unit: "ms",
    },
  ];
  if (v.ci) {
    figures.push(
      {
        key: "ci_ms_median",
        label: "CI run time per issue (its check runs), median",
        value: q(
          v.issues.map((i) => i.ciMs),
          0.5,
        ),
        unit: "ms",
      },
      { key: "ci_runs_per_issue", label: "check runs per landed issue", value: perIssue(v.ci.runs) },
    );
  }
  // Issue 11's goals hold at time scale 1 with the default config (the real-time variant).
  const real = spec.timeScale === 1;
  const goal = (value: number | null, max: number): Pick<Figure, "goal" | "ok"> => (real ? { goal: `≤ ${max}`, ok: value !== null && value <= max } : {});
  const overheadMedian = q(overhead, 0.5);
  const fleetOverhead = q(v.intervalOverheadMs, 0.5);
  const checkToMerge = q(
    v.issues.flatMap((i) => (i.checkToMergeMs === null ? [] : [i.checkToMergeMs])),
    0.5,
  );
  const countedPerIssue = perIssue(v.requests.counted);
  if (v.ci)
    figures.push({
      key: "check_to_merge_ms_median",
      label: "last required check concluded → merged, median",
      value: checkToMerge,
      unit: "ms",
      ...goal(checkToMerge, 3_000),
    });
  figures.push(
    {
      key: "fleet_overhead_ms_median",
      label: "fleet overhead per landed issue (gap between landings − its CI), median",
      value: fleetOverhead,
      unit: "ms",
      ...goal(fleetOverhead, 5_000),
    },
    {
      key: "fleet_overhead_ms_mean",
      label: "  the same, mean (all gaps ÷ issues landed: a train's riders share one gap)",
      value: v.intervalOverheadMs.length ? round(v.intervalOverheadMs.reduce((a, b) => a + b, 0) / v.intervalOverheadMs.length, 0) : null,
      unit: "ms",
    },
    { key: "overhead_ms_median", label: "claim → merged − worker − CI per issue (queue included), median", value: overheadMedian, unit: "ms" },
    { key: "overhead_ms_p90", label: "claim → merged − worker − CI per issue (queue included), p90", value: q(overhead, 0.9), unit: "ms" },
    { key: "landing_ms_median", label: "  one landing, median (gap to the next landing in the same tick)", value: q(v.serviceMs, 0.5), unit: "ms" },
    {
      key: "exit_to_pr_ms_median",
      label: "  worker exit → PR opened, median",
      value: q(
        v.issues.flatMap((i) => (i.exitToPrMs === null ? [] : [i.exitToPrMs])),
        0.5,
      ),
      unit: "ms",
    },
    {
      key: "pr_to_merge_ms_median",
      label: "  PR opened → merged, median",
      value: q(
        v.issues.flatMap((i) => (i.prToMergeMs === null ? [] : [i.prToMergeMs])),
        0.5,
      ),
      unit: "ms",
    },
    {
      key: "merged_to_synced_ms_median",
      label: "  a landing's merge → the next PR synced (pushed), median",
      value: q(v.phases.mergedToSynced, 0.5),
      unit: "ms",
    },
    {
      key: "synced_to_seen_ms_median",
      label: "  synced → its concluded check seen (CI run and watch), median",
      value: q(v.phases.syncedToSeen, 0.5),
      unit: "ms",
    },
    { key: "seen_to_merged_ms_median", label: "  check seen → merged (the landing tick), median", value: q(v.phases.seenToMerged, 0.5), unit: "ms" },
    { key: "syncs_per_issue", label: "syncs with the base per landed issue", value: perIssue(v.syncs) },
    { key: "ticks", label: "ticks until the last landing (incl. its own)", value: v.ticks },
    { key: "requests_per_issue", label: "REST requests per landed issue (fleet)", value: perIssue(v.requests.total) },
    { key: "counted_per_issue", label: "rate-limit-counted per landed issue (fleet)", value: countedPerIssue, ...goal(countedPerIssue, 15) },
  );
  if (v.ci) figures.push({ key: "ci_requests", label: "CI runner's own requests (not in the above)", value: v.ci.requests });
  return figures;
}

/**
 * Issue 11's real-time figures for both landings side by side, in one section: squash (one PR at
 * a time, strict protection) and the default config (trains). Keys of the squash variant are as
 * they were; the default's carry `trains_`. Each variant says the load average it ran under.
 */
export function realTimeLandingSection(name = "landing-real-time"): Section {
  return {
    name,
    summary: `landing at time scale 1, instant workers, required CI (demo runner, \`true\`): ${REAL_TIME_LANDING.issues} issues, target ${REAL_TIME_LANDING.target}; squash, then the default landing (trains)`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const squash = await runVariant(ctx, REAL_TIME_LANDING, "required");
      const trains = await runVariant(ctx, REAL_TIME_TRAINS, "required");
      const load = (v: VariantResult): string => `${round(v.load[0], 1)} → ${round(v.load[1], 1)}`;
      const figures: Figure[] = [
        ...figuresOf(REAL_TIME_LANDING, squash).map((f) => ({ ...f, label: `[squash] ${f.label}` })),
        { key: "load_avg", label: "[squash] 1-min load average, start → end (shared machine)", value: load(squash) },
        ...figuresOf(REAL_TIME_TRAINS, trains).map((f) => ({ ...f, key: `trains_${f.key}`, label: `[default: trains] ${f.label}` })),
        { key: "trains_load_avg", label: "[default: trains] 1-min load average, start → end (shared machine)", value: load(trains) },
        { key: "trains_sizes", label: "[default: trains] PRs per landing (train sizes)", value: trains.trains.join(", ") || "none" },
      ];
      return {
        figures,
        details: { squash: detailsOf(squash), trains: detailsOf(trains) },
        notes: [
          `both at time scale 1 with the default pacing; the machine is shared with other work, so the figures move with its load (shown per variant)`,
          `squash: landing.strategy "squash", main requires the "test" check and up-to-date branches (one PR at a time: sync, CI again, merge)`,
          `default: no landing config (strategy "auto", landing.train.max 4); main requires the "test" check but not up-to-date branches, so "auto" lands by push and green PRs ride trains (a train's CI runs on its draft PR and counts as CI time)`,
          `fleet overhead per landing = time since the previous landing − the CI runs inside it (the first: since project_start, minus its worker); a train's members after its first land with it (gap ≈ 0)`,
          `check → merged: from the last check concluded on the commit that landed (a train's candidate, else the PR head) to the merge`,
          ...[squash, trains].map(
            (v, i) =>
              `${i === 0 ? "squash" : "trains"}: fleet overhead per landing ms, in landing order: ${v.intervalOverheadMs.map((x) => Math.round(x)).join(", ")}`,
          ),
        ],
      };
    },
  };
}

function detailsOf(v: VariantResult): Record<string, unknown> {
  return {
    issues: v.issues,
    landing_ms: v.serviceMs,
    fleet_overhead_ms: v.intervalOverheadMs,
    phases_ms: v.phases,
    requests: v.requests,
    ci: v.ci,
    by_route: v.byRoute,
    load: v.load,
    trains: v.trains,
  };
}

export function landingSection(mode: Mode, spec: LandingSpec = DEFAULT_LANDING[mode], name?: string): Section {
  const scale = spec.timeScale === 1 ? "time scale 1, default config" : `time scale ${spec.timeScale}`;
  return {
    name: name ?? (mode === "local" ? "landing" : "landing-ci"),
    summary:
      mode === "local"
        ? `landing overhead, instant workers, local gate \`true\`: ${spec.issues} issues, target ${spec.target}, squash, ${scale}`
        : `landing overhead, instant workers, required CI (demo runner, \`true\`): ${spec.issues} issues, target ${spec.target}, squash, ${scale}`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const v = await runVariant(ctx, spec, mode);
      const notes = [
        spec.pacing === "default"
          ? `time scale ${spec.timeScale}, the default pacing (busy ticks every 90 s): what moves the fleet is its events (a worker's exit, a watched check concluding, a landing finishing)`
          : `time scale ${spec.timeScale}, pacing.busy_seconds 5: ticks every ~${round(5 * spec.timeScale * 1000, 0)} ms after the previous one ends (events wake the loop sooner)`,
        `overhead = (worker_born → merged) − worker time${v.ci ? " − CI run time" : ""}; it includes waiting for the tick and in the serialized landing queue (target ${spec.target})`,
      ];
      if (v.ci)
        notes.push(
          `CI: the demo's CI runner with its own token, polling every ${spec.ciPollMs} ms, test command \`true\`; CI time is its runs' own duration (fetch, checkout, test), so its polling delay counts as overhead`,
        );
      if (v.escalated.length > 0) notes.push(`escalated: ${v.escalated.map((n) => `#${n}`).join(", ")}`);
      if (v.closedOnForge !== v.landed) notes.push(`${v.closedOnForge} issues closed on the forge, ${v.landed} landings in the lane`);
      notes.push(
        `fleet overhead per landing ms, in landing order: ${v.intervalOverheadMs.map((x) => Math.round(x)).join(", ")}`,
        `per issue overhead ms: ${v.issues.map((i) => `#${i.issue} ${Math.round(i.overheadMs)}${i.attempts > 1 ? ` (${i.attempts} attempts)` : ""}`).join(", ")}`,
        `requests ${v.requests.total} (${v.requests.counted} counted, ${v.requests.not_modified} answered 304)${v.ci ? `, plus the CI runner's ${v.ci.requests} (the JSON's by_route includes them)` : ""}`,
      );
      return {
        figures: figuresOf(spec, v),
        details: { ...detailsOf(v), time_scale: spec.timeScale },
        notes,
      };
    },
  };
}
