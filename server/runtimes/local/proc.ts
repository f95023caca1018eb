// A /proc reader that tells a busy process tree (a test run, a build) from an idle one: what the
// local runtime's observation says of "busy" (the decision over it: server/worker-port/liveness.ts).
import { closeSync, openSync, readSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

// ---- /proc -------------------------------------------------------------------------------------

/** Linux reports CPU times in USER_HZ, which is 100 on every mainstream architecture. */
export const TICKS_PER_SECOND = 100;

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  /** R, S, D, Z, T, ... */
  state: string;
  /** The kernel's short name (15 characters at most). */
  comm: string;
  /** utime + stime + cutime + cstime: own CPU plus that of reaped children, in ticks. */
  ticks: number;
  /** Start time in ticks since boot: with the pid, tells a reused pid from the same process. */
  startTicks: number;
}

/** One line of /proc/<pid>/stat. The name is in parentheses and may itself hold ") " or spaces. */
export function parseProcStat(text: string): ProcEntry | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  const f = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // f[0] is field 3 (state); field n is f[n - 3].
  if (f.length < 20) return null;
  const num = (n: number) => Number(f[n - 3]);
  const entry: ProcEntry = {
    pid,
    ppid: num(4),
    pgrp: num(5),
    state: f[0]!,
    comm,
    ticks: num(14) + num(15) + num(16) + num(17),
    startTicks: num(22),
  };
  return Number.isInteger(entry.pid) && Number.isFinite(entry.ticks) ? entry : null;
}

/** Processes read between two turns of the event loop in a scan (a machine of thousands yields now and then). */
const SCAN_SLICE = 256;
const statBuffer = Buffer.alloc(4096);

/**
 * A small /proc file, read whole synchronously into one reused buffer: a stat line is a few
 * hundred bytes the kernel writes on the read, and a thread-pool round trip with its own
 * allocations for each of a machine's processes cost the host more than the read. Null when
 * the process is gone.
 */
