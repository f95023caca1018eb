// The parts a RepoFleet is put together from, each with its settings read from the registration
// and its durations scaled like every duration of the loop (a compressed time scale is for tests
// and chaos). Made once, at the fleet's construction; `config()` reads the registration as it is
// now (a resize changes it).
import type { FleetConfig } from "../../schemas/config.js";
import { NOTIFY_DEDUPE_SECONDS, NOTIFY_MAX_PER_HOUR } from "../../schemas/config-notify.js";
import { PROBE_MAX_AGE_SECONDS } from "../state/garbage.js";
import { Board } from "../board/fleet-board.js";
import type { HeadToLand, WorkerRuntime } from "../worker-port/port.js";
import { CI_SILENT_SECONDS, CiSilence } from "./ci-silence.js";
import { ConflictWatch } from "./conflict-watch.js";
import { GarbageCollector } from "./garbage.js";
import { MERGE_CLOSE_GRACE_SECONDS, MergeCloses } from "./merge-closes.js";
import { Notifier } from "./notify.js";
import type { FleetDeps, Registration } from "./registration.js";
import type { SupervisorLog } from "./supervisor-log.js";
import type { IssueMemories } from "./issue-memory.js";

type Log = (level: "info" | "warn" | "error", event: string, msg: string) => void;

/**
 * The notifier's comments (an @mention of notify.mention for a pause or a breaker trip): one
 * request each (POST issues/{n}/comments), deduplicated and rate-limited (notify.ts).
 */
export function notifierFor(registration: Registration, deps: FleetDeps, config: () => FleetConfig, log: Log): Notifier {
  return new Notifier({
    repo: registration.repo,
    settings: () => ({
      ...config().notify,
      webhook_url: config().notify.webhook_url || null,
      dedupe_seconds: NOTIFY_DEDUPE_SECONDS,
      max_per_hour: NOTIFY_MAX_PER_HOUR,
    }),
    clock: deps.clock,
    comment: async (n, body) => void (await deps.conn.forge.createComment(n, body)),
    log,
  });
}

export function garbageFor(registration: Registration, deps: FleetDeps, log: SupervisorLog): GarbageCollector {
  const { ttl_seconds: ttlSeconds, heartbeat_seconds: heartbeatSeconds } = registration.config.lease;
  return new GarbageCollector({
    refs: deps.conn.refs,
    namespace: deps.namespace,
    instance: registration.instance,
    ttlSeconds,
    probeMaxAgeSeconds: PROBE_MAX_AGE_SECONDS * deps.timeScale,
    everyMs: heartbeatSeconds * 1000 * deps.timeScale,
    clock: deps.clock,
    log,
  });
}

export function conflictWatchFor(registration: Registration, deps: FleetDeps, config: () => FleetConfig, log: SupervisorLog): ConflictWatch {
  return new ConflictWatch({
    repoDir: deps.workRepo.repoDir,
    base: registration.base,
    worktreeOf: (n) => deps.workRepo.worktreePath(n),
    settings: () => config().conflicts,
    timeScale: deps.timeScale,
    clock: deps.clock,
    log,
  });
}

export function mergeClosesFor(deps: FleetDeps, log: SupervisorLog): MergeCloses {
  return new MergeCloses({ forge: deps.conn.forge, lease: deps.lease, clock: deps.clock, graceMs: MERGE_CLOSE_GRACE_SECONDS * 1000 * deps.timeScale, log });
}

export function ciSilenceFor(registration: Registration, deps: FleetDeps, log: SupervisorLog): CiSilence {
  return new CiSilence({
    clock: deps.clock,
    silentMs: CI_SILENT_SECONDS * 1000 * deps.timeScale,
    branchPrefix: registration.config.worktree.branch_prefix,
    log,
  });
}

export function boardFor(registration: Registration, deps: FleetDeps, config: () => FleetConfig): Board {
  const who = { instance: registration.instance, host: deps.conn.hostName };
  return new Board(deps.conn.forge, deps.conn.login, deps.clock, who, () => config().board.settle_seconds * 1000);
}

/** The worker runtime in force for the fleet's config, with the repository's reach (the actions runtime needs it). */
export function fleetRuntime(registration: Registration, deps: FleetDeps): WorkerRuntime {
  return deps.runtimes.runtimeFor(registration.config, deps.env, {
    repo: registration.repo,
    api: deps.conn.forge.actions(),
    git: deps.workRepo.git,
    namespace: deps.namespace,
    base: registration.base,
  });
}

/**
 * The worker runtime's word on a PR head before a landing, sync or train takes it
 * (WorkerRuntime.vetHead). What it set right is said as a runtime's notice is at a worker's
 * exit: on the board, in status and in the supervisor lane; no attempt is spent.
 */
export function headVetFor(
  registration: Registration,
  deps: FleetDeps,
  parts: { board: () => Board; memory: IssueMemories; log: SupervisorLog },
): (head: HeadToLand) => Promise<string | null> {
  return async (head) => {
    const runtime = fleetRuntime(registration, deps);
    const why = runtime.vetHead ? await runtime.vetHead(head) : null;
    if (why !== null) {
      parts.board().noted(head.issue, why);
      parts.memory.of(head.issue).notice = why;
      parts.log("warn", "runtime_notice", `#${head.issue}: ${why}`, head.issue, { pr: head.pr, head: head.head });
    }
    return why;
  };
}
