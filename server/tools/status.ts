// `status`: what the fleet would do now, read-only. Scope "project" is the dry-run plan
// (preconditions, frontier in order, exclusions with reasons, my claims, peers, stragglers,
// rate limit) plus this machine's daemon and registrations; "issue" says where one issue
// stands; "worker" lists live workers.
import { statusInput, statusOutput } from "../../schemas/tools.js";
import { renderPlan } from "../host/plan.js";
import { defineTool } from "./define.js";

export const statusTool = defineTool({
  name: "status",
  title: "Fleet status and dry-run plan",
  description:
    "Read-only. For a repository: the project this host runs (if any) and the dry-run plan of one reconciliation pass — " +
    "preconditions, the issues it would dispatch in order, every other open issue with the reason it is excluded, " +
    "this instance's claims by PR state, peers' live and stale claims, stragglers, and the rate limit. Acts on nothing.",
  kind: "read",
  input: statusInput,
  output: statusOutput,
  handler: (host, args) => host.status(args),
  render(result) {
    if (result.scope === "project" && result.plan) return [renderPlan(result.plan), ...machineLines(result)].join("\n");
    if (result.scope === "issue" && result.issue) return `#${result.issue.number}: ${result.issue.where} — ${result.issue.detail}`;
    if (result.workers.length === 0) return "no live workers";
    return result.workers.map((w) => `#${w.issue}  ${w.state}${w.pid ? `  pid ${w.pid}` : ""}`).join("\n");
  },
});

/** This machine's side: the daemon (and any version skew) and every registration it holds. */
function machineLines(result: { registrations: { repo: string; state: string; target: number; workers: number; sessions: string[]; renew_by: string | null; last_poll: string | null }[]; daemon: { pid: number; version: string; skew: string | null } | null }): string[] {
  const lines = [result.daemon ? `daemon: pid ${result.daemon.pid}, afk-mcp ${result.daemon.version}` : "daemon: none running (this answer was read from GitHub directly)"];
  if (result.daemon?.skew) lines.push(`version skew: ${result.daemon.skew}`);
  for (const r of result.registrations) {
    lines.push(`registration ${r.repo}: ${r.state}, target ${r.target}, ${r.workers} worker(s), renewed by ${r.sessions.length} session(s), lapses ${r.renew_by ?? "never"}, last poll ${r.last_poll ?? "-"}`);
  }
  return lines;
}