function readSmall(path: string): string | null {
  let fd = -1;
  try {
    fd = openSync(path, "r");
    let length = 0;
    for (let n = 1; n > 0; length += n) {
      if (length === statBuffer.length) return null; // not a stat line
      n = readSync(fd, statBuffer, length, statBuffer.length - length, null);
    }
    return statBuffer.toString("utf8", 0, length);
  } catch {
    return null; // gone, or exited while we looked
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** Every process in /proc, or null where there is no /proc (not Linux, or hidden). */
export async function readProcTable(procRoot = "/proc"): Promise<ProcEntry[] | null> {
  let names: string[];
  try {
    names = await readdir(procRoot);
  } catch {
    return null;
  }
  const pids = names.filter((name) => /^\d+$/.test(name));
  if (pids.length === 0) return null;
  const entries: ProcEntry[] = [];
  for (let i = 0; i < pids.length; i += 1) {
    if (i > 0 && i % SCAN_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    const text = readSmall(`${procRoot}/${pids[i]}/stat`);
    const entry = text === null ? null : parseProcStat(text);
    if (entry) entries.push(entry);
  }
  return entries;
}

/**
 * One /proc table for the readers of one moment: the workers a tick observes one after another
 * share a scan, instead of each reading every process on the machine (the scan costs what the
 * machine runs, so a fleet pays it about once a tick, whatever its width). A table is handed out
 * again while it is younger than `maxAgeMs`, and only to a reader whose previous sample is older
 * than it (two samples of one tree are never the same table).
 */
export class ProcTables {
  private last: { at: number; table: Promise<ProcEntry[] | null> } | null = null;
  /** Scans of /proc made (each reads every process on the machine). */
  readonly stats = { scans: 0 };

  constructor(
    private readonly maxAgeMs = 250,
    readonly procRoot = "/proc",
  ) {}

  /** A table read after `after` (epoch ms) and at most `maxAgeMs` ago, else a new one; `at` is when it was read. */
  read(after: number): { at: number; table: Promise<ProcEntry[] | null> } {
    const now = Date.now();
    if (this.last && this.last.at > after && now - this.last.at <= this.maxAgeMs) return this.last;
    this.stats.scans += 1;
    this.last = { at: now, table: readProcTable(this.procRoot) };
    return this.last;
  }
}

/** Live (non-zombie) members of process group `pgid`, or null where /proc cannot say. */
export async function processGroupMembers(pgid: number, procRoot = "/proc"): Promise<number[] | null> {
  const table = await readProcTable(procRoot);
  if (table === null) return null;
  return table.filter((p) => p.pgrp === pgid && p.state !== "Z" && p.state !== "X").map((p) => p.pid);
}

export interface ProcSample extends ProcEntry {
  /** argv (bounded), for telling `node --test` or `npx vitest` from any other node. */
  args: string[];
}

export interface CpuSample {
  /** Epoch ms the sample was taken. */
  at: number;
  root: number;
  /** The root, its descendants, and every other member of its process group (orphans included). */
  procs: ProcSample[];
}

async function readArgs(procRoot: string, pid: number): Promise<string[]> {
  try {
    const raw = await readFile(`${procRoot}/${pid}/cmdline`, "utf8");
    return raw
      .split("\0")
      .filter((a) => a !== "")
      .slice(0, 16)
      .map((a) => a.slice(0, 256));
  } catch {
    return [];
  }
}

/**
 * CPU ticks and names of `pid`'s process tree. The worker is started as the leader of its own
 * process group, so group members whose parent died (reparented to init) still count.
 * "unknown" where there is no /proc.
 */
export async function descendantCpu(pid: number, opts: { procRoot?: string; now?: number } = {}): Promise<CpuSample | "unknown"> {
  const procRoot = opts.procRoot ?? "/proc";
  const at = opts.now ?? Date.now();
  return treeOf(pid, await readProcTable(procRoot), at, procRoot);
}

/** `pid`'s tree in `table` (a /proc table read at `at`), with each member's argv. */
async function treeOf(pid: number, table: ProcEntry[] | null, at: number, procRoot: string): Promise<CpuSample | "unknown"> {
  if (table === null) return "unknown";
  const children = new Map<number, ProcEntry[]>();
  for (const p of table) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const chosen = new Map<number, ProcEntry>();
  const queue: ProcEntry[] = table.filter((p) => p.pid === pid || p.pgrp === pid);
  while (queue.length > 0) {
    const p = queue.pop()!;
    if (chosen.has(p.pid)) continue;
    chosen.set(p.pid, p);
    for (const child of children.get(p.pid) ?? []) queue.push(child);
  }
  const procs = await Promise.all([...chosen.values()].map(async (p) => ({ ...p, args: await readArgs(procRoot, p.pid) })));
  return { at, root: pid, procs };
}

// ---- busy or idle ------------------------------------------------------------------------------

/** Programs whose presence, while they consume CPU, means the worker is working (docs/architecture.md, runtime lesson 3). */
export const BUSY_TOOLS: readonly string[] = [
  "vitest",
  "jest",
  "mocha",
  "ava",
  "tap",
  "playwright",
  "cypress",
  "node --test",
  "tsc",
  "tsserver",
  "eslint",
  "webpack",
  "esbuild",
  "vite",
  "rollup",
  "turbo",
  "nx",
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "deno",
  "cargo",
  "rustc",
  "clippy-driver",
  "go",
  "gopls",
  "pytest",
  "py.test",
  "tox",
  "nox",
  "mypy",
  "ruff",
  "make",
  "gmake",
  "cmake",
  "ninja",
  "bazel",
  "meson",
  "gcc",
  "g++",
  "cc",
  "c++",
  "cc1",
  "cc1plus",
  "clang",
  "clang++",
  "ld",
  "lld",
  "mold",
  "mvn",
  "gradle",
  "javac",
  "java",
  "sbt",
  "dotnet",
  "msbuild",
  "swift",
  "swiftc",
  "zig",
  "ghc",
  "cabal",
  "stack",
  "mix",
  "rspec",
  "rake",
];

const INTERPRETERS = new Set(["node", "nodejs", "python", "python3", "ruby", "bun", "deno", "sh", "bash"]);

function baseName(arg: string): string {
  const name = arg.slice(arg.lastIndexOf("/") + 1);
  return name.replace(/\.(?:c?m?js|ts|py)$/, "");
}

/** The busy tools a process is running as (by name, argv[0], or a script run by an interpreter). */
export function toolNames(proc: { comm: string; args: readonly string[] }, tools: readonly string[] = BUSY_TOOLS): string[] {
  const known = new Set(tools);
  const found = new Set<string>();
  const consider = (name: string) => {
    if (known.has(name)) found.add(name);
  };
  // Node tools retitle themselves ("npm test", "npm exec vitest"): the first word is the program.
  const firstWord = (text: string) => text.split(" ")[0] ?? text;
  consider(proc.comm);
  consider(firstWord(proc.comm));
  const argv0 = proc.args[0] !== undefined ? baseName(firstWord(proc.args[0])) : proc.comm;
  consider(argv0);
  if (INTERPRETERS.has(argv0) || /^python3(?:\.\d+)?$/.test(argv0)) {
    // The script or module it runs: `node .../vitest.mjs`, `python -m pytest`.
    for (const arg of proc.args.slice(1, 5)) {
      if (arg === "--test" && (argv0 === "node" || argv0 === "nodejs")) consider("node --test");
      if (!arg.startsWith("-")) consider(baseName(arg));
    }
  }
  if (/\.test$/.test(proc.comm)) found.add("go test binary");
  return [...found];
}

export interface BusyReading {
  busy: boolean | "unknown";
  /** Aggregate CPU of the tree between the two samples, as a fraction of one core. */
  cpuFraction: number | null;
  /** Busy tools present (and not zombies) in the newer sample. */
  tools: string[];
  why: string;
}

export interface BusyOptions {
  /** Aggregate CPU above this fraction of one core means busy. Default 0.05 (5% of the interval). */
  minCpuFraction?: number;
  /** A busy tool counts when its own CPU is above this fraction. Default 0.01. */
  toolCpuFraction?: number;
  tools?: readonly string[];
  ticksPerSecond?: number;
}

const key = (p: ProcEntry) => `${p.pid}:${p.startTicks}`;

/**
 * Pure: compares two samples of one tree. Busy when the tree's CPU grew by more than
 * `minCpuFraction` of the interval, or when a known busy tool is present and its own CPU grew
 * by more than `toolCpuFraction`. A process new in the later sample counts with all its ticks.
 */
export function compareCpuSamples(prev: CpuSample | "unknown" | null, next: CpuSample | "unknown", opts: BusyOptions = {}): BusyReading {
  if (next === "unknown" || prev === "unknown") {
    return { busy: "unknown", cpuFraction: null, tools: [], why: "no /proc on this host" };
  }
  const live = next.procs.filter((p) => p.state !== "Z" && p.state !== "X");
  const toolsOf = new Map(live.map((p) => [p.pid, toolNames(p, opts.tools)]));
  const tools = [...new Set([...toolsOf.values()].flat())];
  if (prev === null) {
    return { busy: "unknown", cpuFraction: null, tools, why: "first sample: nothing to compare with yet" };
  }
  const intervalMs = next.at - prev.at;
  if (!(intervalMs > 0)) {
    return { busy: "unknown", cpuFraction: null, tools, why: "samples are not in time order" };
  }
  const budget = (intervalMs / 1000) * (opts.ticksPerSecond ?? TICKS_PER_SECOND);
  const before = new Map(prev.procs.map((p) => [key(p), p.ticks]));
  let total = 0;
  let top: { name: string; pid: number; growth: number } | null = null;
  const busyTools: string[] = [];
  for (const p of next.procs) {
    const growth = Math.max(0, p.ticks - (before.get(key(p)) ?? 0));
    total += growth;
    if (top === null || growth > top.growth) top = { name: p.comm, pid: p.pid, growth };
    const names = toolsOf.get(p.pid) ?? [];
    if (names.length > 0 && growth / budget > (opts.toolCpuFraction ?? 0.01)) busyTools.push(...names);
  }
  const cpuFraction = total / budget;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  if (busyTools.length > 0) {
    return { busy: true, cpuFraction, tools, why: `${[...new Set(busyTools)].join(", ")} running and using CPU (tree ${pct(cpuFraction)})` };
  }
  if (cpuFraction > (opts.minCpuFraction ?? 0.05)) {
    const lead = top ? ` (most: ${top.name} [${top.pid}])` : "";
    return { busy: true, cpuFraction, tools, why: `process tree used ${pct(cpuFraction)} of a core${lead}` };
  }
  return { busy: false, cpuFraction, tools, why: `process tree used ${pct(cpuFraction)} of a core` };
}

/** Keeps the previous sample of one worker's tree and compares each new one with it. */
export class BusyTracker {
  private previous: CpuSample | "unknown" | null = null;
  /** Epoch ms: no table read before it speaks for this tree (its birth, then its last sample). */
  private after = Date.now();

  /** With `tables`, samples share a recent /proc scan with the other trackers that use it. */
  constructor(
    private readonly opts: BusyOptions = {},
    private readonly tables?: ProcTables,
  ) {}

  /** Compares `sample` with the last one observed (the first observation reads "unknown"). */
  observe(sample: CpuSample | "unknown"): BusyReading {
    const reading = compareCpuSamples(this.previous, sample, this.opts);
    this.previous = sample;
    return reading;
  }

  /** Samples `pid`'s tree now and compares it with the previous sample. */
  async sample(pid: number, procRoot?: string): Promise<BusyReading> {
    if (this.tables && procRoot === undefined) {
      const { at, table } = this.tables.read(this.after);
      this.after = at;
      return this.observe(await treeOf(pid, await table, at, this.tables.procRoot));
    }
    return this.observe(await descendantCpu(pid, procRoot === undefined ? {} : { procRoot }));
  }
}

/** Two samples `intervalMs` apart: for a decision that cannot wait for the next liveness pass. */
export async function sampleBusy(pid: number, intervalMs: number, opts: BusyOptions & { procRoot?: string } = {}): Promise<BusyReading> {
  const tracker = new BusyTracker(opts);
  await tracker.sample(pid, opts.procRoot);
  await sleep(intervalMs);
  return tracker.sample(pid, opts.procRoot);
}
