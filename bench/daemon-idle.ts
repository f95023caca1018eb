// The daemon holding idle registrations: its RSS with none, one and twenty (one repository each,
// all served by one local forge), and what an idle tick costs: requests per tick, how many of
// them count against the rate limit (goal 0: an idle fleet asks with ETags and gets 304s), and
// the daemon's CPU time (not wall) per tick.
import { readFile } from "node:fs/promises";
import { DaemonClient } from "../server/daemon/client.js";
import { cli, daemonPid, daemonWorld, teardown, until } from "../test/support/daemon-fixtures.js";
import { TICKS_PER_SECOND } from "../server/runtimes/local/proc.js";
import { laneDir, laneFile } from "../server/lanes/index.js";
import { mib, round, type BenchContext, type Figure } from "./section.js";

const REGISTRATIONS = 20;
/** The loop's idle pace, in loop seconds (the world runs at time scale 0.05: a tick every 2 s). */
const IDLE_CONFIG = {
  gate: { ci: "local", local_command: "true" },
  pacing: { busy_seconds: 40, idle_seconds: 40, long_idle_seconds: 40 },
};
/** How long the idle ticks are counted for. */
const WINDOW_MS = 20_000;

export async function rss(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => null);
  const kb = status ? /VmRSS:\s+(\d+) kB/.exec(status)?.[1] : undefined;
  return kb ? Number(kb) * 1024 : null;
}

/**
 * The process's CPU time in ms: its own (user + system) and that of the children it reaped (git
 * runs for refs and heartbeats), from /proc in USER_HZ ticks; null where there is no /proc.
 */
export async function cpuMs(pid: number): Promise<{ own: number; children: number } | null> {
  const entry = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (entry === null) return null;
  const f = entry
    .slice(entry.lastIndexOf(")") + 2)
    .trim()
    .split(/\s+/);
  // f[0] is field 3; field n is f[n - 3]: utime 14, stime 15, cutime 16, cstime 17.
  const ms = (n: number) => (Number(f[n - 3]) * 1000) / TICKS_PER_SECOND;
  return { own: ms(14) + ms(15), children: ms(16) + ms(17) };
}

interface Accounting {
  total: number;
  counted: number;
  not_modified: number;
}

async function accounting(apiUrl: string, reset = false): Promise<Accounting> {
  const r = await fetch(`${apiUrl}/_forge/accounting${reset ? "/reset" : ""}`, { method: reset ? "POST" : "GET" });
  return (await r.json()) as Accounting;
}

/** Settles, then samples the RSS a few times and keeps the median (a GC pass moves it). */
async function settledRss(pid: number): Promise<number | null> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    await new Promise((r) => setTimeout(r, 1_000));
    const v = await rss(pid);
    if (v !== null) samples.push(v);
  }
  samples.sort((a, b) => a - b);
  return samples.length ? samples[Math.floor(samples.length / 2)]! : null;
}

