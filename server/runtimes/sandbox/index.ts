// The sandbox runtime's two doors into today's code: `sandboxedWorker` wraps one worker's
// command and environment at birth (server/fleet/worker-runs.ts), `runtimeStep` answers the
// start's preflight and doctor (which runtime runs, or the refusal with the install command, or
// a program the sandbox would hide), and `afterExit` carries a worker's last commits home after
// its exit. The rest of the folder: plan.ts (the mounts), worker-plan.ts (one worker's),
// preflight.ts (the programs a worker runs, looked for inside: visible.ts, shown.ts), hosts.ts
// (the allowlist), proxy.ts, launcher.ts (the process that leads the worker's group),
// private-git.ts (its own git dir), available.ts (the probe), fault.ts (a sandbox that could not
// start).
import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FleetConfig } from "../../../schemas/config.js";
import type { WorkerExit } from "../../worker-port/port.js";
import { UsageError } from "../../gh/errors.js";
import { expandCommand, programOf, resolveShell, shellQuote } from "../../agent/shell.js";
import { SandboxProbe } from "./available.js";
import { SandboxStartFault, withSandboxFault } from "./fault.js";
import { allowlistFor, loopbackPorts, parseHostRule, type HostRule } from "./hosts.js";
import { bwrapArgs, sandboxEnv, sandboxPaths } from "./plan.js";
import { planFor } from "./worker-plan.js";
import { programsInSandbox, type ProgramToRun } from "./preflight.js";
import { makePrivateGitDir, takeBack } from "./private-git.js";
import { sandboxDirOf, type SandboxSpec } from "./spec.js";

import { RUNTIME_NAMES, type RuntimeName } from "../../../schemas/config-sandbox.js";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The runtime in force: `AFK_RUNTIME` in the host's environment (a host's own choice: one
 * without bubblewrap, or a test suite), else config `runtime` (default "sandbox").
 */
export function runtimeOf(config: FleetConfig, env: Env = process.env): RuntimeName {
  const chosen = env.AFK_RUNTIME ?? process.env.AFK_RUNTIME;
  if (chosen === undefined || chosen === "") return config.runtime;
  if ((RUNTIME_NAMES as readonly string[]).includes(chosen)) return chosen as RuntimeName;
  throw new UsageError(
    `AFK_RUNTIME=${JSON.stringify(chosen)} is not a runtime: expected one of ${RUNTIME_NAMES.join(", ")} (or unset it to follow config \`runtime\`)`,
  );
}

/**
 * The preflight's line for the runtime; throws the refusal (with the install command) where the
 * sandbox cannot run, and, dry run or not, where it would hide a program the workers run (preflight.ts).
 */
export async function runtimeStep(
  config: FleetConfig,
  env: Env,
  refuse: boolean,
  programs: readonly ProgramToRun[] = [],
  probe: SandboxProbe = new SandboxProbe(),
): Promise<string> {
  const runtime = runtimeOf(config, env);
  if (runtime === "local") return 'runtime local: workers run as this user, unconfined (config `runtime: "local"` or AFK_RUNTIME=local)';
  const available = await probe.availability(env.PATH ?? process.env.PATH);
  if (!available.ok) {
    const text = `runtime sandbox cannot run here: ${available.detail}; or choose runtime "local" explicitly (config \`runtime: "local"\`, or AFK_RUNTIME=local) to run workers unconfined`;
    if (refuse) throw new UsageError(`project_start refused: ${text}`);
    return text;
  }
  const { refusals, shown } = programsInSandbox(config, env, programs);
  if (refusals.length > 0) throw new UsageError(`project_start refused: ${refusals.join("; ")}`);
  const extra = config.sandbox.allow_hosts.length > 0 ? ` plus ${config.sandbox.allow_hosts.join(", ")}` : "";
  const programsShown = shown.length > 0 ? `; shown read-only for the program it runs: ${shown.join(", ")}` : "";
  return `runtime sandbox (${available.detail}): each worker sees only its worktree and its own HOME and git dir; network to its engine's API${extra}${programsShown}`;
}

