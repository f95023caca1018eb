// `afk-mcp run`: a session from a terminal. It registers the project with this machine's daemon
// and renews it while it runs; prints one summary line per tick. Ctrl-C, SIGTERM or SIGHUP
// stops the project and its workers (see server/host/shutdown.ts); a second one exits at once.
import type { Command } from "./command.js";
import { DaemonClient } from "../daemon/client.js";
import { renderPlan } from "../host/plan.js";
import { UsageError } from "../gh/errors.js";
import { overridesFromAssignments } from "../host/config-load.js";
import { renderReport } from "../lanes/index.js";
import { printLine } from "./print.js";
import { forTerminal } from "./terminal-words.js";
import { watchShutdown } from "../host/shutdown.js";
import { timeScaleFromEnv } from "./serve.js";
import { setTimeout as sleep } from "node:timers/promises";

/** Exit code of a pass: 0 when nothing is ready and no claim of this fleet remains, else 3. */
async function workRemains(host: DaemonClient, repo: string): Promise<number> {
  const status = await host.status({ repo, scope: "project" });
  const plan = status.plan;
  if (!plan) return 3; // cannot tell: say work remains, a cron job runs again
  return plan.totals.dispatch > 0 || plan.mine.length > 0 ? 3 : 0;
}

export const runCommand: Command = {
  name: "run",
  summary: "run the fleet headless on a repository until interrupted",
  usage: `Usage: afk-mcp run --repo OWNER/NAME --worker "<command>" [options]

Runs the fleet on a repository from this terminal: claims ready issues, starts the worker
command in a worktree per issue, opens PRs, gates them, and with --auto-merge lands green
PRs one at a time. Prints one line per tick. The fleet runs in this machine's afk-mcp
daemon (started if needed); this command is a session that renews its registration, so if
it is killed the registration lapses after registration.ttl_seconds and drains. Ctrl-C (or
SIGTERM, SIGHUP) stops it: workers are ended with their commits pushed to their branches,
claims without a PR are released, claims with an open PR are kept for a later run. A second
Ctrl-C exits at once; the daemon finishes the drain.

Options:
  --repo OWNER/NAME     the repository (default: the origin of the current directory)
  --worker COMMAND      the shell command that starts one agent in its worktree (required);
                        the brief is in $AFK_BRIEF, on stdin, and in {brief}
  --engine NAME         instead of --worker: an engine profile (claude, codex, gemini, or one
                        under config "engines") that builds the agent CLI's command line
  --model M             with --engine: the model the CLI is given
  --target N            workers at once (default: the config's concurrency)
  --auto-merge          land green PRs unattended (without it, merges are held)
  --base BRANCH         the branch to land on (default: the config's, else the default branch)
  --set KEY=VALUE       a config override, e.g. --set gate.ci=local (repeatable)
  --dry-run             validate and print the first plan; act on nothing
  --persist             the registration never lapses (registration.ttl_seconds: null): for a
                        server under a supervisor; stop it with afk-mcp stop or afk-mcp daemon stop
  --once                one pass, for cron and CI: one tick, then the daemon drains the project
                        (nothing more is born; this command waits while the workers and landings
                        that tick started finish), then exits: 0 when no work remains (nothing
                        ready, no claim of this fleet), 3 when some does
  --max-issues N        stop births once N issues reached an end (landed, escalated, closed as
                        done); the project then drains and this command exits

It also exits (code 0) when the daemon deregisters the project because its queue drained.

Example:
  afk-mcp run --repo me/app --auto-merge \\
    --worker 'claude -p "$(cat "$AFK_BRIEF")" --permission-mode bypassPermissions --max-turns 200'`,
  options: {
    repo: { type: "string" },
    worker: { type: "string" },
    engine: { type: "string" },
    model: { type: "string" },
    target: { type: "string" },
    "auto-merge": { type: "boolean" },
    base: { type: "string" },
    set: { type: "string", multiple: true },
    "dry-run": { type: "boolean" },
    persist: { type: "boolean" },
    once: { type: "boolean" },
    "max-issues": { type: "string" },
  },
  async run(values) {
    const dryRun = values["dry-run"] === true;
    if (!dryRun && typeof values.worker !== "string" && typeof values.engine !== "string")
      throw new UsageError('--worker "<command>" or --engine NAME is required (or use --dry-run)');
    if (typeof values.model === "string" && typeof values.engine !== "string")
      throw new UsageError("--model needs --engine NAME (a worker command names its own model)");
    let target: number | undefined;
    if (typeof values.target === "string") {
      target = Number(values.target);
      if (!Number.isInteger(target) || target < 1 || target > 64)
        throw new UsageError(`--target must be an integer from 1 to 64, got ${JSON.stringify(values.target)}`);
    }
    let maxIssues: number | undefined;
    if (typeof values["max-issues"] === "string") {
      maxIssues = Number(values["max-issues"]);
      if (!/^\s*-?\d+\s*$/.test(values["max-issues"]) || !Number.isSafeInteger(maxIssues) || maxIssues < 1) {
        throw new UsageError(`--max-issues must be a whole number of issues, 1 or more, got ${JSON.stringify(values["max-issues"])} (leave it out for no cap)`);
      }
    }
    const once = values.once === true;
    const overrides: Record<string, unknown> = Array.isArray(values.set) ? overridesFromAssignments(values.set.map(String)) : {};
    if (values.persist === true) overrides.registration = { ...((overrides.registration as object | undefined) ?? {}), ttl_seconds: null };
    timeScaleFromEnv(process.env);
    const host = new DaemonClient();
    // Watching from before the start: a signal that comes while the project starts still drains it.
    const shutdown = dryRun
      ? null
      : watchShutdown({
          say: printLine,
          // The drain runs in the daemon and goes on without this process.
          abandon: async () =>
            `the daemon${host.daemon() ? ` (pid ${host.daemon()!.pid})` : ""} finishes the drain: it ends the workers and releases their claims`,
        });
    let started: Awaited<ReturnType<DaemonClient["start"]>>;
    try {
      started = await host.start({
        ...(typeof values.repo === "string" ? { repo: values.repo } : {}),
        ...(typeof values.worker === "string" ? { worker_command: values.worker } : {}),
        ...(typeof values.engine === "string" ? { engine: values.engine } : {}),
        ...(typeof values.model === "string" ? { model: values.model } : {}),
        ...(target !== undefined ? { target } : {}),
        ...(typeof values.base === "string" ? { base: values.base } : {}),
        config: overrides,
        auto_merge: values["auto-merge"] === true,
        dry_run: dryRun,
        ...(once ? { once: true } : {}),
        ...(maxIssues !== undefined ? { max_issues: maxIssues } : {}),
      });
    } catch (error) {
      shutdown?.dispose();
      throw error;
    }
    // A dry run says what would run and the plan, as `afk-mcp plan` does.
    const said = dryRun && started.plan ? `${started.message}\n\n${renderPlan(started.plan)}` : started.message;
    printLine(forTerminal(said, { repo: started.registration?.repo ?? (typeof values.repo === "string" ? values.repo : null) }));
    if (!shutdown || !started.registration) {
      shutdown?.dispose();
      return 0;
    }
    const repo = started.registration.repo;
    let last: string | null = null;
    let stopRequested = false;
    void shutdown.requested.then(() => (stopRequested = true));
    while (!stopRequested) {
      await Promise.race([sleep(1000), shutdown.requested]);
      if (stopRequested) break;
      const status = await host.status({ repo, scope: "worker" });
      if (status.last_tick && status.last_tick !== last) {
        last = status.last_tick;
        printLine(forTerminal(last, { repo })); // "<tick time>: <summary>"
      }
      if (status.registration === null && status.daemon !== null) {
        // The project ended in the daemon: its queue drained and it deregistered, or the pass
        // (--once) or the cap (--max-issues) was reached and its drain is done. Nothing to stop.
        shutdown.dispose();
        const code = once ? await workRemains(host, repo) : 0;
        printLine(
          forTerminal(
            `${repo}: the project ended and its registration is gone${once ? (code === 0 ? "; no work remains" : "; work remains (exit 3): run again") : ""}`,
            { repo },
          ),
        );
        await host.close();
        return code;
      }
    }
    // Workers are ended, as a terminal's Ctrl-C means; their commits are checkpointed to their
    // branches first, so the next run continues them.
    const stopped = await host.stop({ repo, stop_workers: true });
    printLine(forTerminal(stopped.message, { repo }));
    // The final report, from the ledger the stop just closed (its JSON is beside the ledger: afk-mcp report --json).
    const report = await host.report({ repo }).catch(() => null);
    if (report) printLine(renderReport({ ...report, reason: "run_exit" }));
    await host.close();
    shutdown.dispose();
    return 0;
  },
};
