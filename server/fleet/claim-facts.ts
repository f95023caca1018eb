// What this host knows about each of its claims beyond GitHub, for decide: is its worker
// running, how lively (output, worktree writes, commits, a busy child), what an exited worker
// left (commits, a verdict), and which of a blocked issue's blockers are still open.
import type { ClaimFacts } from "../state/decide.js";
import { latestVerdict, type Verdict } from "../state/markers.js";
import type { WorkingSet } from "../state/rebuild.js";
import type { Snapshot } from "../state/snapshot.js";
import { activityAt, assessLiveness } from "../worker-port/liveness.js";
import { isCleanSyncOf } from "../landing/review-pin.js";
import { pinnedHead } from "../state/review-stage.js";
import type { IssueMemories } from "./issue-memory.js";
import type { FleetDeps, Registration } from "./registration.js";
import type { WorkerRun } from "./worker-runs.js";
import { setTimeout as sleep } from "node:timers/promises";

/** The second look at a worker's CPU when the first sample could not say. */
const BUSY_RESAMPLE_MS = 1_000;

export interface FactsContext {
  registration: Registration;
  deps: FleetDeps;
  memory: IssueMemories;
  /** Exited workers' verdicts, as found: the core decides which to post (state/decide/sweeps.ts). */
  verdicts?: Array<{ issue: number; attempt: number; verdict: Verdict; posted: boolean }>;
  /** A worker an earlier host process left running for a claim of ours, now watched here; undefined when none. */
  adopt?: (issue: number) => Promise<WorkerRun | undefined>;
}