export interface SandboxWorkerInput {
  config: FleetConfig;
  /** The host's environment (state dir, home, AFK_RUNTIME). */
  hostEnv?: Env;
  command: string;
  worktree: string;
  branch: string;
  env: Record<string, string>;
  briefPath: string;
  verdictPath: string;
  /** The run directory (brief, verdict, output files). */
  runDir: string;
  /** The engine ("claude", "codex", …) or null for an opaque command. */
  engine: string | null;
  /** Whether the sandbox can run here, as its runtime keeps the answer. */
  probe: SandboxProbe;
}

const LAUNCHER = fileURLToPath(new URL("./launcher.js", import.meta.url));
const PROXY_PORT = 3128;

/**
 * The worker's command and environment under the runtime in force: unchanged for "local"; for
 * "sandbox", the launcher with the sandbox's spec (its private git dir, box and HOME made here).
 */
export async function sandboxedWorker(input: SandboxWorkerInput): Promise<{ command: string; env: Record<string, string> }> {
  const hostEnv = input.hostEnv ?? process.env;
  const sandboxDir = sandboxDirOf(input.runDir);
  if (runtimeOf(input.config, hostEnv) === "local") {
    await rm(sandboxDir, { recursive: true, force: true });
    return { command: input.command, env: input.env };
  }
  const paths = sandboxPaths(sandboxDir);
  // What an earlier birth left must not speak for this one: its fault, and its spec (whose
  // private git dir a take-back after this exit would otherwise read).
  await rm(paths.fault, { force: true });
  await rm(paths.spec, { force: true });
  const available = await input.probe.availableNow(input.env.PATH ?? process.env.PATH);
  if (!available.ok || !available.bwrap || !available.socat) throw new SandboxStartFault(available.detail);
  await rm(paths.box, { recursive: true, force: true });
  await mkdir(paths.box, { recursive: true, mode: 0o700 });
  await mkdir(paths.home, { recursive: true, mode: 0o700 });
  const { common } = await makePrivateGitDir(input.worktree, input.branch, paths.gitDir, paths.dotGit);
  await copyFile(input.briefPath, join(paths.box, basename(input.briefPath)));
  const { home, keepOut, plan } = planFor(input.config, hostEnv, { worktree: input.worktree, runDir: input.runDir, sandboxDir, commonDir: common });
  const allowHosts = allowlistFor(input.engine, input.env, input.config.sandbox.allow_hosts);
  const rules = allowHosts.map(parseHostRule).filter((r): r is HostRule => r !== null);
  const spec: SandboxSpec = {
    bwrap: available.bwrap,
    socat: available.socat,
    bwrapArgs: bwrapArgs(plan),
    shell: resolveShell(input.env.SHELL),
    commandLine: expandCommand(input.command, input.briefPath),
    program: programOf(input.command),
    allowHosts,
    forwardPorts: loopbackPorts(rules),
    proxyPort: PROXY_PORT,
    showPathUnder: home,
    keepOut,
    env: sandboxEnv(paths.home, PROXY_PORT),
    takeBack: {
      gitDir: paths.gitDir,
      worktree: input.worktree,
      branch: input.branch,
      boxVerdict: join(paths.box, basename(input.verdictPath)),
      verdict: input.verdictPath,
    },
  };
  await writeFile(paths.spec, JSON.stringify(spec, null, 2), { mode: 0o600 });
  return { command: `exec ${shellQuote(process.execPath)} ${shellQuote(LAUNCHER)} ${shellQuote(paths.spec)}`, env: input.env };
}

/**
 * After a worker's exit: its commits and verdict, carried back once more (the launcher may have
 * been killed), and the exit with the fault when its sandbox could not start (fault.ts).
 */
export async function afterExit(runDir: string, exit: WorkerExit): Promise<WorkerExit> {
  const text = await readFile(sandboxPaths(sandboxDirOf(runDir)).spec, "utf8").catch(() => null);
  if (text !== null) await takeBack((JSON.parse(text) as SandboxSpec).takeBack).catch(() => undefined);
  return withSandboxFault(exit, runDir);
}
