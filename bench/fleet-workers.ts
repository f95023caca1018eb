// The host's cost of a full fleet: 20 workers live on 20 ready issues, each a quiet process that
// neither prints nor commits, while the loop ticks about once a second (pacing.busy_seconds 5 at
// time scale 0.2). Over a fixed window: the bench process's own CPU (it IS the host: tick loop,
// snapshot, liveness probes), the CPU of the git processes the host ran and reaped, the workers'
// own CPU (their process groups, from /proc), the forge child's CPU (what GitHub would spend),
// and the bench process's RSS and heap. The forge runs in a child process.
import { round, mib, type BenchContext, type Figure, type Section, type SectionResult } from "./section.js";
import { benchFleet, forgeAccounting, groupsCpu, lane, measureHost, pause, quantile, readyForge, type StartConfig } from "./fleet-harness.js";

export interface WorkersSpec {
  workers: number;
  windowSeconds: number;
  timeScale: number;
  /** Give up waiting for every worker to be running after this long. */
  birthTimeoutSeconds: number;
  /**
   * Metered workers (section "workers-metered"): each runs as a `command` engine whose output the
   * profile's usage reader parses, printing one Codex-shaped usage line a second, with a
   * per-attempt budget the fleet checks at every line: the cost of metering, beside the quiet 20.
   */
  metered?: boolean;
  /** The same output as the metered workers through an opaque worker_command (usage "none"): what printing costs without the metering ("workers-printing"). */
  printing?: boolean;
  /** The section's name when it is not one of the three above ("workers-50": the quiet fleet, wider). */
  name?: string;
}

export const DEFAULT_WORKERS: WorkersSpec = { workers: 20, windowSeconds: 15, timeScale: 0.2, birthTimeoutSeconds: 75 };

/** The quiet fleet two and a half times as wide: a quiet tick's cost should not grow with the width (within 1.5× of the 20's). */
export const WIDE_WORKERS: WorkersSpec = { ...DEFAULT_WORKERS, workers: 50, birthTimeoutSeconds: 180, name: "workers-50" };

/**
 * For a quicker loop while profiling: AFK_BENCH_WORKERS and AFK_BENCH_WINDOW_SECONDS override
 * the count and the window of every workers section (figures from such a run are not the
 * section's: say so beside them).
 */
export function workersSpec(spec: WorkersSpec): WorkersSpec {
  const n = Number(process.env.AFK_BENCH_WORKERS);
  const w = Number(process.env.AFK_BENCH_WINDOW_SECONDS);
  return { ...spec, ...(n > 0 ? { workers: n } : {}), ...(w > 0 ? { windowSeconds: w } : {}) };
}

/** board.settle_seconds by default: a live phase's board is written once it lasted this long (real time). */
const BOARD_SETTLE_SECONDS = 30;

/** Reads the brief, then stays alive and silent until the fleet kills its group. */
const QUIET_WORKER = "cat >/dev/null; exec sleep 600";
/** Reads the brief, then prints one usage line a second (1,000 input and 100 output tokens) until killed. */
const METERED_WORKER = `cat >/dev/null; while true; do echo '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100}}'; sleep 1; done`;

