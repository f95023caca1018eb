// The fleet's side of landing: one LandingContext per running fleet (one gate cache, the claim
// lease, the work repository), and red-gate evidence for the next attempt's brief.
import type { FleetConfig } from "../../schemas/config.js";
import type { BriefFailure } from "../agent/brief.js";
import { GateCache } from "../runtimes/local/gate-command.js";
import { watchDelay } from "../state/wake.js";
import { landPull, readCheckEvidence, type LandingContext, type LandInput, type LandResult } from "./land.js";
import { landTrain, type TrainMember, type TrainResult } from "./train.js";
import { landQueuedBatch } from "./queue-batch.js";
import type { RepoConnection } from "../gh/repo-connection.js";
import type { Lease } from "../gh/lease.js";
import type { RequiredChecks } from "../gh/forge.js";
import type { WorkRepo } from "../worktrees/worktrees.js";
import type { HostLandings } from "./held-locks.js";

/** What landing needs from the fleet that runs it. */
export interface LandingDeps {
  conn: Pick<RepoConnection, "forge" | "login" | "base" | "refs" | "token" | "info" | "hostName">;
  lease: Lease;
  workRepo: WorkRepo;
  clock: () => Date;
  /** Seconds in the loop per real second (the bench and demo compress time); default 1. */
  timeScale?: number;
  /** The host's landings: their line and the locks they hold (held-locks.ts). */
  landings: HostLandings;
}

export type LandOutcome = LandResult;

export class Landing {
  private readonly gateCache = new GateCache();

  constructor(
    private readonly deps: LandingDeps,
    private readonly config: () => FleetConfig,
    /** The worker runtime's word on a head before it syncs or lands (LandingContext.vetHead). */
    private readonly vetHead?: LandingContext["vetHead"],
    /** Whether the fleet stops (LandingContext.stopping): a wait for CI then ends at its next look. */
    private readonly stopping?: () => boolean,
  ) {}

  /**
   * `required`: the base's required checks as this tick's snapshot read them (the landing need
   * not read them again; GitHub still refuses a merge its protection forbids).
   */
  land(input: LandInput, required?: RequiredChecks): Promise<LandResult> {
    return landPull({ ...this.context(), ...(required ? { requiredChecks: required } : {}) }, input);
  }

  /**
   * Lands green PRs together: as trains (server/landing/train.ts), or into the merge queue at
   * once where the base requires one (queue-batch.ts). `required`: as this tick's snapshot read them.
   */
  train(members: readonly TrainMember[], required?: RequiredChecks): Promise<TrainResult> {
    if (required?.mergeQueue === true) return landQueuedBatch({ ...this.context(), requiredChecks: required }, members);
    const config = this.config();
    const scale = this.deps.timeScale ?? 1;
    return landTrain(this.context(), members, {
      // A train's candidate is watched like a PR head: soon at first, backing off to watch_seconds.
      pollDelayMs: (poll) => Math.max(100, watchDelay(poll, config.pacing) * 1000 * scale),
      ciTimeoutMs: config.gate.timeout_seconds * 1000 * scale,
      silentMs: 600_000 * scale,
      // A train may outlast a tick: the claims' heartbeat goes on meanwhile.
      onWait: () => this.deps.lease.heartbeat().then(() => undefined),
    });
  }

  private context(): LandingContext {
    const { conn } = this.deps;
    const config = this.config();
    return {
      forge: conn.forge,
      login: conn.login,
      base: config.base ?? conn.base,
      defaultBranch: conn.info.defaultBranch,
      config,
      lease: this.deps.lease,
      refs: conn.refs,
      workRepo: this.deps.workRepo,
      auth: { token: conn.token, url: conn.info.cloneUrl },
      instance: this.deps.lease.instance,
      host: conn.hostName,
      gateCache: this.gateCache,
      now: this.deps.clock,
      ...(this.vetHead ? { vetHead: this.vetHead } : {}),
      ...(this.stopping ? { stopping: this.stopping } : {}),
      landings: this.deps.landings,
    };
  }

  /**
   * What a red PR's checks say, re-read from GitHub, for the next attempt's brief. `head`: the
   * sha whose checks were judged red (the snapshot's), which saves reading the PR for it.
   */
  async ciEvidence(pr: number, failing: readonly string[], head?: string | null): Promise<BriefFailure> {
    const { forge } = this.deps.conn;
    // A request for the PR only when the head is not known; the evidence's own requests are
    // conditional re-reads of the lists the gate just read.
    const sha = head ?? (await forge.getPull(pr)).head.sha;
    const evidence = await readCheckEvidence(forge, sha, failing, this.config().gate.excerpt_bytes);
    return { kind: "ci", summary: evidence.summary, excerpt: evidence.excerpt };
  }
}
