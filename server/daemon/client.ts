// A session's side of the daemon: every Host call goes over the socket. The first call that
// needs the daemon starts it detached and waits for its socket; status and logs need none (they
// read GitHub and the lanes here when no daemon runs). What this session starts, it renews
// every half TTL, so a closed laptop lets it lapse instead of polling on for nobody.
import { connect as netConnect, type Socket } from "node:net";
import { lstat, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { customAlphabet } from "nanoid";
import type {
  EventSource,
  Host,
  HostEvent,
  RepoListing,
  LogsInput,
  LogsResult,
  ProjectResetInput,
  ProjectResizeInput,
  ProjectResult,
  ProjectStartInput,
  ProjectStopInput,
  StepListener,
  StatusInput,
  StatusResult,
  TakeoverInput,
  TakeoverResult,
} from "../host/api.js";
import { FleetHost } from "../host/host.js";
import { originSlug, remoteSlugs } from "../host/connection.js";
import { UsageError } from "../gh/errors.js";
import { formatSlug, parseSlug } from "../gh/slug.js";
import { fromWireError, LineReader, MAX_REPLY_BYTES, type WireError } from "./protocol.js";
import { daemonPaths, SOCKET_PATH_MAX, type DaemonPaths } from "./paths.js";
import type { DaemonInfo } from "./server.js";
import { readInstance } from "./identity.js";
import { sessionEnv } from "./session-env.js";
import { startDetached } from "../workers/detached.js";
import { version as ownVersion } from "../version.js";

export const newSessionId = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 16);

const BIN = fileURLToPath(new URL("../bin.js", import.meta.url));

export interface DaemonClientOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** This session's afk-mcp version (default: the package's); a mismatch is reported as skew. */
  version?: string;
  /** How long to wait for a daemon this session started (default 30 s: a loaded machine is slow). */
  startTimeoutMs?: number;
  session?: string;
}

/** Why a socket cannot be trusted, or null when it is ours and owner-only. */
export async function socketProblem(path: string): Promise<string | null> {
  const stat = await lstat(path);
  const uid = process.getuid?.();
  if (!stat.isSocket()) return `${path} is not a socket: remove it (the daemon makes a new one)`;
  if (uid !== undefined && stat.uid !== uid) return `${path} is owned by uid ${stat.uid}, not by you (uid ${uid}): refusing to talk to another user's daemon; set AFK_STATE_DIR to a directory of your own`;
  if ((stat.mode & 0o077) !== 0) return `${path} has mode ${(stat.mode & 0o777).toString(8)}, open to other users: refusing it; stop its daemon (afk-mcp daemon stop) or remove the file, and a new owner-only one is made`;
  return null;
}

/** The daemon's connection closed before it answered (it crashed or was killed). */
export class DaemonGone extends UsageError {}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  onStep?: StepListener | undefined;
}

class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  closed = false;

  constructor(
    readonly socket: Socket,
    private readonly session: string,
    /** Where to look when the daemon went away. */
    private readonly logHint: string,
    private readonly onEvent: (event: HostEvent) => void,
    private readonly onClose: () => void,
  ) {
    const reader = new LineReader(MAX_REPLY_BYTES, (line) => this.receive(line), () => socket.destroy(new Error("a reply over the size limit")));
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.closed = true;
      for (const [, p] of this.pending) {
        p.reject(new DaemonGone(`the afk-mcp daemon went away during ${p.method} (it may have crashed; see ${this.logHint}): call again, the next call starts it again; its workers keep running and are adopted`));
      }
      this.pending.clear();
      this.onClose();
    });
  }

  /**
   * With `onStep`, the daemon says the call's steps as they happen (only a daemon of this version
   * understands the flag); `env` is this session's environment, sent with a start.
   */
  request(method: string, params: object = {}, onStep?: StepListener, env?: Record<string, string>): Promise<unknown> {
    if (this.closed) return Promise.reject(new UsageError(`the afk-mcp daemon connection is closed: call ${method} again`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject, onStep });
      this.socket.write(JSON.stringify({ id, method, params, session: this.session, ...(onStep ? { progress: true } : {}), ...(env ? { env } : {}) }) + "\n");
    });
  }

  private receive(line: string): void {
    let reply: { id?: number; result?: unknown; error?: WireError; event?: HostEvent; step?: string };
    try {
      reply = JSON.parse(line) as typeof reply;
    } catch {
      this.socket.destroy();
      return;
    }
    if (reply.event !== undefined) return this.onEvent(reply.event);
    const p = reply.id === undefined ? undefined : this.pending.get(reply.id);
    if (!p) return;
    if (reply.step !== undefined) return p.onStep?.(String(reply.step));
    this.pending.delete(reply.id!);
    if (reply.error) p.reject(fromWireError(reply.error));
    else p.resolve(reply.result);
  }
}

