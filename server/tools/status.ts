// `status`: what the fleet would do now, read-only. Scope "project" is the dry-run plan
// (preconditions, frontier in order, exclusions with reasons, my claims, peers, stragglers,
// rate limit); "issue" says where one issue stands; "worker" lists live workers.
import { statusInput, statusOutput } from "../../schemas/tools.js";
import { renderPlan } from "../host/api.js";
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
    if (result.scope === "project" && result.plan) return renderPlan(result.plan);
    if (result.scope === "issue" && result.issue) return `#${result.issue.number}: ${result.issue.where} — ${result.issue.detail}`;
    if (result.workers.length === 0) return "no live workers";
    return result.workers.map((w) => `#${w.issue}  ${w.state}${w.pid ? `  pid ${w.pid}` : ""}`).join("\n");
  },
});
