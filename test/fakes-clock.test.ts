// The virtual clock the fakes run on (test/support/fake-clock.ts): nothing moves until the test
// advances it; timers fire in due order, each at its own instant; intervals repeat; a cleared
// timer never fires; what a timer starts settles before the next fires; `until` waits in virtual
// time and fails naming what it waited for. And the fake runtime's worker sleeps on it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { settle, VIRTUAL_EPOCH, VirtualClock } from "./support/fake-clock.js";
import { FakeMachine, FakeRuntime, parseSh } from "./support/fake-runtime.js";
import { workerScene } from "./support/worker-scene.js";

describe("the virtual clock", () => {
  test("time stands still until advanced; timers fire in due order, each reading its own instant", async () => {
    const clock = new VirtualClock();
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(["b", clock.nowMs() - VIRTUAL_EPOCH]), 200);
    clock.setTimeout(() => fired.push(["a", clock.nowMs() - VIRTUAL_EPOCH]), 100);
    clock.setTimeout(() => fired.push(["a2", clock.nowMs() - VIRTUAL_EPOCH]), 100);
    const never = clock.setTimeout(() => fired.push(["never", 0]), 150);
    clock.clearTimeout(never);
    await settle();
    assert.equal(clock.nowMs(), VIRTUAL_EPOCH);
    assert.equal(fired.length, 0);
    await clock.advance(150);
    assert.deepEqual(fired, [
      ["a", 100],
      ["a2", 100],
    ]);
    assert.equal(clock.date().toISOString(), "2026-01-01T00:00:00.150Z");
    await clock.advance(1000);
    assert.deepEqual(
      fired.map(([name]) => name),
      ["a", "a2", "b"],
    );
    assert.equal(clock.pending(), 0);
  });

  test("an interval repeats on its period; a timer set inside a timer fires in the same advance when due", async () => {
    const clock = new VirtualClock();
    const ticks: number[] = [];
    const id = clock.setInterval(() => ticks.push(clock.nowMs() - VIRTUAL_EPOCH), 300);
    let chained = -1;
    clock.setTimeout(() => clock.setTimeout(() => (chained = clock.nowMs() - VIRTUAL_EPOCH), 50), 100);
    await clock.advance(1000);
    assert.deepEqual(ticks, [300, 600, 900]);
    assert.equal(chained, 150);
    clock.clearTimeout(id);
    await clock.advance(1000);
    assert.deepEqual(ticks, [300, 600, 900]);
  });

  test("sleep resolves when the clock passes it, and what it resumes runs before the next timer", async () => {
    const clock = new VirtualClock();
    const order: string[] = [];
    void (async () => {
      await clock.sleep(100);
      order.push("slept");
      await Promise.resolve();
      order.push("after a microtask");
    })();
    clock.setTimeout(() => order.push("timer at 100"), 100);
    clock.setTimeout(() => order.push("timer at 101"), 101);
    assert.equal(clock.nextAt(), VIRTUAL_EPOCH + 100);
    assert.equal(await clock.runNext(), true);
    assert.deepEqual(order, ["slept", "after a microtask", "timer at 100"]);
    await clock.advance(5);
    assert.deepEqual(order.at(-1), "timer at 101");
    assert.equal(await clock.runNext(), false);
  });

  test("until waits in virtual time and fails naming what it waited for", async () => {
    const clock = new VirtualClock();
    let ready = false;
    clock.setTimeout(() => (ready = true), 4_500);
    assert.equal(await clock.until("the flag", () => ready && "up", { withinMs: 10_000 }), "up");
    assert.equal(clock.nowMs() - VIRTUAL_EPOCH, 5_000, "a second at a time");
    await assert.rejects(
      clock.until("a thing that never comes", () => false, { withinMs: 3_000 }),
      /a thing that never comes did not come within 3000 ms/,
    );
    await assert.rejects(clock.advance(-1), RangeError);
  });

  test("a fake worker sleeps on it: its exit waits for the clock, and its duration is virtual", async () => {
    const clock = new VirtualClock();
    const runtime = new FakeRuntime(new FakeMachine(clock));
    const { request } = await workerScene(1);
    const lines: string[] = [];
    const handle = await runtime.start(request(1, "cat >/dev/null; echo start; sleep 30; echo end; exit 4", lines));
    await clock.advance(29_000);
    assert.deepEqual(lines, ["stdout:start"]);
    assert.equal(handle.running(), true);
    await clock.advance(1_000);
    const exit = await handle.exited;
    assert.deepEqual({ code: exit.code, durationMs: exit.durationMs, lines }, { code: 4, durationMs: 30_000, lines: ["stdout:start", "stdout:end"] });
    assert.equal(handle.lastOutputAt(), VIRTUAL_EPOCH + 30_000);
  });

  test("the fake runtime refuses a command outside its sh subset, naming the subset", () => {
    assert.throws(() => parseSh("git commit -am work"), /cannot run "git commit -am work".*echo.*sleep N/);
    assert.throws(() => parseSh("while true; do echo spin; done"), /only with a sleep/);
    assert.equal(typeof parseSh("cat; echo 'hi there' >&2; exit 2"), "function");
  });
});
