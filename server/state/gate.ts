// The CI gate, read the way GitHub's branch protection reads it: the required contexts (or,
// when none are configured, every check reported on the head) must each pass, where a context
// may be a check run, a commit status, or both — and then both must pass.

import type { CheckRun, Checks, CommitStatus, RequiredChecks } from "./ports.js";

export type GateState = "green" | "pending" | "red";

export interface GateResult {
  state: GateState;
  /** Failing checks, sorted by name. */
  failing: Array<{ name: string; summary: string }>;
  /** Names still pending or missing, sorted. */
  pending: string[];
}

type Verdict = { outcome: "pass" | "pending" } | { outcome: "fail"; summary: string };

const PASSING_CONCLUSIONS = new Set(["success", "neutral", "skipped"]);

function runVerdict(run: CheckRun): Verdict {
  if (run.status !== "completed") {
    return { outcome: "pending" }; // queued, in_progress, waiting, requested, pending
  }
  if (run.conclusion !== null && PASSING_CONCLUSIONS.has(run.conclusion)) {
    return { outcome: "pass" };
  }
  // failure, cancelled, timed_out, action_required, stale, startup_failure, or no conclusion.
  const detail = run.title ?? run.summary ?? null;
  return { outcome: "fail", summary: `${run.conclusion ?? "no conclusion"}${detail ? `: ${detail}` : ""}` };
}

function statusVerdict(status: CommitStatus): Verdict {
  if (status.state === "success") {
    return { outcome: "pass" };
  }
  if (status.state === "pending") {
    return { outcome: "pending" };
  }
  return { outcome: "fail", summary: `${status.state}${status.description ? `: ${status.description}` : ""}` };
}

/** Re-runs share a name: the run with the highest id is the latest. */
export function latestRuns(runs: readonly CheckRun[]): Map<string, CheckRun> {
  const byName = new Map<string, CheckRun>();
  for (const run of runs) {
    const seen = byName.get(run.name);
    if (!seen || run.id > seen.id) {
      byName.set(run.name, run);
    }
  }
  return byName;
}

/**
 * One status per context. The forge lists statuses newest first (as GitHub does), so the first
 * one seen for a context is the current one.
 */
function latestStatuses(statuses: readonly CommitStatus[]): Map<string, CommitStatus> {
  const byContext = new Map<string, CommitStatus>();
  for (const status of statuses) {
    if (!byContext.has(status.context)) {
      byContext.set(status.context, status);
    }
  }
  return byContext;
}

/**
 * Evaluates `checks` (on the head that would land) against the branch's required checks.
 * A required context nobody has reported yet is pending, never green. With nothing required,
 * every check reported on the head must pass — and a head no check has reported on yet is
 * pending, not green: GitHub would merge it, but the fleet never lands a head that no CI has
 * looked at (a just-opened PR whose CI has not registered yet). A repository with no CI at all
 * uses `gate.ci: "local"` instead.
 */
/** The pending entry of a head on which no check has reported (and none is required). */
export const NO_CHECK_YET = "(no check has reported on this head yet)";

export function evaluateGate(checks: Checks | undefined, required: RequiredChecks): GateResult {
  const runs = latestRuns(checks?.checkRuns ?? []);
  const statuses = latestStatuses(checks?.statuses ?? []);
  const names = required.contexts.length > 0 ? new Set(required.contexts) : new Set([...runs.keys(), ...statuses.keys()]);

  const failing: GateResult["failing"] = [];
  const pending: string[] = [];
  for (const name of names) {
    const verdicts: Verdict[] = [];
    const run = runs.get(name);
    const status = statuses.get(name);
    if (run) verdicts.push(runVerdict(run));
    if (status) verdicts.push(statusVerdict(status));
    if (verdicts.length === 0) {
      pending.push(name); // required but not reported: it may not have started yet
      continue;
    }
    const failed = verdicts.filter((v): v is Extract<Verdict, { outcome: "fail" }> => v.outcome === "fail");
    if (failed.length > 0) {
      failing.push({ name, summary: failed.map((f) => f.summary).join("; ") });
    } else if (verdicts.some((v) => v.outcome === "pending")) {
      pending.push(name);
    }
  }
  if (names.size === 0) pending.push(NO_CHECK_YET);
  failing.sort((a, b) => compareStrings(a.name, b.name));
  pending.sort(compareStrings);
  const state: GateState = failing.length > 0 ? "red" : pending.length > 0 ? "pending" : "green";
  return { state, failing, pending };
}

