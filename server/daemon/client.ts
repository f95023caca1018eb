// A session's side of the daemon: every Host call goes over the socket. The first call that
// needs the daemon starts it detached and waits for its socket; status and logs need none (they
// read GitHub and the lanes here when no daemon runs). What this session starts, it renews
// every half TTL, so a closed laptop lets it lapse instead of polling on for nobody.
import type { Socket } from "node:net";
import { readFile } from "node:fs/promises";
import { customAlphabet } from "nanoid";
import { retry } from "../kit/retry.js";
import type {
  EventSource,
  Host,
  HostEvent,
  RepoListing,
  LogsInput,
  LogsResult,
  FinalReport,
  ReportInput,
  Timeline,
  TimelineInput,
  TimelinesInput,
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
import { rejoin } from "./rejoin.js";
import { repoKey } from "../gh/slug.js";
import { chooseRepo, choiceNote, needRepo, type CallPlace, type RepoChoice } from "../host/default-repo.js";
import { Connection, DaemonGone, DaemonUnresponsive, replyDeadlineMs } from "./connection.js";
import { daemonLogHint, daemonUnreachable, reachDaemon, startDaemon } from "./reach.js";
import { daemonHolder, DaemonUnreachable, stoppedNote } from "./holder.js";
import { daemonPaths, SOCKET_PATH_MAX, type DaemonPaths } from "./paths.js";
import type { DaemonInfo } from "./server.js";
import { readInstance } from "./identity.js";
import { sessionEnv } from "./session-env.js";
import { version as ownVersion } from "../version.js";
import { onDemandIdleExit } from "./idle.js";
import { Renewal, type RenewAnswer } from "./renewal.js";
import { setTimeout as sleep } from "node:timers/promises";

export { DaemonGone, DaemonUnresponsive, DaemonUnreachable };

/** A call made (or still under way) after the session closed: abandoned, never retried. */
export class SessionClosed extends UsageError {}

export const newSessionId = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 16);

export interface DaemonClientOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** This session's afk-mcp version (default: the package's); a mismatch is reported as skew. */
  version?: string;
  /** How long to wait for a daemon this session started (default 30 s: a loaded machine is slow). */
  startTimeoutMs?: number;
  session?: string;
  /** The idle exit of a daemon this session starts (default: AFK_DAEMON_IDLE_SECONDS, else 15 minutes; null: never). */
  idleExitSeconds?: number | null;
}

export class DaemonClient implements Host, EventSource {
  readonly session: string;
  readonly paths: DaemonPaths;
  private readonly env: NodeJS.ProcessEnv;
  private readonly version: string;
  private readonly replyMs: number;
  private conn: Connection | null = null;
  private connecting: Promise<Connection | null> | null = null;
  private info: DaemonInfo | null = null;
  private local: FleetHost | null = null;
  private readonly listeners = new Set<(event: HostEvent) => void>();
  /** The repositories the daemon runs, as last asked on `conn`, saving status a round trip: kept only while this session hears the daemon's events (a start or a stop's `repos` event drops it). */
  private runs: { conn: Connection; repos: Set<string> } | null = null;
  /** Counts the drops of `runs`: an answer asked for before a drop is not kept. */
  private runsDropped = 0;
  // A crashed daemon is started again so that the registrations it kept are resumed; a stopped
  // one (afk-mcp daemon stop) left none: no daemon is started to renew nothing.
  private readonly renewal = new Renewal(async (restart) => {
    const conn = await this.connection(restart && (await this.leftBehind()));
    return conn ? ((await conn.request("renew", {})) as RenewAnswer) : null;
  });
  private closedByUs = false;

  constructor(private readonly options: DaemonClientOptions = {}) {
    this.env = options.env ?? process.env;
    this.paths = daemonPaths(this.env);
    this.version = options.version ?? ownVersion;
    this.replyMs = replyDeadlineMs(this.env);
    this.session = options.session ?? newSessionId();
    if (this.paths.socket.length > SOCKET_PATH_MAX) {
      throw new UsageError(
        `the daemon socket path ${this.paths.socket} is longer than ${SOCKET_PATH_MAX} bytes, the Unix limit: set AFK_STATE_DIR to a shorter directory`,
      );
    }
  }

  /** The daemon this session talks to (after a call reached one), for status and tests. */
  daemon(): DaemonInfo | null {
    return this.info;
  }

