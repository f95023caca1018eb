// The WorkerRuntime contract: one set of cases run against the fake (test/support/fake-runtime.ts,
// in virtual time) and against the local runtime (real processes, pid files, output files), so the
// fake cannot drift from it. The cases are what the fleet relies on: a worker started with its
// brief on stdin, its output line by line per stream, a first look that cannot tell busy, a stop
// with a reason in its exit facts (idempotent), a natural exit's code, the record status reads
// and forget drops, the next host process adopting a live worker (never another issue's) or
// evicting it, and an exit that must end every worker at once.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { WorkerRuntime } from "../server/worker-port/port.js";
import { LocalRuntime } from "../server/runtimes/local/runtime.js";
import { VirtualClock } from "./support/fake-clock.js";
import { FakeMachine, FakeRuntime } from "./support/fake-runtime.js";
import { lineSink as sink, workerScene as scene } from "./support/worker-scene.js";
import { waitFor } from "./support/wait.js";

interface RuntimeSubject {
  /** A runtime as a host process makes it; a second call is the next host process on the same machine. */
  runtime(): WorkerRuntime;
  /** Resolves with `probe`'s answer once it is truthy, the workers' time passing meanwhile (real or virtual). */
  eventually<T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>): Promise<T>;
}

function runtimeContract(name: string, subject: RuntimeSubject): void {
  describe(`WorkerRuntime contract: ${name}`, () => {
    test("start, output, look, stop with a reason (twice), the record status reads, forget", async () => {
      const { runDir, slot, request } = await scene(7);
      const runtime = subject.runtime();
      const lines: string[] = [];
      const handle = await runtime.start(request(2, "cat; echo done; sleep 60", lines));
      assert.equal(handle.runtime, runtime.name);
      assert.equal(handle.commandLine, "cat; echo done; sleep 60");
      assert.match(handle.label, /\S/);
      await subject.eventually("the worker's output", () => lines.includes("stdout:done"));
      assert.deepEqual(lines, ["stdout:the brief", "stdout:done"], "the brief came on stdin");
      const first = await handle.observe();
      assert.deepEqual([first.running, first.busy], [true, "unknown"], first.why);
      assert.ok(first.lastOutputAt >= handle.startedAt);
      const second = await subject.eventually("a look that can tell busy", async () => {
        const look = await handle.observe();
        return look.busy !== "unknown" && look;
      });
      assert.equal(second.running, true);
      assert.deepEqual(
        (await runtime.recorded(runDir)).map((r) => ({ issue: r.issue, attempt: r.attempt, tags: r.tags })),
        [{ issue: 7, attempt: 2, tags: handle.tags }],
      );
      assert.equal(handle.running(), true);
      const exit = await handle.stop("the test is over");
      assert.deepEqual(
        { code: exit.code, signal: exit.signal, killReason: exit.killReason },
        { code: null, signal: "SIGTERM", killReason: "the test is over" },
      );
      assert.equal(typeof exit.durationMs, "number", "the exit facts carry the run's duration");
      assert.equal(handle.running(), false);
      assert.deepEqual(await handle.stop("again"), exit, "stop is idempotent: the first reason stays");
      assert.deepEqual(await handle.exited, exit);
      assert.deepEqual(
        handle.tail().map((t) => [t.stream, t.line]),
        [
          ["stdout", "the brief"],
          ["stdout", "done"],
        ],
      );
      assert.equal((await handle.observe()).running, false);
      assert.deepEqual(await runtime.recorded(runDir), [], "an ended worker is not recorded as running");
      await runtime.forget(slot);
      assert.equal(await runtime.adopt(slot, () => sink([])), null);
    });

    test("a worker that ends by itself: its exit code, its stderr apart from its stdout, no kill reason", async () => {
      const { runDir, request } = await scene(8);
      const runtime = subject.runtime();
      const lines: string[] = [];
      const handle = await runtime.start(request(1, "cat >/dev/null; echo out; echo err >&2; exit 3", lines));
      const exit = await handle.exited;
      assert.deepEqual({ code: exit.code, signal: exit.signal, killReason: exit.killReason }, { code: 3, signal: null, killReason: null });
      assert.deepEqual(
        lines.filter((l) => l.startsWith("stdout:")),
        ["stdout:out"],
      );
      assert.deepEqual(
        lines.filter((l) => l.startsWith("stderr:")),
        ["stderr:err"],
      );
      assert.equal(handle.running(), false);
      assert.deepEqual(await handle.stop("too late"), exit, "stopping an ended worker gives its exit, no new reason");
      assert.deepEqual(await runtime.recorded(runDir), []);
    });

    test("the next host process adopts a live worker from its record (never another issue's), follows it and stops it; or evicts it", async () => {
      const { slot, worktree, request } = await scene(3);
      const first = subject.runtime();
      const started = await first.start(request(1, "cat >/dev/null; while true; do echo tick; sleep 1; done", []));
      const next = subject.runtime();
      assert.equal(await next.adopt({ issue: 4, dir: slot.dir }, () => sink([])), null, "a record for issue 3 is not adopted for issue 4");
      const lines: string[] = [];
      let attemptAsked: number | null = null;
      const adopted = await next.adopt(slot, (attempt) => ((attemptAsked = attempt), sink(lines)));
      assert.ok(adopted, "the live worker is adopted");
      assert.equal(attemptAsked, 1);
      assert.deepEqual({ id: adopted.handle.id, attempt: adopted.attempt, tags: adopted.handle.tags }, { id: started.id, attempt: 1, tags: started.tags });
      assert.equal(adopted.worktree, worktree);
      await subject.eventually("output followed by the adopting runtime", () => lines.includes("stdout:tick"));
      assert.equal(adopted.handle.running(), true);
      const exit = await adopted.handle.stop("adopted, then stopped");
      assert.deepEqual(
        { code: exit.code, killReason: exit.killReason },
        { code: null, killReason: "adopted, then stopped" },
        "an adopted worker's exit code is not ours to read",
      );
      const seen = await started.exited;
      assert.deepEqual(
        { code: seen.code, signal: seen.signal, killReason: seen.killReason },
        { code: null, signal: "SIGTERM", killReason: null },
        "its starter sees it end, stopped by another",
      );

      const again = await first.start(request(2, "cat >/dev/null; sleep 60", []));
      const evicted = await subject.runtime().evict(slot);
      assert.deepEqual(evicted, { tags: again.tags, label: again.label });
      const gone = await again.exited;
      assert.deepEqual({ code: gone.code, signal: gone.signal, killReason: gone.killReason }, { code: null, signal: "SIGTERM", killReason: null });
      assert.equal(again.running(), false);
      assert.equal(await subject.runtime().evict(slot), null, "nothing left to evict");
    });

    test("endAllNow ends every worker this process started and has not seen end, at once, and says how many", async () => {
      const a = await scene(11);
      const b = await scene(12);
      const runtime = subject.runtime();
      const one = await runtime.start(a.request(1, "cat >/dev/null; sleep 60", []));
      const two = await runtime.start(b.request(1, "cat >/dev/null; sleep 60", []));
      const done = await runtime.start(b.request(2, "cat >/dev/null; exit 0", []));
      await done.exited;
      assert.equal(runtime.endAllNow(), 2);
      const exits = await Promise.all([one.exited, two.exited]);
      assert.deepEqual(
        exits.map((e) => [e.code, e.signal]),
        [
          [null, "SIGKILL"],
          [null, "SIGKILL"],
        ],
        "ended at once: killed, no grace",
      );
      assert.equal(runtime.endAllNow(), 0, "nothing left");
    });
  });
}

{
  const clock = new VirtualClock();
  const machine = new FakeMachine(clock);
  runtimeContract("the fake, in virtual time", {
    runtime: () => new FakeRuntime(machine),
    // A virtual minute at most, a second at a time: the fake's time passes only here.
    eventually: (what, probe) => clock.until(what, probe, { withinMs: 60_000 }),
  });
}

runtimeContract("the local runtime", {
  runtime: () => new LocalRuntime(),
  eventually: (what, probe) => waitFor(what, probe, { deadlineMs: 30_000, intervalMs: 100 }),
});
