// The sandbox runtime behind the WorkerRuntime port: the local runtime's process, started as the
// sandbox's launcher (index.ts builds its command and environment), with the worker's last
// commits carried home from its private git dir before anyone reads its exit. Everything a
// local process has (its pid file, adoption after a crash, eviction, the exit-now) is the local
// runtime's: this one records nothing of its own, so status never counts a worker twice.
import type { AdoptedWorker, OutputSink, RecordedWorker, StartRequest, WorkerExit, WorkerHandle, WorkerRuntime, WorkerSlot } from "../../worker-port/port.js";
import { afterExit, sandboxedWorker } from "./index.js";
import { unstarted } from "./fault.js";
import { SandboxProbe } from "./available.js";
import { BANNER_PREFIX } from "./spec.js";

/** The local handle, named for this runtime, whose exit waits for the take-back (and says when the sandbox could not start). */
function takingBack(handle: WorkerHandle, runDir: string): WorkerHandle {
  const exited: Promise<WorkerExit> = handle.exited.then((exit) => afterExit(runDir, exit));
  return {
    id: handle.id,
    runtime: "sandbox",
    tags: handle.tags,
    label: handle.label,
    startedAt: handle.startedAt,
    commandLine: handle.commandLine,
    exited,
    stop: (reason) => handle.stop(reason).then(() => exited),
    observe: () => handle.observe(),
    lastOutputAt: () => handle.lastOutputAt(),
    tail: () => handle.tail(),
    running: () => handle.running(),
  };
}

/** The sink with the launcher's banner marked as the runtime's line: the worker lane keeps it, the breaker and the board never quote it. */
function marked(sink: OutputSink): OutputSink {
  return {
    ...sink,
    onLine: (stream, line, source) => sink.onLine(stream, line, source ?? (stream === "stderr" && line.startsWith(BANNER_PREFIX) ? "runtime" : "worker")),
  };
}

export class SandboxRuntime implements WorkerRuntime {
  readonly name = "sandbox";

  constructor(
    private readonly local: WorkerRuntime,
    /** Whether the sandbox can run here, asked again at each birth (its owner's: the host's runtimes). */
    private readonly probe: SandboxProbe = new SandboxProbe(),
  ) {}

  async start(request: StartRequest): Promise<WorkerHandle> {
    const boxed = await sandboxedWorker({
      config: request.config,
      ...(request.hostEnv ? { hostEnv: request.hostEnv } : {}),
      command: request.command,
      worktree: request.worktree,
      branch: request.branch,
      env: request.env,
      briefPath: request.briefPath,
      verdictPath: request.verdictPath,
      runDir: request.slot.dir,
      engine: request.engine,
      probe: this.probe,
    }).catch((error: unknown) => ({ cannotStart: error }));
    // A sandbox that cannot start is this attempt's fault (fault.ts), not a birth that never happened.
    if ("cannotStart" in boxed) return takingBack(await unstarted(request, boxed.cannotStart), request.slot.dir);
    return takingBack(await this.local.start({ ...request, command: boxed.command, env: boxed.env, output: marked(request.output) }), request.slot.dir);
  }

  async adopt(slot: WorkerSlot, output: (attempt: number) => OutputSink): Promise<AdoptedWorker | null> {
    const adopted = await this.local.adopt(slot, (attempt) => marked(output(attempt)));
    return adopted && { ...adopted, handle: takingBack(adopted.handle, slot.dir) };
  }

  evict(slot: WorkerSlot): ReturnType<WorkerRuntime["evict"]> {
    return this.local.evict(slot);
  }

  forget(slot: WorkerSlot): Promise<void> {
    return this.local.forget(slot);
  }

  /** The local runtime's pid files name sandboxed workers too (their launcher): it reports them. */
  async recorded(_runDir: string): Promise<RecordedWorker[]> {
    return [];
  }

  /** The local runtime ends every process group it started, the launchers with theirs. */
  endAllNow(): number {
    return 0;
  }
}
