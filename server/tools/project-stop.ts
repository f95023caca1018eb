// `project_stop`: drain. No new workers; claims without a PR are released, those with a PR
// are kept for a later run or a peer; optionally the running workers are killed first.
import { projectChangeOutput, projectStopInput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";
import { changeAnswer, renderProject } from "./render.js";

export const projectStopTool = defineTool({
  name: "project_stop",
  title: "Stop (drain) a running fleet",
  description:
    "Stops a project: no new workers start, claims with no PR are released (the issues go back to the backlog), claims with an open PR are kept. " +
    "With stop_workers: true, running workers are killed first (their committed work stays on their branches).",
  kind: "destructive",
  input: projectStopInput,
  output: projectChangeOutput,
  async handler(host, args, context) {
    const result = await host.stop(args, (message) => context.step(message));
    await context.settled();
    return changeAnswer(result);
  },
  render: renderProject,
});
