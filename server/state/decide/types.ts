// The core's vocabulary: what decide reads (the working set, this host's local facts, the
// settings that shape a tick) and what it returns (the actions, each carrying every choice its
// effect needs). Types only; the rules are in the files beside this one.
import type { WorkingSet } from "../rebuild.js";
import type { VerdictKind } from "../markers.js";
import type { EpicDone } from "../epics.js";
import type { OverlapHold } from "../overlap.js";
import type { ConflictHold, ConflictWaitInput, PairConflict, PendingConflict } from "../conflicts.js";
import type { Sweep, SweepFacts } from "./sweeps.js";

export type WorkerState = "running" | "exited" | "none";

/** What this host knows of one of its claims beyond GitHub. */
export interface ClaimFacts {
  worker: WorkerState;
  /** For a running worker: the liveness verdict ("kill" ends it). */
  liveness?: "active" | "stall_candidate" | "busy" | "kill";
  /** Seconds since the worker's newest activity (output, worktree write, commit). */
  idleSeconds?: number;
  /** Commits on the branch not on the base. */
  commitsAhead?: number;
  /** Whether the branch changes anything against the base (read for an exited worker, and whenever the verdict is already-satisfied). */
  changes?: boolean;
  /** The verdict the worker left (its file, or the fleet's marker comment). */
  verdict?: { kind: VerdictKind; reason: string } | null;
  /** For a blocked verdict: blockers still open. */
  blockersOpen?: number[];
  /** For a blocked verdict: every blocker known (linked in GitHub or named by the worker), open or not. */
  blockers?: number[];
  /** For an exited worker: its result ("commits": push and open the PR). */
  outcome?: "commits" | "verdict" | "nothing";
  /** For an exited worker: its branch moved while it ran (commits of this attempt, not only those it continued from). */
  moved?: boolean;
  /** Times this host killed the claim's workers for hanging. */
  kills?: number;
  /** Times this host dispatched the claim again after a blocked verdict whose blockers had closed. */
  redispatches?: number;
  /** For an exited worker: the fleet ended it (a stall, a stop), so its commits may be half-done. */
  killed?: boolean;
  /** The review stage: this host's reviewer for the claim's PR is running, or exited with a result to take. */
  reviewer?: "running" | "exited";
  /** The PR's head is not the pinned (reviewed) head but a clean sync merge of it with the base. */
  pinHolds?: boolean;
  /** For an exited worker: the fleet ended it past `budget.usd_per_attempt`, and what it spent: the attempt failed, whatever it committed. */
  overBudget?: string | null;
  /** The runtime found the attempt failed whatever it left (a runner that died, a run cancelled elsewhere, a push outside its branch): why. */
  runtimeFault?: { why: string; resume: boolean } | null;
  /** GitHub refused to re-run the PR's failing checks on its current head: why (the failure then counts as it is). */
  rerunRefused?: string | null;
}

export interface DecideInput {
  set: WorkingSet;
  local: ReadonlyMap<number, ClaimFacts>;
  /** Workers at once. */
  target: number;
  /** Retries after the first attempt. */
  retry: number;
  /** A red PR's next attempt continues on its branch (config `fix_forward`), once per PR. */
  fixForward?: boolean;
  /** Landing is authorized (project_start's auto_merge). */
  autoMerge: boolean;
  /** Births are paused (breaker, quota, auth, stop): nothing new starts. */
  birthsPaused: boolean;
  /** Draining: release what has no PR, start nothing. */
  stopping: boolean;
  idleGraceSeconds: number;
  /** Free re-dispatches after "blocked" before a claim that keeps saying so is escalated. */
  maxRedispatches?: number;
  /** Kills of a hanging worker before the claim counts as a failed attempt. */
  maxKills?: number;
  /** The issue whose PR was synced with the base and waits for its CI: it lands next, the others wait. */
  landingSlot?: number | null;
  /** Required CI: one landing move (a merge or a sync) per tick, so CI restarts on one PR at a time. */
  oneLandingPerTick?: boolean;
  /** `landing.train.max` as the base lets it be used (trainMax in landing.ts): more than 1 lets two or more green PRs land together as one train. */
  trainMax?: number;
  /** Why this fleet no longer builds trains (its CI never reported on one: trainsOffAfter), or null: each PR then lands alone. */
  trainsOff?: string | null;
  /** Trains whose results this tick's gather took: one CI never reported on turns trains off (trainsOffAfter). */
  trainsEnded?: ReadonlyArray<TrainEnd>;
  /** A landing waits for its gate (a local gate, a merge queue): it runs in the background, beside the loop. */
  landingWaits?: boolean;
  /** Claims a landing under way (or ended and just taken) holds: nothing is decided on them this tick. */
  landingHeld?: ReadonlySet<number>;
  /** What the host's housekeeping reads (sweeps.ts): its decisions come out as `Decision.sweeps`. */
  sweeps?: SweepFacts | null;
  /** The review stage (`review.command` set): green PRs are reviewed before they land. */
  review?: { maxRounds: number } | null;
  /** Issue → its PR's head does not merge with the base (seen after a landing, at a sync, or when the base moved). */
  conflicts?: ReadonlyMap<number, PendingConflict>;
  /** Let a conflict retry wait for the in-flight work that changes its files (`conflicts.wait`); null: retry at once. */
  conflictWait?: ConflictWaitInput | null;
  /** Pairs of in-flight heads that do not merge with each other: the fewest conflicts land first. */
  pairs?: readonly PairConflict[];
  /** Epics whose sub-issues are all closed (`epics.close_when_done`): each is closed. */
  epicsDone?: readonly EpicDone[];
  /** Overlap-aware dispatch: paths each ready issue names, and the files in-flight PRs change. */
  overlap?: { pathsOf: ReadonlyMap<number, readonly string[]>; inFlight: ReadonlySet<string> } | null;
  /** Spend budgets (`budget`), as facts: see BudgetFacts. */
  budget?: BudgetFacts | null;
}

