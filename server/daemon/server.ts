// The daemon's socket server: one Unix socket in the state dir, owner-only, serving the Host
// methods (through the registrations for what starts, resizes and stops projects) plus the
// daemon's own calls (hello, renew, subscribe, shutdown). A malformed or oversized line closes
// that connection and nothing else.
import type { DaemonLogLine } from "./log.js";
import { createServer, type Server, type Socket } from "node:net";
import { chmod, rm } from "node:fs/promises";
import type { z } from "zod";
import type { EventSource, Host, HostEvent } from "../host/api.js";
import { callLimitProblem } from "../../schemas/limits.js";
import {
  DAEMON_METHODS,
  HOST_METHODS,
  LineReader,
  MAX_REPLY_BYTES,
  MAX_REQUEST_BYTES,
  oversizeReply,
  oversizeRequest,
  requestSchema,
  toWireError,
  type HostMethod,
  type Reply,
  type Request,
} from "./protocol.js";
import { UsageError } from "../gh/errors.js";
import type { Registry } from "./registry.js";
import { version } from "../version.js";

export interface DaemonInfo {
  pid: number;
  version: string;
  started_at: string;
  state_dir: string;
  /** Seconds with nothing to do before it exits on its own (null: never); absent from older daemons. */
  idle_exit_seconds?: number | null;
}

export interface DaemonServerOptions {
  socket: string;
  host: Host & Partial<EventSource>;
  registry: Registry;
  info: DaemonInfo;
  /** Called once a session asks the daemon to stop (after the reply is sent). */
  onShutdown: (killWorkers: boolean) => void;
  /** Called once a session asks the daemon to hand over to a new one (after the reply is sent). */
  onHandover: () => void;
  log: DaemonLogLine;
}

export class DaemonServer {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private shuttingDown = false;
  /** Handing over to the next daemon: every call but hello is refused, so nothing changes under it. */
  private handingOver = false;
  /** When the last connection closed (or the socket opened): the daemon's idle time counts from it. */
  private lastContact = Date.now();
  /** Session → how many open connections have spoken as it: a session with none has gone (or not yet come back). */
  private readonly live = new Map<string, number>();

  constructor(private readonly options: DaemonServerOptions) {}

  /** Listens on the socket (any file there is stale: the caller holds the state dir's lock). */
  async listen(): Promise<void> {
    const { socket } = this.options;
    await rm(socket, { force: true });
    const server = createServer((conn) => this.accept(conn));
    // The socket is created owner-only: no window in which another user could connect.
    const umask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(socket, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } finally {
      process.umask(umask);
    }
    await chmod(socket, 0o600);
    this.server = server;
    this.lastContact = Date.now();
  }

  /** Since when no session has been connected; null while one is. */
  quietSince(): number | null {
    return this.sockets.size > 0 ? null : this.lastContact;
  }

  /**
   * Stops listening if no session is connected, in one synchronous step, so no connection can be
   * accepted between the look and the close (one waiting in the backlog is refused, and its
   * session starts the next daemon). False: a session is connected, and the daemon stays.
   */
  closeIfQuiet(): boolean {
    if (this.sockets.size > 0 || !this.server) return false;
    this.server.close();
    this.server = null;
    this.shuttingDown = true;
    return true;
  }

  /** No new projects from here on: the daemon is draining to exit. */
  refuseStarts(): void {
    this.shuttingDown = true;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    await rm(this.options.socket, { force: true });
  }

  private accept(conn: Socket): void {
    this.sockets.add(conn);
    const unsubscribers: (() => void)[] = [];
    const send = (reply: Reply): void => {
      if (!conn.destroyed) conn.write(fitReply(reply) + "\n");
    };
    let refusing = false;
    const spoken = new Set<string>();
    const reader = new LineReader(
      MAX_REQUEST_BYTES,
      (line) => {
        let request: Request;
        try {
          request = requestSchema.parse(JSON.parse(line));
        } catch {
          this.options.log("closed a connection that sent a malformed message", "warn");
          conn.destroy();
          return;
        }
        if (request.session && !spoken.has(request.session)) {
          spoken.add(request.session);
          this.live.set(request.session, (this.live.get(request.session) ?? 0) + 1);
        }
        void this.handle(request, send, unsubscribers);
      },
      () => {
        if (refusing) return;
        refusing = true;
        this.options.log(`closed a connection that sent a message over ${MAX_REQUEST_BYTES} bytes`, "warn");
        // Said before the close, so the session reports the limit, not a daemon that went away.
        conn.end(JSON.stringify({ refused: oversizeRequest() }) + "\n");
        conn.destroySoon();
      },
    );
    conn.on("data", (chunk: Buffer) => {
      if (!conn.destroyed && !refusing) reader.push(chunk);
    });
    conn.on("error", () => conn.destroy());
    conn.on("close", () => {
      this.sockets.delete(conn);
      this.lastContact = Date.now();
      for (const session of spoken) {
        const left = (this.live.get(session) ?? 1) - 1;
        if (left > 0) this.live.set(session, left);
        else this.live.delete(session);
      }
      for (const off of unsubscribers) off();
    });
  }

