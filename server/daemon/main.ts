// The daemon process: takes the state dir's lock (a second daemon exits saying which pid runs),
// holds the FleetHost with this machine's persisted instance ids, serves the socket, resumes the
// registrations a crashed predecessor kept, sweeps renewals, drains before it exits, and exits on
// its own after a stated idle time (idle.ts).
import { mkdir } from "node:fs/promises";
import { FleetHost } from "../host/host.js";
import { acquireLock, StateLockHeld } from "./lock.js";
import { daemonPaths } from "./paths.js";
import { persistentInstance } from "./identity.js";
import { Registry } from "./registry.js";
import { DaemonServer } from "./server.js";
import { version } from "../version.js";
import { watchShutdown } from "../host/shutdown.js";
import { openDaemonLog, type DaemonLogLine } from "./log.js";
import { IdleWatch, duration, idleExitText } from "./idle.js";

export interface DaemonRun {
  /** Resolves with the exit code once the daemon has drained and closed. */
  done: Promise<number>;
}

export interface DaemonMainOptions {
  env?: NodeJS.ProcessEnv;
  timeScale?: number;
  /** How often registrations are swept (default 1 s). */
  sweepMs?: number;
  /** Exit after this many seconds with no registration and no session connected (default null: never). */
  idleExitSeconds?: number | null;
}

/** Runs a daemon in this process. Resolves `null` when another daemon holds the state dir. */
export async function runDaemon(options: DaemonMainOptions = {}): Promise<{ running: DaemonRun } | { held: number }> {
  const env = options.env ?? process.env;
  const paths = daemonPaths(env);
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  let lock: { release(): Promise<void> };
  try {
    lock = await acquireLock(paths.lock, paths.dir);
  } catch (error) {
    if (error instanceof StateLockHeld) return { held: error.holder.pid };
    throw error;
  }
  const host = new FleetHost({ env, daemon: true, timeScale: options.timeScale ?? 1, identity: (repo) => persistentInstance(paths.root, repo) });
  // From here on stdout and stderr are the daemon lane (logs {lane: "daemon"}).
  const lane = openDaemonLog({ paths, secrets: () => [env.GITHUB_TOKEN, env.GH_TOKEN, ...host.secrets()] });
  const log: DaemonLogLine = lane.log;
  const registry = new Registry(host, { file: paths.registrations, log });
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  let stopping = false;
  // The last steps of every way out: no socket, no lock, the lane's last line.
  const leave = async (): Promise<void> => {
    await server.close();
    await lock.release();
    log("stopped");
    lane.close();
    finish(0);
  };
  const shutdown = async (killWorkers: boolean, why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    server.refuseStarts();
    clearInterval(sweeper);
    log(`${why}: draining every registration${killWorkers ? " and ending its workers" : " (running workers finish first)"}`);
    let lastCount = -1;
    await registry.drainAll(killWorkers, (workers) => {
      if (workers !== lastCount) log(`waiting for ${workers} worker(s) to exit`);
      lastCount = workers;
    });
    await host.close();
    await leave();
  };
  // A hand-over (afk-mcp daemon restart): the registrations stay as they are and the workers run
  // on; the next daemon, the same instance, resumes and adopts them as after a crash.
  const handover = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    clearInterval(sweeper);
    log("asked to hand over to a new daemon: no more births or calls; registrations kept, workers left running");
    await registry.flush();
    log(`handed over: ${await host.handover()}`);
    await leave();
    // The workers' handles (their exits, their output files) would keep this process alive: it
    // exits once its last line is written, and the workers run on in their own process groups.
    setTimeout(() => process.exit(0), 1_000).unref();
  };
  const idleExitSeconds = options.idleExitSeconds ?? null;
  // Nothing to do: no registration (draining ones included, and so no worker it runs or
  // adopted: those belong to a registration) and no project left in the host.
  const idle = idleExitSeconds === null ? null : new IdleWatch(idleExitSeconds * 1000);
  const idleExit = async (): Promise<void> => {
    // The look and the close are one synchronous step: a session that connected meanwhile keeps it.
    if (stopping || !server.closeIfQuiet()) return;
    stopping = true;
    clearInterval(sweeper);
    log(
      `idle for ${duration(idle?.idleSeconds() ?? 0)} (no registration, no worker, no session connected; --idle-exit ${idleExitSeconds}): exiting; the next call that needs a daemon starts one`,
    );
    // Nothing runs, so this is quick: a session calling right now soon finds no lock and starts the next daemon.
    await host.close();
    await leave();
  };
  const server = new DaemonServer({
    socket: paths.socket,
    host,
    registry,
    info: { pid: process.pid, version, started_at: new Date().toISOString(), state_dir: paths.root, idle_exit_seconds: idleExitSeconds },
    onShutdown: (killWorkers) => void shutdown(killWorkers, "asked to stop"),
    onHandover: () => void handover(),
    log,
  });
  try {
    await server.listen();
  } catch (error) {
    await lock.release();
    lane.close();
    throw error;
  }
  log(`listening on ${paths.socket} (pid ${process.pid}, afk-mcp ${version}); it ${idleExitText(idleExitSeconds)}`);
  await registry.restore().catch((error: unknown) => log(`could not resume registrations: ${(error as Error).message}`, "error"));
  let sweeping = false;
  const sweeper = setInterval(() => {
    if (sweeping || stopping) return;
    if (idle?.expired(registry.held() > 0 || host.registrations().length > 0, server.quietSince())) {
      void idleExit();
      return;
    }
    sweeping = true;
    void registry
      .sweep()
      .catch((error: unknown) => log(`sweep failed: ${(error as Error).message}`, "warn"))
      .finally(() => (sweeping = false));
  }, options.sweepMs ?? 1_000);
  // A supervisor's SIGTERM (or Ctrl-C in the foreground) ends workers: nobody would watch them.
  // Their commits stay in the worktrees and are continued by the next daemon at once. A second
  // signal abandons the drain (server/host/shutdown.ts, the one shutdown path).
  const watch = watchShutdown({ say: log, abandon: () => host.abandon() });
  void watch.requested.then((cause) => shutdown(true, `got ${cause}`));
  // SIGUSR2: "afk-mcp daemon stop" when the socket cannot be used: the same drain as through it.
  const drainBySignal = () => void shutdown(false, "got SIGUSR2 (afk-mcp daemon stop, by pid)");
  process.on("SIGUSR2", drainBySignal);
  void done.then(() => {
    watch.dispose();
    process.off("SIGUSR2", drainBySignal);
  });
  return { running: { done } };
}
