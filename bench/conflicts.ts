// Conflicts seen early (issue 12's figure): a backlog of 12 ready issues, 6 of which (the odd
// ones) edit one shared file that their bodies name, under the default config (required CI,
// landing "auto", retry 2, 3 workers) at time scale 1, run twice on fresh forges: with early
// detection, overlap-aware dispatch and conflict retries that wait (the default), and with all
// three off (`conflicts: { early: false, overlap_dispatch: false, wait: false }`). Per variant: conflict-caused retries
// (a landing's sync or the early check found the PR no longer merges), escalations, CI runs,
// wall time until every issue was closed or escalated, and the REST requests per tick (the
// early check and the overlap read are local git: the difference is what they cost).
//
// Every shared issue's worker rewrites shared.txt whole, so any two of them conflict; a retry
// starts afresh from the base of the moment, as a real agent told the conflicting paths would.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startCiRunner } from "../server/demo/ci-runner.js";
import { api } from "../test/support/forge-fixtures.js";
import { benchFleet, forgeAccounting, lane, pause, readyForge, requireTestCheck, type LaneRecord, type StartConfig } from "./fleet-harness.js";
import { countRequestsOf } from "./landing.js";
import { round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

export interface ConflictsSpec {
  issues: number;
  /** Issue numbers that edit the shared file. */
  shared: number[];
  target: number;
  timeScale: number;
  /** A worker's time before it commits (seconds, unscaled: the worker is a plain script). */
  workSeconds: number;
  /** The CI's test command's time (seconds). */
  ciSeconds: number;
  timeoutSeconds: number;
}

export const DEFAULT_CONFLICTS: ConflictsSpec = {
  issues: 12,
  shared: [1, 3, 5, 7, 9, 11],
  target: 3,
  timeScale: 1,
  workSeconds: 5,
  ciSeconds: 2,
  timeoutSeconds: 420,
};

const SHARED = "shared.txt";

function workerScript(spec: ConflictsSpec): string {
  return [
    "#!/bin/sh",
    "cat > /dev/null",
    `sleep ${spec.workSeconds}`,
    `case " ${spec.shared.join(" ")} " in`,
    `  *" $AFK_ISSUE "*) printf 'greeting: written by task %s\\n' "$AFK_ISSUE" > ${SHARED} ;;`,
    '  *) echo "work for $AFK_ISSUE" > "work-$AFK_ISSUE.txt" ;;',
    "esac",
    'git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm "work for #$AFK_ISSUE"',
    "",
  ].join("\n");
}

interface Variant {
  name: "on" | "off";
  closed: number;
  landed: number;
  escalated: number;
  wallMs: number;
  retries: number;
  conflictRetries: number;
  earlyConflicts: number;
  overlapHolds: number;
  conflictHolds: number;
  pairs: number;
  ciRuns: number;
  ticks: number;
  requests: { total: number; counted: number };
}

async function runVariant(ctx: BenchContext, spec: ConflictsSpec, on: boolean): Promise<Variant> {
  const name = on ? "on" : "off";
  const repo = `bench/conflicts-${name}`;
  ctx.log(`conflicts (${name}): a forge with ${spec.issues} ready issues, ${spec.shared.length} of them editing ${SHARED}`);
  const shared = new Set(spec.shared);
  const forge = await readyForge(ctx, {
    repo,
    issues: spec.issues,
    users: ["ci"],
    files: { [SHARED]: "greeting: hello\n", "README.md": "# conflicts bench\n" },
    body: (n) => (shared.has(n) ? `Change the greeting in \`${SHARED}\` for task ${n}.` : `Add the file for task ${n}.`),
  });
  const workDir = await ctx.tempDir("afk-bench-conflicts-");
  const worker = join(workDir, "worker.sh");
  await writeFile(worker, workerScript(spec));
  await requireTestCheck(forge, repo);
  const ciToken = forge.users.ci;
  if (!ciToken) throw new Error("the forge has no user ci");
  const ciCount = countRequestsOf(ciToken);
  ctx.defer(ciCount.restore);
  const ci = startCiRunner({
    apiUrl: forge.apiUrl,
    token: ciToken,
    repo,
    gitUrl: forge.gitUrl,
    workDir: join(workDir, "ci"),
    intervalMs: 500,
    testCommand: ["sleep", String(spec.ciSeconds)],
  });
  ctx.defer(() => ci.stop());

  const fleet = await benchFleet(ctx, forge, { instance: `bench-conflicts-${name}`, timeScale: spec.timeScale });
  // The default config; "off" turns both halves of the feature off.
  const config: StartConfig = on ? {} : { conflicts: { early: false, overlap_dispatch: false, wait: false } };
  await forgeAccounting(forge, true);
  ciCount.stats.requests = ciCount.stats.counted = 0;
  const t0 = Date.now();
  await fleet.host.start({ repo, worker_command: `sh ${worker}`, target: spec.target, auto_merge: true, config });
  const deadline = t0 + spec.timeoutSeconds * 1000;
  let records: LaneRecord[] = [];
  const doneOf = (rs: LaneRecord[]): Set<number> => new Set(rs.filter((r) => r.event === "merged" || r.event === "escalated").map((r) => r.issue!));
  for (;;) {
    records = await lane(fleet, "supervisor");
    if (doneOf(records).size >= spec.issues || Date.now() > deadline) break;
    await pause(200);
  }
  const wallMs = Date.now() - t0;
  const acc = await forgeAccounting(forge);
  const ciStats = { ...ciCount.stats };
  const ciRuns = ci.stats().runs;
  const ticks = (await lane(fleet, "monitor")).filter((r) => r.event === "tick" && Date.parse(r.ts) >= t0).length;
  ctx.log(`  ${doneOf(records).size} of ${spec.issues} done after ${wallMs} ms; stopping`);
  await fleet.shutdown();
  await ci.stop();
  ciCount.restore();
  const issues = (await api<{ state: string; pull_request?: unknown }[]>(forge, "GET", `/repos/${repo}/issues?state=all&per_page=100`)).body.filter(
    (i) => !i.pull_request,
  );
  await forge.close();
  const retries = records.filter((r) => r.event === "retry");
  return {
    name,
    closed: issues.filter((i) => i.state === "closed").length,
    landed: new Set(records.filter((r) => r.event === "merged").map((r) => r.issue)).size,
    escalated: new Set(records.filter((r) => r.event === "escalated").map((r) => r.issue)).size,
    wallMs,
    retries: retries.length,
    conflictRetries: retries.filter((r) => /conflicts in/.test(r.msg)).length,
    earlyConflicts: records.filter((r) => r.event === "early_conflict").length,
    overlapHolds: records.filter((r) => r.event === "overlap_held").length,
    conflictHolds: records.filter((r) => r.event === "conflict_held").length,
    pairs: records.filter((r) => r.event === "pair_conflict").length,
    ciRuns,
    ticks,
    requests: { total: acc.total - ciStats.requests, counted: acc.counted - ciStats.counted },
  };
}

function figures(spec: ConflictsSpec, v: Variant): Figure[] {
  const perTick = (n: number): number | null => (v.ticks > 0 ? round(n / v.ticks, 1) : null);
  const k = (key: string): string => `${key}_${v.name}`;
  const label = (text: string): string => `${text} (${v.name === "on" ? "all on" : "all off"})`;
  return [
    { key: k("landed"), label: label("issues landed"), value: `${v.landed} of ${spec.issues}` },
    { key: k("escalated"), label: label("issues escalated"), value: v.escalated },
    { key: k("conflict_retries"), label: label("conflict-caused retries"), value: v.conflictRetries },
    // Workers and CI never fail here: every escalation is a conflict on the last attempt.
    { key: k("conflict_failures"), label: label("conflict-caused failed attempts (retries + escalations)"), value: v.conflictRetries + v.escalated },
    { key: k("retries"), label: label("retries, all causes"), value: v.retries },
    {
      key: k("early_conflicts"),
      label: label("  early sightings of a PR that no longer merges (after a landing, or the base moved; a held PR is seen again after each landing)"),
      value: v.earlyConflicts,
    },
    { key: k("overlap_holds"), label: label("  dispatches held back for overlap"), value: v.overlapHolds },
    { key: k("conflict_holds"), label: label("  conflict retries that waited for in-flight work"), value: v.conflictHolds },
    { key: k("pairs"), label: label("  conflicting pairs of in-flight heads seen"), value: v.pairs },
    { key: k("ci_runs"), label: label("CI runs"), value: v.ciRuns },
    { key: k("wall_ms"), label: label("project_start until every issue landed or escalated"), value: round(v.wallMs, 0), unit: "ms" },
    { key: k("ticks"), label: label("ticks"), value: v.ticks },
    { key: k("requests_per_tick"), label: label("REST requests per tick (fleet)"), value: perTick(v.requests.total) },
    { key: k("counted_per_tick"), label: label("rate-limit-counted per tick (fleet)"), value: perTick(v.requests.counted) },
  ];
}

export function conflictsSection(spec: ConflictsSpec = DEFAULT_CONFLICTS): Section {
  return {
    name: "conflicts",
    summary: `conflicts seen early: ${spec.issues} issues, ${spec.shared.length} edit one shared file; default config (required CI), target ${spec.target}, time scale ${spec.timeScale}; with and without early detection, overlap-aware dispatch and waiting conflict retries`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const on = await runVariant(ctx, spec, true);
      const off = await runVariant(ctx, spec, false);
      const notes = [
        `issues ${spec.shared.map((n) => `#${n}`).join(", ")} name \`${SHARED}\` and rewrite it (any two conflict); the others add their own file. Workers take ${spec.workSeconds} s, CI (the demo runner, strict required "test" check) ${spec.ciSeconds} s`,
        `"off" = conflicts.early, conflicts.overlap_dispatch and conflicts.wait false; both start from the default config otherwise`,
        `conflict-caused retries: retries whose evidence is a merge conflict with the base, found by a landing's sync or by the early check; workers and CI never fail in this backlog, so every escalation is a third conflict (retry 2)`,
        `requests per tick: the fleet's REST requests (the CI runner's excluded) over its ticks; the early check and the overlap read make none (local git), so the difference between the variants is the other work their order caused`,
      ];
      for (const v of [on, off]) if (v.closed !== v.landed) notes.push(`${v.name}: ${v.closed} issues closed on the forge, ${v.landed} landings in the lane`);
      return {
        figures: [...figures(spec, on), ...figures(spec, off)],
        details: { spec, on, off },
        notes,
      };
    },
  };
}
