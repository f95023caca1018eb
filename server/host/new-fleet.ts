// A started project's fleet, put together once the start's checks passed: its registration (the
// work policy asked for, with the landing chosen for the base as it is protected now) and the
// parts the host lends it (connection, lease, work repository, lanes, run directory, clock);
// and the row a running fleet shows among the host's registrations.
import type { ProjectStartInput, StatusResult } from "./api.js";
import { parseSlug } from "../gh/slug.js";
import { UsageError } from "../gh/errors.js";
import type { LaneWriter } from "../lanes/index.js";
import type { LandingChoice } from "../state/landing-choice.js";
import { RepoFleet, type Registration } from "../fleet/repo-fleet.js";
import type { HostBudget } from "../fleet/host-budget.js";
import { workRepoFor } from "../worktrees/work-repo-for.js";
import { runningWorkerCount } from "../fleet/worker-runs.js";
import type { EngineStart } from "./engine-start.js";
import type { RepoAccess } from "./repo-access.js";
import { runDirFor } from "./views.js";
import { needsHumanOf } from "./plan.js";
import type { RuntimeRegistry } from "../runtimes/registry.js";
import type { HostLandings } from "../landing/held-locks.js";

export interface FleetPlace {
  /** The state dir. */
  root: string;
  lanes: LaneWriter;
  clock: () => Date;
  timeScale: number;
  env: Readonly<Record<string, string | undefined>>;
  hostBudget: HostBudget;
  runtimes: RuntimeRegistry;
  landings: HostLandings;
}

export function newFleet(
  connected: RepoAccess,
  input: ProjectStartInput,
  chosen: EngineStart,
  landing: LandingChoice["method"],
  place: FleetPlace,
): { project: RepoFleet; registration: Registration } {
  const { conn } = connected;
  const slug = parseSlug(conn.repo);
  const registration: Registration = {
    repo: conn.repo,
    instance: connected.instance,
    workerCommand: chosen.command,
    engine: chosen.engine,
    engines: chosen.engines,
    target: input.target ?? conn.config.concurrency,
    // "auto" becomes the landing chosen for the base as it is protected now.
    config: landing ? { ...conn.config, landing: { ...conn.config.landing, strategy: landing } } : conn.config,
    base: conn.base,
    autoMerge: input.auto_merge === true,
    startedAt: place.clock().toISOString(),
    ...(input.once === true ? { once: true } : {}),
    ...(input.max_issues !== undefined ? { maxIssues: input.max_issues } : {}),
  };
  const project = new RepoFleet(registration, {
    conn,
    lease: connected.lease,
    namespace: connected.namespace?.namespace ?? conn.config.namespace,
    workRepo: workRepoFor({
      stateDir: place.root,
      owner: slug.owner,
      name: slug.name,
      remoteUrl: conn.info.cloneUrl,
      worktreeRoot: conn.config.worktree.root,
      branchPrefix: conn.config.worktree.branch_prefix,
      auth: { token: conn.token, url: conn.info.cloneUrl },
    }),
    lanes: place.lanes,
    runDir: runDirFor(place.root, conn.repo),
    clock: place.clock,
    timeScale: place.timeScale,
    env: place.env,
    hostBudget: place.hostBudget,
    runtimes: place.runtimes,
    landings: place.landings,
  });
  return { project, registration };
}

export type RegistrationRow = StatusResult["registrations"][number] & {
  /** Nothing ready, nothing in flight, no worker at the last poll. */
  idle: boolean;
};

/** A project's row among the host's registrations; null once it stopped and finished. */
export function registrationRow(project: RepoFleet): RegistrationRow | null {
  if (project.isStopped() && !project.finishing()) return null;
  const r = project.registration;
  const report = project.report();
  const view = project.view();
  return {
    repo: r.repo,
    instance: r.instance,
    state: project.draining() > 0 || project.finishing() ? "draining" : "running",
    target: r.target,
    selectors: r.config.selectors.map((sel) => ({ ...sel })),
    sessions: [],
    sessions_gone: 0,
    ttl_seconds: null,
    renew_by: null,
    last_poll: report?.at ?? null,
    workers: runningWorkerCount(project.workerRows()),
    in_flight: report?.in_flight ?? null,
    landed_today: project.ledger.landedOn(project.deps.clock()),
    needs_human: view ? needsHumanOf(view.set).length : null,
    idle: report !== null && report.error === null && report.frontier_remaining === 0 && report.in_flight === 0 && report.workers === 0,
  };
}

/** A start is refused while the repository's fleet still runs on this host, or still stops. */
export function refuseIfRunning(existing: RepoFleet | undefined, repo: string, instance: string): void {
  if (existing && existing.draining() > 0) {
    throw new UsageError(
      `project_start: ${repo} is still stopping on this host: ${existing.draining()} worker(s) have yet to exit; wait, or end them with project_stop {stop_workers: true}`,
    );
  }
  if (existing && !existing.isStopped()) {
    throw new UsageError(
      `project_start: ${repo} is already running on this host (instance ${instance}): use project_resize to change it, or project_stop first`,
    );
  }
}
