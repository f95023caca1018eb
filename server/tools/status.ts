// `status`: what the fleet would do now, read-only. Scope "project" is the dry-run plan
// (preconditions, frontier in order, exclusions with reasons, my claims, peers, stragglers,
// rate limit) plus this machine's daemon and registrations (without a repository the host can
// tell, those alone: every registration on a line); "issue" says where one issue stands;
// "worker" lists live workers and what each is doing.
import { statusInput, statusOutput } from "../../schemas/tools.js";
import { renderPlan, renewalText, selectorText, type StatusResult } from "../host/api.js";
import { defineTool } from "./define.js";
import { renderStatusHead, workerLines } from "./render.js";
import { BOARD_APP_LINK } from "./resources.js";

export const statusTool = defineTool({
  name: "status",
  title: "Fleet status and dry-run plan",
  description:
    "Read-only; writes nothing to GitHub. For a repository: the project this host runs (registration, births paused or not and why, merges held or authorized, " +
    "last and next tick) and the dry-run plan of one reconciliation pass — preconditions, the first issues it would dispatch, counts of open issues per exclusion reason, " +
    "issues needing a human, this instance's claims by PR state, peers' claims, stragglers, the rate limit. A running fleet's plan is its last tick's (age stated). " +
    "Without repo, where neither the directory's origin nor a sole project names one: every registration on this machine, one a line. " +
    'Scope "worker": each worker\'s stage (the tool its engine runs, else its last line), last line and how long it has been quiet. ' +
    "detail: true pages through every dispatchable and excluded issue (cursor: the previous next_cursor).",
  kind: "read",
  meta: BOARD_APP_LINK,
  input: statusInput,
  output: statusOutput,
  handler: (host, args) => host.status(args),
  render: renderStatus,
});

/** Status as text: what its structured result says that a human or a model must not miss. */
export function renderStatus(result: StatusResult): string {
  const head = renderStatusHead(result);
  if (result.scope === "project" && result.plan)
    return [...head, ...machineLines(result), "", renderPlan(result.plan, result.registration !== null)].join("\n");
  if (result.scope === "project")
    return [
      ...machineLines(result, result.registrations.length > 0 ? "daemon: none (this process runs the fleets below)" : "daemon: none running"),
      "",
      result.registrations.length === 0
        ? 'no project is registered on this machine: pass repo ("owner/name") for a repository\'s plan, or project_start one'
        : 'pass repo ("owner/name") for one registration\'s plan, workers or issue',
    ].join("\n");
  if (result.scope === "issue" && result.issue) return [...head, "", `#${result.issue.number}: ${result.issue.where} — ${result.issue.detail}`].join("\n");
  if (result.workers.length === 0) return [...head, "", "no live workers"].join("\n");
  const orphans = result.workers.filter((w) => w.state === "orphan").length;
  const why =
    orphans === 0
      ? []
      : [
          "",
          `${orphans} orphan(s): still running, but no fleet of ${result.daemon ? "this daemon" : "a running daemon"} watches them (the daemon that started them is gone); a daemon that resumes their registration adopts them (a session's next call restarts a crashed daemon, as does afk-mcp daemon)`,
        ];
  return [
    ...head,
    "",
    ...result.workers.flatMap((w) => workerLines(w, `#${w.issue}  ${w.state}${w.pid ? `  pid ${w.pid}` : ""}  attempt ${w.attempt}  since ${w.started_at}`)),
    ...why,
  ].join("\n");
}

/** This machine's side: the daemon (and any version skew) and every registration it holds. */
function machineLines(
  result: Pick<StatusResult, "registrations" | "daemon">,
  none = "daemon: none running (this answer was read from GitHub directly)",
): string[] {
  const lines = [result.daemon ? `daemon: pid ${result.daemon.pid}, afk-mcp ${result.daemon.version}` : none];
  if (result.daemon?.skew) lines.push(`version skew: ${result.daemon.skew}`);
  for (const r of result.registrations) {
    const free = Math.max(0, r.target - r.workers);
    lines.push(
      `registration ${r.repo}: ${r.state}, target ${r.target} (${free} slot(s) free), ${r.workers} worker(s), ${r.in_flight ?? "-"} in flight, ${r.landed_today} landed today, ${r.needs_human ?? "-"} needing a human, selectors ${selectorText(r.selectors)}, renewed by ${r.sessions.length} live session(s)${r.sessions_gone > 0 ? ` (${r.sessions_gone} gone, whose last renewal holds until it lapses)` : ""}, lapses ${renewalText(r)}, last poll ${r.last_poll ?? "-"}`,
    );
  }
  return lines;
}
