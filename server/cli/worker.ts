// `afk-mcp worker`: the step of the workflow `afk-mcp actions init` writes, on a GitHub Actions
// runner. It takes its inputs from the step's environment (AFK_ISSUE, AFK_BRANCH, …, set from
// the dispatch's inputs), runs the engine, pushes the issue branch and the heartbeats, and exits
// with the engine's code. Not for a terminal: the host dispatches it (runtime "actions").
import type { Command } from "./command.js";
import { runWorker } from "../runtimes/actions/runner-worker.js";

export const workerCommand: Command = {
  name: "worker",
  summary: 'run one worker attempt on a GitHub Actions runner (the step of the workflow runtime "actions" dispatches)',
  usage: `Usage: afk-mcp worker

Runs one worker attempt inside the workflow \`afk-mcp actions init\` writes: checks out the
issue branch, runs the engine's command with the brief on stdin, pushes the branch's new
commits (that branch only, never forced) and a heartbeat every AFK_BEAT_SECONDS to the issue's
run ref, and exits with the engine's exit code. Its inputs come from the step's environment:
AFK_ISSUE, AFK_BRANCH, AFK_BASE, AFK_ATTEMPT, AFK_ENGINE, AFK_COMMAND, AFK_BRIEF_TEXT,
AFK_RUN_REF, AFK_BEAT_SECONDS, AFK_ENV_JSON, and GITHUB_RUN_ID, GITHUB_WORKSPACE, RUNNER_TEMP.
The engine gets the runner's environment without the job's tokens.`,
  options: {},
  async run() {
    return runWorker(process.env);
  },
};