  /** The registrations as a session sees them: renewed by the sessions connected now, the others counted. */
  private rows(): Omit<ReturnType<Registry["rows"]>[number], "idle">[] {
    return this.options.registry.rows((session) => (this.live.get(session) ?? 0) > 0).map(({ idle: _idle, ...row }) => row);
  }

  private async handle(request: Request, send: (reply: Reply) => void, unsubscribers: (() => void)[]): Promise<void> {
    const { id } = request;
    try {
      send({ id, result: await this.dispatch(request, send, unsubscribers) });
    } catch (error) {
      send({ id, error: toWireError(error) });
    }
  }

  private async dispatch(request: Request, send: (reply: Reply) => void, unsubscribers: (() => void)[]): Promise<unknown> {
    const { registry, host } = this.options;
    const params = request.params ?? {};
    if (this.handingOver && request.method !== "hello") {
      throw new UsageError(
        `this afk-mcp daemon (pid ${this.options.info.pid}) is handing its registrations and workers over to a new daemon: call again in a moment`,
      );
    }
    switch (request.method) {
      case "hello":
        return this.options.info;
      case "registrations":
        return this.rows();
      case "renew":
        if (!request.session) throw new UsageError("renew: the request names no session");
        return registry.renew(request.session);
      case "subscribe": {
        if (host.subscribe) {
          unsubscribers.push(host.subscribe((event: HostEvent) => send({ id: request.id, event })));
        }
        return { subscribed: host.subscribe !== undefined };
      }
      case "shutdown": {
        const killWorkers = params.kill_workers === true;
        this.shuttingDown = true;
        setImmediate(() => this.options.onShutdown(killWorkers));
        return { draining: registry.rows().length, workers: registry.rows().reduce((n, r) => n + r.workers, 0) };
      }
      case "handover": {
        this.shuttingDown = true;
        this.handingOver = true;
        setImmediate(() => this.options.onHandover());
        return { registrations: registry.rows().length, workers: registry.rows().reduce((n, r) => n + r.workers, 0) };
      }
    }
    if (!(request.method in HOST_METHODS)) {
      const known = [...DAEMON_METHODS, ...Object.keys(HOST_METHODS)].join(", ");
      throw new UsageError(
        `unknown daemon method ${JSON.stringify(request.method)} (this daemon, afk-mcp ${version}, answers ${known}): is the session a different version? see status's version skew`,
      );
    }
    const name = request.method as HostMethod;
    // The limits the MCP server holds a tool call to, held here too (a session of another kind, or version).
    const over = callLimitProblem(params);
    if (over) throw new UsageError(`${name}: ${over}`);
    const args = HOST_METHODS[name].input.parse(params) as z.infer<(typeof HOST_METHODS)[HostMethod]["input"]>;
    const onStep = request.progress ? (step: string) => send({ id: request.id, step }) : undefined;
    switch (name) {
      case "start":
        if (this.shuttingDown) throw new UsageError("project_start: this machine's afk-mcp daemon is stopping; call again in a moment (a new daemon starts)");
        return registry.start(args as Parameters<Registry["start"]>[0], request.session, onStep, request.env);
      case "resize":
        return registry.resize(args as Parameters<Registry["resize"]>[0], request.session);
      case "stop":
        return registry.stop(args as Parameters<Registry["stop"]>[0], onStep);
      case "status": {
        const result = await host.status(args as Parameters<Host["status"]>[0], callerAccess(request));
        return result.scope === "project" ? { ...result, registrations: this.rows() } : result;
      }
      case "takeover":
        return host.takeover(args as Parameters<Host["takeover"]>[0], callerAccess(request));
      default:
        return (HOST_METHODS[name].call as (h: Host, a: unknown) => Promise<unknown>)(host, args);
    }
  }
}

/** A reply line as sent: one over the session's cap becomes an error naming it (the session would refuse the line and lose the call). */
function fitReply(reply: Reply): string {
  const line = JSON.stringify(reply);
  if (line.length <= MAX_REPLY_BYTES / 4 || Buffer.byteLength(line, "utf8") <= MAX_REPLY_BYTES) return line;
  return JSON.stringify({ id: reply.id, error: toWireError(new UsageError(oversizeReply(Buffer.byteLength(line, "utf8")))) });
}

/** A read or a takeover of a repository no registration holds acts as the calling session, which sent its environment. */
function callerAccess(request: Request): { env?: Record<string, string> } {
  return request.env ? { env: request.env } : {};
}
