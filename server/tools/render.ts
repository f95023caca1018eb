// Text renderings shared by the project tools, and the plan-less answer of those that change a
// running project (projectChangeOutput).
import { durationText, renderPlan, type ProjectResult, type StatusResult } from "../host/api.js";

/** A resize, stop or reset answer: the host never plans for these (the schema says plan is null). */
export function changeAnswer(result: ProjectResult): ProjectResult & { plan: null } {
  return { ...result, plan: null };
}

export function renderProject(result: ProjectResult): string {
  const lines = [result.message];
  const r = result.registration;
  if (r) {
    lines.push(`registration: ${r.repo}, instance ${r.instance}, target ${r.target}, base ${r.base}, merges ${r.merges}`, `worker: ${r.worker_command}`);
    if (r.engine) lines.push(`engine: ${r.engine}`);
  }
  if (result.plan) lines.push("", renderPlan(result.plan, r !== null));
  return lines.join("\n");
}

/**
 * What status's structured content says that a human or a model must not miss, as text
 * (several clients show the model only the text): the registration, whether births are
 * paused and why, merges held or authorised, the last and next tick, and where the plan
 * comes from and how old it is.
 */
export function renderStatusHead(result: StatusResult): string[] {
  const lines: string[] = [];
  const r = result.registration;
  if (r) {
    lines.push(`running: ${r.repo}, instance ${r.instance}, target ${r.target} worker(s), base ${r.base}, since ${r.started_at}`);
    lines.push(
      r.merges === "authorized" ? "merges: authorized (green PRs land unattended)" : "merges: HELD (started without auto_merge: green PRs wait for a human)",
    );
  } else {
    lines.push("not running on this host (project_start starts it)");
  }
  if (result.births) {
    lines.push(
      result.births.paused
        ? `births: PAUSED: ${result.births.reason ?? "no reason given"}${result.births.until ? ` (until ${result.births.until})` : ""}`
        : "births: open",
    );
  }
  if (result.spend) lines.push(result.spend.text);
  if (result.eta) lines.push(result.eta.text);
  if (result.last_tick) lines.push(`last tick: ${result.last_tick}`);
  if (result.next_tick) lines.push(`next tick: ${result.next_tick}`);
  if (result.source) {
    lines.push(
      result.source.from === "fleet_tick"
        ? `plan: from the fleet's last tick, ${result.source.age_seconds}s old`
        : `plan: read from GitHub now (${result.source.at})`,
    );
  }
  return lines;
}

/**
 * A worker's lines (status scope worker and the board): who it is, then what it is doing (its
 * stage) and for how long it has been quiet, then its last line where that says more.
 */
export function workerLines(w: StatusResult["workers"][number], head: string, indent = ""): string[] {
  const lines = [`${indent}${head}`];
  const quiet = w.quiet_seconds === null ? "" : ` (quiet ${durationText(w.quiet_seconds * 1000)})`;
  if (w.stage !== null || w.quiet_seconds !== null) lines.push(`${indent}    doing: ${w.stage ?? "nothing printed yet"}${quiet}`);
  if (w.last_line !== null && w.last_line !== w.stage) lines.push(`${indent}    last line: ${w.last_line}`);
  return lines;
}
