// The local gate as landings run it (`gate.ci: "local"`): the user's command on exactly the
// tree about to land (server/runtimes/local/gate-command.ts), and what a red run says as evidence.
import { join } from "node:path";
import { gateCommit, gateEnv, type GateCommitResult } from "../runtimes/local/gate-command.js";
import type { LandingContext, LocalGateEvidence } from "./land-types.js";

/** Gates `sha`; `worktree`: the worktree when it may be at that commit (saves a checkout). */
export function runLocalGate(
  ctx: Pick<LandingContext, "config" | "workRepo" | "auth" | "gateEnv" | "gateCache">,
  sha: string,
  worktree: string | null,
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
    alone: (job) => ctx.workRepo.exclusive(job),
  });
}

export function localEvidence(run: GateCommitResult): LocalGateEvidence {
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