/**
 * What the spend budgets say this tick. A reached day budget holds births like a quota pause
 * (nothing killed, no attempt spent); an issue past its budget is escalated instead of retried.
 */
export interface BudgetFacts {
  /** Set once the fleet's spend today reached `budget.usd_per_day`: why, said in status. */
  dayHold: string | null;
  /** Issue → its spend, for issues past `budget.usd_per_issue`. */
  issuesOver: ReadonlyMap<number, string>;
}

export type FailureEvidence =
  | { kind: "ci"; pr: number; failing: string[] }
  | { kind: "verdict"; verdict: VerdictKind; reason: string }
  | { kind: "no_result"; why: string }
  | { kind: "hung"; kills: number }
  | { kind: "gate"; summary: string; excerpt: string }
  /** A human with write access asked for changes on the PR: their words are the evidence. */
  | { kind: "review"; pr: number; changes: Array<{ by: string; body: string }> }
  /** The review stage's reviewer refuted the PR: its findings are the evidence. */
  | { kind: "review_findings"; pr: number; findings: string };

export type Action =
  | { kind: "release"; issue: number; sha: string; why: string; killWorker: boolean }
  | { kind: "kill"; issue: number; why: string }
  /**
   * `exclusive`: once a landing merged or synced this tick, this one waits for the next.
   * `background`: it waits for a gate (a local gate, a merge queue), so it runs beside the loop.
   */
  | { kind: "land"; issue: number; sha: string; pr: number; head: string; exclusive: boolean; background: boolean }
  /** Two or more green PRs (up to `landing.train.max`, in claim order) land as one gated train; `issue` is the first's. */
  | { kind: "land_train"; issue: number; members: Array<{ issue: number; sha: string; pr: number; head: string }> }
  | { kind: "hold"; issue: number; pr: number; why: string }
  /** Green but short of required human approvals: keep the claim, say on the PR what is needed. */
  | { kind: "await_review"; issue: number; pr: number; head: string; required: number; approvedBy: string[] }
  /** `startWorker`: the next attempt's worker starts now (false: births are held; a later tick recovers it). */
  /**
   * `resume`: the next attempt continues from the branch instead of the base. `fix`: it fixes the
   * red PR forward: the PR stays open and the worker continues on its branch (resume as well).
   */
  | {
      kind: "retry";
      issue: number;
      sha: string;
      attempt: number;
      pr: number | null;
      evidence: FailureEvidence;
      startWorker: boolean;
      resume?: boolean;
      fix?: boolean;
    }
  | { kind: "escalate"; issue: number; sha: string; pr: number | null; why: string; evidence: FailureEvidence | null }
  /** A red PR whose failing checks are all Actions jobs with re-runs left (`gate.rerun_failed`): re-run them; the attempt is not spent. */
  | { kind: "rerun_checks"; issue: number; sha: string; pr: number; head: string; checks: Array<{ name: string; id: number; reruns: number }> }
  | { kind: "open_pr"; issue: number; sha: string }
  | { kind: "close_done"; issue: number; sha: string; reason: string }
  /** An epic whose sub-issues are all closed: close it, listing them (no claim: an epic is never worked). */
  | { kind: "close_epic"; issue: number; children: number[] }
  | { kind: "redispatch"; issue: number; sha: string; why: string }
  | { kind: "recover"; issue: number; sha: string; why: string }
  | { kind: "reclaim"; issue: number; sha: string; from: string | null; thenRelease: boolean }
  /** The fleet's own open PR whose issue has no claim: claim the issue again and carry the PR on (no worker: the PR is the work). */
  | { kind: "adopt"; issue: number; pr: number; head: string; headRef: string }
  | { kind: "dispatch"; issue: number; title: string; attempt: number }
  /** Start a reviewer on the PR's head (a birth: it takes a worker slot). */
  | { kind: "review"; issue: number; sha: string; pr: number; head: string; round: number }
  /** A reviewer exited: post its verdict on the PR, push its fixes, or send the findings back. */
  | { kind: "review_result"; issue: number; sha: string; pr: number; head: string; round: number };

export interface Decision {
  actions: Action[];
  /** The host's housekeeping, applied before the actions (sweeps.ts): none without `DecideInput.sweeps`. */
  sweeps: Sweep[];
  /** Workers that would be running after the births this tick. */
  workers: number;
  /** Why no (more) births, when there was room: for status and the summary. */
  birthsHeld: string | null;
  /** Ready issues started later because in-flight work changes the paths they name. */
  overlapHolds: OverlapHold[];
  /** The landing slot after this tick's decisions: kept while its PR still waits for CI, else free. */
  landingSlot: number | null;
  /** Why this fleet builds no trains from now on (kept from the input, or a train that just ended with CI silent), or null. */
  trainsOff?: string | null;
  /** Conflict retries that wait for in-flight work changing the same files to land. */
  conflictHolds: ConflictHold[];
}

/** What a train's result says about trains: whether CI stayed silent on it, and each member's outcome (state/decide/landing.ts trainsOffAfter). */
export interface TrainEnd {
  ciSilent?: boolean | undefined;
  members: ReadonlyArray<{ outcome: string; why?: string | undefined }>;
}
