// `afk-mcp plan`: the dry-run plan in a terminal — the same gather and rebuild a tick runs,
// stopped before act.
import type { Command } from "./command.js";
import { FleetHost } from "../host/host.js";
import { renderPlan } from "../host/plan.js";
import { printJson, printLine } from "./print.js";
import { forTerminal } from "./terminal-words.js";
import { UsageError } from "../gh/errors.js";

export const planCommand: Command = {
  name: "plan",
  summary: "print the dry-run plan for a repository (acts on nothing)",
  usage: `Usage: afk-mcp plan [--repo OWNER/NAME] [--json]

Prints what one reconciliation pass would do: the preconditions, the issues it would
dispatch in order, every other open issue with the reason it is excluded, claims (this
instance's, live peers', stale ones), stragglers and the rate limit. Exits 1 when a
precondition fails.

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --json              print the plan as JSON`,
  options: { repo: { type: "string" }, json: { type: "boolean" } },
  async run(values) {
    if (values.repo !== undefined && typeof values.repo !== "string") throw new UsageError("--repo takes OWNER/NAME");
    const host = new FleetHost();
    const plan = await host.plan(values.repo as string | undefined);
    if (values.json) printJson(plan);
    else printLine(forTerminal(renderPlan(plan), { repo: plan.repo }));
    return plan.ready ? 0 : 1;
  },
};
