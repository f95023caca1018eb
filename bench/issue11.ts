// Issue 11's figures, side by side: two sections of their own (the demo backlog's requests per
// landed issue, and what an idle tick costs) and one table that gathers the six figures from
// the sections of the same run (landing-real-time, trains, demo-requests, idle).
import { runDemo } from "../server/demo/run.js";
import { attribute, RequestLog } from "./demo-attribution.js";
import { benchFleet, forgeAccounting, lane, pause, readyForge } from "./fleet-harness.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

/** The demo's backlog, scripted workers and CI runner, as `afk-mcp demo` runs it. */
export const demoRequestsSection: Section = {
  name: "demo-requests",
  summary: "the demo backlog (11 issues: merges, a retry, escalations, one already done): the fleet's rate-limited requests per landed issue",
  async run(ctx: BenchContext): Promise<SectionResult> {
    ctx.log("demo-requests: running the demo backlog (a few minutes)");
    const log = new RequestLog();
    const report = await runDemo({ tty: false, write: () => undefined, onResponse: log.observe });
    const perLanded = report.fleetCounted !== null && report.merged > 0 ? round(report.fleetCounted / report.merged, 1) : null;
    const landed = new Set(report.issues.filter((i) => i.actual === "merged").map((i) => i.number));
    const spent = attribute(log.records, report.fleetLogin, landed);
    const withoutFailures = report.fleetCounted !== null && report.merged > 0 ? round((report.fleetCounted - spent.failures) / report.merged, 1) : null;
    const figures: Figure[] = [
      { key: "ok", label: "every issue reached its expected end", value: report.ok ? "yes" : "no", goal: "yes", ok: report.ok },
      { key: "merged", label: "issues landed", value: report.merged },
      { key: "escalated", label: "escalated / closed as done", value: `${report.escalated} / ${report.closedDone}` },
      { key: "fleet_counted", label: "the fleet's rate-limited requests", value: report.fleetCounted },
      {
        key: "counted_per_landed",
        label: "rate-limited requests per landed issue (demo backlog)",
        value: perLanded,
        goal: "≤ 15",
        ok: perLanded !== null && perLanded <= 15,
      },
      { key: "designed_failures", label: "of those, spent on the designed failures", value: spent.failures },
      { key: "counted_per_landed_without_failures", label: "per landed issue, designed failures left out", value: withoutFailures },
      { key: "seconds", label: "demo wall time", value: report.seconds, unit: "s" },
    ];
    return {
      figures,
      details: { issues: report.issues, ci: report.ci, requests: report.requests, fleet_routes: report.fleetRoutes },
      notes: [
        "the CI runner and the demo's own watching use a login of their own: the fleet's count is its token's rate-limit use, minus the demo's setup",
        "every attempt and escalation is paid for, but only merges count as landed: retries, verdicts and escalations raise the per-landed figure",
        "designed failures: requests naming an issue that did not land (an escalation, a close as done), a PR closed unmerged (a failed attempt) or the attempt labels; the lists and other shared reads all stay on the landed issues",
        `${spent.shared} shared requests (lists, rules, login) are in both per-landed figures`,
        ...routeTable(report.fleetRoutes, report.merged),
      ],
    };
  },
};

/** The fleet's requests per method and route template, most rate-limited first. */
export function routeTable(routes: Record<string, { total: number; counted: number; not_modified: number }>, landed: number): string[] {
  const rows = Object.entries(routes).sort((a, b) => b[1].counted - a[1].counted || b[1].total - a[1].total || a[0].localeCompare(b[0]));
  const width = Math.max(5, ...rows.map(([route]) => route.length));
  const per = (n: number): string => (landed > 0 ? String(round(n / landed, 2)) : "-");
  return [
    `the fleet's requests per route (counted = rate-limited; 304 = answered from the cache, free; per landed = counted / ${landed}):`,
    `${"route".padEnd(width)}  counted    304  per landed`,
    ...rows.map(
      ([route, t]) => `${route.padEnd(width)}  ${String(t.counted).padStart(7)}  ${String(t.not_modified).padStart(5)}  ${per(t.counted).padStart(10)}`,
    ),
  ];
}

const IDLE_TICKS = 5;

