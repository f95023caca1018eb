// What a running fleet is given: its registration (the work policy a session or the CLI asked
// for) and the parts the host lends it (connection, lease, work repository, lanes, clock).
import type { FleetConfig } from "../../schemas/config.js";
import type { RepoConnection } from "../gh/repo-connection.js";
import type { LaneWriter } from "../lanes/index.js";
import type { Lease } from "../gh/lease.js";
import type { WorkRepo } from "../worktrees/worktrees.js";
import type { UsageFormat } from "../agent/engines.js";
import type { HostBudget } from "./host-budget.js";
import type { RuntimeRegistry } from "../runtimes/registry.js";
import type { HostLandings } from "../landing/held-locks.js";

/** The engine a registration runs (server/agent/engines.ts), as verified at its start. */
export interface EngineChoice {
  name: string;
  model: string | null;
  usage: UsageFormat;
  loginShell: boolean;
  /** What the start's check found: where the binary is, its version, a custom provider. */
  path: string;
  version: string;
  provider: string[];
}

export interface Registration {
  repo: string;
  instance: string;
  workerCommand: string;
  /** null: the opaque worker_command (engine "command", usage unknown). */
  engine: EngineChoice | null;
  /** Every engine a route may take, as verified at start (by name). */
  engines?: Record<string, EngineChoice>;
  target: number;
  config: FleetConfig;
  base: string;
  autoMerge: boolean;
  startedAt: string;
  /** One pass: after its first tick the fleet drains itself (server/fleet/run-limits.ts). */
  once?: boolean;
  /** After this many issues reached an end (landed, escalated, closed as done) the fleet drains itself. */
  maxIssues?: number | null;
}

export interface FleetDeps {
  conn: RepoConnection;
  lease: Lease;
  namespace: string;
  workRepo: WorkRepo;
  lanes: LaneWriter;
  runDir: string;
  clock: () => Date;
  /** Multiplies every duration of the loop (pacing, stall and kill thresholds): tests and the demo run faster. */
  timeScale: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** The host-wide budget every fleet of this host shares (host.json); absent: none. */
  hostBudget?: HostBudget;
  /** The host's worker runtimes: the fleet's is the one its config names. */
  runtimes: RuntimeRegistry;
  /** The host's landings: one at a time per repository, and the locks held for its exit paths. */
  landings: HostLandings;
}
