// `afk-mcp stop`, `afk-mcp reset`, `afk-mcp resize`: the terminal's project_stop, project_reset
// and project_resize, on the fleet this machine's daemon runs (whether `afk-mcp run` or an MCP
// session registered it).
import type { Command, ParsedValues } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { UsageError } from "../gh/errors.js";
import type { ProjectResult } from "../host/api.js";
import { printJson, printLine } from "./print.js";
import { forTerminal } from "./terminal-words.js";

const REPO_OPTION = "  --repo OWNER/NAME   the repository (default: the origin of the current directory)";

function repoOf(values: ParsedValues): { repo?: string } {
  return typeof values.repo === "string" ? { repo: values.repo } : {};
}

/** Runs one call on the daemon and prints its answer, worded for a terminal. */
async function withDaemon(values: ParsedValues, call: (host: DaemonClient) => Promise<ProjectResult>): Promise<number> {
  const host = new DaemonClient();
  try {
    const result = await call(host);
    if (values.json) printJson(result);
    else printLine(forTerminal(result.message, { repo: typeof values.repo === "string" ? values.repo : null }));
    return 0;
  } finally {
    await host.close();
  }
}

export const stopCommand: Command = {
  name: "stop",
  summary: "drain a running fleet: release claims without a PR, keep those with one",
  usage: `Usage: afk-mcp stop [--repo OWNER/NAME] [--stop-workers] [--json]

Stops the fleet this machine's daemon runs on a repository: no new workers; claims without
a PR are released; running workers may finish, and their commits still get a PR; claims with
an open PR are kept for a later run.

Options:
${REPO_OPTION}
  --stop-workers      also end running workers now (their claims are released; pushed work
                      stays on its branch)
  --json              print the answer as JSON`,
  options: { repo: { type: "string" }, "stop-workers": { type: "boolean" }, json: { type: "boolean" } },
  run: (values) => withDaemon(values, (host) => host.stop({ ...repoOf(values), ...(values["stop-workers"] === true ? { stop_workers: true } : {}) })),
};

export const resetCommand: Command = {
  name: "reset",
  summary: "clear the circuit breaker and any usage-limit pause of a running fleet",
  usage: `Usage: afk-mcp reset [--repo OWNER/NAME] [--json]

Clears the circuit breaker (tripped by workers that die fast one after another) and any
usage-limit or login pause of the fleet this machine's daemon runs on a repository, so that
workers are started again. Fix the cause first: the message that paused the fleet says what
it was.

Options:
${REPO_OPTION}
  --json              print the answer as JSON`,
  options: { repo: { type: "string" }, json: { type: "boolean" } },
  run: (values) => withDaemon(values, (host) => host.reset(repoOf(values))),
};

export const resizeCommand: Command = {
  name: "resize",
  summary: "change a running fleet's width or worker command",
  usage: `Usage: afk-mcp resize [--repo OWNER/NAME] [--target N] [--worker "<command>"] [--json]

Changes the fleet this machine's daemon runs on a repository; the change applies at the
next worker start, running workers are left alone.

Options:
${REPO_OPTION}
  --target N          workers at once (1 to 64)
  --worker COMMAND    the shell command that starts one agent in its worktree
  --json              print the answer as JSON`,
  options: { repo: { type: "string" }, target: { type: "string" }, worker: { type: "string" }, json: { type: "boolean" } },
  run: (values) => {
    const target = values.target === undefined ? undefined : Number(values.target);
    if (target !== undefined && (!Number.isInteger(target) || target < 1 || target > 64))
      throw new UsageError(`--target must be an integer from 1 to 64, got ${JSON.stringify(values.target)}`);
    if (target === undefined && typeof values.worker !== "string") throw new UsageError('nothing to change: give --target N and/or --worker "<command>"');
    return withDaemon(values, (host) =>
      host.resize({
        ...repoOf(values),
        ...(target !== undefined ? { target } : {}),
        ...(typeof values.worker === "string" ? { worker_command: values.worker } : {}),
      }),
    );
  },
};
