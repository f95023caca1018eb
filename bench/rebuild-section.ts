// rebuild's CPU cost over generated backlogs, via bench/rebuild.ts (median of N warmed runs).
import { benchRebuild, type RebuildBench } from "./rebuild.js";
import type { BenchContext, Figure, Section, SectionResult } from "./section.js";

const GOAL_MS = 50;

function figures(r: RebuildBench, goal: boolean): Figure[] {
  const n = r.issues.toLocaleString("en-US");
  return [
    {
      key: `cpu_ms_${r.issues}`,
      label: `rebuild CPU at ${n} issues (median of ${r.runs})`,
      value: r.cpu_ms,
      unit: "ms",
      ...(goal ? { goal: `< ${GOAL_MS}`, ok: r.cpu_ms < GOAL_MS } : {}),
    },
    { key: `cpu_ms_${r.issues}_range`, label: `  min … max`, value: `${r.cpu_ms_min} … ${r.cpu_ms_max}`, unit: "ms" },
    { key: `wall_ms_${r.issues}`, label: `  wall (median)`, value: r.wall_ms, unit: "ms" },
    { key: `shape_${r.issues}`, label: `  PRs / claims / dispatchable / excluded`, value: `${r.pulls} / ${r.claims} / ${r.dispatch} / ${r.excluded}` },
  ];
}

export const rebuildSection: Section = {
  name: "rebuild",
  summary: "rebuild CPU time over generated backlogs (pure, no I/O)",
  async run(ctx: BenchContext): Promise<SectionResult> {
    ctx.log("rebuild at 10,000 issues");
    const big = benchRebuild(10000, 21, 10);
    ctx.memory.sample();
    ctx.log("rebuild at 1,000 issues");
    const small = benchRebuild(1000, 21, 10);
    ctx.memory.sample();
    return { figures: [...figures(big, true), ...figures(small, false)] };
  },
};
