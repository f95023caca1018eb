// What the `actions` runtime costs the host (server/runtimes/actions/): 20 workers in flight as
// workflow runs on the forge's local Actions runner, against 2 local workers, one after the other
// in this section, at the default config (pacing.busy_seconds 90, actions.beat_seconds 60, so each
// run is polled every 15 s and the beats are read every 30 s) and time scale 1.
//
// Each phase, in a node process of its own (bench/actions-phase.ts: a fresh host, as a user runs
// one; earlier phases and sections leave memory V8 does not give back): a forge child process
// with one ready issue per worker, a FleetHost in that process (runtime forced by AFK_RUNTIME, as a user's environment would), every worker a quiet engine
// that reads its brief and sleeps. For actions, `afk-mcp actions init` proposes the workflow
// (whose step runs this checkout's `node dist/server/bin.js worker`) and its PR is merged first;
// the forge runs 20 runs at once, each in a fresh clone on this machine. Once every worker is in
// flight (for actions: every run has pushed its first beat), the window opens at the end of the
// first tick that started after that, and closes at the end of the `ticks`-th tick after it: both
// phases are measured over whole tick periods, so "per tick" is the window's cost over its ticks.
// In it: that process's CPU (it is the host: ticks, run polls, beat reads), the git it reaped,
// its RSS and heap, the workers' own CPU (local: their process groups; actions: the runner's
// processes, which on GitHub run elsewhere), the forge child's CPU, and the fleet user's REST
// requests as the forge counted them (a 304 costs no rate limit on GitHub, nor here).
//
//   node dist/bench/run.js --only actions
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import { actionsInit } from "../server/host/actions-init.js";
import { connect } from "../server/host/connection.js";
import { silentLogger } from "../server/gh/octokit.js";
import { git } from "../server/gh/git.js";
import { DEFAULT_USER } from "../server/forge-emulator/index.js";
import { shellQuote } from "../server/runtimes/local/spawn.js";
import { api } from "../test/support/forge-fixtures.js";
import {
  benchFleet,
  descendantsCpu,
  groupsCpu,
  lane,
  measureHost,
  pause,
  readyForge,
  type BenchFleet,
  type HostWindow,
  type StartConfig,
} from "./fleet-harness.js";
import { BIN, type ForgeProcess } from "./forge-process.js";
import { mib, round, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";

export interface ActionsBenchSpec {
  /** Workers on the Actions runner. */
  actions: number;
  /** Local workers, the comparison. */
  local: number;
  /** The window, in whole tick periods (each pacing.busy_seconds at the default config). */
  ticks: number;
  /** Give up waiting for every worker to be in flight after this long. */
  inFlightTimeoutSeconds: number;
}

export const DEFAULT_ACTIONS_BENCH: ActionsBenchSpec = { actions: 20, local: 2, ticks: 2, inFlightTimeoutSeconds: 300 };

/** Reads the brief, then stays alive and silent until its run is cancelled (or the fleet kills its group). */
const QUIET_ENGINE = "cat >/dev/null; exec sleep 1800";
const WORKER_STEP = `node ${shellQuote(BIN)} worker`;
const BUSY_SECONDS = DEFAULT_CONFIG.pacing.busy_seconds;
const RUN_REFS = `${DEFAULT_CONFIG.namespace}/run/`;

export type Runtime = "local" | "actions";

/** A full garbage collection (V8's gc(), exposed at run time): so a phase neither starts with the previous one's garbage nor is judged by its own. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

interface Tally {
  total: number;
  counted: number;
  not_modified: number;
}

export interface Phase {
  runtime: Runtime;
  workers: number;
  /** project_start until every worker was in flight, ms. */
  inFlightMs: number;
  liveAtEnd: number;
  window: HostWindow;
  ticks: number;
  tickErrors: number;
  rssBefore: number;
  /** After a full GC at the window's end: the heap the fleet holds, and the RSS. */
  afterGc: NodeJS.MemoryUsage;
  /** The fleet user's requests in the window: all, and those under /actions/. */
  fleet: Tally;
  actionsRoutes: Tally;
  /** Requests in the window by anyone else (the runs' tokens), counted. */
  others: Record<string, Tally>;
  stopMs: number;
  /** Local worker groups, or runs still in progress, after project_stop {stop_workers: true}. */
  leftovers: number;
  load: [number, number, number];
}

