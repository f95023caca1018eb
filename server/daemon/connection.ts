// One session's connection to the daemon: numbered requests over the socket, replies and events
// matched back, and deadlines, so that a daemon that stopped answering (SIGSTOP, a hang) fails
// the call with the fix instead of hanging the session's tools forever.
import { connect as netConnect, type Socket } from "node:net";
import { lstat } from "node:fs/promises";
import type { HostEvent, StepListener } from "../host/api.js";
import { UsageError } from "../gh/errors.js";
import { fromWireError, LineReader, MAX_REPLY_BYTES, MAX_REQUEST_BYTES, oversizeReply, oversizeRequest, type WireError } from "./protocol.js";

/** Why a socket cannot be trusted, or null when it is ours and owner-only. */
export async function socketProblem(path: string): Promise<string | null> {
  const stat = await lstat(path);
  const uid = process.getuid?.();
  if (!stat.isSocket()) return `${path} is not a socket`;
  if (uid !== undefined && stat.uid !== uid)
    return `${path} is owned by uid ${stat.uid}, not by you (uid ${uid}): refusing to talk to another user's daemon; set AFK_STATE_DIR to a directory of your own`;
  if ((stat.mode & 0o077) !== 0) return `${path} has mode ${(stat.mode & 0o777).toString(8)}, open to other users: refusing it`;
  return null;
}

/** The daemon's connection closed before it answered (it crashed or was killed). */
export class DaemonGone extends UsageError {}

/** The daemon's process lives but did not answer in time (stopped, hung). */
export class DaemonUnresponsive extends UsageError {}

/**
 * The daemon's own calls answer from memory at once: they get the reply deadline itself. The
 * Host calls may legitimately wait long (a start clones and reads GitHub, a stop waits for a
 * landing under way, a takeover writes refs, a status pages through issues): they have no
 * deadline of their own, but while one is pending the daemon is asked `hello` every reply
 * deadline, and a daemon that does not answer that within the deadline fails them all.
 */
const ANSWERS_AT_ONCE = new Set(["hello", "registrations", "renew", "subscribe", "shutdown", "handover", "repos"]);

/** The reply deadline: AFK_DAEMON_REPLY_SECONDS (tests shorten it), else 10 s. */
export function replyDeadlineMs(env: NodeJS.ProcessEnv): number {
  const seconds = Number(env.AFK_DAEMON_REPLY_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 10_000;
}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  onStep?: StepListener | undefined;
  timer?: NodeJS.Timeout;
}

export interface ConnectionOptions {
  session: string;
  /** Where to look when the daemon went away. */
  logHint: string;
  replyMs: number;
  /** What to say when the daemon does not answer in time (names its pid and the fix). */
  unresponsive: (method: string, seconds: number) => Promise<string>;
  onEvent: (event: HostEvent) => void;
  onClose: () => void;
}

export class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private watchdog: NodeJS.Timeout | null = null;
  closed = false;
  /** Set once the daemon failed to answer in time: every pending call fails with it. */
  private failure: Error | null = null;

  constructor(
    readonly socket: Socket,
    private readonly options: ConnectionOptions,
  ) {
    const reader = new LineReader(
      MAX_REPLY_BYTES,
      (line) => this.receive(line),
      () => this.refused(oversizeReply()),
    );
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.closed = true;
      if (this.watchdog) clearTimeout(this.watchdog);
      for (const [, p] of this.pending) {
        if (p.timer) clearTimeout(p.timer);
        p.reject(
          this.failure ??
            new DaemonGone(
              `the afk-mcp daemon went away during ${p.method} (it may have crashed; see ${this.options.logHint}): call again, the next call starts it again; its workers keep running and are adopted`,
            ),
        );
      }
      this.pending.clear();
      this.options.onClose();
    });
  }

  /**
   * With `onStep`, the daemon says the call's steps as they happen (only a daemon of this version
   * understands the flag); `env` is this session's environment, sent with a start.
   */
  request(method: string, params: object = {}, onStep?: StepListener, env?: Record<string, string>): Promise<unknown> {
    if (this.closed) return Promise.reject(this.failure ?? new UsageError(`the afk-mcp daemon connection is closed: call ${method} again`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const p: Pending = { method, resolve, reject, onStep };
      if (ANSWERS_AT_ONCE.has(method)) p.timer = setTimeout(() => void this.giveUp(method), this.options.replyMs);
      const line = JSON.stringify({ id, method, params, session: this.options.session, ...(onStep ? { progress: true } : {}), ...(env ? { env } : {}) });
      // Over the daemon's cap it would close the connection: refused here, with the limit, and the connection kept.
      if (line.length > MAX_REQUEST_BYTES / 4 && Buffer.byteLength(line, "utf8") > MAX_REQUEST_BYTES) {
        const size = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), "utf8"));
        return reject(new UsageError(oversizeRequest(method, { params: size(params), env: size(env) })));
      }
      this.pending.set(id, p);
      this.socket.write(line + "\n");
      this.arm();
    });
  }

  /** While a long call is pending, asks the daemon whether it still answers, once per deadline. */
  private arm(): void {
    if (this.watchdog || this.closed) return;
    if (![...this.pending.values()].some((p) => !ANSWERS_AT_ONCE.has(p.method))) return;
    this.watchdog = setTimeout(() => {
      this.watchdog = null;
      if (this.closed || ![...this.pending.values()].some((p) => !ANSWERS_AT_ONCE.has(p.method))) return;
      // A hello that times out fails the connection (giveUp); one that answers re-arms.
      this.request("hello").then(
        () => this.arm(),
        () => undefined,
      );
    }, this.options.replyMs);
    this.watchdog.unref();
  }

  private async giveUp(method: string): Promise<void> {
    if (this.closed || this.failure) return;
    this.failure = new DaemonUnresponsive(await this.options.unresponsive(method, Math.round(this.options.replyMs / 1000)));
    this.socket.destroy();
  }

  /** The daemon refused what this session sent, or this session an answer, over the cap: every pending call fails with that reason, and the connection closes. */
  private refused(reason: string): void {
    this.failure ??= new UsageError(reason);
    this.socket.destroy();
  }

  private receive(line: string): void {
    let reply: { id?: number; result?: unknown; error?: WireError; event?: HostEvent; step?: string; refused?: string };
    try {
      reply = JSON.parse(line) as typeof reply;
    } catch {
      this.socket.destroy();
      return;
    }
    if (reply.event !== undefined) return this.options.onEvent(reply.event);
    if (typeof reply.refused === "string") return this.refused(reply.refused);
    const p = reply.id === undefined ? undefined : this.pending.get(reply.id);
    if (!p) return;
    if (reply.step !== undefined) return p.onStep?.(String(reply.step));
    this.pending.delete(reply.id!);
    if (p.timer) clearTimeout(p.timer);
    if (reply.error) p.reject(fromWireError(reply.error));
    else p.resolve(reply.result);
  }
}

export function tryConnect(path: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = netConnect(path);
    socket.once("connect", () => resolve(socket));
    socket.once("error", () => resolve(null));
  });
}
