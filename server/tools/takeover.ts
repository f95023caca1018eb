// `takeover`: list the fleet instances GitHub remembers, or take a dead one's claims now
// instead of waiting for its lease to lapse. A fresh lease is refused without `confirm`.
import { takeoverInput, takeoverOutput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";

export const takeoverTool = defineTool({
  name: "takeover",
  title: "Take over a dead fleet's claims",
  description:
    "With list: true, lists every fleet instance that has claims or a heartbeat in the repository (host, claim count, " +
    "heartbeat age, whether its lease is fresh). With instance, takes that instance's claims by compare-and-swap; " +
    "if its heartbeat is still fresh, answers action \"confirm\" with a warning and takes nothing unless confirm: true. " +
    "Use it when you know a fleet is dead (its host crashed or ran out of quota).",
  kind: "destructive",
  input: takeoverInput,
  output: takeoverOutput,
  handler: (host, args) => host.takeover(args),
  render(result) {
    const rows = result.instances.map(
      (r) =>
        `  ${r.instance}${r.is_me ? " (this instance)" : ""}  host ${r.host ?? "?"}  claims ${r.claim_count}` +
        `  heartbeat ${r.heartbeat_age_seconds === null ? "none" : `${r.heartbeat_age_seconds}s ago`}  ${r.fresh ? "fresh" : "stale"}`,
    );
    return [result.message, ...rows].join("\n");
  },
});