function sum(routes: Record<string, Tally> | undefined, keep: (route: string) => boolean = () => true): Tally {
  const out: Tally = { total: 0, counted: 0, not_modified: 0 };
  for (const [route, t] of Object.entries(routes ?? {})) {
    if (!keep(route)) continue;
    out.total += t.total;
    out.counted += t.counted;
    out.not_modified += t.not_modified;
  }
  return out;
}

/**
 * `afk-mcp actions init` against the forge, and its PR merged: what a user does once per
 * repository, in a process of its own as a user runs the command (bench/actions-phase.ts `init`),
 * so the host's memory is not charged with it.
 */
async function installWorkflow(forge: ForgeProcess, stateDir: string): Promise<void> {
  const script = fileURLToPath(new URL("./actions-phase.js", import.meta.url));
  const child = spawn(process.execPath, [script, "init", forge.apiUrl, forge.repo, stateDir], {
    stdio: ["ignore", 2, 2],
    env: { ...process.env, GITHUB_TOKEN: forge.token },
  });
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`actions init ended with ${code ?? signal}`);
}

/** The init command's work (run by bench/actions-phase.ts `init`). */
export async function initWorkflow(apiUrl: string, repo: string, token: string, stateDir: string): Promise<void> {
  const conn = await connect({ repo, env: { GITHUB_API_URL: apiUrl, GITHUB_TOKEN: token, AFK_STATE_DIR: stateDir }, logger: silentLogger });
  const proposed = await actionsInit(conn, { worker: WORKER_STEP });
  if (proposed.status !== "proposed" || !proposed.pr) throw new Error(`actions init did not propose the workflow: ${proposed.message}`);
  const merged = await fetch(`${apiUrl}/repos/${repo}/pulls/${proposed.pr.number}/merge`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/vnd.github+json" },
    body: JSON.stringify({ merge_method: "merge" }),
  });
  if (merged.status !== 200) throw new Error(`merging the workflow's PR: HTTP ${merged.status}`);
}

/** The issues whose run ref the runners have pushed (read in the forge's bare repository: no request). */
async function runRefs(forge: ForgeProcess): Promise<number> {
  const r = await git(["for-each-ref", "--format=%(refname)", RUN_REFS], { cwd: forge.bareRepo });
  return r.stdout.split("\n").filter(Boolean).length;
}

/** Runs of the forge not completed (queued or in progress), read with the fleet's token outside any window. */
async function unfinishedRuns(forge: ForgeProcess): Promise<number> {
  let n = 0;
  for (const status of ["queued", "in_progress"]) {
    const r = await api<{ total_count: number }>(forge, "GET", `/repos/${forge.repo}/actions/runs?status=${status}&per_page=1`);
    n += r.body.total_count;
  }
  return n;
}

/** Monitor-lane ticks that started at or after `since` and have ended. */
async function ticksSince(fleet: BenchFleet, since: number): Promise<{ ts: string; error: boolean }[]> {
  return (await lane(fleet, "monitor", 2_000))
    .filter((r) => r.event === "tick" && Date.parse(String(r.data?.at)) >= since)
    .map((r) => ({ ts: r.ts, error: Boolean(r.data?.error) }));
}

