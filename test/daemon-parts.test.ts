// The daemon's parts on their own, with real processes and files: the state dir's lock (a live
// holder named, a dead one replaced, racing takers end with one), the persisted instance ids,
// worker pid files (a recycled pid is never signalled, a live orphan's group is ended), and the
// wire's line reader (an oversized line is refused).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { acquireLock, readLock, StateLockHeld } from "../server/daemon/lock.js";
import { persistentInstance, readInstance } from "../server/daemon/identity.js";
import { LineReader } from "../server/daemon/protocol.js";
import { cappedLog } from "../server/daemon/log.js";
import { adoptedHandle, endOrphan, liveOrphan, processStartTime, writePidFile, type PidRecord } from "../server/workers/orphans.js";
import { tempDir } from "./support/forge-fixtures.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process in its own group, like a worker: `sleep` under a shell. */
function sleeper(): { pid: number; exited: Promise<void> } {
  const child = spawn("/bin/sh", ["-c", "sleep 60 & wait"], { detached: true, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { pid: child.pid!, exited };
}

describe("the state dir's lock", () => {
  it("names the live holder, replaces a dead one, and racing takers end with exactly one", async () => {
    const dir = await tempDir("afk-lock-");
    const path = join(dir, "lock.json");
    const held = await acquireLock(path, dir);
    // This process holds it: a second taker (any other process would be the same) is refused with the pid.
    await assert.rejects(acquireLock(path, dir), (error: unknown) => error instanceof StateLockHeld && error.holder.pid === process.pid && /pid \d+/.test(error.message));
    await held.release();
    // A lock left by a dead process (a pid that no longer runs that start time) is stale.
    await writeFile(path, JSON.stringify({ pid: process.pid, start: "ticks:1", version: "0", started_at: "x" }));
    const again = await acquireLock(path, dir);
    assert.equal((await readLock(path))?.pid, process.pid);
    await again.release();
    // Racing in one process: exactly one of several concurrent takers wins.
    await writeFile(path, JSON.stringify({ pid: 999_999, start: "ticks:1", version: "0", started_at: "x" }));
    const results = await Promise.allSettled([1, 2, 3, 4].map(() => acquireLock(path, dir)));
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1, "one taker holds the lock");
    assert.ok(results.filter((r) => r.status === "rejected").every((r) => (r as PromiseRejectedResult).reason instanceof StateLockHeld));
  });
});

describe("persisted identity", () => {
  it("one instance id per repository and state dir, the same on every read", async () => {
    const root = await tempDir("afk-id-");
    assert.equal(readInstance(root, "afk/demo"), null);
    const id = persistentInstance(root, "afk/demo");
    assert.equal(persistentInstance(root, "AFK/Demo"), id, "the slug is case-insensitive");
    assert.equal(readInstance(root, "afk/demo"), id);
    assert.notEqual(persistentInstance(root, "afk/other"), id);
  });
});

describe("worker pid files", () => {
  it("never signal a recycled pid, end a live orphan's group, and adopt one until it exits", async () => {
    const dir = await tempDir("afk-pid-");
    const a = sleeper();
    const start = await processStartTime(a.pid);
    assert.ok(start);
    const record: PidRecord = { pid: a.pid, pgid: a.pid, start: start!, started_at: Date.now(), issue: 7, attempt: 1, worktree: dir, command: "sleep" };
    // A record whose start time does not match is another process's pid: left alone, file removed.
    const stranger = join(dir, "stranger.json");
    await writePidFile(stranger, { ...record, start: "ticks:1" });
    assert.equal(await liveOrphan(stranger), null);
    assert.equal(await endOrphan(stranger), null);
    assert.ok(alive(a.pid), "the unrelated process still runs");
    // The matching record is the orphan: ended with its whole group.
    const file = join(dir, "worker.pid.json");
    await writePidFile(file, record);
    assert.equal((await liveOrphan(file))?.pid, a.pid);
    assert.equal(await endOrphan(file, 2_000), a.pid);
    await a.exited;
    assert.equal(alive(a.pid), false);
    assert.equal(await liveOrphan(file), null, "the file went with it");
    // Adopted: watched until it exits, then reported as an exit with no code.
    const b = sleeper();
    const handle = adoptedHandle({ ...record, pid: b.pid, pgid: b.pid, start: (await processStartTime(b.pid))! }, 2_000);
    assert.equal(handle.running(), true);
    const exit = await handle.kill("test");
    assert.equal(exit.killReason, "test");
    assert.equal(handle.running(), false);
    await b.exited;
  });
});

describe("the wire's line reader", () => {
  it("delivers lines across chunks and refuses one over the limit", () => {
    const lines: string[] = [];
    let oversize = 0;
    const reader = new LineReader(16, (l) => lines.push(l), () => (oversize += 1));
    reader.push(Buffer.from('{"a":1}\n{"b"'));
    reader.push(Buffer.from(":2}\n"));
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
    reader.push(Buffer.from("x".repeat(40)));
    assert.equal(oversize, 1);
  });
});

describe("the daemon's log", () => {
  it("is capped: past the cap it moves to daemon.log.1 and starts again with a marker, losing no line of the last two generations", async () => {
    const dir = await tempDir("afk-dlog-");
    const path = join(dir, "daemon.log");
    const fd = openSync(path, "a", 0o600);
    try {
      const log = cappedLog({ fd, path, maxBytes: 4_096 });
      for (let i = 0; i < 1_000; i += 1) log(`line ${i}`);
      const current = await readFile(path, "utf8");
      const older = await readFile(`${path}.1`, "utf8");
      assert.ok(Buffer.byteLength(current) <= 4_096 + 100 && Buffer.byteLength(older) <= 4_096 + 200, "both generations bounded");
      assert.match(current, /^\S+ afk-mcp daemon: this log passed 4096 bytes; the lines before are in .*daemon\.log\.1\n/);
      // The two generations end with the newest lines, each once and in order, none cut.
      const numbers = (older + current).split("\n").map((l) => /: line (\d+)$/.exec(l)?.[1]).filter((n) => n !== undefined).map(Number);
      assert.equal(numbers.at(-1), 999);
      numbers.forEach((n, i) => i > 0 && assert.equal(n, numbers[i - 1]! + 1));
      assert.ok(numbers.length > 50);
      assert.equal((await stat(`${path}.1`)).mode & 0o777, 0o600, "the older generation is owner-only too");
      // A descriptor that is not the named file (a terminal, journald) is never cut.
      const other = join(dir, "other.log");
      const otherFd = openSync(other, "a", 0o600);
      const quiet = cappedLog({ fd: otherFd, path, maxBytes: 4_096 });
      for (let i = 0; i < 300; i += 1) quiet(`kept ${i}`);
      closeSync(otherFd);
      assert.equal((await readFile(other, "utf8")).split("\n").filter(Boolean).length, 300);
    } finally {
      closeSync(fd);
    }
  });
});
