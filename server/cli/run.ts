// `afk-mcp run`: the same host the MCP server holds, headless, for terminals and servers.
// Prints one summary line per tick; Ctrl-C, SIGTERM or SIGHUP drains (releases claims without a
// PR) and exits; a second one exits at once, saying what it left (see server/host/shutdown.ts).
import type { Command } from "./command.js";
import { FleetHost } from "../host/host.js";
import { UsageError } from "../gh/errors.js";
import { overridesFromAssignments } from "../host/config-load.js";
import { printLine } from "./print.js";
import { watchShutdown } from "../host/shutdown.js";
import { timeScaleFromEnv } from "./serve.js";

export const runCommand: Command = {
  name: "run",
  summary: "run the fleet headless on a repository until interrupted",
  usage: `Usage: afk-mcp run --repo OWNER/NAME --worker "<command>" [options]

Runs the fleet on a repository from this terminal: claims ready issues, starts the worker
command in a worktree per issue, opens PRs, gates them, and with --auto-merge lands green
PRs one at a time. Prints one line per tick. Ctrl-C (or SIGTERM, SIGHUP) drains: workers
are ended with their commits pushed to their branches, claims without a PR are released,
claims with an open PR are kept for a later run. A second Ctrl-C exits at once and says
what it left behind.

Options:
  --repo OWNER/NAME     the repository (default: the origin of the current directory)
  --worker COMMAND      the shell command that starts one agent in its worktree (required);
                        the brief is in $AFK_BRIEF, on stdin, and in {brief}
  --target N            workers at once (default: the config's concurrency)
  --auto-merge          land green PRs unattended (without it, merges are held)
  --base BRANCH         the branch to land on (default: the config's, else the default branch)
  --set KEY=VALUE       a config override, e.g. --set gate.ci=local (repeatable)
  --dry-run             validate and print the first plan; act on nothing

Example:
  afk-mcp run --repo me/app --auto-merge \\
    --worker 'claude -p "$(cat "$AFK_BRIEF")" --permission-mode bypassPermissions --max-turns 200'`,
  options: {
    repo: { type: "string" },
    worker: { type: "string" },
    target: { type: "string" },
    "auto-merge": { type: "boolean" },
    base: { type: "string" },
    set: { type: "string", multiple: true },
    "dry-run": { type: "boolean" },
  },
  async run(values) {
    const dryRun = values["dry-run"] === true;
    if (!dryRun && typeof values.worker !== "string") throw new UsageError('--worker "<command>" is required (or use --dry-run)');
    let target: number | undefined;
    if (typeof values.target === "string") {
      target = Number(values.target);
      if (!Number.isInteger(target) || target < 1 || target > 64) throw new UsageError(`--target must be an integer from 1 to 64, got ${JSON.stringify(values.target)}`);
    }
    const overrides = Array.isArray(values.set) ? overridesFromAssignments(values.set.map(String)) : {};
    const host = new FleetHost({ timeScale: timeScaleFromEnv(process.env) });
    // Watching from before the start: a signal that comes while the project starts still drains it.
    const shutdown = dryRun ? null : watchShutdown({ say: printLine, abandon: () => host.abandon() });
    let started: Awaited<ReturnType<FleetHost["start"]>>;
    try {
      started = await host.start({
        ...(typeof values.repo === "string" ? { repo: values.repo } : {}),
        ...(typeof values.worker === "string" ? { worker_command: values.worker } : {}),
        ...(target !== undefined ? { target } : {}),
        ...(typeof values.base === "string" ? { base: values.base } : {}),
        config: overrides,
        auto_merge: values["auto-merge"] === true,
        dry_run: dryRun,
      });
    } catch (error) {
      shutdown?.dispose();
      throw error;
    }
    printLine(started.message);
    if (!shutdown || !started.registration) {
      shutdown?.dispose();
      return 0;
    }
    const repo = started.registration.repo;
    let last: string | null = null;
    let stopRequested = false;
    void shutdown.requested.then(() => (stopRequested = true));
    while (!stopRequested) {
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 1000)), shutdown.requested]);
      if (stopRequested) break;
      const status = await host.status({ repo, scope: "worker" });
      if (status.last_tick && status.last_tick !== last) {
        last = status.last_tick;
        printLine(`${new Date().toISOString()}  ${last}`);
      }
    }
    // Workers are ended: nobody would watch them once this process is gone. Their commits are
    // checkpointed to their branches first, so the next run continues them.
    const stopped = await host.stop({ repo, stop_workers: true });
    printLine(stopped.message);
    await host.close();
    shutdown.dispose();
    return 0;
  },
};