export async function phase(ctx: BenchContext, runtime: Runtime, workers: number, spec: ActionsBenchSpec): Promise<Phase> {
  const repo = `bench/${runtime}`;
  ctx.log(`${runtime}: starting the forge with ${workers} ready issues`);
  const forge = await readyForge(ctx, { repo, issues: workers, ...(runtime === "actions" ? { actionsConcurrency: workers } : {}) });
  if (runtime === "actions") await installWorkflow(forge, await ctx.tempDir("afk-bench-init-"));
  const fleet = await benchFleet(ctx, forge, { instance: `bench-${runtime}`, timeScale: 1, env: { AFK_RUNTIME: runtime } });
  const config: StartConfig = { runtime, gate: { ci: "local", local_command: "true" } };
  collectGarbage();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  await fleet.host.start({ repo, worker_command: QUIET_ENGINE, target: workers, auto_merge: true, config });

  ctx.log(`${runtime}: waiting for ${workers} workers in flight`);
  const deadline = Date.now() + spec.inFlightTimeoutSeconds * 1000;
  for (;;) {
    const status = await fleet.host.status({ repo, scope: "worker" });
    fleet.track(status.workers.map((w) => w.pid));
    const running = status.workers.filter((w) => w.state === "running").length;
    const beating = runtime === "actions" ? await runRefs(forge) : running;
    if (running >= workers && beating >= workers) break;
    if (Date.now() > deadline) {
      const tail = (await lane(fleet, "supervisor", 20)).map((r) => `${r.event} ${r.msg}`).join("\n  ");
      throw new Error(
        `${runtime}: ${running} of ${workers} workers running, ${beating} beating after ${spec.inFlightTimeoutSeconds} s; supervisor lane:\n  ${tail}`,
      );
    }
    await pause(runtime === "actions" ? 1_000 : 200);
  }
  const inFlightMs = performance.now() - t0;
  const inFlightAt = Date.now();
  ctx.log(`${runtime}: all in flight after ${Math.round(inFlightMs)} ms; waiting for the end of the next tick`);
  while ((await ticksSince(fleet, inFlightAt)).length === 0) {
    if (Date.now() > inFlightAt + 3 * BUSY_SECONDS * 1000) throw new Error(`${runtime}: no tick within ${3 * BUSY_SECONDS} s of every worker in flight`);
    await pause(250);
  }

  ctx.log(`${runtime}: measuring ${spec.ticks} tick periods (~${spec.ticks * BUSY_SECONDS} s)`);
  const pgids = new Set((await fleet.host.status({ repo, scope: "worker" })).workers.map((w) => w.pid).filter((p): p is number => p !== null));
  let opened = 0;
  const window = await measureHost(
    ctx,
    forge,
    async () => {
      opened = Date.now();
      // Asleep through most of the window; then the lane is read every 250 ms until the tick that closes it has ended.
      await pause(Math.max(0, spec.ticks * BUSY_SECONDS - 15) * 1000);
      while ((await ticksSince(fleet, opened)).length < spec.ticks) {
        if (Date.now() > opened + (spec.ticks + 2) * BUSY_SECONDS * 1000) throw new Error(`${runtime}: fewer than ${spec.ticks} ticks in the window`);
        await pause(250);
      }
    },
    () => (runtime === "actions" ? descendantsCpu(forge.pid) : groupsCpu(pgids)),
  );
  const load = loadavg() as [number, number, number];
  collectGarbage();
  const afterGc = process.memoryUsage();
  const inWindow = (await ticksSince(fleet, window.wall0)).filter((t) => Date.parse(t.ts) <= window.wall1);
  const status = await fleet.host.status({ repo, scope: "worker" });
  const liveAtEnd = runtime === "actions" ? await unfinishedRuns(forge) : status.workers.filter((w) => w.state === "running").length;

  ctx.log(`${runtime}: stopping the fleet and its workers`);
  const s0 = performance.now();
  await fleet.shutdown();
  const stopMs = performance.now() - s0;
  const leftovers = runtime === "actions" ? await unfinishedRuns(forge) : fleet.leftovers();
  // The forge goes now, its runner's processes with it (the section's cleanup would, later).
  await forge.close();

  const byUser = window.accounting.by_user;
  const others: Record<string, Tally> = {};
  for (const [login, routes] of Object.entries(byUser)) if (login !== DEFAULT_USER) others[login || "(anonymous)"] = sum(routes);
  return {
    runtime,
    workers,
    inFlightMs,
    liveAtEnd,
    window,
    ticks: inWindow.length,
    tickErrors: inWindow.filter((t) => t.error).length,
    rssBefore,
    afterGc,
    fleet: sum(byUser[DEFAULT_USER]),
    actionsRoutes: sum(byUser[DEFAULT_USER], (route) => route.includes("/actions/")),
    others,
    stopMs,
    leftovers,
    load,
  };
}

/** A phase in a node process of its own (bench/actions-phase.ts): a fresh host, as a user runs one. */
async function phaseApart(ctx: BenchContext, runtime: Runtime, workers: number, spec: ActionsBenchSpec): Promise<Phase> {
  const out = join(await ctx.tempDir("afk-bench-phase-"), "phase.json");
  const script = fileURLToPath(new URL("./actions-phase.js", import.meta.url));
  const child = spawn(process.execPath, [script, runtime, String(workers), JSON.stringify(spec), out], { stdio: ["ignore", 2, 2] });
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`the ${runtime} phase's process ended with ${code ?? signal}`);
  return JSON.parse(await readFile(out, "utf8")) as Phase;
}

