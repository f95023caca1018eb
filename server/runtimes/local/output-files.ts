// A worker's stdout and stderr as files we follow (see spawn.ts for why files, not pipes), and
// their cap: a file that passed `maxBytes` is truncated, with a marker line, once every byte of
// it was read, so a worker that runs for days cannot fill the disk and no line is lost on the way.
//
// The worker appends (O_APPEND) to a file whose descriptor only it holds, so the file cannot be
// renamed away from it: the only way to shrink it is to truncate it in place. A byte the worker
// appended between our last read and the truncation would be gone, so the worker's process group
// is stopped (SIGSTOP) for the few system calls the truncation takes, and continued at once. A
// group that cannot be seen to stop is continued untruncated, and the cap is tried again later.
// A process the worker moved out of its group (setsid), which also escapes its kill, is not
// stopped: bytes it writes in that instant can be lost.
import { execFile } from "node:child_process";
import { fstatSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { readProcTable } from "./proc.js";
import { Serial } from "../../kit/serial.js";
import { setTimeout as sleep } from "node:timers/promises";

export { outputFiles } from "../../worker-port/port.js";

/** The line a truncated output file starts with afterwards. */
export function truncationMarker(file: string, maxBytes: number, dropped: number): string {
  return `[afk-mcp] ${file} passed its cap of ${maxBytes} bytes (worker.output_max_bytes): its first ${dropped} bytes were cut from the file after they were read; every line is in the worker lane`;
}

export interface OutputCap {
  maxBytes: number;
  /** The worker's process group, stopped while its file is truncated. */
  pgid: number;
  /** Called after each truncation with the bytes cut. */
  onTruncated?: (dropped: number) => void;
}

const FOLLOW_MS = 200;
const FOLLOW_CHUNK = 64 * 1024;

/**
 * Follows a growing file from `offset`, handing what it reads to `onText`. Reads are polled
 * (a worker's output is read for its lines and its liveness, where a fifth of a second is
 * nothing) and never overlap; `drain()` reads to the end once more, `close()` stops. With a
 * cap, a file read to its end past `maxBytes` is truncated (see the module's note).
 */
export class FileFollower {
  private handle: FileHandle | null = null;
  private readonly reading = new Serial();
  private readonly decoder = new StringDecoder("utf8");
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Whether the last text handed on ended inside a line. */
  private midLine = false;
  /** Drains queued or under way. */
  private draining = 0;

  constructor(
    private readonly path: string,
    private offset: number,
    private readonly onText: (text: string) => void,
    private readonly cap?: OutputCap,
  ) {}

  start(): this {
    this.timer = setInterval(() => this.poll(), FOLLOW_MS);
    this.timer.unref();
    return this;
  }

  drain(): Promise<void> {
    this.draining += 1;
    return this.reading
      .run(() => this.readAvailable())
      .catch(() => undefined)
      .finally(() => (this.draining -= 1));
  }

  /**
   * The timer's look: a quiet file (the common case, five times a second per stream) costs one
   * fstat, with nothing chained; anything else is a drain.
   */
  private poll(): void {
    const quiet = this.handle !== null && this.draining === 0 && !this.closed && !(this.cap && this.offset >= this.cap.maxBytes);
    if (quiet && this.sizeOr(Infinity) <= this.offset) return;
    void this.drain();
  }

  /** The open file's size, or `fallback` when it cannot be read (the drain then meets the error). */
  private sizeOr(fallback: number): number {
    try {
      return fstatSync(this.handle!.fd).size;
    } catch {
      return fallback;
    }
  }

  private async readToEnd(handle: FileHandle): Promise<void> {
    const buffer = Buffer.allocUnsafe(FOLLOW_CHUNK);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, FOLLOW_CHUNK, this.offset);
      if (bytesRead === 0) return;
      this.offset += bytesRead;
      const text = this.decoder.write(buffer.subarray(0, bytesRead));
      if (text !== "") {
        this.midLine = !text.endsWith("\n");
        this.onText(text);
      }
    }
  }

  private async readAvailable(): Promise<void> {
    if (this.closed) return;
    // Read-write only to truncate; the worker's own descriptor appends whatever ours does.
    this.handle ??= await open(this.path, this.cap ? "r+" : "r");
    // A quiet file is the common case, five times a second per stream: one fstat says there is
    // nothing to read, without a thread-pool read and its 64 KiB buffer.
    if (this.sizeOr(Infinity) > this.offset) await this.readToEnd(this.handle);
    if (this.cap && this.offset >= this.cap.maxBytes && !this.closed) await this.truncate(this.handle, this.cap);
  }

  private async truncate(handle: FileHandle, cap: OutputCap): Promise<void> {
    const resume = await stopGroup(cap.pgid);
    if (resume === null) return;
    let dropped = 0;
    try {
      // Nothing in the group writes now: what we read here is the file's last byte, and the cut
      // loses nothing. A line the worker had begun is ended before the marker and goes on after it.
      await this.readToEnd(handle);
      dropped = this.offset;
      await handle.truncate(0);
      const name = this.path.slice(this.path.lastIndexOf("/") + 1);
      await handle.write(`${this.midLine ? "\n" : ""}${truncationMarker(name, cap.maxBytes, dropped)}\n`, 0);
      this.offset = 0;
    } finally {
      resume();
    }
    try {
      cap.onTruncated?.(dropped);
    } catch {
      // A report's failure must not stop the following.
    }
  }

  /** Reads what is left, then stops following. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.drain();
    this.closed = true;
    const rest = this.decoder.end();
    if (rest) this.onText(rest);
    await this.handle?.close().catch(() => undefined);
    this.handle = null;
  }
}

const STOP_WAIT_MS = 2_000;

/** "gone" when no process of the group is left (ESRCH). */
function signal(pgid: number, name: NodeJS.Signals): "sent" | "gone" | "refused" {
  try {
    process.kill(-pgid, name);
    return "sent";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH" ? "gone" : "refused";
  }
}