/**
 * Whether the check runs alone already say a head is not green: a gating run failed or is still
 * running. Its commit statuses cannot make it green then (where a context has both, both must
 * pass), so a reader may leave them unread until the runs pass (server/gh/github-forge.ts).
 */
export function runsSettleNotGreen(runs: readonly CheckRun[], required: RequiredChecks): boolean {
  const latest = latestRuns(runs);
  const names = required.contexts.length > 0 ? required.contexts : [...latest.keys()];
  return names.some((name) => {
    const run = latest.get(name);
    return run !== undefined && runVerdict(run).outcome !== "pass";
  });
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The app GitHub Actions posts its jobs' check runs as: a job the fleet can re-run (a job's id is its check run's id). */
export const ACTIONS_APP = "github-actions";

/** A failing check's latest run and how often it was re-run on this head already. */
export interface RerunCheck {
  name: string;
  /** The latest run's id: for an Actions check, the job to re-run. */
  id: number;
  /** Re-runs already made: runs of this name in the latest run's check suite, less the first. */
  reruns: number;
}

export type RerunVerdict =
  | { rerun: true; checks: RerunCheck[] }
  /** The failure counts as it is: why (a check the fleet cannot re-run, re-runs used up, re-runs off). */
  | { rerun: false; why: string; checks: RerunCheck[] };

/**
 * Whether a red gate's failing checks are re-run before the failure counts (`gate.rerun_failed`,
 * `limit` re-runs per check and head). A re-run is a durable fact GitHub holds: another check run
 * of the same name in the same check suite on the same head (read with `filter=all`), so no state
 * of the fleet's counts them. Only when every failing check can be re-run: an Actions job (the
 * app `github-actions`) with re-runs left and no failing commit status of the same name. A
 * third-party app's run or a status cannot be re-run by the fleet, and one failure the fleet
 * cannot re-run fails the attempt anyway, so nothing is re-run then.
 */
export function rerunVerdict(checks: Checks | undefined, gate: GateResult, limit: number): RerunVerdict {
  const all = checks?.checkRuns ?? [];
  const latest = latestRuns(all);
  const statuses = latestStatuses(checks?.statuses ?? []);
  const found: RerunCheck[] = [];
  let why: string | null = gate.state === "red" ? null : "the gate is not red";
  if (limit <= 0) why ??= "re-runs are off (gate.rerun_failed is 0)";
  for (const { name } of gate.failing) {
    const run = latest.get(name);
    const status = statuses.get(name);
    if (!run || run.app !== ACTIONS_APP) {
      why ??= `${name} is ${run ? `a check of the app ${run.app ?? "(unknown)"}` : "a commit status"}, which the fleet cannot re-run`;
      continue;
    }
    const reruns = all.filter((r) => r.name === name && r.app === ACTIONS_APP && (r.suiteId ?? null) === (run.suiteId ?? null)).length - 1;
    found.push({ name, id: run.id, reruns });
    if (status && statusVerdict(status).outcome === "fail") why ??= `${name} also failed as a commit status, which the fleet cannot re-run`;
    else if (reruns >= limit) why ??= `${name} failed again after ${reruns} re-run${reruns === 1 ? "" : "s"} (gate.rerun_failed ${limit})`;
  }
  return why === null ? { rerun: true, checks: found } : { rerun: false, why, checks: found };
}

/** Whether a red local gate (`gate.ci: "local"`) runs its command again on the same tree: while it is red and fewer than `limit` re-runs were made. */
export function rerunLocalGate(passed: boolean, reruns: number, limit: number): boolean {
  return !passed && reruns < limit;
}
