// `afk-mcp daemon`: the per-machine host that holds registrations and owns the workers.
// Plain `daemon` starts it detached (exit 0 also when one already runs); `--foreground` runs it
// here (systemd, launchd, containers); `status`, `stop` (drains first) and `restart`.
import type { Command } from "./command.js";
import { UsageError } from "../gh/errors.js";
import { printLine } from "./print.js";
import { DaemonClient, DaemonUnreachable } from "../daemon/client.js";
import { daemonHolder, holderGone, signalHolder } from "../daemon/holder.js";
import { version as ownVersion } from "../version.js";
import { runDaemon } from "../daemon/main.js";
import { timeScaleFromEnv } from "./serve.js";
import { renewalText, selectorText, type StatusResult } from "../host/api.js";
import { idleExitText, parseIdleExit } from "../daemon/idle.js";

type Row = StatusResult["registrations"][number];

async function stopDaemon(client: DaemonClient, killWorkers: boolean): Promise<boolean> {
  let answer: { draining: number; workers: number } | null;
  try {
    answer = await client.daemonCall<{ draining: number; workers: number }>("shutdown", { kill_workers: killWorkers });
  } catch (error) {
    if (error instanceof DaemonUnreachable) return stopByPid(error, killWorkers);
    throw error;
  }
  if (!answer) {
    const stuck = await client.unreachable();
    if (stuck) return stopByPid(stuck, killWorkers);
    printLine(`no afk-mcp daemon is running (state dir ${client.paths.root})`);
    return false;
  }
  const pid = client.daemon()?.pid;
  printLine(
    `stopping the daemon (pid ${pid}): draining ${answer.draining} registration(s)` +
      (answer.workers > 0
        ? killWorkers
          ? `, ending ${answer.workers} worker(s)`
          : `; waiting for ${answer.workers} running worker(s) to finish (--kill-workers ends them now)`
        : ""),
  );
  await client.waitGone(Number.POSITIVE_INFINITY);
  printLine("stopped");
  return true;
}

/**
 * A daemon whose socket cannot be used is stopped by its pid (checked by its start time): one of
 * this version drains on SIGUSR2 exactly as through the socket; SIGTERM drains and ends workers.
 */
async function stopByPid(stuck: DaemonUnreachable, killWorkers: boolean): Promise<boolean> {
  const { holder } = stuck;
  if (!killWorkers && holder.version !== ownVersion) {
    throw new UsageError(
      `${stuck.why}; that daemon (pid ${holder.pid}) is afk-mcp ${holder.version}, which can be stopped by signal only by ending its workers: run "afk-mcp daemon stop --kill-workers", or "afk-mcp daemon restart" (its workers run on and the new daemon adopts them)`,
    );
  }
  const signal = killWorkers ? "SIGTERM" : "SIGUSR2";
  if (!(await signalHolder(holder, signal))) {
    printLine(`the afk-mcp daemon pid ${holder.pid} has exited already`);
    return false;
  }
  printLine(
    `the afk-mcp daemon pid ${holder.pid} cannot be reached (${stuck.why}): sent it ${signal}; it drains every registration${killWorkers ? " and ends its workers" : "; running workers finish first (--kill-workers ends them now)"}`,
  );
  await holderGone(holder);
  printLine("stopped");
  return true;
}

/**
 * restart: the daemon hands its registrations and workers over and exits; the new one resumes
 * and adopts them. One that cannot hand over (unreachable, silent, or of a version without the
 * hand-over) is ended with SIGKILL, checked by its start time: the same as a crash, which the
 * next daemon recovers from at once (its workers run on and are adopted, nothing is released).
 */
async function handOver(client: DaemonClient): Promise<void> {
  const holder = await daemonHolder(client.paths);
  let why: string;
  try {
    const answer = await client.daemonCall<{ registrations: number; workers: number }>("handover");
    if (answer && holder) {
      printLine(`the daemon (pid ${holder.pid}) hands over ${answer.registrations} registration(s) and ${answer.workers} running worker(s) to a new daemon`);
      await holderGone(holder);
      return;
    }
    const stuck = answer ? null : await client.unreachable();
    if (!stuck) return;
    why = stuck.why;
  } catch (error) {
    if (!(error instanceof UsageError) || !holder) throw error;
    why = error.message;
  }
  // Only the daemon seen before the call: a new one a session started meanwhile is left alone.
  if (!holder || !(await signalHolder(holder, "SIGKILL"))) return;
  printLine(
    `the daemon (pid ${holder.pid}, afk-mcp ${holder.version}) could not hand over (${why}): ended it with SIGKILL; its workers run on and the new daemon adopts them`,
  );
  await holderGone(holder);
}