/** A fleet with nothing to do: what its ticks cost once the conditional reads are warm. */
export const idleSection: Section = {
  name: "idle",
  summary: `an idle fleet (nothing ready): rate-limited requests over ${IDLE_TICKS} idle ticks`,
  async run(ctx: BenchContext): Promise<SectionResult> {
    const forge = await readyForge(ctx, { repo: "bench/idle", issues: 0 });
    const fleet = await benchFleet(ctx, forge, { instance: "bench-idle", timeScale: 0.2 });
    const ticks = async (): Promise<number> => (await lane(fleet, "monitor")).filter((r) => r.event === "tick").length;
    const until = async (n: number): Promise<void> => {
      const deadline = Date.now() + 120_000;
      while ((await ticks()) < n) {
        if (Date.now() > deadline) throw new Error(`idle: only ${await ticks()} of ${n} ticks in 2 minutes`);
        await pause(100);
      }
    };
    await fleet.host.start({
      repo: forge.repo,
      worker_command: "true",
      target: 1,
      auto_merge: true,
      config: { pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 } },
    });
    // The first ticks fill the conditional-request caches (and ensure the labels).
    await until(2);
    const from = await ticks();
    await forgeAccounting(forge, true);
    await until(from + IDLE_TICKS);
    const acc = await forgeAccounting(forge);
    const observed = (await ticks()) - from;
    await fleet.shutdown();
    return {
      figures: [
        { key: "ticks", label: "idle ticks observed", value: observed },
        { key: "requests", label: "requests made (conditional: 304s)", value: acc.total },
        {
          key: "counted_per_tick",
          label: "rate-limited requests per idle tick",
          value: round(acc.counted / Math.max(1, observed), 2),
          goal: "0",
          ok: acc.counted === 0,
        },
      ],
      details: { by_route: acc.by_route },
    };
  },
};

interface Row {
  figure: string;
  goal: string;
  from: [section: string, key: string];
  /** How to show the value (default: as it is). */
  show?: (value: unknown, section: Record<string, unknown>) => string;
}

const ROWS: Row[] = [
  {
    figure: "fleet overhead per landed issue (instant worker, instant CI), median (squash)",
    goal: "≤ 5 s",
    from: ["landing-real-time", "fleet_overhead_ms_median"],
    show: (v, s) => `${round(Number(v) / 1000, 1)} s (load ${String(s.load_avg)})`,
  },
  {
    figure: "last required check concluded → merged, median",
    goal: "≤ 3 s",
    from: ["landing-real-time", "check_to_merge_ms_median"],
    show: (v) => `${round(Number(v) / 1000, 1)} s`,
  },
  {
    figure: "the same two with the default landing (trains), overhead; check → merged",
    goal: "≤ 5 s; ≤ 3 s",
    from: ["landing-real-time", "trains_fleet_overhead_ms_median"],
    show: (v, s) =>
      `${round(Number(v) / 1000, 1)} s (mean ${round(Number(s.trains_fleet_overhead_ms_mean) / 1000, 1)} s); ${s.trains_check_to_merge_ms_median === null || s.trains_check_to_merge_ms_median === undefined ? "n/a" : `${round(Number(s.trains_check_to_merge_ms_median) / 1000, 1)} s`} (load ${String(s.trains_load_avg)})`,
  },
  {
    figure: "12 PRs green at once, CI 60 s: time to land all, train / serial",
    goal: "≤ 1/3",
    from: ["trains", "train_vs_serial"],
    show: (v, s) => `${String(v)} (${String(s.train_seconds)} s vs ${String(s.serial_seconds)} s)`,
  },
  {
    figure: "the same with 1 bad PR of 12: good ones landed, gate runs to find the bad one",
    goal: "11; ≤ 5",
    from: ["trains", "bad_good_landed"],
    show: (v, s) => `${String(v)}; ${String(s.bad_found_after)}`,
  },
  { figure: "rate-limited requests per landed issue (demo backlog)", goal: "≤ 15", from: ["demo-requests", "counted_per_landed"] },
  { figure: "idle tick: rate-limited requests", goal: "0", from: ["idle", "counted_per_tick"] },
];

/** The issue's table from the sections this run measured (a section not run says so). */
export function issue11Table(results: Record<string, unknown>): string[] {
  const cells = ROWS.map((row) => {
    const section = results[row.from[0]] as Record<string, unknown> | undefined;
    const value = section?.[row.from[1]];
    const shown =
      section === undefined
        ? `not run (--only ${row.from[0]})`
        : value === undefined || value === null
          ? "n/a"
          : row.show
            ? row.show(value, section)
            : String(value);
    return [row.figure, shown, row.goal];
  });
  const w = [0, 1].map((i) => Math.max(...cells.map((c) => c[i]!.length)));
  return ["| figure | measured | goal |", "|---|---|---|", ...cells.map(([f, v, g]) => `| ${f!.padEnd(w[0]!)} | ${v!.padEnd(w[1]!)} | ${g} |`)];
}

export const ISSUE_11_SECTIONS = ["landing-real-time", "trains", "demo-requests", "idle"];
