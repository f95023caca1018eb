// `npm run bench`: prints the fleet's performance figures as a readable table, then one JSON
// line `{"bench": {...}}` for CI logs and closing notes. A benchmark, not a test: goals are
// shown (and reported as `goals_met`), never enforced; the exit code says only whether it ran.
//
//   node dist/bench/run.js                  all sections, in order
//   node dist/bench/run.js --only rebuild   one section (repeatable, or comma-separated)
//   node dist/bench/run.js --list           the section names
//   node dist/bench/run.js --only issue11   issue 11's sections, and its table of six figures
//
// Adding a figure: write a Section (bench/section.ts) returning figures and append it to
// SECTIONS below. Everything stays on 127.0.0.1; each section registers its own cleanup with
// ctx.defer / ctx.tempDir, which run even on failure.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { version } from "../server/version.js";
import { MemorySampler } from "./memory.js";
import { rebuildSection } from "./rebuild-section.js";
import { benchContext, mib, round, type Figure, type FigureValue, type Section, type SectionResult } from "./section.js";
import { snapshotSection } from "./snapshot.js";
import { DEFAULT_WORKERS, WIDE_WORKERS, workersSection } from "./fleet-workers.js";
import { landingSection, realTimeLandingSection, REAL_TIME_LANDING } from "./landing.js";
import { daemonSection } from "./daemon.js";
import { statusSection } from "./status.js";
import { demoRequestsSection, idleSection, issue11Table, ISSUE_11_SECTIONS } from "./issue11.js";
import { conflictsSection } from "./conflicts.js";
import { trainsSection } from "./trains.js";
import { ledgerSection } from "./ledger.js";
import { dashboardSection } from "./dashboard.js";
import { enginesSection } from "./engines.js";
import { fixForwardSection } from "./fix-forward.js";
import { sandboxSection } from "./sandbox.js";
import { actionsSection } from "./fleet-actions.js";

// The fleet sections measure the fleet, with scripted workers that read and mark files outside
// their worktrees: they run with runtime "local"; the sandbox section measures the sandbox, and
// the actions section sets each of its fleets' runtime itself.
process.env.AFK_RUNTIME ??= "local";

const SECTIONS: Section[] = [
  snapshotSection(),
  rebuildSection,
  workersSection(),
  workersSection(WIDE_WORKERS),
  workersSection({ ...DEFAULT_WORKERS, printing: true }),
  workersSection({ ...DEFAULT_WORKERS, metered: true }),
  landingSection("local"),
  landingSection("required"),
  realTimeLandingSection(),
  // The squash half of landing-real-time alone, for working on it (not in issue11's table).
  landingSection("required", REAL_TIME_LANDING, "landing-real-time-squash"),
  demoRequestsSection,
  idleSection,
  daemonSection(),
  statusSection(),
  conflictsSection(),
  trainsSection,
  ledgerSection,
  dashboardSection,
  enginesSection,
  fixForwardSection,
  sandboxSection,
  actionsSection(),
];

const USAGE = `Usage: node dist/bench/run.js [--only NAME[,NAME]]... [--list]

Sections: ${SECTIONS.map((s) => s.name).join(", ")}; issue11 = ${ISSUE_11_SECTIONS.join(", ")}`;

function out(line = ""): void {
  process.stdout.write(`${line}\n`);
}

function show(v: FigureValue): string {
  if (v === null) return "n/a";
  if (typeof v === "number") return Number.isInteger(v) ? v.toLocaleString("en-US") : String(v);
  return String(v);
}

