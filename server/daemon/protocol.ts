// The wire between sessions and the daemon: newline-delimited JSON over a Unix socket, each line
// bounded. One table maps a method name to the tool's zod input schema and the Host call, so a
// new Host method is one line here. Errors cross as data and are rebuilt as the same typed
// errors, so the tools answer a refusal from the daemon exactly as one from an in-process host.
import { z } from "zod";
import type { EventSource, Host } from "../host/api.js";
import {
  logsInput,
  reportInput,
  timelineInput,
  timelinesInput,
  projectResetInput,
  projectResizeInput,
  projectStartInput,
  projectStopInput,
  statusInput,
  takeoverInput,
} from "../../schemas/tools.js";
import { ForgeError, GitError, UsageError, type ForgeErrorKind } from "../gh/errors.js";
import { RefNameError } from "../gh/refstore.js";
import { strictInput } from "../../schemas/nearest.js";

/** A request line longer than this closes the connection (a session never needs more). */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** A reply line longer than this is refused by the client (a plan over thousands of issues fits). */
export const MAX_REPLY_BYTES = 32 * 1024 * 1024;

/** Why a request over MAX_REQUEST_BYTES was refused (by the session before sending, or by the daemon, which then closes the connection). */
export function oversizeRequest(method?: string, parts?: { params: number; env: number }): string {
  const what = method ? `the ${method} request to the afk-mcp daemon` : "a request to the afk-mcp daemon";
  const sizes = parts ? ` (its arguments ${parts.params} bytes, this session's environment ${parts.env} bytes)` : "";
  return `${what} is over ${MAX_REQUEST_BYTES} bytes (1 MiB), the limit of one message between a session and the daemon${sizes}: send smaller arguments${parts && parts.env > parts.params ? ", or start the session with a smaller environment (the daemon keeps only the credentials, the workers' base variables and worker.env_passthrough)" : ""}; nothing was done`;
}

/** Why a reply over MAX_REPLY_BYTES was not sent (or not read). */
export function oversizeReply(bytes?: number): string {
  return `the afk-mcp daemon's answer${bytes === undefined ? "" : ` (${bytes} bytes)`} is over ${MAX_REPLY_BYTES} bytes (32 MiB), the limit of one message between the daemon and a session: ask for less (status without detail, logs with a smaller tail_lines)`;
}

type Method<S extends z.ZodRawShape> = { input: z.ZodObject<S, z.core.$strict>; call(host: Host, args: z.infer<z.ZodObject<S>>): Promise<unknown> };
function method<S extends z.ZodRawShape>(shape: S, call: (host: Host, args: z.infer<z.ZodObject<S>>) => Promise<unknown>): Method<S> {
  return { input: strictInput(shape), call };
}

/** The Host's calls a session makes over the socket: all of them but the event source's (the daemon's own `subscribe`). */
type Forwarded = Exclude<keyof Host, keyof EventSource>;

/** Every Host method a session may call over the socket; a Host method not forwarded here does not compile. */
export const HOST_METHODS = {
  status: method(statusInput, (h, a) => h.status(a)),
  takeover: method(takeoverInput, (h, a) => h.takeover(a)),
  start: method(projectStartInput, (h, a) => h.start(a)),
  resize: method(projectResizeInput, (h, a) => h.resize(a)),
  stop: method(projectStopInput, (h, a) => h.stop(a)),
  reset: method(projectResetInput, (h, a) => h.reset(a)),
  logs: method(logsInput, (h, a) => h.logs(a)),
  timeline: method(timelineInput, (h, a) => h.timeline(a)),
  timelines: method(timelinesInput, (h, a) => h.timelines(a)),
  report: method(reportInput, (h, a) => h.report(a)),
  repos: method({}, (h) => h.repos()),
} as const satisfies Record<Forwarded, Method<z.ZodRawShape>>;

export type HostMethod = keyof typeof HOST_METHODS;

/** Calls the daemon itself answers (not the Host): its identity, renewals, events, shutdown, hand-over. */
export const DAEMON_METHODS = ["hello", "registrations", "renew", "subscribe", "shutdown", "handover"] as const;

export const requestSchema = z
  .object({
    id: z.number().int().nonnegative(),
    method: z.string().min(1).max(64),
    params: z.record(z.string(), z.unknown()).optional(),
    /** The calling session: what it starts, it renews. */
    session: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
    /** The calling session's environment, sent with a start: the registration acts with it. */
    env: z.record(z.string(), z.string()).optional(),
    /** Say the call's steps as they happen (start, stop): `{id, step}` lines before the reply. */
    progress: z.boolean().optional(),
  })
  .strict();

export type Request = z.infer<typeof requestSchema>;

export interface WireError {
  type: "usage" | "forge" | "git" | "ref" | "internal";
  message: string;
  kind?: string;
  status?: number | null;
  hint?: string;
  retry_after?: number | null;
  command?: string;
  ref?: string;
}

export type Reply = { id: number; result: unknown } | { id: number; error: WireError } | { id: number; event: unknown } | { id: number; step: string };

export function toWireError(error: unknown): WireError {
  if (error instanceof ForgeError)
    return { type: "forge", message: error.message, kind: error.kind, status: error.status, hint: error.hint, retry_after: error.retryAfterSeconds };
  if (error instanceof GitError) return { type: "git", message: error.message, command: error.command, hint: error.hint };
  if (error instanceof RefNameError) return { type: "ref", message: error.message, ref: error.ref };
  if (error instanceof UsageError) return { type: "usage", message: error.message };
  if (error instanceof z.ZodError) return { type: "usage", message: `bad input: ${z.prettifyError(error).replace(/\n/g, "; ")}` };
  return { type: "internal", message: error instanceof Error ? error.message : String(error) };
}

export function fromWireError(wire: WireError): Error {
  switch (wire.type) {
    case "forge":
      return new ForgeError((wire.kind ?? "unexpected") as ForgeErrorKind, wire.message, wire.status ?? null, wire.hint ?? "", wire.retry_after ?? null);
    case "git":
      return new GitError(wire.message, wire.command ?? "git", null, "", wire.hint ?? "");
    case "ref":
      return new RefNameError(wire.ref ?? "");
    case "usage":
      return new UsageError(wire.message);
    default:
      return new Error(`afk-mcp daemon: ${wire.message}`);
  }
}

/**
 * Splits a byte stream into lines, refusing any line longer than `max` bytes (the caller then
 * closes the connection): a peer cannot make the other side buffer without bound.
 */
export class LineReader {
  private pending: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversize: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (this.size + piece.length > this.max) return this.onOversize();
      this.pending.push(piece);
      const line = Buffer.concat(this.pending).toString("utf8");
      this.pending = [];
      this.size = 0;
      start = nl + 1;
      if (line.trim() !== "") this.onLine(line);
    }
    const rest = chunk.subarray(start);
    if (this.size + rest.length > this.max) return this.onOversize();
    if (rest.length > 0) {
      this.pending.push(rest);
      this.size += rest.length;
    }
  }
}
