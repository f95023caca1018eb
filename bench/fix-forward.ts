// Fixing forward against starting fresh: the demo's backlog drained twice by the real Claude Code
// (this package's devDependency), driven by the demo's scripted model on 127.0.0.1 with its
// "explore" script (server/demo/engine.ts demoScript): a conversation first asks git whether the
// branch already holds an earlier attempt's commits; if so it goes straight to the fix, else it
// reads the brief and looks around the project before it works, as an agent meeting the issue
// does. Once with `fix_forward` (the default: a red PR's next attempt continues on its branch),
// once without (the next attempt starts from the base). The backlog's designed CI failures
// (truncate: red on attempt 1, green on 2; hyphenate: red on every attempt, escalated) are where
// the two differ; every other issue costs the same either way.
//
// What is measured is the pipeline's, not a model's: the turns the real CLI made and what the
// scripted model billed for them, per landed issue. That a fix needs fewer turns than a fresh
// start is the script's assumption (the exploring a fresh start repeats); that the fix attempt
// really meets its branch, the failing check's log in its brief, is the fleet's, and it shows in
// the figures only if it holds.
import { runDemo, type DemoReport } from "../server/demo/run.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

interface Mode {
  key: "fix" | "fresh";
  label: string;
  fixForward: boolean;
}

const MODES: Mode[] = [
  { key: "fix", label: "fix forward", fixForward: true },
  { key: "fresh", label: "start fresh", fixForward: false },
];

interface Tally {
  ok: boolean;
  merged: number;
  attempts: number;
  turns: number;
  billed: number;
  recorded: number | null;
  seconds: number;
}

function tally(report: DemoReport): Tally {
  return {
    ok: report.ok,
    merged: report.merged,
    attempts: report.issues.reduce((sum, i) => sum + i.attempts, 0),
    turns: report.engine?.turns ?? 0,
    billed: report.engine?.billed_usd ?? 0,
    recorded: report.engine?.recorded_usd ?? null,
    seconds: report.seconds,
  };
}

export const fixForwardSection: Section = {
  name: "fix-forward",
  summary:
    "the demo backlog drained by the real Claude Code (scripted model, exploring script) with fix_forward on and off: model turns and spend per landed issue",
  async run(ctx: BenchContext): Promise<SectionResult> {
    const seen = new Map<Mode["key"], Tally>();
    for (const mode of MODES) {
      ctx.log(`fix-forward: the demo backlog with the real claude, ${mode.label} (a few minutes)`);
      const report = await runDemo({
        engine: "claude",
        engineScript: "explore",
        config: { fix_forward: mode.fixForward },
        runtime: "local",
        tty: false,
        write: () => undefined,
      });
      seen.set(mode.key, tally(report));
    }
    const fix = seen.get("fix")!;
    const fresh = seen.get("fresh")!;
    const per = (t: Tally, v: number, digits: number): number | null => (t.merged > 0 ? round(v / t.merged, digits) : null);
    const figures: Figure[] = [];
    for (const mode of MODES) {
      const t = seen.get(mode.key)!;
      figures.push(
        { key: `${mode.key}_ok`, label: `${mode.label}: every issue reached its expected end`, value: t.ok ? "yes" : "no", goal: "yes", ok: t.ok },
        { key: `${mode.key}_merged`, label: `${mode.label}: issues landed`, value: t.merged },
        { key: `${mode.key}_attempts`, label: `${mode.label}: attempts (all issues)`, value: t.attempts },
        { key: `${mode.key}_turns`, label: `${mode.label}: model turns (all issues)`, value: t.turns },
        { key: `${mode.key}_turns_per_landed`, label: `${mode.label}: model turns per landed issue`, value: per(t, t.turns, 2) },
        { key: `${mode.key}_usd_per_landed`, label: `${mode.label}: USD billed per landed issue`, value: per(t, t.billed, 4), unit: "$" },
        {
          key: `${mode.key}_spend_exact`,
          label: `${mode.label}: spend recorded = billed`,
          value: t.recorded !== null && Math.abs(t.recorded - t.billed) < 1e-9,
          goal: "true",
          ok: t.recorded !== null && Math.abs(t.recorded - t.billed) < 1e-9,
        },
        { key: `${mode.key}_seconds`, label: `${mode.label}: demo wall time`, value: t.seconds, unit: "s" },
      );
    }
    const saved = fresh.turns > 0 ? round((100 * (fresh.turns - fix.turns)) / fresh.turns, 1) : null;
    figures.push({
      key: "turns_saved_pct",
      label: "turns fixing forward saves against starting fresh",
      value: saved,
      unit: "%",
      goal: "> 0 (same landings)",
      ok: saved !== null && saved > 0 && fix.merged === fresh.merged,
    });
    return {
      figures,
      details: { fix, fresh },
      notes: [
        "turns and USD are the scripted model's (what the real CLI asked of it); the difference is the designed failures' retries:",
        "a fix forward's attempt skips the exploring a fresh start repeats (server/demo/engine.ts demoScript).",
      ],
    };
  },
};
