// What the host shows of its state to the tools: a registration, where one issue stands in the
// plan, and a takeover's outcome, as the tools' output schemas spell them.
import type { PlanOutput } from "../../schemas/tools.js";
import type { TakeoverOutcome } from "../gh/lease.js";
import type { RepoFleet } from "../fleet/repo-fleet.js";
import type { StatusResult, TakeoverResult } from "./api.js";

export function registrationView(project: RepoFleet): NonNullable<StatusResult["registration"]> {
  const r = project.registration;
  return {
    repo: r.repo,
    instance: r.instance,
    target: r.target,
    worker_command: r.workerCommand,
    base: r.base,
    auto_merge: r.autoMerge,
    merges: r.autoMerge ? "authorized" : "held",
    started_at: r.startedAt,
  };
}

export function locateIssue(plan: PlanOutput, number: number): NonNullable<StatusResult["issue"]> {
  // A claim says more than the exclusion it causes, so claims are looked up first.
  const mine = plan.mine.find((m) => m.issue === number);
  if (mine) return { number, where: "mine", detail: `claimed by this instance: ${mine.status}${mine.pr ? ` (PR #${mine.pr})` : ""}${mine.review ? `: ${mine.review}` : ""}` };
  const live = plan.peers_live.find((p) => p.issue === number);
  if (live) return { number, where: "peer_live", detail: `claimed by live instance ${live.instance ?? "?"} on ${live.host ?? "?"}` };
  const stale = plan.peers_stale.find((p) => p.issue === number);
  if (stale) return { number, where: "stale", detail: `claimed by ${stale.instance ?? "an unknown instance"}, whose lease lapsed (${stale.stale_reason})` };
  const dispatchAt = plan.dispatch.findIndex((d) => d.number === number);
  if (dispatchAt >= 0) return { number, where: "dispatch", detail: `next to dispatch at position ${dispatchAt + 1} of ${plan.dispatch.length}` };
  const excluded = plan.excluded.find((e) => e.number === number);
  if (excluded) return { number, where: "excluded", detail: excluded.text };
  return { number, where: "not_open", detail: `#${number} is not an open issue of ${plan.repo}` };
}

export function takeoverResult(outcome: TakeoverOutcome, rows: TakeoverResult["instances"]): TakeoverResult {
  switch (outcome.action) {
    case "confirm":
      return { action: "confirm", instances: rows, from: outcome.instance, taken: [], lost: [], message: outcome.warning };
    case "none":
      return { action: "none", instances: rows, from: outcome.instance, taken: [], lost: [], message: outcome.reason };
    case "taken":
      return {
        action: "taken",
        instances: rows,
        from: outcome.instance,
        taken: outcome.taken,
        lost: outcome.lost,
        message:
          `took ${outcome.taken.length} claim(s) from ${outcome.instance}` +
          (outcome.lost.length ? `; lost ${outcome.lost.length} to a faster fleet (${outcome.lost.map((n) => `#${n}`).join(", ")})` : ""),
      };
  }
}
