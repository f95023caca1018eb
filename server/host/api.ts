// The interface the MCP tools talk to: the per-machine daemon's FleetHost serves it over its
// socket (server/daemon/), and a session's DaemonClient implements it by calling there.
import type { z } from "zod";
import type { FinalReport, Timeline } from "../lanes/index.js";
import type {
  logsInput,
  logsOutput,
  reportInput,
  timelineInput,
  timelinesInput,
  projectOutput,
  projectResetInput,
  projectResizeInput,
  projectStartInput,
  projectStopInput,
  statusInput,
  statusOutput,
  takeoverInput,
  takeoverOutput,
} from "../../schemas/tools.js";

// What else a tool may use of the host: the errors a host throws for expected failures (a tool
// turns them into a result, not a throw) and the plan's text rendering, shared with the CLI.
export { ForgeError, GitError, UsageError } from "../gh/errors.js";
export { RefNameError } from "../gh/refstore.js";
export { renderPlan } from "./plan.js";
export { selectorText } from "./selector-text.js";
export { renewalText } from "./registration-text.js";
export { durationText } from "../lanes/index.js";

type Out<S extends z.ZodRawShape> = z.infer<z.ZodObject<S>>;
type In<S extends z.ZodRawShape> = z.input<z.ZodObject<S>>;

export type StatusInput = In<typeof statusInput>;
export type StatusResult = Out<typeof statusOutput>;
export type TakeoverInput = In<typeof takeoverInput>;
export type TakeoverResult = Out<typeof takeoverOutput>;
export type ProjectStartInput = In<typeof projectStartInput>;
export type ProjectResizeInput = In<typeof projectResizeInput>;
export type ProjectStopInput = In<typeof projectStopInput>;
export type ProjectResetInput = In<typeof projectResetInput>;
export type ProjectResult = Out<typeof projectOutput>;
export type LogsInput = In<typeof logsInput>;
export type LogsResult = Out<typeof logsOutput>;
export type TimelineInput = In<typeof timelineInput>;
export type TimelinesInput = In<typeof timelinesInput>;
export type ReportInput = In<typeof reportInput>;
export type { FinalReport, Timeline } from "../lanes/index.js";
export { renderReport } from "../lanes/index.js";

/** The repositories a session can name: those this host runs fleets for, and the working directory's origin. */
export interface RepoListing {
  running: string[];
  origin: string | null;
  /** The repositories every remote of the working directory names, origin first (for completions). */
  remotes: string[];
}

/**
 * One step of a long call, said as it happens: project_start's preflight (connected, claim
 * namespace, preconditions, backlog, started) and project_stop's drain (each worker stopped,
 * each claim released). The MCP tools turn each into a progress notification.
 */
export type StepListener = (message: string) => void;

/**
 * Who a call acts as on a repository no project of the host runs: through the daemon, the
 * calling session's environment (its token and API URL), not the daemon's.
 */
export interface CallerAccess {
  env?: NodeJS.ProcessEnv;
}

export interface Host extends EventSource {
  status(input: StatusInput, as?: CallerAccess): Promise<StatusResult>;
  takeover(input: TakeoverInput, as?: CallerAccess): Promise<TakeoverResult>;
  start(input: ProjectStartInput, onStep?: StepListener): Promise<ProjectResult>;
  resize(input: ProjectResizeInput): Promise<ProjectResult>;
  stop(input: ProjectStopInput, onStep?: StepListener): Promise<ProjectResult>;
  reset(input: ProjectResetInput): Promise<ProjectResult>;
  logs(input: LogsInput): Promise<LogsResult>;
  /** One issue's timeline from the repository's ledger (this machine's). */
  timeline(input: TimelineInput): Promise<Timeline>;
  /** The most recently active issues' timelines, newest first, from one read of the ledger (the dashboard's chart). */
  timelines(input: TimelinesInput): Promise<Timeline[]>;
  /** The final report as of now, from the repository's ledger (with the running fleet's requests so far). */
  report(input: ReportInput): Promise<FinalReport>;
  repos(): Promise<RepoListing>;
}

/**
 * What a host pushes to the sessions that listen (MCP resources/subscribe, logging
 * notifications). `board` fires at most once per tick and only when the repository's board
 * (registration, workers, in-flight PRs, pauses) changed; `repos` when a repository starts
 * or stops; `log` for supervisor-lane records at warning level or above.
 */
export type HostEvent =
  | { kind: "board"; repo: string }
  | { kind: "repos" }
  | { kind: "log"; repo: string; level: "info" | "warning" | "error"; lane: string; message: string; at: string };

/** A host that can push events; the in-process host and the daemon client both implement it. */
export interface EventSource {
  subscribe(listener: (event: HostEvent) => void): () => void;
  /** Reaches the source of the events now, if one runs (the daemon), for a client that asked for them before any call. */
  listen?(): Promise<void>;
}
