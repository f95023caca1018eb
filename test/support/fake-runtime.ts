// An in-memory WorkerRuntime (server/worker-port/port.ts), held to the local runtime by the contract
// suite (test/contract-runtime.test.ts). A FakeMachine is the host: its workers and the durable
// records a runtime leaves in a slot (the local runtime's pid files), so a second FakeRuntime on
// the same machine is the next host process, and adopts or evicts what the first left running.
// Time is the machine's timebase: a VirtualClock (test/support/fake-clock.ts) or the real one.
//
// A worker runs a program: one given for its command (`programs`), or the command itself read as
// the few sh forms the contract uses, run the same by the local runtime's shell:
//   cat                  the brief to stdout, line by line      cat >/dev/null   the brief read, nothing printed
//   echo WORDS [>&2]     one line to stdout (stderr)             sleep N          N seconds of the timebase
//   exit N               ends with code N                        true             nothing
//   while true; do ...; done   the body forever (until stopped)
// separated by `;`. Anything else is refused at start, naming this list: a fake never guesses.
//
// Not modelled: CPU (busy is false from the second look on), output caps and truncation, a
// worker that ignores SIGTERM, process groups, the sandbox's and Actions' own faults.
import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import { expandCommand } from "../../server/agent/shell.js";
import type {
  AdoptedWorker,
  OutputSink,
  OutputStream,
  RecordedWorker,
  StartRequest,
  TailLine,
  WorkerExit,
  WorkerHandle,
  WorkerObservation,
  WorkerRuntime,
  WorkerSlot,
} from "../../server/worker-port/port.js";

