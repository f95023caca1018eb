// The local gate as landings run it (`gate.ci: "local"`): the user's command on exactly the
// tree about to land (server/runtimes/local/gate-command.ts), and what a red run says as evidence.
import { join } from "node:path";
import { gateCommit, gateEnv, type GateCommitResult } from "../runtimes/local/gate-command.js";
import type { LandingContext, LandResult, CommandGateEvidence } from "./land-types.js";
import { rerunLocalGate } from "../state/gate.js";

/**
 * Gates `sha`; `worktree`: the worktree when it may be at that commit (saves a checkout).
 * A red run goes again up to `gate.rerun_failed` times before it counts (state/gate.ts
 * rerunLocalGate): a cached red too (its re-runs were not made in this landing), each re-run past
 * the cache, and the last run is what the cache keeps. `reruns`: the re-runs made.
 */
export async function runCommandGate(
  ctx: Pick<LandingContext, "config" | "workRepo" | "auth" | "gateEnv" | "gateCache">,
  sha: string,
  worktree: string | null,
): Promise<GateCommitResult & { reruns: number }> {
  let run = await gateOnce(ctx, sha, worktree, true);
  let reruns = 0;
  while (rerunLocalGate(run.passed, reruns, ctx.config.gate.rerun_failed ?? 0)) {
    reruns += 1;
    run = await gateOnce(ctx, sha, worktree, false);
  }
  return { ...run, reruns };
}

function gateOnce(
  ctx: Pick<LandingContext, "config" | "workRepo" | "auth" | "gateEnv" | "gateCache">,
  sha: string,
  worktree: string | null,
  cached: boolean,
): Promise<GateCommitResult> {
  const gate = ctx.config.gate;
  return gateCommit({
    repoDir: ctx.workRepo.repoDir,
    sha,
    worktree,
    scratchRoot: join(ctx.workRepo.worktreeRoot, ".gate"),
    command: gate.local_command ?? "",
    env: ctx.gateEnv ?? gateEnv({ passthrough: ctx.config.worker?.env_passthrough ?? [], deny: ctx.config.worker?.env_deny ?? [] }),
    timeoutSeconds: gate.timeout_seconds,
    excerptBytes: gate.excerpt_bytes,
    secrets: secretsOf(ctx),
    ...(ctx.gateCache ? { cache: ctx.gateCache } : {}),
    ...(cached ? {} : { fresh: true }),
    alone: (job) => ctx.workRepo.exclusive(job),
  });
}

export function commandGateEvidence(run: GateCommitResult): CommandGateEvidence {
  const how = run.error
    ? run.error
    : run.timedOut
      ? `timed out after ${Math.round(run.durationMs / 1000)}s`
      : `exited with ${run.exitCode ?? run.signal ?? "no code"} after ${formatSeconds(run.durationMs)}`;
  return {
    kind: "local",
    summary: `the local gate command ${how} on ${run.sha.slice(0, 12)}`,
    excerpt: run.excerpt,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    sha: run.sha,
    tree: run.tree,
  };
}

/** What evidence excerpts must never show: the token the landing pushes with. */
export function secretsOf(ctx: Pick<LandingContext, "auth">): string[] {
  return ctx.auth?.token ? [ctx.auth.token] : [];
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

/** A landing's result with the local gate's re-runs it made, when it made any. */
export function withReruns(result: LandResult, reruns: number): LandResult {
  return reruns > 0 && (result.outcome === "merged" || result.outcome === "gate_red") ? { ...result, gateReruns: reruns } : result;
}