export async function idleRegistrationFigures(ctx: BenchContext): Promise<{ figures: Figure[]; notes: string[] }> {
  const repos = Array.from({ length: REGISTRATIONS - 1 }, (_, i) => `afk/idle-${i + 2}`);
  const w = await daemonWorld([], "await", repos);
  ctx.defer(() => teardown(w));
  const all = [w.forge.repo, ...repos];
  await cli(w.env, "daemon");
  const pid = (await daemonPid(w.env))!;
  const idle = await settledRss(pid);
  const session = new DaemonClient({ env: w.env });
  ctx.defer(() => session.close());
  const rows = async (): Promise<{ repo: string; last_poll: string | null }[]> =>
    (await session.daemonCall<{ repo: string; last_poll: string | null }[]>("registrations")) ?? [];
  const polled = async (count: number): Promise<boolean> => (await rows()).filter((r) => r.last_poll !== null).length >= count;
  ctx.log("daemon: one idle registration");
  await session.start({ repo: all[0]!, worker_command: "true", target: 1, config: IDLE_CONFIG });
  await until("the first registration's first poll", () => polled(1));
  const one = await settledRss(pid);
  ctx.log(`daemon: ${REGISTRATIONS} idle registrations`);
  for (const repo of all.slice(1)) await session.start({ repo, worker_command: "true", target: 1, config: IDLE_CONFIG });
  await until(`all ${REGISTRATIONS} registrations polled`, () => polled(REGISTRATIONS), 300_000);
  const twenty = await settledRss(pid);

  // Idle ticks: the forge's requests and the daemon's CPU over a window in which nothing else
  // asks the daemon anything (a status poll would be counted as the ticks' CPU), then the ticks
  // each registration recorded in its monitor lane within it.
  ctx.log("daemon: requests and CPU per idle tick");
  await accounting(w.forge.apiUrl, true);
  const cpuBefore = await cpuMs(pid);
  const start = Date.now();
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  const cpuAfter = await cpuMs(pid);
  const end = Date.now();
  let ticks = 0;
  for (const repo of all) {
    const [owner, name] = repo.split("/") as [string, string];
    const text = await readFile(laneFile(laneDir(w.env.AFK_STATE_DIR!, owner, name), "monitor"), "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      if (!line.includes('"event":"tick"')) continue;
      const at = Date.parse((JSON.parse(line) as { ts: string }).ts);
      if (at >= start && at <= end) ticks += 1;
    }
  }
  const spent = await accounting(w.forge.apiUrl);
  const perTick = ticks > 0 ? spent.total / ticks : null;
  const countedPerTick = ticks > 0 ? spent.counted / ticks : null;
  // CPU time, not wall: on a loaded machine a tick waits for a core, which costs the daemon nothing.
  const cpu =
    cpuBefore && cpuAfter && ticks > 0 ? { own: (cpuAfter.own - cpuBefore.own) / ticks, children: (cpuAfter.children - cpuBefore.children) / ticks } : null;
  return {
    figures: [
      { key: "daemon_idle_rss_mib", label: "daemon RSS, no registration", value: idle === null ? null : mib(idle), unit: "MiB" },
      { key: "daemon_one_idle_registration_rss_mib", label: "daemon RSS, 1 idle registration", value: one === null ? null : mib(one), unit: "MiB" },
      {
        key: "daemon_twenty_idle_registrations_rss_mib",
        label: `daemon RSS, ${REGISTRATIONS} idle registrations (${REGISTRATIONS} repositories)`,
        value: twenty === null ? null : mib(twenty),
        unit: "MiB",
      },
      {
        key: "daemon_rss_per_idle_registration_mib",
        label: "daemon RSS per further idle registration",
        value: one === null || twenty === null ? null : round((twenty - one) / (1024 * 1024) / (REGISTRATIONS - 1), 2),
        unit: "MiB",
      },
      { key: "idle_ticks_counted", label: `idle ticks in ${WINDOW_MS / 1000} s (${REGISTRATIONS} registrations)`, value: ticks },
      { key: "idle_tick_requests", label: "requests per idle tick", value: perTick === null ? null : round(perTick, 2) },
      {
        key: "idle_tick_cpu_ms",
        label: "daemon CPU time per idle tick (user + system, its own process)",
        value: cpu === null ? null : round(cpu.own, 2),
        unit: "ms",
      },
      {
        key: "idle_tick_child_cpu_ms",
        label: "CPU time per idle tick of the children it ran (git)",
        value: cpu === null ? null : round(cpu.children, 2),
        unit: "ms",
      },
      {
        key: "idle_cpu_share",
        label: `daemon CPU over the window, ${REGISTRATIONS} idle registrations (own + children, share of one core)`,
        value: cpuBefore && cpuAfter ? round((cpuAfter.own - cpuBefore.own + cpuAfter.children - cpuBefore.children) / WINDOW_MS, 3) : null,
      },
      {
        key: "idle_tick_rate_limited",
        label: "rate-limited requests per idle tick",
        value: countedPerTick === null ? null : round(countedPerTick, 3),
        goal: "0",
        ok: spent.counted === 0,
      },
    ],
    notes: [
      `${REGISTRATIONS} repositories on one local forge, one idle registration each (no ready issue), time scale 0.05, an idle tick every 2 s per registration; over a ${WINDOW_MS / 1000} s window in which nothing else calls the daemon: requests and rate-limited requests from the forge's accounting, CPU from /proc/<pid>/stat (utime + stime; cutime + cstime for the git runs it reaped), each divided by the ticks the monitor lanes recorded in the window.`,
    ],
  };
}
