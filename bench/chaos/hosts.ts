// Hosts the way users start them: `afk-mcp run` in its own process group with its own
// AFK_STATE_DIR; killed with SIGKILL (a crash) or stopped with SIGINT (Ctrl-C). And what they
// leave: workers, found in /proc by the worktree path in their environment, and daemons, found
// in /proc by their state dir (the lock file names a daemon only once it has started).
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readProcTable } from "../../server/runtimes/local/proc.js";
import { workerShellCommand } from "../../server/demo/worker-command.js";
import type { World } from "./world.js";
import { REPO } from "./world.js";

/** dist/bench/chaos/hosts.js -> dist/server/bin.js */
const BIN = fileURLToPath(new URL("../../server/bin.js", import.meta.url));

export interface HostOptions {
  name: string;
  stateDir: string;
  logDir: string;
  target: number;
  /** AFK_TIME_SCALE: every duration of the loop at this fraction. */
  timeScale: number;
  /** Pause of the scripted worker before each commit. */
  workerDelayMs: number;
}

export interface Host {
  name: string;
  stateDir: string;
  pid: number;
  startedAt: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

const live = new Set<ChildProcess>();
/** Every state dir a host was started on: their daemons end with the harness, however it ends. */
const stateDirs = new Set<string>();
let exitHook = false;

export function startHost(world: World, opts: HostOptions): Host {
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const child of live) killGroup(child.pid!, "SIGKILL");
      for (const d of daemonsOf((dir) => stateDirs.has(dir))) killGroup(d.pid, "SIGKILL");
    });
  }
  stateDirs.add(opts.stateDir);
  const worker = workerShellCommand({ AFK_DEMO_DELAY_MS: String(opts.workerDelayMs), AFK_DEMO_RECIPES: world.recipesPath });
  const args = [
    BIN,
    "run",
    "--repo",
    REPO,
    "--worker",
    worker,
    "--target",
    String(opts.target),
    "--auto-merge",
    "--set",
    "retry=1",
    // A 5-minute lease (the shortest allowed; 15 s at the harness's time scale): with the default
    // 75 minutes, a host restarted without its identity waits that long for its own claims.
    "--set",
    "lease.ttl_seconds=300",
    "--set",
    "lease.heartbeat_seconds=120",
    "--set",
    "pacing.busy_seconds=10",
    "--set",
    "pacing.idle_seconds=10",
    "--set",
    "pacing.long_idle_seconds=20",
  ];
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    GITHUB_API_URL: world.forge.apiUrl,
    GITHUB_TOKEN: world.forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: opts.stateDir,
    AFK_TIME_SCALE: String(opts.timeScale),
  };
  const log = createWriteStream(join(opts.logDir, `${opts.name}.log`), { flags: "a" });
  const child = spawn(process.execPath, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  live.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  return { name: opts.name, stateDir: opts.stateDir, pid: child.pid!, startedAt: Date.now(), exited, alive: () => live.has(child) };
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/**
 * The per-machine daemon `afk-mcp run` registers with (started detached if needed): its pid is
 * in the state dir's lock file. Null when there is none (an afk-mcp without a daemon).
 */
export async function daemonPid(stateDir: string): Promise<number | null> {
  try {
    const lock = JSON.parse(await readFile(join(stateDir, "daemon", "lock.json"), "utf8")) as { pid?: unknown };
    return typeof lock.pid === "number" && (await alive(lock.pid)) ? lock.pid : null;
  } catch {
    return null;
  }
}

async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return stat !== "" && state !== "Z" && state !== "X";
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (await alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
  return true;
}

/**
 * A crash of the machine's afk-mcp: the session's process group, then every daemon of its state
 * dir, nothing released. The daemons are found in /proc after the session is dead, not from the
 * lock: a session killed while it was starting its daemon leaves one that has not locked yet
 * (it would idle on, without registrations, for good). Resolves with how many such unlocked
 * daemons it ended.
 */
export async function crash(host: Host): Promise<number> {
  const locked = await daemonPid(host.stateDir);
  killGroup(host.pid, "SIGKILL");
  await host.exited;
  let unlocked = 0;
  for (const d of daemonsOf((dir) => dir === host.stateDir)) {
    if (d.pid !== locked) unlocked += 1;
    killGroup(d.pid, "SIGKILL");
    if (!(await gone(d.pid, 10_000))) process.kill(d.pid, "SIGKILL");
  }
  return unlocked;
}

/** An afk-mcp daemon process and the state dir it serves. */
export interface DaemonProc {
  pid: number;
  stateDir: string;
}

/**
 * Live `afk-mcp daemon --foreground` processes (how every daemon runs, detached or not) whose AFK_STATE_DIR passes `keep`, from /proc. Synchronous, so
 * that the harness's exit hook can end them too.
 */
export function daemonsOf(keep: (stateDir: string) => boolean): DaemonProc[] {
  const out: DaemonProc[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (!args.some((a) => a.endsWith("bin.js")) || !args.includes("daemon") || !args.includes("--foreground")) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))) continue;
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      const dir = env.find((kv) => kv.startsWith("AFK_STATE_DIR="))?.slice("AFK_STATE_DIR=".length);
      if (dir !== undefined && keep(dir)) out.push({ pid: Number(name), stateDir: dir });
    } catch {
      // exited while we looked, or not ours to read
    }
  }
  return out;
}

