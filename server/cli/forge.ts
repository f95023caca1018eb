// `afk-mcp forge`: the local GitHub-compatible forge by itself, for trying the fleet without
// GitHub and for tests. Prints one JSON line of connection facts, then serves until stopped.
import { resolve } from "node:path";
import type { Command } from "./command.js";
import { UsageError } from "../gh/errors.js";
import { forgeMain } from "../forge-emulator/index.js";
import { printLine } from "./print.js";
import { parseSlug } from "../gh/slug.js";

export const forgeCommand: Command = {
  name: "forge",
  summary: "serve a local GitHub-compatible forge over a bare git repository",
  usage: `Usage: afk-mcp forge --dir DIR [--port N] [--repo OWNER/NAME] [--seed FILE] [--user NAME ...]
                  [--actions-concurrency N]

Creates (or reopens) a bare repository in DIR and serves GitHub's REST API for it on
127.0.0.1, plus git over smart HTTP. Prints one JSON line:
  {"api_url", "git_url", "token", "repo", "users"}
then serves until interrupted. State survives a restart on the same DIR.

Options:
  --dir DIR          where the forge keeps its state and bare repository (required)
  --port N           TCP port on 127.0.0.1 (default: any free port)
  --repo OWNER/NAME  the repository to serve (default: afk/demo)
  --seed FILE        a JSON backlog to load when DIR is new (labels, issues, files)
  --user NAME        another login with its own token (repeatable); "token" is afk-bot's
  --actions-concurrency N
                     workflow runs the local runner runs at once (default 2; more queue)

Point the fleet at it with GITHUB_API_URL=<api_url> GITHUB_TOKEN=<token>.`,
  options: {
    dir: { type: "string" },
    port: { type: "string" },
    repo: { type: "string" },
    seed: { type: "string" },
    user: { type: "string", multiple: true },
    "actions-concurrency": { type: "string" },
  },
  async run(values) {
    const dir = values.dir;
    if (typeof dir !== "string" || dir === "") throw new UsageError("--dir DIR is required");
    let port = 0;
    if (typeof values.port === "string") {
      port = Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
      }
    }
    let actionsConcurrency: number | undefined;
    if (typeof values["actions-concurrency"] === "string") {
      actionsConcurrency = Number(values["actions-concurrency"]);
      if (!Number.isInteger(actionsConcurrency) || actionsConcurrency < 1 || actionsConcurrency > 256) {
        throw new UsageError(`--actions-concurrency must be an integer from 1 to 256, got ${JSON.stringify(values["actions-concurrency"])}`);
      }
    }
    const repo = typeof values.repo === "string" ? values.repo : "afk/demo";
    parseSlug(repo);
    const users = Array.isArray(values.user) ? values.user.map(String) : [];
    for (const user of users) {
      if (!/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(user)) {
        throw new UsageError(`--user ${JSON.stringify(user)} is not a valid login (letters, digits, hyphens; at most 39)`);
      }
    }
    await forgeMain(
      {
        dir: resolve(dir),
        port,
        repo,
        users,
        ...(actionsConcurrency !== undefined ? { actionsConcurrency } : {}),
        ...(typeof values.seed === "string" ? { seed: resolve(values.seed) } : {}),
      },
      printLine,
    );
    return 0;
  },
};