/** What the machine's time is: a VirtualClock fits, and so does the real one (REAL_TIME). */
export interface Timebase {
  nowMs(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export const REAL_TIME: Timebase = {
  nowMs: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** A worker's program: prints through `io`, resolves with its exit code; `io.sleep` rejects once it is stopped. */
export type FakeProgram = (io: { brief: string; out(line: string): void; err(line: string): void; sleep(ms: number): Promise<void> }) => Promise<number>;

class Stopped extends Error {}

/** One worker process on the machine: output goes to whoever watches it now (its starter, then an adopter). */
class FakeProcess {
  readonly watchers = new Set<(stream: OutputStream, line: string) => void>();
  ended: { code: number | null; signal: NodeJS.Signals | null; at: number } | null = null;
  readonly done: Promise<void>;
  private wake: (() => void) | null = null;
  private finish!: () => void;

  constructor(
    readonly id: number,
    readonly startedAt: number,
    private readonly time: Timebase,
  ) {
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  run(program: FakeProgram, brief: string): void {
    const io = {
      brief,
      out: (line: string) => this.emit("stdout", line),
      err: (line: string) => this.emit("stderr", line),
      sleep: (ms: number) =>
        new Promise<void>((resolve, reject) => {
          if (this.ended) return reject(new Stopped());
          const timer = this.time.setTimeout(() => ((this.wake = null), resolve()), ms);
          this.wake = () => (this.time.clearTimeout(timer), reject(new Stopped()));
        }),
    };
    program(io).then(
      (code) => this.end(code, null),
      (error: unknown) => this.end(error instanceof Stopped ? null : 1, error instanceof Stopped ? "SIGTERM" : null),
    );
  }

  /** Ends it as `signal` ends a shell that is sleeping (stop and evict: SIGTERM; an exit that cannot wait: SIGKILL). */
  kill(signal: NodeJS.Signals = "SIGTERM"): void {
    this.end(null, signal);
  }

  private emit(stream: OutputStream, line: string): void {
    if (this.ended) return;
    for (const watch of this.watchers) watch(stream, line);
  }

  private end(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.ended) return;
    this.ended = { code, signal, at: this.time.nowMs() };
    this.wake?.();
    this.finish();
  }
}

interface SlotRecord {
  process: FakeProcess;
  issue: number;
  attempt: number;
  worktree: string;
  commandLine: string;
}

/** The host the fake runtimes share: its processes, and the record each slot holds. */
export class FakeMachine {
  readonly records = new Map<string, SlotRecord>();
  /** Started and not yet seen to end, for endAllNow (the local runtime's live process groups). */
  readonly started = new Set<FakeProcess>();
  private nextId = 4000;

  constructor(
    readonly time: Timebase = REAL_TIME,
    readonly programs: Readonly<Record<string, FakeProgram>> = {},
  ) {}

  spawn(): FakeProcess {
    return new FakeProcess((this.nextId += 1), this.time.nowMs(), this.time);
  }

  /** The slot's record, if its worker still runs. */
  live(dir: string): SlotRecord | null {
    const record = this.records.get(dir);
    return record && !record.process.ended ? record : null;
  }
}

const tagsOf = (id: number) => ({ worker: id });
const labelOf = (id: number) => `fake worker ${id}`;

export class FakeRuntime implements WorkerRuntime {
  readonly name = "fake";

  constructor(readonly machine: FakeMachine = new FakeMachine()) {}

  async start(request: StartRequest): Promise<WorkerHandle> {
    const commandLine = expandCommand(request.command, request.briefPath);
    const program = this.machine.programs[request.command] ?? parseSh(request.command);
    const brief = await readFile(request.briefPath, "utf8");
    const proc = this.machine.spawn();
    this.machine.records.set(request.slot.dir, { process: proc, issue: request.slot.issue, attempt: request.attempt, worktree: request.worktree, commandLine });
    this.machine.started.add(proc);
    void proc.done.then(() => this.machine.started.delete(proc));
    const handle = this.handle(proc, commandLine, request.output, true);
    proc.run(program, brief);
    return handle;
  }

  async adopt(slot: WorkerSlot, output: (attempt: number) => OutputSink): Promise<AdoptedWorker | null> {
    const record = this.machine.live(slot.dir);
    if (!record || record.issue !== slot.issue) return null;
    return { handle: this.handle(record.process, record.commandLine, output(record.attempt), false), attempt: record.attempt, worktree: record.worktree };
  }

  async evict(slot: WorkerSlot): Promise<{ tags: Readonly<Record<string, number>>; label: string } | null> {
    const record = this.machine.live(slot.dir);
    if (!record) return null;
    record.process.kill();
    await record.process.done;
    return { tags: tagsOf(record.process.id), label: labelOf(record.process.id) };
  }

  async forget(slot: WorkerSlot): Promise<void> {
    this.machine.records.delete(slot.dir);
  }

  async recorded(runDir: string): Promise<RecordedWorker[]> {
    const out: RecordedWorker[] = [];
    for (const [dir, record] of this.machine.records) {
      const inside = relative(runDir, dir);
      if (record.process.ended || inside.startsWith("..") || inside === "") continue;
      out.push({ issue: record.issue, attempt: record.attempt, startedAt: record.process.startedAt, tags: tagsOf(record.process.id) });
    }
    return out.sort((a, b) => a.issue - b.issue);
  }

  endAllNow(): number {
    const live = [...this.machine.started];
    for (const proc of live) proc.kill("SIGKILL");
    this.machine.started.clear();
    return live.length;
  }

  /** A handle on `proc` for this runtime; `ours`: started here (its exit code is ours to read), else adopted. */
  private handle(proc: FakeProcess, commandLine: string, sink: OutputSink, ours: boolean): WorkerHandle {
    const time = this.machine.time;
    const since = time.nowMs();
    const ring: TailLine[] = [];
    let lastOutput = ours ? proc.startedAt : since;
    let killReason: string | null = null;
    let looks = 0;
    const watch = (stream: OutputStream, line: string): void => {
      lastOutput = time.nowMs();
      ring.push({ stream, line, at: lastOutput });
      if (ring.length > 200) ring.shift();
      try {
        sink.onLine(stream, line);
      } catch {
        // A callback's failure must not stop the watching.
      }
    };
    proc.watchers.add(watch);
    const exited: Promise<WorkerExit> = proc.done.then(() => {
      proc.watchers.delete(watch);
      const end = proc.ended ?? { code: null, signal: null, at: time.nowMs() };
      const durationMs = end.at - proc.startedAt;
      return ours ? { code: end.code, signal: end.signal, durationMs, killReason } : { code: null, signal: null, durationMs, killReason };
    });
    return {
      id: String(proc.id),
      runtime: this.name,
      tags: tagsOf(proc.id),
      label: labelOf(proc.id),
      startedAt: proc.startedAt,
      commandLine,
      exited,
      stop: (reason) => {
        if (!proc.ended) {
          killReason ??= reason;
          proc.kill();
        }
        return exited;
      },
      observe: async (): Promise<WorkerObservation> => {
        looks += 1;
        const first = looks === 1;
        return { running: !proc.ended, lastOutputAt: lastOutput, busy: first ? "unknown" : false, why: first ? "a first look" : "the fake has no CPU to read" };
      },
      lastOutputAt: () => lastOutput,
      tail: () => [...ring],
      running: () => !proc.ended,
    };
  }
}

type Step = (io: Parameters<FakeProgram>[0]) => Promise<number | null>;

/** The sh subset (see the head of this file) as a program; throws naming the subset on anything else. */
export function parseSh(command: string): FakeProgram {
  const loop = /^(.*?)\s*while true; do (.*); done\s*$/.exec(command);
  const before = steps(loop ? (loop[1] ?? "") : command, command);
  const body = loop ? steps(loop[2] ?? "", command) : null;
  // A loop that never sleeps would never let the event loop turn (the real one spins a CPU).
  if (loop && !/(^|;)\s*sleep /.test(loop[2] ?? "")) throw new Error(`the fake runtime runs a loop only with a sleep in it: ${JSON.stringify(command)}`);
  return async (io) => {
    for (const step of before) {
      const code = await step(io);
      if (code !== null) return code;
    }
    if (!body) return 0;
    for (;;) {
      for (const step of body) {
        const code = await step(io);
        if (code !== null) return code;
      }
    }
  };
}

function steps(text: string, command: string): Step[] {
  return text
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => step(part, command));
}

function step(part: string, command: string): Step {
  if (part === "cat")
    return async (io) => (io.brief.split("\n").forEach((line, i, all) => (i < all.length - 1 || line !== "" ? io.out(line) : undefined)), null);
  if (/^cat\s*>\s*\/dev\/null$/.test(part) || part === "true") return async () => null;
  const echo = /^echo (.*?)( >&2)?$/.exec(part);
  if (echo) return async (io) => ((echo[2] ? io.err : io.out)(unquote(echo[1] ?? "")), null);
  const sleep = /^sleep (\d+(?:\.\d+)?)$/.exec(part);
  if (sleep) return async (io) => (await io.sleep(Number(sleep[1]) * 1000), null);
  const exit = /^exit (\d+)$/.exec(part);
  if (exit) return async () => Number(exit[1]);
  throw new Error(
    `the fake runtime cannot run ${JSON.stringify(part)} of ${JSON.stringify(command)}: it runs cat, cat >/dev/null, echo, echo >&2, sleep N, exit N, true ` +
      "and one trailing `while true; do ...; done` (or pass a program for the command)",
  );
}

function unquote(words: string): string {
  return words.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
}
