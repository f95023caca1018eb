// The landing's vocabulary: what a landing reads (its context and the PR to land) and what it
// reports, shared by a single PR's landing (land.ts), trains (train.ts) and the fleet's effects.
import type { Forge, RequiredChecks } from "../gh/forge.js";
import type { GitAuth } from "../gh/git.js";
import type { Lease } from "../gh/lease.js";
import type { RefStore } from "../gh/refstore.js";
import type { FleetConfig } from "../../schemas/config.js";
import type { GateCache } from "../runtimes/local/gate-command.js";
import type { WorkRepo } from "../worktrees/worktrees.js";
import type { CiEvidence } from "./ci-evidence.js";
import type { HostLandings } from "./held-locks.js";

export type LandingStrategy = FleetConfig["landing"]["strategy"];

/** What the landing reads from the fleet config. */
export type LandingConfig = Pick<FleetConfig, "landing" | "gate" | "namespace"> & {
  /** The claims' lease: a landing lock whose holder's heartbeat is older than it is a dead host's. */
  lease?: Pick<FleetConfig["lease"], "ttl_seconds">;
  worktree: Pick<FleetConfig["worktree"], "branch_prefix">;
  worker?: Pick<FleetConfig["worker"], "env_passthrough" | "env_deny">;
};

export interface LandingContext {
  forge: Forge;
  /** The fleet's own login (`forge.whoami()`): only PRs it opened land. */
  login: string;
  /** The base branch PRs land on, e.g. "main". */
  base: string;
  /** The repository's default branch: GitHub closes "Closes #n" issues on merges there only. */
  defaultBranch?: string;
  config: LandingConfig;
  lease: Lease;
  /** Ref store of the repository: the landing lock, and reading the base tip. */
  refs: RefStore;
  workRepo: WorkRepo;
  /** For the pushes the landing makes itself (push strategy, branch deletion). */
  auth: GitAuth | null;
  instance: string;
  host: string;
  /** Local gate results per tree; share one per project so a tree is gated once. */
  gateCache?: GateCache;
  /** The gate command's environment; default `gateEnv()` with the worker passthrough lists. */
  gateEnv?: Record<string, string>;
  /** The base's required checks, when the caller read them this tick (saves requests). */
  requiredChecks?: RequiredChecks;
  /** Seconds after which another host may take the landing lock over; default `landing.lock_ttl_seconds` (+ the gate timeout for a local gate). */
  lockTtlSeconds?: number;
  now?: () => Date;
  /**
   * The worker runtime's word on a head before it syncs or lands (WorkerRuntime.vetHead): null
   * when it may, else why not (a "retry_later" with that reason). Absent: no such check.
   */
  vetHead?: (head: { issue: number; pr: number; branch: string; head: string }) => Promise<string | null>;
  /**
   * True once the fleet stops: a wait for CI (a train's candidate, the merge queue's verdict)
   * ends at its next look, its PRs left open to land later, here or on a peer. Without it a stop
   * waited for that CI, up to the gate's timeout (two hours by default).
   */
  stopping?: () => boolean;
  /** The host's landings: their line (one at a time per repository and instance) and the locks they hold (held-locks.ts). */
  landings: HostLandings;
}

export interface LandInput {
  issue: number;
  /** The issue's title (only to name a worktree branch if one must be recreated). */
  title: string;
  /** Our claim's sha: the fencing token. */
  claimSha: string;
  pr: number;
  /** The head sha that was gated (whose checks the caller saw green). */
  head: string;
  /**
   * The PR's branch as the caller's listing of open PRs showed it this tick (a fleet branch of
   * this repository for this issue, aimed at the base). Given, a sync pushes to it without a read.
   */
  listed?: { headRef: string };
}

export interface CommandGateEvidence {
  kind: "local";
  summary: string;
  excerpt: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  sha: string;
  tree: string;
}

export type GateEvidence = CiEvidence | CommandGateEvidence;

/** `swept`: dead trains' branches the landing deleted under the lock (their draft PRs closed). */
export type LandResult = LandOutcomes & { swept?: string[] };

type LandOutcomes =
  | {
      outcome: "merged";
      /** The commit the base now points at (the squash or merge commit, or H for a push). */
      mergeSha: string;
      /** The base tip the gated head contained. */
      baseBefore: string;
      /** The gated head that landed. */
      head: string;
      /** "queue": GitHub's merge queue merged it. */
      method: LandingStrategy | "queue";
      /** The landed tree is H's tree. False: the base moved inside the merge call (raise an alarm). */
      verified: boolean;
      verifyNote: string | null;
      issueClosed: boolean;
      /** GitHub closes the issue itself (a closing keyword merged onto the default branch): the fleet did not. */
      closedByMerge?: boolean;
      branchDeleted: boolean;
      /** Syncs made during this call (local gate only; a required gate returns "synced"). */
      syncs: number;
      /** When the merge call (or the push) returned: the base moved then, before the bookkeeping. */
      mergedAt?: string;
      /** Re-runs of a red local gate this landing made before it passed (`gate.rerun_failed`). */
      gateReruns?: number;
    }
  | { outcome: "synced"; head: string; previousHead: string; baseSha: string; why: string }
  | { outcome: "not_ours"; why: string }
  | { outcome: "fenced"; why: string }
  /** `holder`: who holds the landing lock (see acquireLock). */
  | { outcome: "busy"; why: string; holder?: string }
  | { outcome: "retry_later"; why: string }
  | { outcome: "conflict"; files: string[]; baseSha: string | null; why: string }
  | { outcome: "gate_red"; head: string; evidence: GateEvidence; why: string; gateReruns?: number };

/** Syncs per call before giving up for this tick (the base keeps moving). */
export const MAX_SYNC_ROUNDS = 3;
