// `afk-mcp actions init`: proposes the workflow runtime "actions" dispatches, as a pull request
// on the repository (server/host/actions-init.ts). Reads the repository's config for the
// workflow's file name (`actions.workflow`).
import type { Command } from "./command.js";
import { UsageError } from "../gh/errors.js";
import { actionsInit } from "../host/actions-init.js";
import { connect } from "../host/connection.js";
import { printJson, printLine } from "./print.js";
import { version } from "../version.js";

export const actionsCommand: Command = {
  name: "actions",
  summary: 'actions init: propose the workflow runtime "actions" dispatches, as a pull request',
  usage: `Usage: afk-mcp actions init [--repo OWNER/NAME] [--worker COMMAND] [--setup COMMAND]... [--json]

Opens a pull request adding .github/workflows/afk-worker.yml (config \`actions.workflow\`): the
workflow a fleet with "runtime": "actions" dispatches once per worker attempt. Each run checks
out the issue branch, runs \`npx -y afk-mcp@${version} worker\` (this version, from the npm
registry), and pushes only to that branch and the fleet's run ref. Nothing is pushed to the
base. Says so instead when the workflow is already on the default branch, or a PR for it is open.

Every answer says which afk-mcp the worker step runs and whether the npm registry has that
version (the registry npm uses: npm_config_registry, else registry.npmjs.org; offline, it says
it could not check). A version the registry lacks fails every run before its worker starts: a
build of main or a fork needs --worker.

The engine's API key is a repository secret the workflow names (ANTHROPIC_API_KEY for claude,
OPENAI_API_KEY for codex): set it with \`gh secret set ANTHROPIC_API_KEY\`. Adding a workflow
file needs a token with the \`workflow\` scope (gh auth refresh -s workflow).

Options:
  --repo OWNER/NAME   the repository (default: the origin of the current directory)
  --worker COMMAND    the worker step's command instead of the npx pin: a build of your own,
                      e.g. "npx -y github:you/afk-mcp#main worker" or "node tools/afk/bin.js
                      worker" (it must run \`afk-mcp worker\`)
  --setup COMMAND     a step that installs the engine before the worker runs, e.g.
                      "npm i -g @anthropic-ai/claude-code" (repeatable)
  --json              print the answer as JSON: {status, path, pr, worker, message}`,
  options: { repo: { type: "string" }, worker: { type: "string" }, setup: { type: "string", multiple: true }, json: { type: "boolean" } },
  positionals: true,
  async run(values, positionals) {
    if (positionals[0] !== "init" || positionals.length > 1)
      throw new UsageError('afk-mcp actions: expected "init" (afk-mcp actions init [--repo OWNER/NAME])');
    const setup = Array.isArray(values.setup) ? values.setup.filter((s): s is string => typeof s === "string") : [];
    const worker = typeof values.worker === "string" ? values.worker.trim() : undefined;
    if (worker === "")
      throw new UsageError('afk-mcp actions init: --worker needs the command the worker step runs, e.g. --worker "node tools/afk/bin.js worker"');
    const conn = await connect({ repo: typeof values.repo === "string" ? values.repo : undefined });
    const result = await actionsInit(conn, { ...(setup.length ? { setup } : {}), ...(worker ? { worker } : {}) });
    if (values.json === true) printJson(result);
    else printLine(result.message);
    return 0;
  },
};