/** Ends every daemon whose state dir lies under `root` (what a run left) and says which they were. */
export async function endDaemonsUnder(root: string): Promise<DaemonProc[]> {
  const left = daemonsOf((dir) => dir === root || dir.startsWith(`${root}/`));
  for (const d of left) killGroup(d.pid, "SIGKILL");
  for (const d of left) if (!(await gone(d.pid, 10_000))) process.kill(d.pid, "SIGKILL");
  return left;
}

/**
 * Ctrl-C of the session, then a stop of the daemon (SIGTERM: its one shutdown path drains), and
 * wait for both; what is still there after `graceMs` is killed and reported as forced.
 */
export async function interrupt(
  host: Host,
  graceMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; forced: boolean; daemon: "none" | "stopped" | "forced" }> {
  const daemon = await daemonPid(host.stateDir);
  try {
    process.kill(host.pid, "SIGINT");
  } catch {
    // already gone
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), graceMs)));
  const first = await Promise.race([host.exited, late]);
  clearTimeout(timer);
  let forced = false;
  if (first === "late") {
    killGroup(host.pid, "SIGKILL");
    forced = true;
  }
  const exit = await host.exited;
  let daemonEnd: "none" | "stopped" | "forced" = "none";
  if (daemon !== null) {
    try {
      process.kill(daemon, "SIGTERM");
    } catch {
      // already gone
    }
    daemonEnd = (await gone(daemon, graceMs)) ? "stopped" : "forced";
    if (daemonEnd === "forced") killGroup(daemon, "SIGKILL");
  }
  return { ...exit, forced, daemon: daemonEnd };
}

export interface WorkerProc {
  pid: number;
  pgid: number;
  issue: number;
  /** The state dir its worktree lives in: which host started it. */
  stateDir: string;
  worktree: string;
}

/** Worker process-group leaders whose worktree lies under `root`. */
export async function findWorkers(root: string): Promise<WorkerProc[]> {
  const table = (await readProcTable()) ?? [];
  const out: WorkerProc[] = [];
  for (const p of table) {
    if (p.pid !== p.pgrp || p.state === "Z" || p.state === "X") continue;
    const environ = await readFile(`/proc/${p.pid}/environ`, "utf8").catch(() => "");
    if (!environ.includes("AFK_WORKTREE=")) continue;
    const vars = new Map(environ.split("\0").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)] as const));
    const worktree = vars.get("AFK_WORKTREE") ?? "";
    if (!worktree.startsWith(`${root}/`)) continue;
    const marker = worktree.indexOf("/worktrees/");
    out.push({ pid: p.pid, pgid: p.pgrp, issue: Number(vars.get("AFK_ISSUE")), stateDir: marker < 0 ? "" : worktree.slice(0, marker), worktree });
  }
  return out;
}
