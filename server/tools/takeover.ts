// `takeover`: list the fleet instances GitHub remembers, or take a dead one's claims now
// instead of waiting for its lease to lapse. A fresh lease is refused without `confirm`.
import { takeoverInput, takeoverOutput } from "../../schemas/tools.js";
import type { TakeoverResult } from "../host/api.js";
import { defineTool } from "./define.js";

export const takeoverTool = defineTool({
  name: "takeover",
  title: "Take over a dead fleet's claims",
  description:
    "With list: true, lists every fleet instance with claims or a heartbeat in the repository (host, claims, " +
    "heartbeat age, lease fresh or not). With instance, takes its claims by compare-and-swap; " +
    'a fresh heartbeat answers action "confirm" and takes nothing unless confirm: true. ' +
    "Use it when you know a fleet is dead (its host crashed or ran out of quota).",
  kind: "destructive",
  input: takeoverInput,
  output: takeoverOutput,
  handler: (host, args) => host.takeover(args),
  render: renderTakeover,
});

/** The text of a takeover answer: the message, the issues taken, and each instance with its claims. */
export function renderTakeover(result: TakeoverResult): string {
  const rows = result.instances.map((r) => {
    const mine = r.this_daemon ? " (this machine's daemon)" : r.is_me ? " (this instance)" : "";
    return (
      `  ${r.instance}${mine}  host ${r.host ?? "?"}  claims ${r.claim_count}${r.claims.length > 0 ? ` (${issueList(r.claims)})` : ""}` +
      `  heartbeat ${r.heartbeat_age_seconds === null ? "none" : `${r.heartbeat_age_seconds}s ago`}  ${r.fresh ? "fresh" : "stale"}`
    );
  });
  // The message counts what was taken (and names what was lost); the issues taken are listed here.
  const moved = result.taken.length > 0 ? [`taken: ${issueList(result.taken.map((t) => t.issue))}`] : [];
  return [result.message, ...moved, ...rows].join("\n");
}

/** Issue numbers for the text: the first 20, then how many more (the structured rows hold them all). */
export function issueList(issues: number[]): string {
  const shown = issues
    .slice(0, 20)
    .map((n) => `#${n}`)
    .join(", ");
  return issues.length > 20 ? `${shown} and ${issues.length - 20} more` : shown;
}