  /** Connects to the running daemon; with `start`, starts one when none runs. Null: none runs. */
  async connection(start: boolean): Promise<Connection | null> {
    this.refuseIfClosed();
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
    // Closed while reaching (a call in flight when stdin ended): no connection outlives the session.
    if (this.closedByUs) {
      socket.destroy();
      this.refuseIfClosed();
    }
    const conn = new Connection(socket, {
      session: this.session,
      logHint: this.logHint(),
      replyMs: this.replyMs,
      unresponsive: (method, seconds) => this.unresponsive(method, seconds),
      onEvent: (event) => this.emit(event),
      onClose: () => this.lost(),
    });
    this.conn = conn;
    try {
      this.info = (await conn.request("hello")) as DaemonInfo;
    } catch (error) {
      // A daemon killed a moment ago can still accept while the kernel tears it down: once it is
      // gone, reach again (and start a new one when asked to).
      if (!(error instanceof DaemonGone) || !again) throw error;
      await sleep(200);
      this.refuseIfClosed();
      return this.open(start, false);
    }
    if (this.listeners.size > 0) await conn.request("subscribe");
    return conn;
  }

  /** What a call that the daemon did not answer in time fails with: its pid, and the fix. */
  private async unresponsive(method: string, seconds: number): Promise<string> {
    const pid = this.info?.pid ?? (await daemonHolder(this.paths))?.pid;
    const who = pid === undefined ? "the afk-mcp daemon" : `the afk-mcp daemon (pid ${pid})`;
    return `${who} did not answer ${method} within ${seconds}s${pid === undefined ? "" : await stoppedNote(pid)}: run "afk-mcp daemon restart" (it ends that daemon, checked by its start time; a new one takes over its registrations and adopts its workers)`;
  }

  /** The socket of a live daemon of ours, or null (reach.ts). */
  private reach(): Promise<Socket | null> {
    return reachDaemon(this.paths);
  }

  /** Why no session can reach the daemon that holds the state dir, or null (reach.ts). */
  unreachable(): Promise<DaemonUnreachable | null> {
    return daemonUnreachable(this.paths);
  }

  private startDaemon(): Promise<Socket> {
    const idle = this.options.idleExitSeconds !== undefined ? this.options.idleExitSeconds : onDemandIdleExit(this.env);
    return startDaemon(this.paths, { env: this.env, idle, timeoutMs: this.options.startTimeoutMs ?? 30_000, refuseIfClosed: () => this.refuseIfClosed() });
  }

  private logHint(): string {
    return daemonLogHint(this.paths);
  }

