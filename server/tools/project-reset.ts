// `project_reset`: clear the circuit breaker (and a usage-limit pause) so births resume.
import { projectChangeOutput, projectResetInput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";
import { changeAnswer, renderProject } from "./render.js";

export const projectResetTool = defineTool({
  name: "project_reset",
  title: "Reset the circuit breaker",
  description:
    "Clears a running project's circuit breaker (tripped by worker commands that die within seconds) and any usage-limit pause, so workers start again. Fix the worker command first.",
  kind: "update",
  input: projectResetInput,
  output: projectChangeOutput,
  handler: async (host, args) => changeAnswer(await host.reset(args)),
  render: renderProject,
});
