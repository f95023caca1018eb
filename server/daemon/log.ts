// The daemon's lane (`<state dir>/daemon/daemon.jsonl`, read with `logs {lane: "daemon"}`): its
// own lines and whatever reaches its stdout and stderr (Node's warnings, a library's console
// output) become records, redacted, capped and rotated like every lane, 0600 in the owner-only
// dir. A detached daemon's fds 1 and 2 still point at `daemon.log`, so what Node writes past
// JavaScript (a fatal error) is not lost: the next daemon moves it into the lane.
import { closeSync, fstatSync, openSync, readSync, statSync, truncateSync } from "node:fs";
import { LaneWriter, lineSplitter, type LaneLevel } from "../lanes/index.js";
import type { DaemonPaths } from "./paths.js";

/** Each of the lane's two files (the current one and one rotated) stays under this. */
export const DAEMON_LANE_MAX_BYTES = 4 * 1024 * 1024;
/** How much of what a dead daemon left in daemon.log reaches the lane: its end, where the cause is. */
export const LEFTOVER_BYTES = 16 * 1024;

export type DaemonLogLine = (line: string, level?: Exclude<LaneLevel, "debug">) => void;

export interface DaemonLog {
  log: DaemonLogLine;
  /** Gives stdout and stderr back and closes the lane. */
  close(): void;
}

export interface DaemonLogOptions {
  paths: Pick<DaemonPaths, "lanes" | "log">;
  /** Strings that must never reach the disk (tokens), read on every record. */
  secrets: () => Iterable<string | null | undefined>;
  maxBytes?: number;
  /** Whether lines also go to the process's stderr. Default: when stderr is not `daemon.log` (a terminal, journald). */
  echo?: boolean;
}

/**
 * Opens the lane and takes over this process's stdout and stderr. When stderr is not the
 * detached daemon's `daemon.log` (a terminal, journald under systemd), lines are also written
 * there as before, so `--foreground` still shows them.
 */
export function openDaemonLog(options: DaemonLogOptions): DaemonLog {
  const lanes = new LaneWriter({ dir: options.paths.lanes, maxBytes: options.maxBytes ?? DAEMON_LANE_MAX_BYTES, keep: 1, secrets: options.secrets });
  const echo = options.echo ?? !sameFile(2, options.paths.log);
  // A terminal that went away must not stop the daemon.
  // eslint-disable-next-line no-restricted-properties -- the daemon takes its stdout over so that nothing is written there
  const stdout = process.stdout;
  for (const stream of [stdout, process.stderr]) stream.on("error", () => undefined);
  const stderr = process.stderr.write.bind(process.stderr) as (text: string) => boolean;
  const log: DaemonLogLine = (line, level = "info") => {
    lanes.append("daemon", { level, event: "daemon", msg: line, pid: process.pid });
    if (echo) stderr(`${new Date().toISOString()} afk-mcp daemon: ${line}\n`);
  };
  const leftover = takeLeftover(options.paths.log);
  if (leftover) {
    // A daemon that crashed in Node itself, or one that lost the race to start and said so.
    lanes.append("daemon", {
      level: "warn",
      event: "left_on_stderr",
      msg: `found in ${options.paths.log} (written outside the lane, before this daemon's lane opened):\n${leftover}`,
    });
  }
  const restore = [captureStream(stdout, "stdout", lanes, echo), captureStream(process.stderr, "stderr", lanes, echo)];
  return {
    log,
    close() {
      for (const undo of restore) undo();
      lanes.close();
    },
  };
}

/** Replaces `stream.write` with one that appends each line as a record (and still writes it when echoing). */
function captureStream(stream: NodeJS.WriteStream, name: "stdout" | "stderr", lanes: LaneWriter, echo: boolean): () => void {
  const original = stream.write;
  const lines = lineSplitter();
  const level = name === "stderr" ? "warn" : "info";
  const replacement = function (this: NodeJS.WriteStream, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const text = typeof chunk === "string" ? chunk : chunk instanceof Uint8Array ? chunk : String(chunk);
    for (const line of lines.push(text)) if (line.trim() !== "") lanes.append("daemon", { level, event: name, msg: line, pid: process.pid });
    if (echo) return (original as (...args: unknown[]) => boolean).call(this, chunk, encoding, callback);
    const done = typeof encoding === "function" ? encoding : typeof callback === "function" ? callback : null;
    if (done) process.nextTick(done as () => void);
    return true;
  };
  stream.write = replacement as typeof stream.write;
  return () => {
    for (const line of lines.flush()) if (line.trim() !== "") lanes.append("daemon", { level, event: name, msg: line, pid: process.pid });
    if (stream.write === (replacement as typeof stream.write)) stream.write = original;
  };
}

/** The end of what is in daemon.log, which is then emptied; null when it is empty or absent. */
function takeLeftover(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    const length = Math.min(size, LEFTOVER_BYTES);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, size - length);
    truncateSync(path, 0);
    const text = buffer.subarray(0, read).toString("utf8").trimEnd();
    return size > length ? `[the first ${size - length} bytes are not shown]\n${text}` : text;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Whether descriptor `fd` is the file at `path` (the detached daemon's stderr). */
function sameFile(fd: number, path: string): boolean {
  try {
    const a = fstatSync(fd);
    const b = statSync(path);
    return a.isFile() && a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}
