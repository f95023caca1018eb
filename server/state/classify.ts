// What became of one of my claims that has no PR: still coding, finished (done, blocked or
// failed), or dead. Commits on the branch are a standing fact, not a sign of life: counting them
// as activity made every idle outcome unreachable for a worker that had ever committed, and held
// its claim forever. Only recent activity (or a running, busy worker) means "coding".

import type { VerdictKind } from "./markers.js";

export type NoPrOutcome = "coding" | "idle_done" | "idle_blocked" | "idle_failed" | "dead";

export type NoPrAction =
  /** coding: leave it. */
  | "leave"
  /** idle_done: verify the branch has no diff against base, then close the issue and release. */
  | "verify_empty_then_close"
  /** idle_blocked, every blocker now closed: dispatch again, keeping the claim (not a retry). */
  | "redispatch"
  /** idle_blocked, a blocker still open: escalate the gap in the dependency graph. */
  | "escalate_dependency"
  /** idle_failed: the retry ladder (next attempt, or escalate when exhausted). */
  | "retry_or_escalate"
  /** dead: recover by continuation from the worker's durable progress; keep the claim. */
  | "recover";

export interface NoPrFacts {
  /** A worker process for the claim is running on this host. */
  workerAlive: boolean;
  /** Seconds since the newest activity: a commit, a worktree write, worker output. */
  idleSeconds: number;
  /** `idle_grace_seconds`: quiet for longer than this means idle. */
  graceSeconds: number;
  /** The newest verdict marker the fleet's own login posted, if any. */
  verdict: VerdictKind | null;
  /** Commits on the worker branch not on base: reported, never read as liveness. */
  commitsAhead: number;
  /** For a `blocked` verdict: whether any of its blockers is still open. */
  blockersOpen: boolean;
}

export interface NoPrClassification {
  outcome: NoPrOutcome;
  action: NoPrAction;
  why: string;
}

/**
 * Ordering: a running worker active within the grace is coding whatever else holds. Past that, a
 * verdict decides — also for a worker whose process has exited, since afk-mcp workers are
 * processes that exit when they finish: a verdict is the durable word, the process's absence is
 * not. Without a verdict, an exited worker is dead (recover it) and an idle live one has failed.
 */
export function classifyNoPr(facts: NoPrFacts): NoPrClassification {
  const idle = !(facts.idleSeconds <= facts.graceSeconds);
  if (facts.workerAlive && !idle) {
    return { outcome: "coding", action: "leave", why: `active ${Math.max(0, Math.round(facts.idleSeconds))}s ago` };
  }
  switch (facts.verdict) {
    case "already-satisfied":
      if (facts.commitsAhead > 0) {
        return {
          outcome: "idle_failed",
          action: "retry_or_escalate",
          why: `verdict already-satisfied, but the branch is ${facts.commitsAhead} commit(s) ahead of base: changes refute it`,
        };
      }
      return { outcome: "idle_done", action: "verify_empty_then_close", why: "verdict already-satisfied with no changes" };
    case "blocked":
      return facts.blockersOpen
        ? { outcome: "idle_blocked", action: "escalate_dependency", why: "verdict blocked and a blocker is still open" }
        : { outcome: "idle_blocked", action: "redispatch", why: "verdict blocked, and every blocker is now closed" };
    case "giving-up":
      return { outcome: "idle_failed", action: "retry_or_escalate", why: "verdict giving-up" };
    case null:
      break;
  }
  if (!facts.workerAlive) {
    return { outcome: "dead", action: "recover", why: "no worker is running and none left a verdict" };
  }
  return {
    outcome: "idle_failed",
    action: "retry_or_escalate",
    why: `idle for ${Math.round(facts.idleSeconds)}s (grace ${facts.graceSeconds}s) with no verdict`,
  };
}
