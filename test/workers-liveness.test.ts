// Liveness: the pure decision (table-driven), the /proc parser, the busy comparison over
// synthetic samples, and real process trees — a CPU-burning child reads busy, a quiet hang does not.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { activityAt, assessLiveness, type LivenessInput, type LivenessState } from "../server/worker-port/liveness.js";
import {
  BusyTracker,
  compareCpuSamples,
  descendantCpu,
  parseProcStat,
  ProcTables,
  readProcTable,
  sampleBusy,
  toolNames,
  type CpuSample,
  type ProcSample,
} from "../server/runtimes/local/proc.js";
import { startWorker, type WorkerHandle } from "../server/runtimes/local/spawn.js";

const T0 = Date.UTC(2026, 5, 5, 10, 0, 0);
const s = (seconds: number) => T0 + seconds * 1000;

interface Row {
  name: string;
  input: Partial<LivenessInput>;
  state: LivenessState;
  cause?: "max_runtime" | "quiet" | null;
}

const base: LivenessInput = {
  now: s(3600),
  activityAt: s(3590),
  startedAt: T0,
  stallSeconds: 900,
  killSeconds: 1800,
  maxRuntimeSeconds: 10_800,
  busyDescendant: false,
};

const rows: Row[] = [
  { name: "active: output 10 s ago", input: {}, state: "active", cause: null },
  { name: "active: just started on an old worktree (quiet counts from the start)", input: { now: s(60), activityAt: s(-86_400) }, state: "active" },
  { name: "active: no activity at all, 10 minutes in", input: { now: s(600), activityAt: null }, state: "active" },
  { name: "active: quiet just under the stall threshold", input: { activityAt: s(3600 - 899) }, state: "active" },
  { name: "stall_candidate: quiet exactly at the stall threshold", input: { activityAt: s(3600 - 900) }, state: "stall_candidate" },
  { name: "stall_candidate: quiet 20 minutes, nothing busy", input: { activityAt: s(3600 - 1200) }, state: "stall_candidate" },
  { name: "busy: quiet 20 minutes, a test run burning CPU", input: { activityAt: s(3600 - 1200), busyDescendant: true }, state: "busy" },
  { name: "kill: quiet-hang past the kill threshold, nothing busy", input: { activityAt: s(3600 - 1800) }, state: "kill", cause: "quiet" },
  { name: "kill: no output ever, past the kill threshold", input: { now: s(1800), activityAt: null }, state: "kill", cause: "quiet" },
  { name: "busy: quiet past the kill threshold, but a descendant is busy", input: { activityAt: s(3600 - 5000), busyDescendant: true }, state: "busy" },
  { name: "kill: past max runtime even while active", input: { now: s(10_800), activityAt: s(10_799) }, state: "kill", cause: "max_runtime" },
  {
    name: "kill: past max runtime even while busy",
    input: { now: s(20_000), activityAt: s(10_000), busyDescendant: true },
    state: "kill",
    cause: "max_runtime",
  },
  { name: "active: activity stamped in the future (clock skew)", input: { activityAt: s(4000) }, state: "active" },
];

describe("assessLiveness", () => {
  for (const row of rows) {
    it(row.name, () => {
      const decision = assessLiveness({ ...base, ...row.input });
      assert.equal(decision.state, row.state);
      if (row.cause !== undefined) assert.equal(decision.cause, row.cause);
      if (row.state !== "kill") assert.equal(decision.cause, null);
    });
  }

  it("activityAt is the newest of output, worktree mtime and last commit", () => {
    assert.equal(activityAt(s(1), new Date(s(5)), null, undefined, s(3)), s(5));
    assert.equal(activityAt(null, undefined), null);
    assert.equal(activityAt(Number.NaN, s(2)), s(2));
  });
});

describe("parseProcStat", () => {
  it("reads a name with spaces and parentheses", () => {
    const line =
      "4242 (my (evil) proc) S 4000 4001 4001 0 -1 4194304 100 0 0 0 120 30 5 7 20 0 1 0 987654 3133440 359 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
    assert.deepEqual(parseProcStat(line), { pid: 4242, ppid: 4000, pgrp: 4001, state: "S", comm: "my (evil) proc", ticks: 162, startTicks: 987654 });
  });

  it("rejects garbage", () => {
    assert.equal(parseProcStat("nonsense"), null);
    assert.equal(parseProcStat("12 (x) S 1 2"), null);
  });
});

