// The daemon's parts on their own, with real processes and files: the state dir's lock (a live
// holder named, a dead one replaced, racing takers end with one), the persisted instance ids,
// worker pid files (a recycled pid is never signalled, a live orphan's group is ended), and the
// wire's line reader (an oversized line is refused), the idle exit's setting and count.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { acquireLock, readLock, StateLockHeld } from "../server/daemon/lock.js";
import { persistentInstance, readInstance } from "../server/daemon/identity.js";
import { LineReader } from "../server/daemon/protocol.js";
import { openDaemonLog } from "../server/daemon/log.js";
import { IdleWatch, onDemandIdleExit, parseIdleExit } from "../server/daemon/idle.js";
import { UsageError } from "../server/gh/errors.js";
import { adoptedHandle, endOrphan, liveOrphan, processStartTime, writePidFile, type PidRecord } from "../server/runtimes/local/pid-files.js";
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
    await assert.rejects(
      acquireLock(path, dir),
      (error: unknown) => error instanceof StateLockHeld && error.holder.pid === process.pid && /pid \d+/.test(error.message),
    );
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
    const reader = new LineReader(
      16,
      (l) => lines.push(l),
      () => (oversize += 1),
    );
    reader.push(Buffer.from('{"a":1}\n{"b"'));
    reader.push(Buffer.from(":2}\n"));
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
    reader.push(Buffer.from("x".repeat(40)));
    assert.equal(oversize, 1);
  });
});

describe("the daemon's lane", () => {
  const records = async (path: string): Promise<Record<string, unknown>[]> =>
    (await readFile(path, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it("takes the process's stdout and stderr line by line, redacted, gives them back, and moves what daemon.log holds into the lane", async () => {
    const dir = await tempDir("afk-dlog-");
    const paths = { lanes: dir, log: join(dir, "daemon.log") };
    // What a crashed daemon's Node wrote to its stderr, past the lane.
    await writeFile(paths.log, "FATAL ERROR: Reached heap limit Allocation failed\n", { mode: 0o600 });
    const stdoutWrite = process.stdout.write;
    const stderrWrite = process.stderr.write;
    // Synchronous from open to close: none of the test runner's own stdout writes falls inside.
    const lane = openDaemonLog({ paths, secrets: () => ["s3cr3t-token-value"], echo: false });
    try {
      lane.log("listening");
      process.stderr.write("(node:1) Warning: a warning Node printed\nsecond line");
      process.stderr.write(" and its end\nno end at all");
      process.stdout.write(Buffer.from("a library printed s3cr3t-token-value\n"));
    } finally {
      lane.close();
    }
    assert.equal(process.stdout.write, stdoutWrite, "stdout given back");
    assert.equal(process.stderr.write, stderrWrite, "stderr given back");
    assert.equal((await stat(paths.log)).size, 0, "daemon.log emptied once its text is in the lane");
    assert.equal((await stat(join(dir, "daemon.jsonl"))).mode & 0o777, 0o600, "owner-only");
    const got = await records(join(dir, "daemon.jsonl"));
    assert.deepEqual(
      got.map((r) => [r.lane, r.event, r.level, r.event === "left_on_stderr" ? /FATAL ERROR: Reached heap limit/.test(String(r.msg)) : r.msg]),
      [
        ["daemon", "left_on_stderr", "warn", true],
        ["daemon", "daemon", "info", "listening"],
        ["daemon", "stderr", "warn", "(node:1) Warning: a warning Node printed"],
        ["daemon", "stderr", "warn", "second line and its end"],
        ["daemon", "stdout", "info", "a library printed [redacted]"],
        // The unterminated line, kept when the streams are given back.
        ["daemon", "stderr", "warn", "no end at all"],
      ],
    );
  });

  it("is capped: two files at most, each bounded and 0600, the newest lines kept in order", async () => {
    const dir = await tempDir("afk-dlog-");
    const lane = openDaemonLog({ paths: { lanes: dir, log: join(dir, "daemon.log") }, secrets: () => [], maxBytes: 16_384, echo: false });
    try {
      for (let i = 0; i < 1_000; i += 1) lane.log(`line ${i}`);
    } finally {
      lane.close();
    }
    for (const file of ["daemon.jsonl", "daemon.1.jsonl"]) {
      assert.ok((await stat(join(dir, file))).size <= 16_384, `${file} bounded`);
      assert.equal((await stat(join(dir, file))).mode & 0o777, 0o600, `${file} owner-only`);
    }
    await assert.rejects(stat(join(dir, "daemon.2.jsonl")), "one older generation at most");
    const numbers = [...(await records(join(dir, "daemon.1.jsonl"))), ...(await records(join(dir, "daemon.jsonl")))].map((r) =>
      Number(/^line (\d+)$/.exec(String(r.msg))![1]),
    );
    assert.equal(numbers.at(-1), 999, "the newest line is kept");
    assert.ok(numbers.length > 50);
    numbers.forEach((n, i) => i > 0 && assert.equal(n, numbers[i - 1]! + 1, "in order, none twice"));
  });
});

describe("the idle exit", () => {
  it("reads whole seconds or never; anything else is refused naming the setting and the fix", () => {
    assert.equal(parseIdleExit("900", "--idle-exit"), 900);
    assert.equal(parseIdleExit("never", "--idle-exit"), null);
    for (const bad of ["0", "-5", "1.5", "15m", "", "604801"]) {
      assert.throws(
        () => parseIdleExit(bad, "--idle-exit"),
        (e: Error) => e instanceof UsageError && e.message.startsWith("--idle-exit") && /whole seconds .* or "never"/.test(e.message),
        bad,
      );
    }
    assert.equal(onDemandIdleExit({}), 900, "15 minutes when nothing is stated");
    assert.equal(onDemandIdleExit({ AFK_DAEMON_IDLE_SECONDS: "never" }), null);
    assert.throws(() => onDemandIdleExit({ AFK_DAEMON_IDLE_SECONDS: "soon" }), /AFK_DAEMON_IDLE_SECONDS "soon"/);
  });

  it("counts from the last contact; being busy, or a contact between two looks, starts the count again", () => {
    let now = 0;
    const watch = new IdleWatch(10_000, () => now);
    assert.equal(watch.expired(false, 0), false);
    now = 9_999;
    assert.equal(watch.expired(false, 0), false);
    now = 10_000;
    assert.equal(watch.expired(false, 0), true);
    // A session came and went at 12 s, between two looks.
    now = 15_000;
    assert.equal(watch.expired(false, 12_000), false);
    now = 22_000;
    assert.equal(watch.expired(false, 12_000), true);
    // Busy (a registration, or a session connected: no last contact), then idle again from that look.
    assert.equal(watch.expired(true, 12_000), false);
    now = 23_000;
    assert.equal(watch.expired(false, null), false);
    now = 24_000;
    assert.equal(watch.expired(false, 12_000), false);
    now = 34_000;
    assert.equal(watch.expired(false, 12_000), true);
    assert.equal(watch.idleSeconds(), 10);
  });
});
