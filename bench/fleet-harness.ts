// What the fleet sections (workers, landing) share: a forge child process seeded with ready
// issues, a FleetHost on it whose every worker is killed on the way out (even when the section
// fails, even when the bench dies), lane readers, and /proc CPU readings.
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import type { ProjectStartInput } from "../server/host/api.js";
import type { Seed } from "../server/forge-emulator/index.js";
import { descendantCpu, parseProcStat, processGroupMembers, readProcTable, TICKS_PER_SECOND } from "../server/runtimes/local/proc.js";
import { api } from "../test/support/forge-fixtures.js";
import { startForgeProcess, type ForgeProcess } from "./forge-process.js";
import type { BenchContext } from "./section.js";

export const READY = "ready-for-agent";

/**
 * A forge child process with `issues` open issues, all labelled ready, in a section temp dir;
 * `body` words an issue (by its number) and `files` seeds the base tree.
 */
export async function readyForge(
  ctx: BenchContext,
  opts: { repo: string; issues: number; users?: string[]; body?: (n: number) => string; files?: Record<string, string>; actionsConcurrency?: number },
): Promise<ForgeProcess> {
  const body = opts.body ?? ((n: number) => `Add the file for task ${n}.`);
  const seed: Seed = {
    ...(opts.files ? { files: opts.files } : {}),
    labels: [{ name: READY }],
    issues: Array.from({ length: opts.issues }, (_, i) => ({ title: `Bench task ${i + 1}`, body: body(i + 1), labels: [READY] })),
  };
  const seedDir = await ctx.tempDir("afk-bench-seed-");
  const seedPath = join(seedDir, "seed.json");
  await writeFile(seedPath, JSON.stringify(seed));
  const forge = await startForgeProcess({
    dir: await ctx.tempDir("afk-bench-forge-"),
    repo: opts.repo,
    seed: seedPath,
    ...(opts.users ? { users: opts.users } : {}),
    ...(opts.actionsConcurrency !== undefined ? { actionsConcurrency: opts.actionsConcurrency } : {}),
  });
  ctx.defer(() => forge.close());
  return forge;
}

/** Branch protection on main requiring the "test" check on an up-to-date branch. */
export async function requireTestCheck(forge: ForgeProcess, repo: string, strict = true, contexts: string[] = ["test"]): Promise<void> {
  const protection = await api(forge, "PUT", `/repos/${repo}/branches/main/protection`, {
    required_status_checks: { strict, contexts },
    enforce_admins: null,
    required_pull_request_reviews: null,
    restrictions: null,
  });
  if (protection.status !== 200) throw new Error(`branch protection: HTTP ${protection.status}`);
}

export interface Accounting {
  total: number;
  counted: number;
  not_modified: number;
  by_route: Record<string, { total: number; counted: number; not_modified: number }>;
  by_status: Record<string, number>;
  /** Per login, then per route: whose requests they were (a fleet and its runners share the forge). */
  by_user: Record<string, Record<string, { total: number; counted: number; not_modified: number }>>;
}