function proc(pid: number, comm: string, ticks: number, extra: Partial<ProcSample> = {}): ProcSample {
  return { pid, ppid: 1, pgrp: 100, state: "S", comm, ticks, startTicks: pid * 10, args: [comm], ...extra };
}

function sample(at: number, procs: ProcSample[]): CpuSample {
  return { at, root: 100, procs };
}

interface BusyRow {
  name: string;
  prev: CpuSample | "unknown" | null;
  next: CpuSample | "unknown";
  busy: boolean | "unknown";
  tools?: string[];
}

// 10 s between samples = 1000 ticks of one core; 5% = 50 ticks, 1% = 10 ticks.
const busyRows: BusyRow[] = [
  { name: "no /proc → unknown", prev: null, next: "unknown", busy: "unknown" },
  { name: "first sample → unknown", prev: null, next: sample(s(10), [proc(100, "sh", 5)]), busy: "unknown" },
  {
    name: "idle tree (agent waiting on the network) → not busy",
    prev: sample(s(0), [proc(100, "sh", 5), proc(101, "claude", 900)]),
    next: sample(s(10), [proc(100, "sh", 5), proc(101, "claude", 903)]),
    busy: false,
  },
  {
    name: "a descendant grew 40% of the interval → busy",
    prev: sample(s(0), [proc(100, "sh", 5), proc(102, "python3", 50)]),
    next: sample(s(10), [proc(100, "sh", 5), proc(102, "python3", 450)]),
    busy: true,
  },
  {
    name: "many small growths add up past 5% → busy",
    prev: sample(s(0), [proc(100, "sh", 0), proc(101, "a", 0), proc(102, "b", 0), proc(103, "c", 0)]),
    next: sample(s(10), [proc(100, "sh", 0), proc(101, "a", 20), proc(102, "b", 20), proc(103, "c", 20)]),
    busy: true,
  },
  {
    name: "vitest present and using 3% → busy (tool rule)",
    prev: sample(s(0), [proc(100, "sh", 0), proc(110, "node", 0, { args: ["node", "/r/node_modules/vitest/vitest.mjs", "run"] })]),
    next: sample(s(10), [proc(100, "sh", 0), proc(110, "node", 30, { args: ["node", "/r/node_modules/vitest/vitest.mjs", "run"] })]),
    busy: true,
    tools: ["vitest"],
  },
  {
    name: "vitest present but idle (watch mode waiting) → not busy",
    prev: sample(s(0), [proc(110, "node", 500, { args: ["node", "/r/.bin/vitest"] })]),
    next: sample(s(10), [proc(110, "node", 501, { args: ["node", "/r/.bin/vitest"] })]),
    busy: false,
    tools: ["vitest"],
  },
  {
    name: "a new process since the last sample counts with all its ticks",
    prev: sample(s(0), [proc(100, "sh", 0)]),
    next: sample(s(10), [proc(100, "sh", 0), proc(120, "cargo", 300)]),
    busy: true,
    tools: ["cargo"],
  },
  {
    name: "a reused pid (new start time) is a new process, not negative growth",
    prev: sample(s(0), [proc(130, "rustc", 5000, { startTicks: 1 })]),
    next: sample(s(10), [proc(130, "rustc", 200, { startTicks: 2 })]),
    busy: true,
  },
  {
    name: "a zombie tool does not count as present",
    prev: sample(s(0), [proc(140, "make", 10)]),
    next: sample(s(10), [proc(140, "make", 10, { state: "Z" })]),
    busy: false,
    tools: [],
  },
  {
    name: "children reaped into the parent's cutime show as growth",
    prev: sample(s(0), [proc(100, "sh", 0), proc(150, "make", 0)]),
    next: sample(s(10), [proc(100, "sh", 0), proc(150, "make", 400)]),
    busy: true,
    tools: ["make"],
  },
  {
    name: "samples out of order → unknown",
    prev: sample(s(10), [proc(100, "sh", 0)]),
    next: sample(s(0), [proc(100, "sh", 0)]),
    busy: "unknown",
  },
];

