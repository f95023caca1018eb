// What the host shows of its state to the tools: a registration, what a resize changed, where one
// issue stands in the plan, and a takeover's outcome, as the tools' output schemas spell them.
import type { PlanOutput } from "../../schemas/tools.js";
import type { TakeoverOutcome } from "../gh/lease.js";
import type { RepoFleet } from "../fleet/repo-fleet.js";
import type { ProjectResizeInput, StatusResult, TakeoverResult } from "./api.js";
import { waitingFor } from "./plan.js";
import { selectorText } from "./selector-text.js";
import { join } from "node:path";
import { parseSlug } from "../gh/slug.js";
import { displayPid } from "../worker-port/port.js";
import type { RuntimeRegistry } from "../runtimes/registry.js";

/** Where a repository's workers keep their briefs, output and their runtime's records (a pid file), under the state dir. */
export function runDirFor(root: string, repo: string): string {
  const slug = parseSlug(repo);
  return join(root, "runs", slug.owner.toLowerCase(), slug.name.toLowerCase());
}

/** What status calls a running worker that no fleet of this host watches: the daemon that started it is gone, or the next has yet to adopt it. */
export const ORPHAN_STATE = "orphan";

/**
 * This host's worker rows, and after them every worker still running that none of them is (by
 * issue and pid): an orphan of a daemon that died, which the next daemon to resume its registration adopts.
 * Its runtime's record (a pid file) does not say which engine runs it: "unknown".
 */
export async function withOrphans(rows: StatusResult["workers"], runDir: string, runtimes: RuntimeRegistry): Promise<StatusResult["workers"]> {
  // By issue and pid: a runtime whose workers have no pid (null) still tells its issues apart.
  const known = new Set(rows.map((r) => `${r.issue}:${r.pid}`));
  const orphans = (await runtimes.recordedWorkers(runDir)).filter((r) => !known.has(`${r.issue}:${displayPid(r.tags)}`));
  return [
    ...rows,
    ...orphans.map((r) => ({
      issue: r.issue,
      state: ORPHAN_STATE,
      pid: displayPid(r.tags),
      attempt: r.attempt,
      started_at: new Date(r.startedAt).toISOString(),
      engine: "unknown",
      model: null,
      stage: null,
      last_line: null,
      quiet_seconds: null,
    })),
  ];
}

/** Status without a repository the rule can name: every registration on this machine, nothing of any one. */
export function overview(registrations: StatusResult["registrations"]): StatusResult {
  const none = { registration: null, plan: null, issue: null, source: null, births: null, spend: null, eta: null, last_tick: null, next_tick: null };
  return { scope: "project", ...none, workers: [], registrations, daemon: null };
}

export function registrationView(project: RepoFleet): NonNullable<StatusResult["registration"]> {
  const r = project.registration;
  return {
    repo: r.repo,
    instance: r.instance,
    target: r.target,
    worker_command: r.workerCommand,
    engine: r.engine ? `${r.engine.name}${r.engine.model ? ` ${r.engine.model}` : ""} (${r.engine.version})` : null,
    base: r.base,
    auto_merge: r.autoMerge,
    merges: r.autoMerge ? "authorized" : "held",
    started_at: r.startedAt,
  };
}

/**
 * What a resize changed, said in its answer: the selectors as one bounded line (the registration
 * the answer carries has no room for 20 lists of 1,000 issue numbers).
 */
export function resizeMessage(project: RepoFleet, was: { target: number; command: string }, input: ProjectResizeInput): string {
  const changes: string[] = [];
  if (input.target !== undefined) changes.push(input.target === was.target ? `target stays ${was.target}` : `target from ${was.target} to ${input.target}`);
  if (input.worker_command !== undefined) changes.push(input.worker_command === was.command ? "worker command unchanged" : "worker command replaced");
  if (input.selectors !== undefined) changes.push(`selectors now ${selectorText(project.registration.config.selectors)}`);
  const repo = project.registration.repo;
  if (changes.length === 0) return `nothing to change for ${repo}: pass target, worker_command or selectors`;
  return `resized ${repo}: ${changes.join("; ")}; applied at the next birth (running workers finish as they are)`;
}

/** Where an issue stands; `failed`: why its last attempt here failed (a retry's reason), said with a claim of ours. */
export function locateIssue(
  plan: PlanOutput,
  number: number,
  failed: { summary: string } | null = null,
  notice: string | null = null,
): NonNullable<StatusResult["issue"]> {
  // A claim says more than the exclusion it causes, so claims are looked up first.
  const mine = plan.mine.find((m) => m.issue === number);
  if (mine)
    return {
      number,
      where: "mine",
      detail: `claimed by this instance: ${mine.status}${mine.pr ? ` (PR #${mine.pr})` : ""}${waitingFor(mine, "; ")}${mine.review ? `: ${mine.review}` : ""}${failed ? `; the last attempt failed: ${failed.summary.slice(0, 500)}` : ""}${notice ? `; note: ${notice.slice(0, 500)}` : ""}`,
    };
  const live = plan.peers_live.find((p) => p.issue === number);
  if (live) return { number, where: "peer_live", detail: `claimed by live instance ${live.instance ?? "?"} on ${live.host ?? "?"}` };
  const stale = plan.peers_stale.find((p) => p.issue === number);
  if (stale) return { number, where: "stale", detail: `claimed by ${stale.instance ?? "an unknown instance"}, whose lease lapsed (${stale.stale_reason})` };
  const dispatchAt = plan.dispatch.findIndex((d) => d.number === number);
  if (dispatchAt >= 0) {
    const route = plan.dispatch[dispatchAt]!.route;
    const runs = route ? `; runs ${route.engine}${route.model ? ` ${route.model}` : ""} (${route.from})` : "";
    return { number, where: "dispatch", detail: `next to dispatch at position ${dispatchAt + 1} of ${plan.dispatch.length}${runs}` };
  }
  const excluded = plan.excluded.find((e) => e.number === number);
  if (excluded) return { number, where: "excluded", detail: excluded.text };
  const named = plan.named.find((n) => n.number === number);
  if (named) return { number, where: "not_open", detail: `#${number}, named by selector ${named.selector + 1}: ${named.text}` };
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