function tryConnect(path: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = netConnect(path);
    socket.once("connect", () => resolve(socket));
    socket.once("error", () => resolve(null));
  });
}

export class DaemonClient implements Host, EventSource {
  readonly session: string;
  readonly paths: DaemonPaths;
  private readonly env: NodeJS.ProcessEnv;
  private readonly version: string;
  private conn: Connection | null = null;
  private connecting: Promise<Connection | null> | null = null;
  private info: DaemonInfo | null = null;
  private local: FleetHost | null = null;
  private readonly listeners = new Set<(event: HostEvent) => void>();
  /**
   * The repositories the daemon runs, as last asked on `conn`: kept only while this session
   * hears the daemon's events, since a start or a stop (a `repos` event) drops it. Saves status
   * a second round trip to the daemon.
   */
  private runs: { conn: Connection; repos: Set<string> } | null = null;
  /** Counts the drops of `runs`: an answer asked for before a drop is not kept. */
  private runsDropped = 0;
  private renewTimer: NodeJS.Timeout | null = null;
  /** This session holds registrations: keep renewing (and restart a crashed daemon to do so). */
  private renewing = false;
  private closedByUs = false;

  constructor(private readonly options: DaemonClientOptions = {}) {
    this.env = options.env ?? process.env;
    this.paths = daemonPaths(this.env);
    this.version = options.version ?? ownVersion;
    this.session = options.session ?? newSessionId();
    if (this.paths.socket.length > SOCKET_PATH_MAX) {
      throw new UsageError(`the daemon socket path ${this.paths.socket} is longer than ${SOCKET_PATH_MAX} bytes, the Unix limit: set AFK_STATE_DIR to a shorter directory`);
    }
  }

  /** The daemon this session talks to (after a call reached one), for status and tests. */
  daemon(): DaemonInfo | null {
    return this.info;
  }

  /** Connects to the running daemon; with `start`, starts one when none runs. Null: none runs. */
  async connection(start: boolean): Promise<Connection | null> {
    if (this.conn && !this.conn.closed) return this.conn;
    if (!this.connecting) {
      this.connecting = this.open(start).finally(() => (this.connecting = null));
    }
    const conn = await this.connecting;
    if (conn || !start) return conn;
    return this.connection(start);
  }

  private async open(start: boolean, again = true): Promise<Connection | null> {
    let socket = await this.reach();
    if (!socket && start) socket = await this.startDaemon();
    if (!socket) return null;
    const conn = new Connection(socket, this.session, this.logHint(), (event) => this.emit(event), () => this.lost());
    this.conn = conn;
    try {
      this.info = (await conn.request("hello")) as DaemonInfo;
    } catch (error) {
      // A daemon killed a moment ago can still accept while the kernel tears it down: once it is
      // gone, reach again (and start a new one when asked to).
      if (!(error instanceof DaemonGone) || !again) throw error;
      await new Promise((r) => setTimeout(r, 200));
      return this.open(start, false);
    }
    if (this.listeners.size > 0) await conn.request("subscribe");
    return conn;
  }

