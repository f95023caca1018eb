// `status`: what the fleet would do now, read-only. Scope "project" is the dry-run plan
// (preconditions, frontier in order, exclusions with reasons, my claims, peers, stragglers,
// rate limit); "issue" says where one issue stands; "worker" lists live workers.
import { statusInput, statusOutput } from "../../schemas/tools.js";
import { renderPlan } from "../host/plan.js";
import { defineTool } from "./define.js";
import { renderStatusHead } from "./render.js";

export const statusTool = defineTool({
  name: "status",
  title: "Fleet status and dry-run plan",
  description:
    "Read-only; writes nothing to GitHub. For a repository: the project this host runs (registration, births paused or not and why, merges held or authorized, " +
    "last and next tick) and the dry-run plan of one reconciliation pass — preconditions, the first issues it would dispatch, counts of open issues per exclusion reason, " +
    "issues needing a human, this instance's claims by PR state, peers' live and stale claims, stragglers, the rate limit. With a fleet running, the plan comes from its last tick (its age is stated). " +
    "detail: true lists every dispatchable and excluded issue a page at a time (cursor: the previous answer's next_cursor).",
  kind: "read",
  input: statusInput,
  output: statusOutput,
  handler: (host, args) => host.status(args),
  render(result) {
    const head = renderStatusHead(result);
    if (result.scope === "project" && result.plan) return [...head, "", renderPlan(result.plan)].join("\n");
    if (result.scope === "issue" && result.issue) return [...head, "", `#${result.issue.number}: ${result.issue.where} — ${result.issue.detail}`].join("\n");
    if (result.workers.length === 0) return [...head, "", "no live workers"].join("\n");
    return [...head, "", ...result.workers.map((w) => `#${w.issue}  ${w.state}${w.pid ? `  pid ${w.pid}` : ""}  attempt ${w.attempt}  since ${w.started_at}`)].join("\n");
  },
});
