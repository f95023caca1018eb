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
  usage: `Usage: afk-mcp plan [--repo OWNER/NAME] [--engine NAME [--model M]] [--json]

Prints what one reconciliation pass would do: what will run (each engine's binary, version,
model, provider and budget; the runtime and what it lets through), the preconditions, the
issues it would dispatch in order (with each one's engine and model under --engine), every
other open issue with the reason it is excluded, the issues the selectors name that will not
run now and why, claims (this instance's, live peers', stale ones), stragglers and the rate
limit. Exits 1 when a precondition fails.

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --engine NAME       the engine a start would run (claude, codex, gemini, or one under
                      config "engines"): verified, and each dispatched issue's route shown
  --model M           with --engine: the model a start would give it
  --json              print the plan as JSON`,
  options: { repo: { type: "string" }, engine: { type: "string" }, model: { type: "string" }, json: { type: "boolean" } },
  async run(values) {
    if (values.repo !== undefined && typeof values.repo !== "string") throw new UsageError("--repo takes OWNER/NAME");
    if (values.model !== undefined && typeof values.engine !== "string") throw new UsageError("--model needs --engine NAME");
    const host = new FleetHost();
    const run = {
      ...(typeof values.engine === "string" ? { engine: values.engine } : {}),
      ...(typeof values.model === "string" ? { model: values.model } : {}),
    };
    const plan = await host.plan(values.repo as string | undefined, {}, run);
    if (values.json) printJson(plan);
    else printLine(forTerminal(renderPlan(plan), { repo: plan.repo }));
    return plan.ready ? 0 : 1;
  },
};
