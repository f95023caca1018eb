// The steps project_start and project_stop say while they run (StepListener in api.ts): what a
// client shows as progress during a long call. A start says each preflight stage as it passes;
// a stop follows the repository's supervisor lane and says each worker stopped and each claim
// released, in the lane's own words.
import type { PlanOutput } from "../../schemas/tools.js";
import type { StepListener } from "./api.js";
import type { HostEvents } from "./events.js";
import type { RepoAccess } from "./repo-access.js";

/** Supervisor events that are steps of a drain. */
const DRAIN_EVENTS = new Set(["worker_exited", "reviewer_exited", "checkpoint", "released", "draining", "stopped"]);

export function connectedStep({ conn, namespace }: RepoAccess): string {
  const claims = namespace
    ? `claims under ${namespace.namespace}${namespace.fallback ? " (the fallback: the hidden namespace is not writable)" : ""}`
    : "claim namespace not probed";
  return `connected to ${conn.repo} as ${conn.login}: base ${conn.base}, config from ${conn.configSource}, ${claims}`;
}

export function assessedSteps(plan: PlanOutput): string[] {
  const failed = plan.preconditions.filter((p) => !p.ok && p.severity === "error");
  const warned = plan.preconditions.filter((p) => !p.ok && p.severity !== "error");
  const preconditions =
    `preconditions: ${plan.preconditions.length - failed.length - warned.length} of ${plan.preconditions.length} pass` +
    (failed.length ? `; failing: ${failed.map((p) => p.name).join(", ")}` : "") +
    (warned.length ? `; warnings: ${warned.map((p) => p.name).join(", ")}` : "");
  const { totals } = plan;
  const backlog = `backlog read: ${totals.dispatch} dispatchable, ${totals.excluded} excluded, ${totals.needs_human} needing a human, ${plan.mine.length} claim(s) of this instance in flight`;
  return [preconditions, backlog];
}

/**
 * Says a stop's drain as it happens, from the repository's supervisor records, until the
 * returned function is called. Without a listener it follows nothing.
 */
export function followDrain(events: HostEvents, repo: string, onStep: StepListener | undefined): () => void {
  if (!onStep) return () => undefined;
  return events.follow(repo, (record) => {
    if (record.event && DRAIN_EVENTS.has(record.event) && record.msg) onStep(record.msg);
  });
}