export async function forgeAccounting(forge: ForgeProcess, reset = false): Promise<Accounting> {
  const path = reset ? "/_forge/accounting/reset" : "/_forge/accounting";
  const r = await api<Accounting>(forge, reset ? "POST" : "GET", path, undefined, { token: null });
  if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status}`);
  return r.body;
}

// Worker process groups still alive when the bench exits are killed outright.
const livePgids = new Set<number>();
let exitHook = false;

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

export interface BenchFleet {
  host: FleetHost;
  repo: string;
  stateDir: string;
  /** Records the worker pids status shows, so cleanup can kill their groups if stop does not. */
  track(pids: readonly (number | null)[]): void;
  /** stop({stop_workers: true}), close, then SIGKILL whatever worker group is left. Idempotent. */
  shutdown(): Promise<void>;
  /** Worker process groups still alive after stop({stop_workers: true}) (killed by shutdown). */
  leftovers(): number;
}

export async function benchFleet(
  ctx: BenchContext,
  forge: ForgeProcess,
  opts: { instance: string; timeScale: number; env?: Record<string, string> },
): Promise<BenchFleet> {
  const stateDir = await ctx.tempDir("afk-bench-state-");
  const env: NodeJS.ProcessEnv = { ...process.env, GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: stateDir, ...opts.env };
  delete env.GH_TOKEN;
  delete env.AFK_CONFIG;
  const host = new FleetHost({ env, instance: opts.instance, timeScale: opts.timeScale });
  if (!exitHook) {
    exitHook = true;
    // Workers run in their own sessions: an interrupted bench would leave them behind.
    process.on("exit", () => {
      for (const pgid of livePgids) killGroup(pgid);
    });
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const) {
      process.once(signal, () => process.exit(code));
    }
  }
  const mine = new Set<number>();
  let leftovers = 0;
  let closing: Promise<void> | null = null;
  const fleet: BenchFleet = {
    host,
    repo: forge.repo,
    stateDir,
    track(pids) {
      for (const pid of pids) {
        if (pid === null) continue;
        mine.add(pid);
        livePgids.add(pid);
      }
    },
    leftovers: () => leftovers,
    shutdown() {
      closing ??= (async () => {
        const bounded = async <T>(p: Promise<T>, ms: number): Promise<T | undefined> => {
          let timer: ReturnType<typeof setTimeout> | undefined;
          try {
            return await Promise.race([
              p.catch(() => undefined),
              new Promise<undefined>((ok) => {
                timer = setTimeout(() => ok(undefined), ms);
              }),
            ]);
          } finally {
            clearTimeout(timer);
          }
        };
        try {
          const status = await bounded(host.status({ repo: forge.repo, scope: "worker" }), 5_000);
          if (status) fleet.track(status.workers.map((w) => w.pid));
          await bounded(host.stop({ repo: forge.repo, stop_workers: true }), 30_000);
          await bounded(host.close(), 10_000);
          // A worker born by a tick that was running when the stop came is not among those the
          // stop killed: every worker this fleet ever started is in the supervisor lane.
          const born = await bounded(lane(fleet, "supervisor"), 5_000);
          for (const r of born ?? []) if (r.event === "worker_born" && r.pid !== undefined) fleet.track([r.pid]);
          for (const pgid of mine) {
            const members = await processGroupMembers(pgid);
            if (members && members.length > 0) leftovers += 1;
          }
          if (leftovers > 0) ctx.log(`  ${leftovers} worker process group(s) outlived project_stop {stop_workers: true}: killed`);
        } finally {
          for (const pgid of mine) {
            killGroup(pgid);
            livePgids.delete(pgid);
          }
        }
      })();
      return closing;
    },
  };
  ctx.defer(() => fleet.shutdown());
  return fleet;
}

export type StartConfig = NonNullable<ProjectStartInput["config"]>;

export interface LaneRecord {
  ts: string;
  event: string;
  msg: string;
  issue?: number;
  pid?: number;
  data?: Record<string, unknown>;
}

export async function lane(fleet: BenchFleet, name: "supervisor" | "monitor", tail = 10_000): Promise<LaneRecord[]> {
  const r = await fleet.host.logs({ repo: fleet.repo, lane: name, tail_lines: tail });
  return r.records as unknown as LaneRecord[];
}

/** Sleeps `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise((ok) => setTimeout(ok, ms));
}