export function actionsSection(spec: ActionsBenchSpec = DEFAULT_ACTIONS_BENCH): Section {
  return {
    name: "actions",
    summary: `the host with ${spec.actions} workers in flight on the Actions runtime against ${spec.local} local workers (default config, time scale 1): CPU per tick, RSS, rate-limited requests per worker-hour`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const local = await phaseApart(ctx, "local", spec.local, spec);
      const actions = await phaseApart(ctx, "actions", spec.actions, spec);

      const seconds = (p: Phase): number => p.window.windowMs / 1000;
      const perTick = (p: Phase, ms: number | null): number | null => (ms === null || p.ticks === 0 ? null : round(ms / p.ticks, 1));
      const perSecond = (p: Phase, ms: number | null): number | null => (ms === null ? null : round(ms / seconds(p), 1));
      const workerHours = (p: Phase): number => (p.workers * seconds(p)) / 3600;
      const perWorkerHour = (p: Phase, n: number): number => round(n / workerHours(p), 1);
      const both = (f: (p: Phase) => string | number | null): string => `${String(f(local) ?? "n/a")} / ${String(f(actions) ?? "n/a")}`;
      const cpuLocal = perTick(local, local.window.hostCpuMs)!;
      const cpuActions = perTick(actions, actions.window.hostCpuMs)!;
      const countedPerWorkerHour = perWorkerHour(actions, actions.fleet.counted);
      const tickErrors = local.tickErrors + actions.tickErrors;
      const leftovers = local.leftovers + actions.leftovers;
      const vs = `${spec.local} local / ${spec.actions} actions`;

      const figures: Figure[] = [
        {
          key: "in_flight",
          label: `workers in flight at the window's start … end (${vs})`,
          value: `${local.workers} … ${local.liveAtEnd} / ${actions.workers} … ${actions.liveAtEnd}`,
        },
        {
          key: "in_flight_ms",
          label: `project_start until all in flight (${vs}; actions: every run beating)`,
          value: both((p) => round(p.inFlightMs, 0)),
          unit: "ms",
        },
        { key: "window_s", label: `measured window (${vs})`, value: both((p) => round(seconds(p), 1)), unit: "s" },
        { key: "ticks", label: `ticks in the window (${vs})`, value: both((p) => p.ticks) },
        { key: "tick_errors", label: "ticks that reported an error (both)", value: tickErrors, goal: "0", ok: tickErrors === 0 },
        { key: "local_host_cpu_ms_per_tick", label: `host CPU (the phase's process) per tick, ${spec.local} local workers`, value: cpuLocal, unit: "ms" },
        {
          key: "actions_host_cpu_ms_per_tick",
          label: `host CPU (the phase's process) per tick, ${spec.actions} actions workers`,
          value: cpuActions,
          unit: "ms",
          goal: `≤ ${spec.local} local's ${cpuLocal}`,
          ok: cpuActions <= cpuLocal,
        },
        { key: "host_cpu_ms_per_s", label: `host CPU per second (${vs})`, value: both((p) => perSecond(p, p.window.hostCpuMs)), unit: "ms/s" },
        {
          key: "host_cpu_user_system_ms_per_s",
          label: `  of which user + system (${vs})`,
          value: both((p) => `${round(p.window.cpu.user / 1000 / seconds(p), 1)} + ${round(p.window.cpu.system / 1000 / seconds(p), 1)}`),
          unit: "ms/s",
        },
        {
          key: "host_children_cpu_ms_per_tick",
          label: `host's reaped children (git) CPU per tick (${vs})`,
          value: both((p) => perTick(p, p.window.reapedMs)),
          unit: "ms",
        },
        {
          key: "local_rss_peak_mib",
          label: `host RSS peak in the window, ${spec.local} local workers (100 ms samples)`,
          value: mib(local.window.peakRss),
          unit: "MiB",
        },
        {
          key: "actions_rss_peak_mib",
          label: `host RSS peak in the window, ${spec.actions} actions workers`,
          value: mib(actions.window.peakRss),
          unit: "MiB",
          goal: `≤ ${spec.local} local's ${mib(local.window.peakRss)}`,
          ok: actions.window.peakRss <= local.window.peakRss,
        },
        { key: "rss_before_mib", label: `host RSS before project_start (${vs})`, value: both((p) => mib(p.rssBefore)), unit: "MiB" },
        {
          key: "rss_growth_mib",
          label: `host RSS peak in the window over RSS before project_start (${vs})`,
          value: both((p) => mib(p.window.peakRss - p.rssBefore)),
          unit: "MiB",
        },
        { key: "heap_peak_mib", label: `host heapUsed peak in the window (${vs})`, value: both((p) => mib(p.window.peakHeap)), unit: "MiB" },
        {
          key: "heap_retained_mib",
          label: `host heapUsed after a full GC at the window's end (${vs})`,
          value: both((p) => mib(p.afterGc.heapUsed)),
          unit: "MiB",
        },
        { key: "rss_after_gc_mib", label: `host RSS after that GC (${vs})`, value: both((p) => mib(p.afterGc.rss)), unit: "MiB" },
        {
          key: "heap_total_external_after_gc_mib",
          label: `  of which V8 heapTotal + external (${vs}; the rest is native: git spawns, sockets, allocator)`,
          value: both((p) => `${mib(p.afterGc.heapTotal)} + ${mib(p.afterGc.external)}`),
          unit: "MiB",
        },
        {
          key: "workers_cpu_ms_per_s",
          label: `workers' own CPU per second (${vs}: the runner's processes, on GitHub not this machine)`,
          value: both((p) => perSecond(p, p.window.probedMs)),
          unit: "ms/s",
        },
        { key: "forge_cpu_ms_per_s", label: `forge child process CPU per second (${vs})`, value: both((p) => perSecond(p, p.window.forgeMs)), unit: "ms/s" },
        {
          key: "actions_counted_per_worker_hour",
          label: `fleet's rate-limited requests per worker-hour, ${spec.actions} actions runs in flight`,
          value: countedPerWorkerHour,
          goal: "≤ 30",
          ok: countedPerWorkerHour <= 30,
        },
        {
          key: "actions_requests_per_worker_hour",
          label: "  all its REST requests / answered 304 (free), per worker-hour",
          value: `${perWorkerHour(actions, actions.fleet.total)} / ${perWorkerHour(actions, actions.fleet.not_modified)}`,
        },
        {
          key: "actions_window_requests",
          label: "  in the window: all / rate-limited / 304",
          value: `${actions.fleet.total} / ${actions.fleet.counted} / ${actions.fleet.not_modified}`,
        },
        {
          key: "actions_runtime_requests",
          label: "  of which the runtime's (…/actions/…): all / rate-limited / 304",
          value: `${actions.actionsRoutes.total} / ${actions.actionsRoutes.counted} / ${actions.actionsRoutes.not_modified}`,
        },
        {
          key: "local_counted_per_worker_hour",
          label: `fleet's rate-limited requests per worker-hour, ${spec.local} local workers`,
          value: perWorkerHour(local, local.fleet.counted),
        },
        { key: "stop_ms", label: `project_stop with stop_workers (${vs}: cancels every run)`, value: both((p) => round(p.stopMs, 0)), unit: "ms" },
        {
          key: "left_after_stop",
          label: "worker groups alive / runs unfinished after the stop",
          value: both((p) => p.leftovers),
          goal: "0",
          ok: leftovers === 0,
        },
      ];
      return {
        figures,
        details: {
          by_route: { local: local.window.accounting.by_route, actions: actions.window.accounting.by_route },
          others: { local: local.others, actions: actions.others },
          load_at_window_end: { local: local.load, actions: actions.load },
        },
        notes: [
          `default config: pacing.busy_seconds ${BUSY_SECONDS}, actions.beat_seconds ${DEFAULT_CONFIG.actions.beat_seconds} (each run polled every 15 s, the beats read every 30 s); time scale 1; engine ${JSON.stringify(QUIET_ENGINE)}; workflow step ${JSON.stringify(WORKER_STEP)}`,
          `each window spans ${spec.ticks} whole tick periods from the end of the first tick after every worker was in flight; each phase runs in a node process of its own (bench/actions-phase.ts), a fresh host as a user runs one, and starts after a full GC`,
          `per worker-hour: the fleet user's requests in the window over ${spec.actions} workers × ${round(seconds(actions), 1)} s = ${round(workerHours(actions), 3)} worker-hours, extrapolated linearly (births, pickups and stops are outside the window)`,
          `the runs' own tokens made ${sum(actions.others).total} REST requests in the window (their beats and pushes are git, not REST)`,
          `load average at the window's end: local ${local.load.map((l) => l.toFixed(2)).join(" ")}, actions ${actions.load.map((l) => l.toFixed(2)).join(" ")} (${spec.actions} runs, each a node worker and its engine, share this machine with the host)`,
        ],
      };
    },
  };
}
