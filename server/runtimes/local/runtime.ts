// The local runtime: a worker is a child process of the host, its own session and process group
// leader (spawn.ts), in the issue's worktree, its output in files beside its brief that it
// outlives us by (output-files.ts), a pid file naming it so the next host process finds it again
// (pid-files.ts), and its tree's CPU read from /proc to tell a busy quiet worker from a hung one
// (proc.ts). The fleet sees it through the WorkerRuntime port only (server/worker-port/port.ts).
import type { AdoptedWorker, OutputSink, RecordedWorker, StartRequest, WorkerHandle, WorkerRuntime, WorkerSlot } from "../../worker-port/port.js";
import {
  adoptedHandle,
  endOrphan,
  liveOrphan,
  pidFilePath,
  processStartTime,
  processStartTimeSync,
  removePidFile,
  runningWorkers,
  writePidFile,
  writePidFileSync,
} from "./pid-files.js";
import { BusyTracker, ProcTables } from "./proc.js";
import { startWorker, WorkerGroups, type WorkerHandle as ProcessHandle } from "./spawn.js";

const tagsOf = (pid: number) => ({ pid });
/** The workers' liveness samples share one /proc scan at a time (a tick observes them one after another). */
const procTables = new ProcTables();
const labelOf = (pid: number) => `pid ${pid}`;

/** A process handle as the port's handle: its id and tags are the pid; a look samples its tree's CPU. */
function portHandle(child: ProcessHandle): WorkerHandle {
  const busy = new BusyTracker({}, procTables);
  return {
    id: String(child.pid),
    runtime: "local",
    tags: tagsOf(child.pid),
    label: labelOf(child.pid),
    startedAt: child.startedAt,
    commandLine: child.commandLine,
    exited: child.exited,
    stop: (reason) => child.kill(reason),
    async observe() {
      const reading = await busy.sample(child.pid);
      return { running: child.running(), lastOutputAt: child.lastOutputAt(), busy: reading.busy, why: reading.why };
    },
    lastOutputAt: () => child.lastOutputAt(),
    tail: () => child.tail(),
    running: () => child.running(),
  };
}

export class LocalRuntime implements WorkerRuntime {
  readonly name = "local";
  /** The groups of the workers this runtime started, until each ends. */
  private readonly groups = new WorkerGroups();

  async start(request: StartRequest): Promise<WorkerHandle> {
    const { slot, attempt, output } = request;
    const pidFile = pidFilePath(slot.dir);
    let recorded = false;
    const handle = await startWorker({
      groups: this.groups,
      command: request.command,
      cwd: request.worktree,
      env: request.env,
      briefPath: request.briefPath,
      loginShell: request.loginShell ?? false,
      // Files, not pipes: the worker outlives a daemon that dies (adopt() follows them again).
      outputDir: slot.dir,
      ...(output.maxBytes !== undefined ? { outputMaxBytes: output.maxBytes } : {}),
      ...(output.onTruncated ? { onOutputTruncated: output.onTruncated } : {}),
      // The pid file is written before the first await after the spawn: a host killed while the
      // spawn settles would otherwise leave a worker no restart can find, and a second worker
      // would be born into the same worktree beside it.
      onSpawn: (pid, commandLine) => {
        const start = processStartTimeSync(pid);
        if (!start) return;
        writePidFileSync(pidFile, {
          pid,
          pgid: pid,
          start,
          started_at: Date.now(),
          issue: slot.issue,
          attempt,
          worktree: request.worktree,
          command: commandLine,
        });
        recorded = true;
      },
      onLine: output.onLine,
    });
    const start = recorded ? null : await processStartTime(handle.pid);
    if (start !== null) {
      await writePidFile(pidFile, {
        pid: handle.pid,
        pgid: handle.pgid,
        start,
        started_at: handle.startedAt,
        issue: slot.issue,
        attempt,
        worktree: request.worktree,
        command: handle.commandLine,
      });
    }
    return portHandle(handle);
  }

  async adopt(slot: WorkerSlot, output: (attempt: number) => OutputSink): Promise<AdoptedWorker | null> {
    const record = await liveOrphan(pidFilePath(slot.dir));
    if (!record || record.issue !== slot.issue) return null;
    const sink = output(record.attempt);
    const handle = adoptedHandle(record, undefined, {
      dir: slot.dir,
      onLine: sink.onLine,
      ...(sink.maxBytes !== undefined ? { maxBytes: sink.maxBytes } : {}),
      ...(sink.onTruncated ? { onTruncated: sink.onTruncated } : {}),
    });
    return { handle: portHandle(handle), attempt: record.attempt, worktree: record.worktree };
  }

  async evict(slot: WorkerSlot): Promise<{ tags: Readonly<Record<string, number>>; label: string } | null> {
    const ended = await endOrphan(pidFilePath(slot.dir));
    return ended === null ? null : { tags: tagsOf(ended), label: labelOf(ended) };
  }

  forget(slot: WorkerSlot): Promise<void> {
    return removePidFile(pidFilePath(slot.dir));
  }

  async recorded(runDir: string): Promise<RecordedWorker[]> {
    return (await runningWorkers(runDir)).map((r) => ({ issue: r.issue, attempt: r.attempt, startedAt: r.started_at, tags: tagsOf(r.pid) }));
  }

  endAllNow(): number {
    return this.groups.endAllNow();
  }
}
