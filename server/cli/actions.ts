// `afk-mcp actions init`: proposes the workflow runtime "actions" dispatches, as a pull request
// on the repository (server/host/actions-init.ts). Reads the repository's config for the
// workflow's file name (`actions.workflow`).
import type { Command } from "./command.js";
import { UsageError } from "../gh/errors.js";
import { actionsInit } from "../host/actions-init.js";
import { connect } from "../host/connection.js";
import { printJson, printLine } from "./print.js";

export const actionsCommand: Command = {
  name: "actions",
  summary: 'actions init: propose the workflow runtime "actions" dispatches, as a pull request',
  usage: `Usage: afk-mcp actions init [--repo OWNER/NAME] [--setup COMMAND]... [--json]

Opens a pull request adding .github/workflows/afk-worker.yml (config \`actions.workflow\`): the
workflow a fleet with "runtime": "actions" dispatches once per worker attempt. Each run checks
out the issue branch, runs \`npx afk-mcp worker\`, and pushes only to that branch and the
fleet's run ref. Nothing is pushed to the base. Says so instead when the workflow is already
on the default branch, or a PR for it is open.

The engine's API key is a repository secret the workflow names (ANTHROPIC_API_KEY for claude,
OPENAI_API_KEY for codex): set it with \`gh secret set ANTHROPIC_API_KEY\`. Adding a workflow
file needs a token with the \`workflow\` scope (gh auth refresh -s workflow).

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --setup COMMAND     a step that installs the engine before the worker runs, e.g.
                      "npm i -g @anthropic-ai/claude-code" (repeatable)
  --json              print the answer as JSON: {status, path, pr, message}`,
  options: { repo: { type: "string" }, setup: { type: "string", multiple: true }, json: { type: "boolean" } },
  positionals: true,
  async run(values, positionals) {
    if (positionals[0] !== "init" || positionals.length > 1)
      throw new UsageError('afk-mcp actions: expected "init" (afk-mcp actions init [--repo OWNER/NAME])');
    const setup = Array.isArray(values.setup) ? values.setup.filter((s): s is string => typeof s === "string") : [];
    const conn = await connect({ repo: typeof values.repo === "string" ? values.repo : undefined });
    const result = await actionsInit(conn, setup.length ? { setup } : {});
    if (values.json === true) printJson(result);
    else printLine(result.message);
    return 0;
  },
};
