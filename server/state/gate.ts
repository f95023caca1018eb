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
function latestRuns(runs: readonly CheckRun[]): Map<string, CheckRun> {
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