  /** A call to the daemon itself (registrations, shutdown, handover), with no start: null when none runs. */
  async daemonCall<T>(method: "registrations" | "shutdown" | "handover", params: object = {}): Promise<T | null> {
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
      await sleep(200);
    }
    return false;
  }

  private lost(): void {
    this.conn = null;
    this.dropRuns();
    const listening = () => !this.closedByUs && this.listeners.size > 0;
    if (listening()) rejoin(async () => this.conn !== null || (await this.connection(false).catch(() => null)) !== null, listening);
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
    return `this session is afk-mcp ${this.version} but the daemon (pid ${this.info.pid}) is ${this.info.version}: run "afk-mcp daemon restart" to hand its registrations and workers over to a daemon of this version`;
  }

  private inProcessHost(): FleetHost {
    this.refuseIfClosed();
    // Reads only: the instance is the one the daemon would act as, so "mine" means its claims.
    const root = this.paths.root;
    this.local ??= new FleetHost({
      env: this.env,
      ...(this.options.cwd ? { cwd: this.options.cwd } : {}),
      identity: (repo) => readInstance(root, repo) ?? "none",
    });
    return this.local;
  }

  // ---- Host -------------------------------------------------------------------------------------

  /** Whether a daemon that is not running left registrations behind (it crashed): then even a read starts it again, to resume them and adopt their workers. */
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
  private async read<T>(method: "status" | "logs" | "timeline" | "timelines" | "report", input: object, local: () => Promise<T>): Promise<T> {
    // Once more, at once, when the daemon went away before answering.
    return retry(
      async () => {
        try {
          const conn = await this.readConnection();
          if (!conn) return await local();
          return (await conn.request(method, input)) as T;
        } catch (error) {
          // A daemon that does not answer (stopped, hung): read GitHub and the lanes here, as with none.
          if (error instanceof DaemonUnresponsive) return local();
          throw error;
        }
      },
      { retries: 1, minMs: 0, again: (error) => error instanceof DaemonGone },
    );
  }

  /** Whether the daemon runs a project for the repository (its reads use that project's access). */
  private async daemonRuns(conn: Connection, repo: string): Promise<boolean> {
    const wanted = repoKey(repo);
    if (this.runs?.conn === conn) return this.runs.repos.has(wanted);
    const dropped = this.runsDropped;
    // Its registrations, from memory: `repos` would also look up this daemon's own origin (a git call).
    const rows = (await conn.request("registrations")) as { repo: string }[];
    const repos = new Set(rows.map((r) => repoKey(r.repo)));
    if (this.listeners.size > 0 && this.conn === conn && dropped === this.runsDropped && this.info?.version === this.version) this.runs = { conn, repos };
    return repos.has(wanted);
  }

  /**
   * Where this session's calls come from, for the one rule of a call without a repository
   * (server/host/default-repo.ts): this session's working directory's origin, else the daemon's
   * only registration — never the daemon's own directory (whichever session started it).
   */
  private place(conn: Connection | null): CallPlace {
    return {
      origin: () => originSlug(this.options.cwd ?? process.cwd()).catch(() => null),
      running: async () => (conn ? ((await conn.request("registrations")) as { repo: string }[]).map((r) => r.repo) : []),
    };
  }

  private async repoFor(tool: string, given: string | undefined, conn: Connection | null): Promise<RepoChoice> {
    return needRepo(tool, given, this.place(conn), this.options.cwd ?? process.cwd());
  }

  async status(input: StatusInput): Promise<StatusResult> {
    try {
      return await this.statusThrough(input);
    } catch (error) {
      // A daemon that does not answer (stopped, hung): read GitHub and the lanes here, as with none.
      if (!(error instanceof DaemonUnresponsive)) throw error;
      return { ...(await this.inProcessHost().status(input)), daemon: null };
    }
  }

  private async statusThrough(input: StatusInput): Promise<StatusResult> {
    let local = false;
    if (!input.repo) {
      const choice = await chooseRepo(undefined, this.place(await this.connection(false).catch(unlessSilent(null))));
      if (choice) input = { ...input, repo: choice.repo };
    }
    // A repository no registration holds is read by this session with its own token: the
    // daemon's environment is that of whichever session started it.
    const conn = input.repo ? await this.connection(false).catch(unlessSilent(null)) : null;
    const remembered = this.runs !== null && this.runs.conn === conn;
    if (conn && input.repo && !(await this.daemonRuns(conn, input.repo).catch(unlessSilent(true)))) {
      const result = await this.inProcessHost().status(input);
      const registrations = (await conn.request("registrations").catch(unlessSilent([]))) as StatusResult["registrations"];
      return { ...result, registrations: input.scope === undefined || input.scope === "project" ? registrations : [], daemon: this.daemonView() };
    }
    const result = await this.read<StatusResult>("status", input, async () => {
      local = true;
      return { ...(await this.inProcessHost().status(input)), daemon: null };
    });
    if (local || !this.info) return result;
    // Remembered as running, but the daemon runs it no longer (a drain ended without an event): ask again.
    if (remembered && result.registration === null) {
      this.dropRuns();
      return this.statusThrough(input);
    }
    return { ...result, daemon: this.daemonView() };
  }

  private daemonView(): StatusResult["daemon"] {
    return this.info ? { pid: this.info.pid, version: this.info.version, session_version: this.version, skew: this.skew() } : null;
  }

  async logs(given: LogsInput): Promise<LogsResult> {
    const input = given.lane === "daemon" ? given : await this.fromHere(given);
    return this.read<LogsResult>("logs", input, () => this.inProcessHost().logs(input));
  }

  async timeline(given: TimelineInput): Promise<Timeline> {
    const input = await this.fromHere(given);
    return this.read<Timeline>("timeline", input, () => this.inProcessHost().timeline(input));
  }

  async timelines(given: TimelinesInput): Promise<Timeline[]> {
    const input = await this.fromHere(given);
    return this.read<Timeline[]>("timelines", input, () => this.inProcessHost().timelines(input));
  }

  async report(given: ReportInput): Promise<FinalReport> {
    const input = await this.fromHere(given);
    return this.read<FinalReport>("report", input, () => this.inProcessHost().report(input));
  }

  /**
   * A read without a repository means this session's directory's origin, when it has one: the
   * daemon cannot tell (its directory is nobody's), and would take its only project instead. With
   * none, the daemon's rule applies (its only project; with several, a refusal naming them).
   */
  private async fromHere<T extends { repo?: string | undefined }>(input: T): Promise<T> {
    if (input.repo !== undefined) return input;
    const origin = await originSlug(this.options.cwd ?? process.cwd()).catch(() => null);
    return origin === null ? input : { ...input, repo: origin };
  }

  async start(input: ProjectStartInput, onStep?: StepListener): Promise<ProjectResult> {
    // The default repository is this session's working directory's, not the daemon's.
    // A dry run registers nothing: no daemon is needed (nor started) for it.
    if (input.dry_run) return this.inProcessHost().start(input, onStep);
    const { repo } = await this.repoFor("project_start", input.repo, input.repo ? null : await this.connection(false).catch(unlessSilent(null)));
    // The registration acts with this session's token and environment, not the daemon's (a
    // daemon of another version would not know the field: it then uses its own, and the skew is said).
    const result = await this.call<ProjectResult>("start", { ...input, repo }, true, onStep, sessionEnv(this.env));
    if (result.registration) this.renewal.soon();
    const skew = this.skew();
    return skew ? { ...result, message: `${result.message}; version skew: ${skew}` } : result;
  }

  async resize(input: ProjectResizeInput): Promise<ProjectResult> {
    const conn = await this.connection(false);
    if (!conn) throw new UsageError("project_resize: no afk-mcp daemon is running on this machine, so no project is running: start one with project_start");
    const { repo } = await this.repoFor("project_resize", input.repo, conn);
    const result = await this.call<ProjectResult>("resize", { ...input, repo }, false);
    this.renewal.soon();
    return result;
  }

  async stop(input: ProjectStopInput, onStep?: StepListener): Promise<ProjectResult> {
    let conn: Connection | null;
    try {
      conn = await this.connection(false);
    } catch (error) {
      return { registration: null, plan: null, message: `could not reach the afk-mcp daemon: ${(error as Error).message}; nothing was stopped` };
    }
    if (!conn)
      return { registration: null, plan: null, message: `no afk-mcp daemon is running on this machine (state dir ${this.paths.root}): nothing to stop` };
    const rows = ((await conn.request("registrations")) as { repo: string }[]).map((r) => r.repo);
    if (rows.length === 0) return { registration: null, plan: null, message: "this machine's afk-mcp daemon runs no project: nothing to stop" };
    const choice = await this.repoFor("project_stop", input.repo, conn);
    const repo = choice.repo;
    const result = (await conn.request("stop", { ...input, repo }, this.stepsFor(onStep))) as ProjectResult;
    const others = rows.filter((r) => repoKey(r) !== repoKey(repo));
    const hint = result.registration === null && others.length > 0 ? `; this machine's daemon runs ${others.join(", ")}: pass repo to stop one` : "";
    return { ...result, message: `${choiceNote(choice, "the daemon's only project")}${result.message}${hint}` };
  }

  async reset(input: ProjectResetInput): Promise<ProjectResult> {
    const conn = await this.connection(false);
    if (!conn) throw new UsageError("project_reset: no afk-mcp daemon is running on this machine, so no project is running: start one with project_start");
    const { repo } = await this.repoFor("project_reset", input.repo, conn);
    return this.call<ProjectResult>("reset", { ...input, repo }, false);
  }

  async takeover(input: TakeoverInput): Promise<TakeoverResult> {
    // Through the daemon (whose instance takes the claims), but as this session: a repository no
    // registration holds is read and written with this session's token, which the daemon keeps
    // for the call only.
    const { repo } = await this.repoFor("takeover", input.repo, input.repo ? null : await this.connection(true));
    return this.call<TakeoverResult>("takeover", { ...input, repo }, true, undefined, sessionEnv(this.env));
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

  async listen(): Promise<void> {
    await this.connection(false).catch(() => null);
  }

  // ---- renewal ----------------------------------------------------------------------------------

  /** One renewal; returns how many registrations it extended. */
  renew(): Promise<number> {
    return this.renewal.renew();
  }

  /** Ends this session's side: no more renewals (its registrations lapse after their TTL). */
  async close(): Promise<void> {
    this.closedByUs = true;
    this.renewal.stop();
    this.conn?.socket.destroy();
    this.conn = null;
    await this.local?.close();
  }

  /** A closed session opens no connection, starts no daemon and reads nothing more. */
  private refuseIfClosed(): void {
    if (this.closedByUs) throw new SessionClosed("this afk-mcp session has closed (its client went away): the call was abandoned; the daemon's fleets run on");
  }
}

/** A catch that turns a failure into `value`, except a daemon that does not answer (its callers fall back). */
function unlessSilent<T>(value: T): (error: unknown) => T {
  return (error) => {
    if (error instanceof DaemonUnresponsive) throw error;
    return value;
  };
}