  /** The socket of a live daemon, after checking it is ours and owner-only; null when none. */
  private async reach(): Promise<Socket | null> {
    let problem: string | null;
    try {
      problem = await socketProblem(this.paths.socket);
    } catch {
      return null;
    }
    if (problem) throw new UsageError(`afk-mcp daemon socket refused: ${problem}`);
    return tryConnect(this.paths.socket);
  }

  private async startDaemon(): Promise<Socket> {
    const pid = await startDetached({ command: process.execPath, args: [BIN, "daemon", "--foreground"], env: this.env, logFile: this.paths.log }).catch((error: unknown) => {
      throw new UsageError(`could not start the afk-mcp daemon: ${(error as Error).message}; run "afk-mcp daemon --foreground" to see why`);
    });
    const deadline = Date.now() + (this.options.startTimeoutMs ?? 30_000);
    while (Date.now() < deadline) {
      const socket = await this.reach().catch(() => null);
      if (socket) return socket;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new UsageError(`the afk-mcp daemon (pid ${pid}) did not open ${this.paths.socket} within ${Math.round((this.options.startTimeoutMs ?? 30_000) / 1000)}s: see ${this.logHint()}`);
  }

  private logHint(): string {
    return `its lane (logs {lane: "daemon"}) and, for a crash in Node itself, ${this.paths.log}`;
  }

  /** A call to the daemon itself (registrations, shutdown), with no start: null when none runs. */
  async daemonCall<T>(method: "registrations" | "shutdown", params: object = {}): Promise<T | null> {
    const conn = await this.connection(false);
    return conn ? ((await conn.request(method, params)) as T) : null;
  }

  /** Resolves once the connection to the daemon has closed (it exited), or after `ms`. */
  async waitGone(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!this.conn || this.conn.closed) {
        const socket = await this.reach().catch(() => null);
        if (!socket) return true;
        socket.destroy();
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  private lost(): void {
    this.conn = null;
    this.dropRuns();
  }

  private dropRuns(): void {
    this.runs = null;
    this.runsDropped += 1;
  }

  private emit(event: HostEvent): void {
    if (event.kind === "repos") this.dropRuns();
    for (const listener of this.listeners) listener(event);
  }

  private async call<T>(method: string, params: object, start: boolean, onStep?: StepListener, env?: Record<string, string>): Promise<T> {
    const conn = await this.connection(start);
    if (!conn) throw new UsageError(`no afk-mcp daemon is running on this machine (state dir ${this.paths.root})`);
    return (await conn.request(method, params, this.stepsFor(onStep), env && this.info?.version === this.version ? env : undefined)) as T;
  }

  /** A daemon of another version may not know the progress flag (its strict parse would drop the connection): no steps then. */
  private stepsFor(onStep: StepListener | undefined): StepListener | undefined {
    return onStep && this.info?.version === this.version ? onStep : undefined;
  }

  private skew(): string | null {
    if (!this.info || this.info.version === this.version) return null;
    return `this session is afk-mcp ${this.version} but the daemon (pid ${this.info.pid}) is ${this.info.version}: run "afk-mcp daemon restart" to drain it and start this version`;
  }

  private localHost(): FleetHost {
    // Reads only: the instance is the one the daemon would act as, so "mine" means its claims.
    const root = this.paths.root;
    this.local ??= new FleetHost({ env: this.env, ...(this.options.cwd ? { cwd: this.options.cwd } : {}), identity: (repo) => readInstance(root, repo) ?? "none" });
    return this.local;
  }

  // ---- Host -------------------------------------------------------------------------------------

  /**
   * Whether a daemon that is not running left registrations behind (it crashed): then even a
   * read starts it again, so that it resumes them and adopts their workers.
   */
  private async leftBehind(): Promise<boolean> {
    try {
      const stored = JSON.parse(await readFile(this.paths.registrations, "utf8")) as unknown[];
      return Array.isArray(stored) && stored.length > 0;
    } catch {
      return false;
    }
  }

  private async readConnection(): Promise<Connection | null> {
    return (await this.connection(false)) ?? (await this.connection(await this.leftBehind()));
  }

  /** A read: safe to ask once more when the daemon went away before answering. */
  private async read<T>(method: "status" | "logs", input: object, local: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const conn = await this.readConnection();
      if (!conn) return local();
      try {
        return (await conn.request(method, input)) as T;
      } catch (error) {
        if (!(error instanceof DaemonGone) || attempt > 0) throw error;
      }
    }
  }

  /** Whether the daemon runs a project for the repository (its reads use that project's access). */
  private async daemonRuns(conn: Connection, repo: string): Promise<boolean> {
    const wanted = formatSlug(parseSlug(repo)).toLowerCase();
    if (this.runs?.conn === conn) return this.runs.repos.has(wanted);
    const dropped = this.runsDropped;
    // Its registrations, from memory: `repos` would also look up this daemon's own origin (a git call).
    const rows = (await conn.request("registrations")) as { repo: string }[];
    const repos = new Set(rows.map((r) => r.repo.toLowerCase()));
    if (this.listeners.size > 0 && this.conn === conn && dropped === this.runsDropped && this.info?.version === this.version) this.runs = { conn, repos };
    return repos.has(wanted);
  }

  /**
   * The repository a call without one means: the daemon's one registration when it has exactly
   * one (undefined: the daemon picks it), else this session's working directory's origin, never
   * the daemon's (which is whichever session started it).
   */
  private async defaultRepo(conn: Connection): Promise<string | undefined> {
    const rows = (await conn.request("registrations")) as unknown[];
    return rows.length === 1 ? undefined : originSlug(this.options.cwd ?? process.cwd());
  }

  async status(input: StatusInput): Promise<StatusResult> {
    let local = false;
    const running = input.repo ? null : await this.connection(false).catch(() => null);
    if (running) input = { ...input, repo: await this.defaultRepo(running) };
    // A repository no registration holds is read by this session with its own token: the
    // daemon's environment is that of whichever session started it.
    const conn = input.repo ? await this.connection(false).catch(() => null) : null;
    const remembered = this.runs !== null && this.runs.conn === conn;
    if (conn && input.repo && !(await this.daemonRuns(conn, input.repo).catch(() => true))) {
      const result = await this.localHost().status(input);
      const registrations = (await conn.request("registrations").catch(() => [])) as StatusResult["registrations"];
      return { ...result, registrations: input.scope === undefined || input.scope === "project" ? registrations : [], daemon: this.daemonView() };
    }
    const result = await this.read<StatusResult>("status", input, async () => {
      local = true;
      return { ...(await this.localHost().status(input)), daemon: null };
    });
    if (local || !this.info) return result;
    // Remembered as running, but the daemon runs it no longer (a drain ended without an event): ask again.
    if (remembered && result.registration === null) {
      this.dropRuns();
      return this.status(input);
    }
    return { ...result, daemon: this.daemonView() };
  }

  private daemonView(): StatusResult["daemon"] {
    return this.info ? { pid: this.info.pid, version: this.info.version, session_version: this.version, skew: this.skew() } : null;
  }

  async logs(input: LogsInput): Promise<LogsResult> {
    return this.read<LogsResult>("logs", input, () => this.localHost().logs(input));
  }

  async start(input: ProjectStartInput, onStep?: StepListener): Promise<ProjectResult> {
    // The default repository is this session's working directory's, not the daemon's.
    // A dry run registers nothing: no daemon is needed (nor started) for it.
    if (input.dry_run) return this.localHost().start(input, onStep);
    const repo = input.repo ?? (await originSlug(this.options.cwd ?? process.cwd()));
    // The registration acts with this session's token and environment, not the daemon's (a
    // daemon of another version would not know the field: it then uses its own, and the skew is said).
    const result = await this.call<ProjectResult>("start", { ...input, repo }, true, onStep, sessionEnv(this.env));
    if (result.registration) this.renewSoon();
    const skew = this.skew();
    return skew ? { ...result, message: `${result.message}; version skew: ${skew}` } : result;
  }

  async resize(input: ProjectResizeInput): Promise<ProjectResult> {
    if (!(await this.connection(false))) throw new UsageError("project_resize: no afk-mcp daemon is running on this machine, so no project is running: start one with project_start");
    const result = await this.call<ProjectResult>("resize", input, false);
    this.renewSoon();
    return result;
  }

  async stop(input: ProjectStopInput, onStep?: StepListener): Promise<ProjectResult> {
    let conn: Connection | null;
    try {
      conn = await this.connection(false);
    } catch (error) {
      return { registration: null, plan: null, message: `could not reach the afk-mcp daemon: ${(error as Error).message}; nothing was stopped` };
    }
    if (!conn) return { registration: null, plan: null, message: `no afk-mcp daemon is running on this machine (state dir ${this.paths.root}): nothing to stop` };
    return (await conn.request("stop", input, this.stepsFor(onStep))) as ProjectResult;
  }

  async reset(input: ProjectResetInput): Promise<ProjectResult> {
    if (!(await this.connection(false))) throw new UsageError("project_reset: no afk-mcp daemon is running on this machine, so no project is running: start one with project_start");
    return this.call<ProjectResult>("reset", input, false);
  }

  async takeover(input: TakeoverInput): Promise<TakeoverResult> {
    // Through the daemon (whose instance takes the claims), but as this session: a repository no
    // registration holds is read and written with this session's token, which the daemon keeps
    // for the call only.
    const conn = input.repo ? null : await this.connection(true);
    const repo = input.repo ?? (conn ? await this.defaultRepo(conn) : undefined);
    return this.call<TakeoverResult>("takeover", repo ? { ...input, repo } : input, true, undefined, sessionEnv(this.env));
  }

  /** The fleets the daemon runs (none without a daemon), and this session's working directory's origin. */
  async repos(): Promise<RepoListing> {
    const cwd = this.options.cwd ?? process.cwd();
    const origin = await originSlug(cwd).catch(() => null);
    const remotes = await remoteSlugs(cwd);
    const conn = await this.connection(false).catch(() => null);
    if (!conn) return { running: [], origin, remotes };
    const remote = (await conn.request("repos", {})) as RepoListing;
    return { running: remote.running, origin, remotes };
  }

  subscribe(listener: (event: HostEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && this.conn && !this.conn.closed) void this.conn.request("subscribe").catch(() => undefined);
    return () => this.listeners.delete(listener);
  }

  // ---- renewal ----------------------------------------------------------------------------------

  /** Renews now and then every half TTL, for as long as the daemon says this session holds any. */
  private renewSoon(): void {
    this.renewing = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = setTimeout(() => void this.renew(), 0);
    this.renewTimer.unref();
  }

  /** One renewal; returns how many registrations it extended. */
  async renew(): Promise<number> {
    if (this.closedByUs) return 0;
    let next = 5_000;
    let count = 0;
    try {
      // A crashed daemon is started again so that the registrations it kept are resumed.
      const answer = await this.call<{ registrations: number; renew_ms: number }>("renew", {}, this.renewing);
      count = answer.registrations;
      next = answer.renew_ms;
      this.renewing = count > 0;
    } catch {
      // Unreachable for now: try again soon (the registration outlives a few missed renewals).
    }
    if (this.renewing && !this.closedByUs) {
      this.renewTimer = setTimeout(() => void this.renew(), next);
      this.renewTimer.unref();
    }
    return count;
  }

  /** Ends this session's side: no more renewals (its registrations lapse after their TTL). */
  async close(): Promise<void> {
    this.closedByUs = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.conn?.socket.destroy();
    await this.local?.close();
  }
}