export const daemonCommand: Command = {
  name: "daemon",
  summary: "the per-machine host: start it, or daemon status | stop | restart",
  usage: `Usage: afk-mcp daemon [--foreground] [--idle-exit SECONDS|never]
       afk-mcp daemon status
       afk-mcp daemon stop [--kill-workers]
       afk-mcp daemon restart [--idle-exit SECONDS|never]

The daemon holds the projects' registrations and runs their workers, one per user per
machine (per state dir: AFK_STATE_DIR, else $XDG_STATE_HOME/afk-mcp, else
~/.local/state/afk-mcp). MCP sessions and "afk-mcp run" start it on their first call that
needs it; you rarely start it yourself.

  daemon                start it detached (its log: afk-mcp logs --lane daemon); exits 0,
                        also when one is already running
  daemon --foreground   run it in this process (systemd, launchd, containers); SIGTERM drains
                        and ends its workers (their commits are continued by the next daemon)
  daemon status         its pid, version, idle exit and registrations (state, target,
                        workers, selectors, sessions); exit 3 when none runs, 2 when
                        one runs that cannot be reached (its socket gone or refused: the
                        message names its pid and the fix)
  daemon stop           drain every registration (claims without a PR released, running
                        workers allowed to finish), then exit; a daemon whose socket cannot
                        be used is signalled by its pid (checked by its start time)
  daemon restart        hand over to a new daemon of this version (after an upgrade: version
                        skew): the old one stops starting workers and answering calls, keeps
                        every registration and exits without ending its workers; the new one
                        resumes the registrations (sessions renew them as before) and adopts
                        the running workers. A daemon that cannot hand over (unreachable, not
                        answering, or older than the hand-over) is ended with SIGKILL, which
                        it recovers from the same way

A daemon with no registration (so no worker) and no session connected exits on its own
after its idle time, saying so in its lane; the next call that needs one starts it again.

Options:
  --foreground     run in this process instead of detaching
  --idle-exit S    (start, restart) exit after S seconds with no registration and no session
                   connected, or "never". Default: 900 (15 minutes) for a daemon started in
                   the background (by a session's call, or plain "afk-mcp daemon"; a session
                   takes AFK_DAEMON_IDLE_SECONDS when set); never with --foreground, whose
                   supervisor decides when it ends
  --kill-workers   (stop) end running workers instead of waiting for them`,
  options: { foreground: { type: "boolean" }, "idle-exit": { type: "string" }, "kill-workers": { type: "boolean" } },
  positionals: true,
  async run(values, positionals) {
    const [action = "start", ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])} (actions: status, stop, restart)`);
    const killWorkers = values["kill-workers"] === true;
    const idleOption = values["idle-exit"];
    if (typeof idleOption === "string" && action !== "start" && action !== "restart")
      throw new UsageError(`--idle-exit applies to starting a daemon ("afk-mcp daemon --idle-exit ${idleOption}", or restart), not to ${action}`);
    const idleExitSeconds = typeof idleOption === "string" ? parseIdleExit(idleOption, "--idle-exit") : undefined;
    const client = new DaemonClient(idleExitSeconds === undefined ? {} : { idleExitSeconds });
    try {
      switch (action) {
        case "start": {
          if (values.foreground === true) {
            const outcome = await runDaemon({ timeScale: timeScaleFromEnv(process.env), idleExitSeconds: idleExitSeconds ?? null });
            if ("held" in outcome) {
              printLine(`an afk-mcp daemon is already running for this state dir (pid ${outcome.held}); nothing to do`);
              return 0;
            }
            return await outcome.running.done;
          }
          const running = await client.connection(false);
          if (running) {
            const info = client.daemon();
            const other = idleExitSeconds !== undefined && info?.idle_exit_seconds !== undefined && info.idle_exit_seconds !== idleExitSeconds;
            printLine(
              `an afk-mcp daemon is already running (pid ${info?.pid}, afk-mcp ${info?.version}); nothing to do${other ? `; it keeps its idle exit (it ${idleExitText(info.idle_exit_seconds ?? null)}): "afk-mcp daemon restart --idle-exit ${idleOption}" changes it` : ""}`,
            );
            return 0;
          }
          await client.connection(true);
          const started = client.daemon();
          printLine(
            `started the afk-mcp daemon (pid ${started?.pid}); its log: afk-mcp logs --lane daemon${started?.idle_exit_seconds !== undefined ? `; it ${idleExitText(started.idle_exit_seconds)}` : ""}`,
          );
          return 0;
        }
        case "status": {
          const rows = await client.daemonCall<Row[]>("registrations");
          const info = client.daemon();
          if (!rows || !info) {
            const stuck = await client.unreachable();
            if (stuck) throw stuck;
            printLine(`no afk-mcp daemon is running (state dir ${client.paths.root})`);
            return 3;
          }
          printLine(`afk-mcp daemon pid ${info.pid}, version ${info.version}, since ${info.started_at}, state dir ${info.state_dir}`);
          if (info.idle_exit_seconds !== undefined) printLine(`it ${idleExitText(info.idle_exit_seconds)}`);
          if (rows.length === 0) printLine("no registrations");
          for (const r of rows) {
            printLine(
              `  ${r.repo}  ${r.state}  target ${r.target}  workers ${r.workers}  in flight ${r.in_flight ?? "-"}  landed today ${r.landed_today ?? "-"}  needing a human ${r.needs_human ?? "-"}  sessions ${r.sessions.length}  renew by ${renewalText(r)}  last poll ${r.last_poll ?? "-"}`,
            );
            printLine(`    selectors ${selectorText(r.selectors)}`);
          }
          return 0;
        }
        case "stop":
          await stopDaemon(client, killWorkers);
          return 0;
        case "restart": {
          if (killWorkers)
            throw new UsageError(
              'restart hands the running workers over to the new daemon and ends none: to end them, run "afk-mcp daemon stop --kill-workers", then "afk-mcp daemon"',
            );
          await handOver(client);
          const fresh = new DaemonClient(idleExitSeconds === undefined ? {} : { idleExitSeconds });
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
