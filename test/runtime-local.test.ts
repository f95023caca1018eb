// The local runtime through the WorkerRuntime port, with real processes and files: a start leaves
// a pid file a status read finds, a look says whether the worker runs (busy "unknown" at first),
// stop ends it with the reason in its exit facts, forget drops the record; a second runtime (the
// next host process) adopts a live worker from its record, or evicts it before its worktree is
// reused; a record for another issue is not adopted. The registry gives one runtime per name.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONFIG } from "../schemas/config.js";
import type { WorkerSlot } from "../server/worker-port/port.js";
import { RuntimeRegistry } from "../server/runtimes/registry.js";
import { pidFilePath, readPidFile } from "../server/runtimes/local/pid-files.js";
import { LocalRuntime } from "../server/runtimes/local/runtime.js";
import { alive } from "./support/daemon-fixtures.js";
import { lineSink as sink, workerScene as scene } from "./support/worker-scene.js";
import { waitFor } from "./support/wait.js";

/** What a start names besides the command: the branch, the verdict file, the engine, the config. */
const facts = (slot: WorkerSlot) => ({ branch: `afk/${slot.issue}-test`, verdictPath: join(slot.dir, "verdict.json"), engine: null, config: DEFAULT_CONFIG });

describe("the local runtime through the WorkerRuntime port", () => {
  it("start, observe, stop with a reason, forget; status reads the record meanwhile", async () => {
    const { runDir, slot, worktree, briefPath } = await scene(7);
    const runtime = new LocalRuntime();
    const lines: string[] = [];
    const handle = await runtime.start({
      ...facts(slot),
      slot,
      attempt: 2,
      command: "cat; echo done; sleep 60",
      worktree,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      briefPath,
      output: sink(lines),
    });
    const pid = Number(handle.id);
    assert.deepEqual(handle.tags, { pid });
    assert.equal(handle.label, `pid ${pid}`);
    assert.equal(handle.runtime, "local");
    const record = await readPidFile(pidFilePath(slot.dir));
    assert.deepEqual({ pid: record?.pid, issue: record?.issue, attempt: record?.attempt, worktree: record?.worktree }, { pid, issue: 7, attempt: 2, worktree });
    await waitFor("the worker's output", () => lines.includes("stdout:done"), { deadlineMs: 30_000 });
    assert.deepEqual(lines, ["stdout:the brief", "stdout:done"]);
    const first = await handle.observe();
    assert.equal(first.running, true);
    assert.equal(first.busy, "unknown", first.why);
    await new Promise((resolve) => setTimeout(resolve, 50)); // two samples need time between them to compare
    const second = await handle.observe();
    assert.notEqual(second.busy, "unknown", second.why);
    assert.deepEqual(
      (await runtime.recorded(runDir)).map((r) => ({ issue: r.issue, attempt: r.attempt, tags: r.tags })),
      [{ issue: 7, attempt: 2, tags: { pid } }],
    );
    const exit = await handle.stop("the test is over");
    assert.equal(exit.killReason, "the test is over");
    assert.equal(handle.running(), false);
    assert.equal(alive(pid), false);
    assert.deepEqual(
      handle.tail().map((t) => t.line),
      ["the brief", "done"],
    );
    await runtime.forget(slot);
    assert.equal(await readPidFile(pidFilePath(slot.dir)), null);
    assert.deepEqual(await runtime.recorded(runDir), []);
  });

  it("the next host process adopts a live worker from its record, or evicts it; never one recorded for another issue", async () => {
    const { slot, worktree, briefPath } = await scene(3);
    const first = new LocalRuntime();
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
    const started = await first.start({
      ...facts(slot),
      slot,
      attempt: 1,
      command: "cat >/dev/null; while true; do echo tick; sleep 1; done",
      worktree,
      env,
      briefPath,
      output: sink([]),
    });
    const next = new LocalRuntime();
    assert.equal(await next.adopt({ issue: 4, dir: slot.dir }, () => sink([])), null, "a record for issue 3 is not adopted for issue 4");
    const lines: string[] = [];
    let attemptAsked: number | null = null;
    const adopted = await next.adopt(slot, (attempt) => {
      attemptAsked = attempt;
      return sink(lines);
    });
    assert.ok(adopted, "the live worker is adopted");
    assert.equal(attemptAsked, 1);
    assert.deepEqual({ id: adopted.handle.id, attempt: adopted.attempt, worktree: adopted.worktree }, { id: started.id, attempt: 1, worktree });
    await waitFor("output followed by the adopting runtime", () => lines.includes("stdout:tick"), { deadlineMs: 30_000 });
    const exit = await adopted.handle.stop("adopted, then stopped");
    assert.equal(exit.killReason, "adopted, then stopped");
    assert.equal(exit.code, null, "an adopted worker's exit code is not ours to read");
    await started.exited;
    assert.equal(alive(Number(started.id)), false);

    // Evicted: a live worker no one adopts is ended before its worktree is reused.
    const again = await first.start({ ...facts(slot), slot, attempt: 2, command: "cat >/dev/null; sleep 60", worktree, env, briefPath, output: sink([]) });
    const evicted = await new LocalRuntime().evict(slot);
    assert.deepEqual(evicted, { tags: { pid: Number(again.id) }, label: `pid ${again.id}` });
    await again.exited;
    assert.equal(alive(Number(again.id)), false);
    assert.equal(await new LocalRuntime().evict(slot), null, "nothing left to evict");
  });

  it("the registry gives one runtime per configured name, and each host's registry its own", () => {
    const runtimes = new RuntimeRegistry();
    const runtime = runtimes.workerRuntime("local");
    assert.equal(runtime.name, "local");
    assert.equal(runtimes.workerRuntime("local"), runtime);
    assert.notEqual(new RuntimeRegistry().workerRuntime("local"), runtime, "another host: another local runtime, with its own workers");
  });

  it("the actions runtime is one per repository and work repository: a second fleet of the same repository under another state dir gets its own", () => {
    const reach = (dir: string, base: string) => ({ repo: "o/r", api: null as never, git: { dir } as never, namespace: "refs/afk", base });
    const runtimes = new RuntimeRegistry();
    const first = runtimes.workerRuntime("actions", reach("/state-a/work.git", "main"));
    assert.equal(
      runtimes.workerRuntime("actions", reach("/state-a/work.git", "develop")),
      first,
      "the same work repository: the same runtime, rebound to the newest reach",
    );
    assert.notEqual(runtimes.workerRuntime("actions", reach("/state-b/work.git", "main")), first, "another state dir's work repository: another runtime");
  });
});