describe("compareCpuSamples", () => {
  for (const row of busyRows) {
    it(row.name, () => {
      const reading = compareCpuSamples(row.prev, row.next);
      assert.equal(reading.busy, row.busy, reading.why);
      if (row.tools) assert.deepEqual(reading.tools, row.tools);
    });
  }

  it("BusyTracker compares each sample with the previous one", () => {
    const tracker = new BusyTracker();
    assert.equal(tracker.observe(sample(s(0), [proc(100, "sh", 0)])).busy, "unknown");
    assert.equal(tracker.observe(sample(s(10), [proc(100, "sh", 500)])).busy, true);
    assert.equal(tracker.observe(sample(s(20), [proc(100, "sh", 501)])).busy, false);
    assert.equal(tracker.observe("unknown").busy, "unknown");
  });

  it("trackers sharing ProcTables read /proc once for a pass, never twice the same table for one tree", async () => {
    const root = await mkdtemp(join(tmpdir(), "afk-proc-"));
    try {
      // Two quiet trees, 100 (with its child 101) and 200; field 14-17 are the CPU ticks.
      const stat = (pid: number, ppid: number, pgrp: number, ticks: number) =>
        `${pid} (sh) S ${ppid} ${pgrp} ${pgrp} 0 -1 0 0 0 0 0 ${ticks} 0 0 0 20 0 1 0 ${pid} 0 0\n`;
      for (const [pid, ppid, pgrp] of [
        [100, 1, 100],
        [101, 100, 100],
        [200, 1, 200],
      ] as const) {
        await mkdir(join(root, String(pid)), { recursive: true });
        await writeFile(join(root, String(pid), "stat"), stat(pid, ppid, pgrp, 5));
        await writeFile(join(root, String(pid), "cmdline"), "sh\0");
      }
      const tables = new ProcTables(60_000, root);
      await new Promise((r) => setTimeout(r, 2));
      const a = new BusyTracker({}, tables);
      const b = new BusyTracker({}, tables);
      await new Promise((r) => setTimeout(r, 2));
      assert.equal((await a.sample(100)).busy, "unknown", "a first sample");
      assert.equal((await b.sample(200)).busy, "unknown");
      assert.equal(tables.stats.scans, 1, "the second tree shares the first one's scan");
      await new Promise((r) => setTimeout(r, 2));
      const again = await a.sample(100);
      assert.equal(tables.stats.scans, 2, "a tree's next sample is a new scan");
      assert.equal(again.busy, false, again.why);
      assert.equal(again.cpuFraction, 0);
      assert.equal((await b.sample(200)).busy, false, "and the other tree shares that one");
      assert.equal(tables.stats.scans, 2);
      const late = new BusyTracker({}, tables);
      await new Promise((r) => setTimeout(r, 2));
      await late.sample(200);
      assert.equal(tables.stats.scans, 3, "a tracker born after a scan does not take it");
      const short = new ProcTables(0, root);
      const c = new BusyTracker({}, short);
      const d = new BusyTracker({}, short);
      await new Promise((r) => setTimeout(r, 2));
      await c.sample(100);
      await new Promise((r) => setTimeout(r, 2));
      await d.sample(200);
      assert.equal(short.stats.scans, 2, "past maxAgeMs a table is read again");
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("toolNames recognises tools by name, argv0, or a script run by an interpreter", () => {
    assert.deepEqual(toolNames({ comm: "tsc", args: [] }), ["tsc"]);
    assert.deepEqual(toolNames({ comm: "node", args: ["node", "--test", "test/a.test.js"] }), ["node --test"]);
    assert.deepEqual(toolNames({ comm: "python3", args: ["python3", "-m", "pytest", "-q"] }), ["pytest"]);
    assert.deepEqual(toolNames({ comm: "npm test", args: ["npm test"] }), ["npm"]);
    assert.deepEqual(toolNames({ comm: "node", args: ["node", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"] }), []);
    assert.deepEqual(toolNames({ comm: "claude", args: ["claude", "-p", "go build it"] }), []);
  });
});

// ---- real process trees ------------------------------------------------------------------------

const hasProc = async () => (await readProcTable()) !== null;

describe("descendantCpu and busy detection on real processes", () => {
  let dir: string;
  let brief: string;
  const handles: WorkerHandle[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "afk-liveness-"));
    brief = join(dir, "brief.md");
    await writeFile(brief, "");
  });
  after(async () => {
    await Promise.all(handles.map((h) => h.kill("test over")));
    await rm(dir, { recursive: true, force: true });
  });

  async function worker(command: string): Promise<WorkerHandle> {
    let started!: () => void;
    const ready = new Promise<void>((r) => (started = r));
    const handle = await startWorker({
      command,
      cwd: dir,
      env: { PATH: `${dir}/bin:${process.env.PATH ?? "/usr/bin:/bin"}` },
      briefPath: brief,
      killGraceMs: 500,
      onLine: (_s, line) => line === "started" && started(),
    });
    handles.push(handle);
    await ready;
    return handle;
  }

  it("a child burning CPU reads busy; its orphaned sibling is still in the tree", async (t) => {
    if (!(await hasProc())) return t.skip("no /proc");
    const handle = await worker(
      // It burns until killed: a loaded machine may take seconds just to start it, so a burn of
      // fixed length could be over (or not begun) when the sample is taken.
      `node -e "for (;;) {}" & sh -c 'sleep 1000 &'; echo started; wait`,
    );
    const reading = await sampleBusy(handle.pid, 1_000);
    assert.equal(reading.busy, true, reading.why);
    assert.ok((reading.cpuFraction ?? 0) > 0.05, reading.why);
    const snap = await descendantCpu(handle.pid);
    assert.notEqual(snap, "unknown");
    const procs = (snap as CpuSample).procs;
    // Node 24 names its main thread, and so /proc's comm, "MainThread"; earlier lines say "node".
    assert.ok(
      procs.some((p) => p.comm === "node" || p.comm === "MainThread"),
      `procs: ${procs.map((p) => p.comm).join(",")}`,
    );
    const orphan = procs.find((p) => p.comm === "sleep");
    assert.ok(orphan, "the reparented sleep is found through the process group");
    assert.equal(orphan.pgrp, handle.pgid);
    await handle.kill("done");
  });

  it("a quiet hang (sleep) reads not busy; a sleeping tool is present but not busy", async (t) => {
    if (!(await hasProc())) return t.skip("no /proc");
    await mkdir(join(dir, "bin"), { recursive: true });
    await copyFile("/bin/sleep", join(dir, "bin", "vitest"));
    await chmod(join(dir, "bin", "vitest"), 0o755);
    const handle = await worker("sleep 1000 & vitest 1000 & echo started; wait");
    const tracker = new BusyTracker();
    await tracker.sample(handle.pid);
    await new Promise((r) => setTimeout(r, 400));
    const reading = await tracker.sample(handle.pid);
    const busy = reading.busy === true;
    assert.equal(reading.busy, false, reading.why);
    assert.ok(reading.tools.includes("vitest"), `tools: ${reading.tools.join(",")}`);
    // And the decision a liveness pass makes from it: quiet past kill, nothing busy → kill.
    const decision = assessLiveness({
      now: handle.startedAt + 2_000,
      activityAt: handle.lastOutputAt(),
      startedAt: handle.startedAt,
      stallSeconds: 0.5,
      killSeconds: 1,
      maxRuntimeSeconds: 60,
      busyDescendant: busy,
    });
    assert.equal(decision.state, "kill");
    await handle.kill("quiet hang");
  });

  it("a process gone from /proc gives an empty sample, not an error", async (t) => {
    if (!(await hasProc())) return t.skip("no /proc");
    const snap = await descendantCpu(2 ** 22 + 12345);
    assert.notEqual(snap, "unknown");
    assert.deepEqual((snap as CpuSample).procs, []);
  });

  it("without /proc the answer is unknown", async () => {
    assert.equal(await descendantCpu(1, { procRoot: join(dir, "no-proc-here") }), "unknown");
    assert.equal(await readProcTable(join(dir, "no-proc-here")), null);
  });
});
