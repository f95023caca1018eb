// A tick's gather and the core's input: the snapshot read from GitHub, the working set rebuilt
// from it, and what only this host knows (its workers and their liveness, their exits and
// verdicts, what the breaker owns, the merged issues waiting for GitHub's close, the checkpoints
// and the garbage sweep's last run, the landings under way or just ended, the merge tests of the
// in-flight heads). It decides nothing: which claims the core sets aside is the core's answer
// (state/decide/sweeps.ts setAside), asked here so the host reads nothing for them.
import { setAside, type HostRun, type SweepFacts } from "../state/decide/sweeps.js";
import { trainMax } from "../state/decide/landing.js";
import type { TrainEnd } from "../state/decide/types.js";
import { trainsEndedIn } from "./landing-events.js";
import type { DecideInput, ClaimFacts } from "../state/decide.js";
import { doneEpics } from "../state/epics.js";
import { rebuild, type WorkingSet } from "../state/rebuild.js";
import type { Snapshot, SnapshotIssue } from "../state/snapshot.js";
import type { FleetRuntime, TickEvents, TickScope } from "./effects/effect.js";
import { claimFacts } from "./claim-facts.js";
import type { TickReport } from "./tick-report.js";
import { routableEngines, type Births } from "./births.js";
import type { CiSilence } from "./ci-silence.js";

/** The parts of the fleet a gather reads that the effects never see. */
export interface GatherParts {
  birthing: Births;
  silence: CiSilence;
  stopping: boolean;
  graceMs: number;
}

export interface Gathered {
  snapshot: Snapshot;
  /** The working set as this tick acts in it: the claims the core sets aside taken out. */
  set: WorkingSet;
  scope: TickScope;
  events: TickEvents;
  local: Map<number, ClaimFacts>;
  sweeps: SweepFacts;
  /** Claims a landing under way holds, or one that ended and was just taken. */
  landingHeld: Set<number>;
  /** Trains whose results were taken just now: decide says whether trains go off (landing-events.ts). */
  trainsEnded: Array<{ issue: number; end: TrainEnd }>;
  /** The in-flight heads' merge tests against the base and each other (git reads: conflict-watch.ts). */
  conflicts: Pick<DecideInput, "overlap" | "conflicts" | "conflictWait" | "pairs">;
}

export async function gatherTick(fleet: FleetRuntime, parts: GatherParts, snapshot: Snapshot, now: Date, report: TickReport): Promise<Gathered> {
  const { registration, deps, memory } = fleet;
  deps.lease.observe(snapshot.heartbeats);
  const full = rebuild(snapshot, registration.config, registration.instance, now, routableEngines(registration));
  fleet.ledger.queuedNow(full.frontier.dispatch.map((d) => d.number));
  const checkpoints = parts.birthing.checkpointFacts();
  const runs: HostRun[] = memory.runs().map((run) => ({
    issue: run.issue,
    role: run.role,
    exited: Boolean(run.exitFacts),
    startedAt: run.startedAt,
    lastCheckpointAt: checkpoints.lastAt(run.issue),
  }));
  const verdicts: SweepFacts["verdicts"][number][] = [];
  const sweeps: SweepFacts = {
    now: now.getTime(),
    garbage: fleet.garbage.facts(),
    // The breaker owns these issues now: no decision of this tick may retry or continue them.
    breakerOwned: fleet.guard.hasUnswept() ? fleet.guard.owned() : new Set(),
    mine: full.mine,
    landed: snapshot.landed ?? [],
    closing: new Map(fleet.closes.waitingNow()),
    graceMs: parts.graceMs,
    open: new Set(snapshot.issues.map((i) => i.number)),
    force: parts.stopping,
    runs,
    checkpointEveryMs: checkpoints.everyMs,
    verdicts,
  };
  const aside = setAside(sweeps);
  const set = aside.size > 0 ? { ...full, mine: full.mine.filter((m) => !aside.has(m.issue)) } : full;
  parts.birthing.observe(set);
  parts.silence.observe(set.mine, snapshot.pulls, snapshot.requiredChecks);
  const adopt = (n: number) => parts.birthing.adoptOrphan(n);
  const local = await claimFacts({ registration, deps, memory, verdicts, adopt }, set, snapshot, now);
  const events: TickEvents = { pushed: [], blocked: [], settled: [], landing: [] };
  const issues = new Map<number, SnapshotIssue>(snapshot.issues.map((i) => [i.number, i]));
  for (const m of set.mine) {
    const seen = issues.get(m.issue);
    if (seen) memory.of(m.issue).labels = seen.labels;
  }
  const scope: TickScope = { set, issues, report, events, required: snapshot.requiredChecks, pulls: snapshot.pulls, later: [] };
  // Landings that ended since the last tick are taken now (the tail of an earlier tick's land
  // action); theirs and running ones' claims are not decided on.
  const landingHeld = new Set([...(await fleet.inFlight.finish(scope)), ...fleet.inFlight.holding()]);
  const conflicts = await fleet.conflicts.read(set, issues);
  const trainsEnded = trainsEndedIn(events);
  return { snapshot, set, scope, events, local, sweeps, landingHeld, trainsEnded, conflicts };
}

/** The core's input for this tick: the gather, the fleet's settings and what it holds. */
export function decideInput(fleet: FleetRuntime, parts: GatherParts, g: Gathered, birthsPaused: boolean, now: Date): DecideInput {
  const { registration, deps } = fleet;
  const cfg = registration.config;
  const required = g.snapshot.requiredChecks;
  return {
    set: g.set,
    local: g.local,
    target: parts.birthing.budgets.target(registration.target),
    retry: cfg.retry,
    fixForward: cfg.fix_forward,
    autoMerge: registration.autoMerge,
    birthsPaused,
    stopping: parts.stopping,
    idleGraceSeconds: cfg.idle_grace_seconds * deps.timeScale,
    landingSlot: fleet.landingSlot,
    oneLandingPerTick: cfg.gate.ci === "required",
    trainMax: trainMax(cfg, required),
    trainsOff: fleet.trainsOff,
    trainsEnded: g.trainsEnded.map((t) => t.end),
    // A local gate runs, or the merge queue decides: the landing waits, beside the loop.
    landingWaits: cfg.gate.ci === "local" || required.mergeQueue === true,
    landingHeld: g.landingHeld,
    sweeps: g.sweeps,
    review: cfg.review.command !== null ? { maxRounds: cfg.review.max_rounds } : null,
    budget: parts.birthing.budgets.facts(now),
    epicsDone: cfg.epics.close_when_done ? doneEpics(g.snapshot.issues, g.set.frontier.excluded, cfg.selectors) : [],
    ...g.conflicts,
  };
}