function table(rows: Figure[]): string[] {
  const cells = rows.map((f) => [f.label, show(f.value), f.unit ?? "", f.goal === undefined ? "" : `goal ${f.goal} ${f.ok ? "ok" : "MISSED"}`]);
  const w = [0, 1, 2].map((i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map(([label, value, unit, goal]) => `  ${label!.padEnd(w[0]!)}  ${value!.padStart(w[1]!)} ${unit!.padEnd(w[2]!)}  ${goal}`.trimEnd());
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { only: { type: "string", multiple: true }, list: { type: "boolean" }, help: { type: "boolean", short: "h" } } });
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.help) {
    out(USAGE);
    return 0;
  }
  if (parsed.values.list) {
    for (const s of SECTIONS) out(`${s.name.padEnd(10)} ${s.summary}`);
    return 0;
  }
  const only = (parsed.values.only ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean)
    .flatMap((n) => (n === "issue11" ? ISSUE_11_SECTIONS.filter((s) => SECTIONS.some((x) => x.name === s)) : [n]));
  const unknown = only.filter((n) => !SECTIONS.some((s) => s.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`bench: no section ${unknown.map((n) => JSON.stringify(n)).join(", ")}\n${USAGE}\n`);
    return 2;
  }
  const selected = only.length === 0 ? SECTIONS : SECTIONS.filter((s) => only.includes(s.name));

  const { ctx, memory, cleanUp } = benchContext();

  const result: Record<string, unknown> = {};
  const goals: { section: string; key: string; ok: boolean }[] = [];
  const start = performance.now();
  const load0 = loadavg();
  memory.start();
  out(
    `afk-mcp ${version} bench: node ${process.version}, ${process.platform} ${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}), load average ${load0.map((l) => l.toFixed(2)).join(" ")}`,
  );
  try {
    for (const section of selected) {
      memory.startWindow();
      const t0 = performance.now();
      let r: SectionResult;
      try {
        r = await section.run(ctx);
      } finally {
        await cleanUp();
      }
      const peak = memory.windowPeak();
      const figures: Figure[] = [
        ...r.figures,
        { key: "section_wall_ms", label: "section wall time", value: round(performance.now() - t0, 0), unit: "ms" },
        { key: "peak_rss_mib", label: "bench process peak RSS (sampled)", value: mib(peak.rss), unit: "MiB" },
        { key: "peak_heap_used_mib", label: "bench process peak heapUsed (sampled)", value: mib(peak.heapUsed), unit: "MiB" },
      ];
      out();
      out(`${section.name} — ${section.summary}`);
      for (const line of table(figures)) out(line);
      if (r.notes && r.notes.length > 0) {
        out();
        for (const line of r.notes) out(`  ${line}`);
      }
      const data: Record<string, unknown> = {};
      for (const f of figures) {
        data[f.key] = f.value;
        if (f.ok !== undefined) goals.push({ section: section.name, key: f.key, ok: f.ok });
      }
      result[section.name] = { ...data, ...r.details };
    }
  } catch (err) {
    process.stderr.write(`bench: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  } finally {
    memory.stop();
  }

  const peak = memory.peak();
  const run = {
    wall_ms: round(performance.now() - start, 0),
    peak_rss_mib: mib(peak.rss),
    peak_heap_used_mib: mib(peak.heapUsed),
    max_rss_mib: mib(MemorySampler.maxRss()),
    memory_samples: peak.samples,
    load_average_start: load0.map((l) => round(l, 2)),
    load_average_end: loadavg().map((l) => round(l, 2)),
    goals_met: goals.every((g) => g.ok),
    goals_missed: goals.filter((g) => !g.ok).map((g) => `${g.section}.${g.key}`),
  };
  if (ISSUE_11_SECTIONS.some((name) => result[name] !== undefined)) {
    out();
    out("issue 11 — the figures side by side (from this run's sections)");
    for (const line of issue11Table(result)) out(`  ${line}`);
  }
  out();
  out("run — whole bench process");
  for (const line of table([
    { key: "wall_ms", label: "wall time", value: run.wall_ms, unit: "ms" },
    { key: "peak_rss_mib", label: "peak RSS (sampled memoryUsage)", value: run.peak_rss_mib, unit: "MiB" },
    { key: "peak_heap_used_mib", label: "peak heapUsed (sampled)", value: run.peak_heap_used_mib, unit: "MiB" },
    { key: "max_rss_mib", label: "peak RSS (kernel maxrss)", value: run.max_rss_mib, unit: "MiB" },
    { key: "load", label: "load average (1/5/15 min) at start … end", value: `${run.load_average_start.join(" ")} … ${run.load_average_end.join(" ")}` },
    { key: "goals_met", label: "goals met", value: run.goals_met ? "yes" : `no: ${run.goals_missed.join(", ")}` },
  ]))
    out(line);
  out();
  out(
    JSON.stringify({
      bench: {
        version,
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        cpus: cpus().length,
        at: new Date().toISOString(),
        ...result,
        run,
      },
    }),
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