export function workersSection(given: WorkersSpec = DEFAULT_WORKERS): Section {
  const spec = workersSpec(given);
  return {
    name: spec.name ?? (spec.metered ? "workers-metered" : spec.printing ? "workers-printing" : "workers"),
    summary: `host CPU and memory with ${spec.workers} live, ${spec.metered ? "metered (a usage line a second each, read and checked against budget.usd_per_attempt)" : spec.printing ? "printing (the metered workers' line a second each, unmetered: an opaque command)" : "quiet"} workers, ticks every ~${round(5 * spec.timeScale, 2)} s`,
    async run(ctx: BenchContext): Promise<SectionResult> {
      const repo = "bench/workers";
      ctx.log(`starting the forge with ${spec.workers} ready issues`);
      const forge = await readyForge(ctx, { repo, issues: spec.workers });
      const fleet = await benchFleet(ctx, forge, { instance: "bench-workers", timeScale: spec.timeScale });
      const rssBefore = process.memoryUsage().rss;
      const config: StartConfig = {
        gate: { ci: "local", local_command: "true" },
        pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
      };
      const t0 = performance.now();
      const worker = spec.metered
        ? {
            engine: "meter",
            config: {
              ...config,
              engines: { meter: { command: METERED_WORKER, usage: "codex-json" as const, default_model: "m1" } },
              prices: { m1: { input_per_mtok: 1, output_per_mtok: 10 } },
              budget: { usd_per_attempt: 1000 },
            },
          }
        : { worker_command: spec.printing ? METERED_WORKER : QUIET_WORKER, config };
      await fleet.host.start({ repo, ...worker, target: spec.workers, auto_merge: true });

      // Births: wait until every worker is running.
      ctx.log(`waiting for ${spec.workers} workers`);
      const deadline = Date.now() + spec.birthTimeoutSeconds * 1000;
      let running = 0;
      for (;;) {
        const status = await fleet.host.status({ repo, scope: "worker" });
        fleet.track(status.workers.map((w) => w.pid));
        running = status.workers.filter((w) => w.state === "running").length;
        if (running >= spec.workers) break;
        if (Date.now() > deadline) {
          const tail = (await lane(fleet, "supervisor", 20)).map((r) => `${r.event} ${r.msg}`).join("\n  ");
          throw new Error(`only ${running} of ${spec.workers} workers running after ${spec.birthTimeoutSeconds} s; supervisor lane:\n  ${tail}`);
        }
        await pause(200);
      }
      const birthsMs = performance.now() - t0;
      // Steady state: two whole ticks that saw every worker running (the births' board comments
      // and first liveness samples are behind us), then the window.
      ctx.log(`  ${running} workers running after ${Math.round(birthsMs)} ms; waiting for two steady ticks`);
      const allRunningAt = Date.now();
      for (;;) {
        const steady = (await lane(fleet, "monitor", 50)).filter(
          (r) => r.event === "tick" && Date.parse(String(r.data?.at)) >= allRunningAt && r.data?.workers === spec.workers,
        );
        if (steady.length >= 2) break;
        if (Date.now() > deadline + 30_000) throw new Error("the fleet did not tick steadily with every worker running");
        await pause(100);
      }
      // Quiet: each birth's board is written once its phase settled (board.settle_seconds, 30 s
      // of real time, not scaled), and the last births are seconds old here. A window with
      // those writes in it measures births, not a quiet tick: wait until the last birth's phase
      // settled, then for a stretch of ticks that spent no rate limit at all (no write, every
      // read a 304), for a minute at most.
      const settled = allRunningAt + (BOARD_SETTLE_SECONDS + 2) * 1000 - Date.now();
      if (settled > 0) await pause(settled);
      const quietBy = Date.now() + 60_000;
      for (;;) {
        await forgeAccounting(forge, true);
        await pause(2_000);
        const spent = (await forgeAccounting(forge)).counted;
        if (spent === 0) break;
        if (Date.now() > quietBy) {
          ctx.log(`  still ${spent} counted request(s) in 2 s after a minute: measuring anyway`);
          break;
        }
      }
      ctx.log(`  measuring ${spec.windowSeconds} s`);
      const pgids = new Set((await fleet.host.status({ repo, scope: "worker" })).workers.map((w) => w.pid).filter((p): p is number => p !== null));

      // The window: nothing of the bench's own runs in it but a 100 ms memory sampler.
      const win = await measureHost(
        ctx,
        forge,
        () => pause(spec.windowSeconds * 1000),
        () => groupsCpu(pgids),
      );
      const { cpu, windowMs, wall0, wall1, accounting: acc, peakRss, peakHeap, heapEnd } = win;

      const status = await fleet.host.status({ repo, scope: "worker" });
      const liveAtEnd = status.workers.filter((w) => w.state === "running").length;
      const ticks = (await lane(fleet, "monitor", 2_000)).filter((r) => r.event === "tick" && Date.parse(r.ts) >= wall0 && Date.parse(r.ts) < wall1);
      const tickMs = ticks.map((r) => Date.parse(r.ts) - Date.parse(String(r.data?.at)));
      const tickErrors = ticks.filter((r) => r.data?.error).length;

      ctx.log("stopping the fleet and its workers");
      const s0 = performance.now();
      await fleet.shutdown();
      const stopMs = performance.now() - s0;

      const seconds = windowMs / 1000;
      const { hostCpuMs, reapedMs, forgeMs, probedMs: workersMs } = win;
      const perTick = (ms: number | null): number | null => (ms === null || ticks.length === 0 ? null : round(ms / ticks.length, 1));
      const figures: Figure[] = [
        { key: "workers_live", label: "workers live (start … end of window)", value: `${running} … ${liveAtEnd}` },
        { key: "births_ms", label: "project_start until all running", value: round(birthsMs, 0), unit: "ms" },
        { key: "window_s", label: "measured window", value: round(seconds, 1), unit: "s" },
        { key: "ticks", label: "ticks in the window", value: ticks.length },
        { key: "tick_errors", label: "ticks that reported an error", value: tickErrors, goal: "0", ok: tickErrors === 0 },
        { key: "tick_ms_median", label: "tick duration, median", value: tickMs.length ? round(quantile(tickMs, 0.5)!, 0) : null, unit: "ms" },
        { key: "tick_ms_max", label: "tick duration, max", value: tickMs.length ? round(Math.max(...tickMs), 0) : null, unit: "ms" },
        { key: "host_cpu_ms_per_s", label: "host CPU (bench process), per second", value: round(hostCpuMs / seconds, 1), unit: "ms/s" },
        {
          key: "host_cpu_user_ms_per_s",
          label: "  of which user / system",
          value: `${round(cpu.user / 1000 / seconds, 1)} / ${round(cpu.system / 1000 / seconds, 1)}`,
          unit: "ms/s",
        },
        { key: "host_cpu_ms_per_tick", label: "host CPU per tick", value: perTick(hostCpuMs), unit: "ms" },
        {
          key: "host_children_cpu_ms_per_s",
          label: "host's reaped children (git) CPU, per second",
          value: reapedMs === null ? null : round(reapedMs / seconds, 1),
          unit: "ms/s",
        },
        { key: "host_children_cpu_ms_per_tick", label: "host's reaped children (git) CPU per tick", value: perTick(reapedMs), unit: "ms" },
        {
          key: "workers_cpu_ms_per_s",
          label: "workers' own CPU (their process groups), per second",
          value: workersMs === null ? null : round(workersMs / seconds, 1),
          unit: "ms/s",
        },
        { key: "forge_cpu_ms_per_s", label: "forge child process CPU, per second", value: forgeMs === null ? null : round(forgeMs / seconds, 1), unit: "ms/s" },
        { key: "requests_per_tick", label: "REST requests per tick (forge accounting)", value: ticks.length ? round(acc.total / ticks.length, 1) : null },
        { key: "counted_per_tick", label: "rate-limit-counted requests per tick", value: ticks.length ? round(acc.counted / ticks.length, 1) : null },
        { key: "rss_before_mib", label: "RSS before project_start", value: mib(rssBefore), unit: "MiB" },
        { key: "rss_peak_mib", label: "RSS peak in the window (100 ms samples)", value: mib(peakRss), unit: "MiB" },
        { key: "heap_peak_mib", label: "heapUsed peak in the window", value: mib(peakHeap), unit: "MiB" },
        { key: "heap_end_mib", label: "heapUsed at the end of the window", value: mib(heapEnd), unit: "MiB" },
        { key: "stop_ms", label: "project_stop with stop_workers", value: round(stopMs, 0), unit: "ms" },
        { key: "worker_groups_left", label: "worker process groups alive after the stop", value: fleet.leftovers(), goal: "0", ok: fleet.leftovers() === 0 },
      ];
      return {
        figures,
        details: { tick_ms: tickMs, window_by_route: acc.by_route, time_scale: spec.timeScale },
        notes: [
          `worker command: ${JSON.stringify(spec.metered || spec.printing ? METERED_WORKER : QUIET_WORKER)}; time scale ${spec.timeScale}, pacing.busy_seconds 5 (ticks every ~${round(5 * spec.timeScale, 2)} s after the last one ends)`,
          `window requests: ${acc.total} total, ${acc.counted} counted, ${acc.not_modified} answered 304`,
        ],
      };
    },
  };
}