/** This process's reaped children's CPU (cutime + cstime), ms; null without /proc. */
export function reapedChildrenCpuMs(): number | null {
  try {
    const text = readFileSync("/proc/self/stat", "utf8");
    const f = text
      .slice(text.lastIndexOf(")") + 2)
      .trim()
      .split(/\s+/);
    return ((Number(f[16 - 3]) + Number(f[17 - 3])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** A process's CPU, its own plus its reaped children's, ms; null when unreadable. */
export function processCpuMs(pid: number): number | null {
  try {
    const entry = parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    return entry ? (entry.ticks * 1000) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** Per process (pid:startTicks) CPU ms of every member of the given process groups; null without /proc. */
export async function groupsCpu(pgids: ReadonlySet<number>): Promise<Map<string, number> | null> {
  const table = await readProcTable();
  if (table === null) return null;
  const out = new Map<string, number>();
  for (const p of table) if (pgids.has(p.pgrp)) out.set(`${p.pid}:${p.startTicks}`, (p.ticks * 1000) / TICKS_PER_SECOND);
  return out;
}

/** CPU spent between two `groupsCpu` readings (processes born in between count from zero). */
export function groupsCpuDelta(before: Map<string, number>, after: Map<string, number>): number {
  let sum = 0;
  for (const [key, ms] of after) sum += ms - (before.get(key) ?? 0);
  return sum;
}

/** The wall time of each of `calls` calls of `fn`, one after another, in ms. */
export async function timed(calls: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < calls; i += 1) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Per process (pid:startTicks) CPU ms of every descendant of `root` (not `root` itself); null without /proc. */
export async function descendantsCpu(root: number): Promise<Map<string, number> | null> {
  const tree = await descendantCpu(root);
  if (tree === "unknown") return null;
  return new Map(tree.procs.filter((p) => p.pid !== root).map((p) => [`${p.pid}:${p.startTicks}`, (p.ticks * 1000) / TICKS_PER_SECOND]));
}

/** What the host (this process) spent over a measured window, and what the forge counted in it. */
export interface HostWindow {
  /** Epoch ms at the window's start and end. */
  wall0: number;
  wall1: number;
  windowMs: number;
  cpu: NodeJS.CpuUsage;
  /** user + system of this process, ms. */
  hostCpuMs: number;
  /** The git children this process ran and reaped in the window, ms; null without /proc. */
  reapedMs: number | null;
  /** The forge child process (with what it reaped), ms; null without /proc. */
  forgeMs: number | null;
  /** What `probe` read at both ends, as groupsCpuDelta; null without a probe or /proc. */
  probedMs: number | null;
  peakRss: number;
  peakHeap: number;
  heapEnd: number;
  accounting: Accounting;
}

/**
 * With AFK_BENCH_CPU_PROFILE=<path>, the window's V8 CPU profile of this process (the host) is
 * written there (a .cpuprofile for Chrome DevTools or scripts/cpuprofile-summary.mjs); the
 * profiler's own overhead counts in that run's CPU figures, so measure without it.
 */
async function startProfile(): Promise<((ctx: BenchContext) => Promise<void>) | null> {
  const path = process.env.AFK_BENCH_CPU_PROFILE;
  if (!path) return null;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 500 });
  await session.post("Profiler.start");
  return async (ctx) => {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    await writeFile(path, JSON.stringify(profile));
    ctx.log(`CPU profile of the window: ${path}`);
  };
}

/**
 * Measures the host over `wait`: its own CPU (process.cpuUsage), its reaped children's, the forge
 * child's, `probe`'s processes' (workers), and its RSS and heap sampled every 100 ms; the forge's
 * accounting is reset at the start and read at the end. Nothing of the bench runs in the window
 * but the sampler and `wait` itself: the run-wide 20 ms sampler, which would bill its own
 * memoryUsage() calls to the host, is paused.
 */
export async function measureHost(
  ctx: BenchContext,
  forge: ForgeProcess,
  wait: () => Promise<void>,
  probe?: () => Promise<Map<string, number> | null>,
): Promise<HostWindow> {
  let peakRss = 0;
  let peakHeap = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  await forgeAccounting(forge, true);
  const probed0 = probe ? await probe() : null;
  const forge0 = processCpuMs(forge.pid);
  const reaped0 = reapedChildrenCpuMs();
  const wall0 = Date.now();
  const perf0 = performance.now();
  const cpu0 = process.cpuUsage();
  ctx.memory.stop();
  sample();
  const sampler = setInterval(sample, 100);
  const profiler = await startProfile();
  try {
    await wait();
  } finally {
    clearInterval(sampler);
    await profiler?.(ctx);
    ctx.memory.start();
  }
  sample();
  const cpu = process.cpuUsage(cpu0);
  const windowMs = performance.now() - perf0;
  const wall1 = Date.now();
  const reaped1 = reapedChildrenCpuMs();
  const forge1 = processCpuMs(forge.pid);
  const probed1 = probe ? await probe() : null;
  const accounting = await forgeAccounting(forge);
  return {
    wall0,
    wall1,
    windowMs,
    cpu,
    hostCpuMs: (cpu.user + cpu.system) / 1000,
    reapedMs: reaped0 !== null && reaped1 !== null ? reaped1 - reaped0 : null,
    forgeMs: forge0 !== null && forge1 !== null ? forge1 - forge0 : null,
    probedMs: probed0 && probed1 ? groupsCpuDelta(probed0, probed1) : null,
    peakRss,
    peakHeap,
    heapEnd: process.memoryUsage().heapUsed,
    accounting,
  };
}