/** The states of the group's live members: from /proc, else from ps. Null when unknown. */
async function groupStates(pgid: number): Promise<string[] | null> {
  const table = await readProcTable();
  if (table !== null) return table.filter((p) => p.pgrp === pgid && p.state !== "Z" && p.state !== "X").map((p) => p.state);
  return new Promise((resolve) => {
    execFile("ps", ["-A", "-o", "pgid=,stat="], { timeout: 5_000 }, (error, stdout) => {
      if (error) return resolve(null);
      const states = String(stdout)
        .split("\n")
        .map((line) => line.trim().split(/\s+/))
        .filter(([group, stat]) => Number(group) === pgid && stat !== undefined && !stat.startsWith("Z"))
        .map(([, stat]) => stat!.slice(0, 1));
      resolve(states);
    });
  });
}

/**
 * Stops every process of the group and waits until each is seen stopped; returns the function
 * that continues them, or null (the group continued again) when that could not be seen in time.
 * A group with no process left needs no stop.
 * A daemon that dies in between leaves the group stopped: adoption continues it (pid-files.ts).
 */
export async function stopGroup(pgid: number): Promise<(() => void) | null> {
  const sent = signal(pgid, "SIGSTOP");
  // A group that is gone writes nothing more: the file of a finished worker is cut too.
  if (sent !== "sent") return sent === "gone" ? () => undefined : null;
  const resume = () => void signal(pgid, "SIGCONT");
  const deadline = Date.now() + STOP_WAIT_MS;
  for (;;) {
    const states = await groupStates(pgid).catch(() => null);
    if (states !== null && states.every((s) => s === "T" || s === "t")) return resume;
    if (states === null || Date.now() >= deadline) {
      resume();
      return null;
    }
    await sleep(5);
  }
}
