// The shape of an effect: one small handler per action kind that decide can return, applying
// it against GitHub, git and the workers. Handlers see the running fleet through FleetRuntime
// and the tick they act in through TickScope.
import type { Action } from "../../state/decide.js";
import type { TrainEnd } from "../../state/decide/types.js";
import type { WorkingSet } from "../../state/rebuild.js";
import type { SnapshotIssue, SnapshotPull } from "../../state/snapshot.js";
import type { Board } from "../../board/fleet-board.js";
import type { Landing } from "../../landing/fleet-landing.js";
import type { IssueMemories } from "../issue-memory.js";
import type { FleetDeps, Registration } from "../registration.js";
import type { SupervisorLog } from "../supervisor-log.js";
import type { TickReport } from "../tick-report.js";
import type { BirthInput } from "../worker-runs.js";
import type { WatchedHead } from "../../state/wake.js";
import type { RequiredChecks } from "../../state/ports.js";
import type { LandingsInFlight } from "../landings-in-flight.js";
import type { ConflictWatch } from "../conflict-watch.js";
import type { MergeCloses } from "../merge-closes.js";
import type { FleetLedger } from "../fleet-ledger.js";
import type { Notifier } from "../notify.js";
import type { Sweep, SweepKind } from "../../state/decide/sweeps.js";
import type { GarbageCollector } from "../garbage.js";
import type { BirthGuard } from "../birth-guard.js";

export interface FleetRuntime {
  readonly registration: Registration;
  readonly deps: FleetDeps;
  readonly memory: IssueMemories;
  readonly board: Board;
  readonly landing: Landing;
  /** The issue whose PR was synced with the base and whose CI runs: it lands next. Effects report a sync as an event (landing-events.ts). */
  readonly landingSlot: number | null;
  /** Why this fleet builds no trains any more (state/decide/landing.ts trainsOffAfter), or null. */
  readonly trainsOff: string | null;
  /** The sweep of dead refs (garbage.ts). */
  readonly garbage: GarbageCollector;
  /** The circuit breaker and its sweep (birth-guard.ts). */
  readonly guard: BirthGuard;
  /** Pushes a running worker's new commits to its branch, fenced by `claimSha` (births.ts). */
  checkpoint(issue: number, claimSha: string): Promise<void>;
  /** Landings wait for another host's landing lock: whose, and since when (logged once, at the start and the end). */
  readonly landingWait: { holder: string; since: Date } | null;
  /** Landings that wait (a gate, a train, a merge queue), run beside the loop. */
  readonly inFlight: LandingsInFlight<TickScope>;
  /** PRs seen not to merge with the base (decided on the next pass), pairs, conflict holds. */
  readonly conflicts: ConflictWatch;
  /** Merged issues GitHub closes itself: their claims wait for it (merge-closes.ts). */
  readonly closes: MergeCloses;
  /** Births are held (a stop, the breaker, a quota pause). */
  birthsHeld(): boolean;
  /** Starts a worker for a claim we hold; false when it could not start. */
  birthFor(issue: SnapshotIssue, attempt: number, mode: BirthInput["mode"], claimSha: string, review?: BirthInput["review"]): Promise<boolean>;
  readonly log: SupervisorLog;
  /** The fleet's durable record of decisions and facts (server/lanes/ledger.ts). */
  readonly ledger: FleetLedger;
  /** Who is told when a human is needed (notify.ts). */
  readonly notifier: Notifier;
  /** Applies a follow-up action the core chose from an effect's outcome (a landing that failed its gate). */
  apply(tick: TickScope, action: Action): Promise<void>;
}

/** The tick an effect runs in: its working set, the issues it saw, and the report it fills. */
export interface TickScope {
  set: WorkingSet;
  issues: ReadonlyMap<number, SnapshotIssue>;
  report: TickReport;
  /** What the effects tell the wake plan (server/state/wake.ts). */
  events: TickEvents;
  /** The base's required checks as this tick's snapshot read them. */
  required?: RequiredChecks;
  /** The open PRs as this tick's snapshot listed them. */
  pulls?: readonly SnapshotPull[];
  /** Bookkeeping that waits until this tick's actions ran (see `afterActions`). */
  later?: Array<{ issue: number; job: () => Promise<void> }>;
}

/**
 * Runs `job` once the tick's actions ran (before its boards), or now outside a tick's loop. For
 * what nothing else in the tick waits on, so an action behind it (the next PR's sync after a
 * landing: its CI starts that much sooner) does not wait for it either.
 */
export async function afterActions(tick: TickScope, issue: number, job: () => Promise<void>): Promise<void> {
  if (tick.later) tick.later.push({ issue, job });
  else await job();
}

export interface TickEvents {
  /** Heads pushed to a PR (opened, synced with the base): their checks start now. */
  pushed: WatchedHead[];
  /** Green PRs that could not land because another landing held the lock. */
  blocked: number[];
  /** Issues settled other than in the report's lists (a retry closed the PR). */
  settled: number[];
  /** What landings did that the fleet keeps past the pass, in order: the tick applies them (landing-events.ts). */
  landing: LandingEvent[];
}

/**
 * A landing's outcome the fleet keeps: the sync that took the slot, a train's end (decide reads
 * it: trainsOffAfter), a wait for the lock or its end.
 */
export type LandingEvent =
  | { kind: "synced"; issue: number }
  | { kind: "train_ended"; issue: number; end: TrainEnd }
  | { kind: "lock_busy"; holder: string; at: Date }
  | { kind: "lock_free" };

export type ActionKind = Action["kind"];
export type ActionOf<K extends ActionKind> = Extract<Action, { kind: K }>;

export interface Effect<K extends ActionKind> {
  kind: K;
  apply(fleet: FleetRuntime, tick: TickScope, action: ActionOf<K>): Promise<void>;
}

export function defineEffect<K extends ActionKind>(kind: K, apply: Effect<K>["apply"]): Effect<K> {
  return { kind, apply };
}

export type SweepOf<K extends SweepKind> = Extract<Sweep, { kind: K }>;

/** A handler of one housekeeping sweep the core decided (state/decide/sweeps.ts). */
export interface SweepEffect<K extends SweepKind> {
  kind: K;
  apply(fleet: FleetRuntime, tick: TickScope, sweep: SweepOf<K>): Promise<void>;
}

export function defineSweep<K extends SweepKind>(kind: K, apply: SweepEffect<K>["apply"]): SweepEffect<K> {
  return { kind, apply };
}
