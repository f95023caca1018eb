// CI that never reports: a PR of ours whose head no check has reported on (or, where the base
// requires checks, whose required checks have not reported at all) waits for ever, quietly. That
// is almost always a setup fault, not slow CI: no CI in the repository (gate.ci "local" is for
// that), CI that does not run on the fleet's branches, or a required check name CI never uses.
// After CI_SILENT_SECONDS with nothing reported on one head, the supervisor lane says so once per
// head, naming the likely causes; listening sessions get it as a warning.
import type { MineClaim } from "../state/inflight.js";
import type { RequiredChecks } from "../state/ports.js";
import type { SnapshotPull } from "../state/snapshot.js";

/** How long a head may go without a report from CI before the fleet says so (scaled by the time scale). */
export const CI_SILENT_SECONDS = 600;

type Log = (level: "info" | "warn", event: string, msg: string, issue?: number, data?: Record<string, unknown>) => void;

/**
 * What has not reported on `pull`'s head: the required names nothing (no check run, no status)
 * has reported under, or, with nothing required, every check when none has reported. Empty when
 * CI has spoken (passing, failing or still running) or the checks were not read for this head.
 */
export function unreported(pull: SnapshotPull, required: RequiredChecks): string[] {
  const checks = pull.checks;
  if (!checks || checks.sha !== pull.head.sha) return [];
  const names = new Set([...checks.checkRuns.map((r) => r.name), ...checks.statuses.map((s) => s.context)]);
  if (required.contexts.length > 0) return required.contexts.filter((c) => !names.has(c));
  return names.size === 0 ? ["any check"] : [];
}

export class CiSilence {
  private readonly watched = new Map<number, { head: string; since: number; warned: boolean }>();

  constructor(private readonly deps: { clock: () => Date; silentMs: number; branchPrefix: string; log: Log }) {}

  /** One look per tick at the claims waiting for CI; the rest are forgotten. */
  observe(mine: readonly MineClaim[], pulls: readonly SnapshotPull[], required: RequiredChecks): void {
    const now = this.deps.clock().getTime();
    const waiting = new Set<number>();
    for (const claim of mine) {
      if (claim.status !== "awaiting_ci" || claim.pr === null || claim.head === null || claim.draft) continue;
      const pull = pulls.find((p) => p.number === claim.pr);
      const silent = pull ? unreported(pull, required) : [];
      if (silent.length === 0) continue;
      waiting.add(claim.issue);
      const seen = this.watched.get(claim.issue);
      if (!seen || seen.head !== claim.head) {
        this.watched.set(claim.issue, { head: claim.head, since: now, warned: false });
        continue;
      }
      if (seen.warned || now - seen.since < this.deps.silentMs) continue;
      seen.warned = true;
      this.deps.log("warn", "ci_silent", silenceText(claim, silent, required, this.deps.branchPrefix, Math.round((now - seen.since) / 60_000)), claim.issue, {
        pr: claim.pr,
        head: claim.head,
        unreported: silent,
        required: required.contexts,
      });
    }
    for (const issue of [...this.watched.keys()]) if (!waiting.has(issue)) this.watched.delete(issue);
  }
}

function silenceText(claim: MineClaim, silent: readonly string[], required: RequiredChecks, prefix: string, minutes: number): string {
  const at = `PR #${claim.pr}'s head ${claim.head!.slice(0, 12)}`;
  const wait = `in ${minutes} min`;
  if (required.contexts.length === 0) {
    return (
      `#${claim.issue}: no CI has reported on ${at} ${wait}, and the fleet lands nothing no check has looked at. ` +
      `If this repository has no CI, set gate.ci to "local" with gate.local_command (its test command); ` +
      `if it has, make it run on pull requests from ${prefix}* branches`
    );
  }
  return (
    `#${claim.issue}: the required check(s) ${silent.join(", ")} have not reported on ${at} ${wait}. ` +
    `Check that CI runs on pull requests from ${prefix}* branches and that the base's required check names are the names CI reports (GitHub lists them on the PR)`
  );
}