export async function claimFacts(ctx: FactsContext, set: WorkingSet, snapshot: Snapshot, now: Date): Promise<Map<number, ClaimFacts>> {
  const { registration, deps, memory } = ctx;
  const local = new Map<number, ClaimFacts>();
  const cfg = registration.config;
  const scale = deps.timeScale;
  for (const claim of set.mine) {
    const record = memory.get(claim.issue);
    const run = record?.run ?? (claim.status === "no_pr" && ctx.adopt ? await ctx.adopt(claim.issue) : undefined);
    const facts: ClaimFacts = { worker: "none", kills: record?.kills ?? 0, redispatches: record?.redispatches ?? 0 };
    if (record?.rerunRefused && record.rerunRefused.head === claim.head) facts.rerunRefused = record.rerunRefused.why;
    let verdict: Verdict | null = null;
    if (run && !run.exitFacts) {
      facts.worker = "running";
      if (run.role === "reviewer") facts.reviewer = "running";
      // The worktree scan (git processes and a file walk) can only move the last activity
      // later: while what is already known (the output, the last scan's finding) keeps the
      // worker active, a scan cannot change the verdict, so skip it. A quiet worker is scanned
      // from when it could be stalled on, not every tick from birth.
      const mem = memory.of(claim.issue);
      const scanned = mem.scanned?.run === run ? mem.scanned.activity : null;
      const known = Math.max(run.startedAt, activityAt(run.handle.lastOutputAt(), scanned) ?? run.startedAt);
      const progress =
        now.getTime() - known < cfg.stall.quiet_seconds * scale * 1000 ? null : await deps.workRepo.progress(claim.issue, registration.base).catch(() => null);
      if (progress) mem.scanned = { run, activity: activityAt(progress.worktreeMtime, progress.lastCommitAt) };
      const found = progress ? [progress.worktreeMtime, progress.lastCommitAt] : [scanned];
      const activity = activityAt(run.handle.lastOutputAt(), ...found) ?? run.startedAt;
      let reading = await run.handle.observe();
      const assess = () =>
        assessLiveness({
          now: now.getTime(),
          activityAt: activity,
          startedAt: run.startedAt,
          stallSeconds: cfg.stall.quiet_seconds * scale,
          killSeconds: cfg.stall.kill_seconds * scale,
          maxRuntimeSeconds: cfg.worker.max_runtime_seconds * scale,
          busyDescendant: reading.busy === true,
        });
      let decision = assess();
      if (decision.state === "kill" && decision.cause === "quiet" && reading.busy === "unknown") {
        // A first sample cannot tell busy from idle (the tick cadence can be slower than the
        // kill threshold): look again before ending a tree that may be compiling.
        await sleep(BUSY_RESAMPLE_MS);
        reading = await run.handle.observe();
        decision = assess();
      }
      facts.liveness = decision.state;
      facts.idleSeconds = (now.getTime() - activity) / 1000;
      // One record per change of state, not one per tick: a worker quiet for an hour would
      // otherwise fill the lane with the same line.
      const previous = mem.liveness;
      mem.liveness = decision.state;
      if (decision.state !== "active" && decision.state !== previous) {
        deps.lanes.append("liveness", {
          event: decision.state,
          msg: `#${claim.issue}: ${decision.state} after ${Math.round(decision.quietSeconds)}s quiet${decision.cause ? ` (${decision.cause})` : ""}${reading.busy ? `; ${reading.why}` : ""}`,
          issue: claim.issue,
          ...run.handle.tags,
        });
      }
    } else if (run?.exitFacts) {
      const exit = run.exitFacts;
      if (exit.quota) {
        // A usage limit is a pause, not a failure: the claim waits (no attempt spent) and
        // is continued once births resume.
        facts.worker = "none";
        memory.endRun(claim.issue);
      } else if (run.role === "reviewer") {
        facts.worker = "exited";
        facts.reviewer = "exited";
      } else {
        facts.worker = "exited";
        facts.outcome = exit.outcome.kind;
        facts.moved = exit.moved;
        facts.killed = exit.exit.killReason !== null;
        if (exit.overBudget) facts.overBudget = exit.overBudget;
        if (exit.exit.fault) facts.runtimeFault = exit.exit.fault;
        facts.commitsAhead = exit.commitsAhead;
        facts.changes = exit.changes;
        facts.verdict = exit.verdict ? { kind: exit.verdict.kind, reason: exit.verdict.reason } : null;
        facts.idleSeconds = Number.POSITIVE_INFINITY;
        verdict = exit.verdict;
        if (exit.verdict)
          ctx.verdicts?.push({
            issue: claim.issue,
            attempt: run.attempt,
            verdict: exit.verdict,
            posted: memory.of(claim.issue).verdictsPosted.has(run.attempt),
          });
      }
    } else if (claim.status === "no_pr") {
      // No worker here (a restart, a reclaim, a takeover): a verdict this fleet posted earlier
      // still speaks for the claim; otherwise it is dead and continued. One conditional request per
      // such claim and tick, free (304) while no comment is added.
      const comments = await deps.conn.forge.listComments(claim.issue);
      verdict = latestVerdict(comments, deps.conn.login);
      facts.verdict = verdict ? { kind: verdict.kind, reason: verdict.reason } : null;
      if (verdict) facts.worker = "exited";
      facts.outcome = verdict ? "verdict" : "nothing";
      facts.idleSeconds = Number.POSITIVE_INFINITY;
    }
    if (verdict?.kind === "already-satisfied") {
      // Changes on the branch refute the verdict (decide retries instead of closing the issue).
      facts.changes = await deps.workRepo.hasChangesAgainstBase(claim.issue, registration.base).catch(() => false);
    }
    const pinned = pinnedHead(claim.reviewMarks);
    if (pinned !== null && claim.head !== null && pinned !== claim.head && claim.status === "awaiting_merge") {
      facts.pinHolds = await isCleanSyncOf(deps.workRepo.repoDir, pinned, claim.head, registration.base).catch(() => false);
    }
    if (verdict?.kind === "blocked") {
      // The worker's own word counts next to the graph's links: a blocker it found that nobody
      // had linked is exactly the gap a human must hear about (not a reason to run it again).
      const blockers = blockersOf(snapshot, claim.issue, verdict.blockedBy ?? []);
      facts.blockers = blockers.all;
      facts.blockersOpen = blockers.open;
    }
    local.set(claim.issue, facts);
  }
  return local;
}

/** The issues `n` waits on (linked in GitHub, or named by its worker's verdict), and the open ones. */
function blockersOf(snapshot: Snapshot, n: number, named: readonly number[]): { all: number[]; open: number[] } {
  const open = new Set(snapshot.issues.map((i) => i.number));
  const issue = snapshot.issues.find((i) => i.number === n);
  const linked = issue?.blockedBy ?? [];
  const closedLinks = new Set(linked.filter((b) => b.state !== "open").map((b) => b.number));
  const all = [...new Set([...linked.map((b) => b.number), ...named])].filter((b) => b !== n).sort((a, b) => a - b);
  return { all, open: all.filter((b) => open.has(b) && !closedLinks.has(b)) };
}
