// `afk-mcp daemon`: the per-machine host that holds registrations and owns the workers.
// Plain `daemon` starts it detached (exit 0 also when one already runs); `--foreground` runs it
// here (systemd, launchd, containers); `status`, `stop` (drains first) and `restart`.
import type { Command } from "./command.js";
import { UsageError } from "../gh/errors.js";
import { printLine } from "./print.js";
import { DaemonClient } from "../daemon/client.js";
import { runDaemon } from "../daemon/main.js";
import { timeScaleFromEnv } from "./serve.js";
import type { StatusResult } from "../host/api.js";

type Row = StatusResult["registrations"][number];

async function stopDaemon(client: DaemonClient, killWorkers: boolean): Promise<boolean> {
  const answer = await client.daemonCall<{ draining: number; workers: number }>("shutdown", { kill_workers: killWorkers });
  if (!answer) {
    printLine(`no afk-mcp daemon is running (state dir ${client.paths.root})`);
    return false;
  }
  const pid = client.daemon()?.pid;
  printLine(
    `stopping the daemon (pid ${pid}): draining ${answer.draining} registration(s)` +
      (answer.workers > 0 ? (killWorkers ? `, ending ${answer.workers} worker(s)` : `; waiting for ${answer.workers} running worker(s) to finish (--kill-workers ends them now)`) : ""),
  );
  await client.waitGone(Number.POSITIVE_INFINITY);
  printLine("stopped");
  return true;
}

export const daemonCommand: Command = {
  name: "daemon",
  summary: "the per-machine host: start it, or daemon status | stop | restart",
  usage: `Usage: afk-mcp daemon [--foreground]
       afk-mcp daemon status
       afk-mcp daemon stop [--kill-workers]
       afk-mcp daemon restart [--kill-workers]

The daemon holds the projects' registrations and runs their workers, one per user per
machine (per state dir: AFK_STATE_DIR, else $XDG_STATE_HOME/afk-mcp, else
~/.local/state/afk-mcp). MCP sessions and "afk-mcp run" start it on their first call that
needs it; you rarely start it yourself.

  daemon                start it detached (its log: afk-mcp logs --lane daemon); exits 0,
                        also when one is already running
  daemon --foreground   run it in this process (systemd, launchd, containers); SIGTERM drains
                        and ends its workers (their commits are continued by the next daemon)
  daemon status         its pid, version and registrations; exit 3 when none runs
  daemon stop           drain every registration (claims without a PR released, running
                        workers allowed to finish), then exit
  daemon restart        stop, then start this version (after an upgrade: version skew)

Options:
  --foreground     run in this process instead of detaching
  --kill-workers   (stop, restart) end running workers instead of waiting for them`,
  options: { foreground: { type: "boolean" }, "kill-workers": { type: "boolean" } },
  positionals: true,
  async run(values, positionals) {
    const [action = "start", ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])} (actions: status, stop, restart)`);
    const killWorkers = values["kill-workers"] === true;
    const client = new DaemonClient();
    try {
      switch (action) {
        case "start": {
          if (values.foreground === true) {
            const outcome = await runDaemon({ timeScale: timeScaleFromEnv(process.env) });
            if ("held" in outcome) {
              printLine(`an afk-mcp daemon is already running for this state dir (pid ${outcome.held}); nothing to do`);
              return 0;
            }
            return await outcome.running.done;
          }
          const running = await client.connection(false);
          if (running) {
            printLine(`an afk-mcp daemon is already running (pid ${client.daemon()?.pid}, afk-mcp ${client.daemon()?.version}); nothing to do`);
            return 0;
          }
          await client.connection(true);
          printLine(`started the afk-mcp daemon (pid ${client.daemon()?.pid}); its log: afk-mcp logs --lane daemon`);
          return 0;
        }
        case "status": {
          const rows = await client.daemonCall<Row[]>("registrations");
          const info = client.daemon();
          if (!rows || !info) {
            printLine(`no afk-mcp daemon is running (state dir ${client.paths.root})`);
            return 3;
          }
          printLine(`afk-mcp daemon pid ${info.pid}, version ${info.version}, since ${info.started_at}, state dir ${info.state_dir}`);
          if (rows.length === 0) printLine("no registrations");
          for (const r of rows) {
            printLine(`  ${r.repo}  ${r.state}  target ${r.target}  workers ${r.workers}  sessions ${r.sessions.length}  renew by ${r.renew_by ?? "never"}  last poll ${r.last_poll ?? "-"}`);
          }
          return 0;
        }
        case "stop":
          await stopDaemon(client, killWorkers);
          return 0;
        case "restart": {
          await stopDaemon(client, killWorkers);
          const fresh = new DaemonClient();
          await fresh.connection(true);
          printLine(`started the afk-mcp daemon (pid ${fresh.daemon()?.pid}, afk-mcp ${fresh.daemon()?.version})`);
          await fresh.close();
          return 0;
        }
        default:
          throw new UsageError(`unknown action ${JSON.stringify(action)} (actions: status, stop, restart; or none to start)`);
      }
    } finally {
      await client.close();
    }
  },
};
