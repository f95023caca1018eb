// `project_start`: register a project with this host and start its fleet. Everything is
// validated up front (config, credentials, preconditions); `dry_run` returns the first plan
// and acts on nothing. Landing needs `auto_merge: true`, visible in the client's approval.
import { projectOutput, projectStartInput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";
import { renderProject } from "./render.js";

export const projectStartTool = defineTool({
  name: "project_start",
  title: "Start an unattended fleet on a repository",
  description:
    "Starts the fleet for a repository: it claims issues the selectors pick (default: open, labelled ready-for-agent), " +
    "runs worker_command in a worktree per issue, opens PRs, gates them on CI and, only with auto_merge: true, " +
    "lands green PRs one at a time. Failing issues are retried, then escalated to ready-for-human. " +
    "Returns the registration and the first plan; dry_run: true validates and plans only.",
  // Destructive: with auto_merge it lands PRs on the base branch, which no later call undoes.
  kind: "destructive",
  input: projectStartInput,
  output: projectOutput,
  async handler(host, args, context) {
    context.step("preflight: reading the config and credentials, then the preconditions and the backlog");
    const result = await host.start(args, (message) => context.step(message));
    await context.settled();
    return result;
  },
  render: renderProject,
});
