// The worker runtimes by the name config `runtime` gives (schemas/config-sandbox.ts, RUNTIME_NAMES): one
// entry per name, which the type below holds to (a name without an implementation fails to
// compile). Each runtime is made once per host (`RuntimeRegistry`, which the host owns and hands
// to its fleets): it keeps what it started (the local runtime's live process groups, for an exit
// that must end them at once).
import type { FleetConfig, RuntimeName } from "../../schemas/config.js";
import { LocalRuntime } from "./local/runtime.js";
import { SandboxRuntime } from "./sandbox/runtime.js";
import { runtimeOf, runtimeStep } from "./sandbox/index.js";
import type { ProgramToRun } from "./sandbox/preflight.js";
import { ActionsRuntime, actionsStep, type ActionsLook, type ActionsReach } from "./actions/index.js";
import type { RecordedWorker, WorkerRuntime } from "../worker-port/port.js";
import { runtimeReach, type RuntimeReach } from "./sandbox/lets-through.js";
import { SandboxProbe } from "./sandbox/available.js";

export type { ActionsLook, ActionsReach } from "./actions/index.js";
export type { ProgramToRun } from "./sandbox/preflight.js";
export { checkWorkerPin } from "./actions/index.js";
export { runtimeOf } from "./sandbox/index.js";
export { workflowFile, type WorkflowFileOptions } from "./actions/workflow-file.js";

const FACTORIES: { readonly [name in RuntimeName]: (runtimes: RuntimeRegistry, reach: ActionsReach | null) => WorkerRuntime } = {
  local: () => new LocalRuntime(),
  // A sandboxed worker is a local process (the sandbox's launcher): the one local runtime keeps it.
  sandbox: (runtimes) => new SandboxRuntime(runtimes.workerRuntime("local"), runtimes.sandboxProbe),
  // A run is the repository's: one runtime per repository, holding its runs and their shared reader.
  actions: (_runtimes, reach) => new ActionsRuntime(reach),
};

/** One host's worker runtimes, each made on first use and kept; the host owns it and hands it to its fleets. */
export class RuntimeRegistry {
  private readonly made = new Map<string, WorkerRuntime>();
  /** Whether the sandbox can run here: asked at a start's preflight, asked again at each birth. */
  readonly sandboxProbe = new SandboxProbe();

  /** The runtime a config names (`reach`: the repository, for a runtime that works through it). */
  workerRuntime(name: RuntimeName, reach: ActionsReach | null = null): WorkerRuntime {
    // One actions runtime per repository and work repository (state dir): a second fleet of the
    // same repository under another state dir on this host (two demos, a test's two fleets)
    // must not read runs through the first one's git dir, which may be gone.
    const key = name === "actions" ? `actions:${reach?.repo ?? ""}:${reach?.git.dir ?? ""}` : name;
    let runtime = this.made.get(key);
    if (!runtime) {
      runtime = FACTORIES[name](this, reach);
      this.made.set(key, runtime);
    } else if (runtime instanceof ActionsRuntime && reach) runtime.rebind(reach);
    return runtime;
  }

  /** The runtime in force for a fleet: AFK_RUNTIME in the host's environment, else config `runtime` (sandbox/index.ts). */
  runtimeFor(config: FleetConfig, env?: Readonly<Record<string, string | undefined>>, reach: ActionsReach | null = null): WorkerRuntime {
    return this.workerRuntime(runtimeOf(config, env), reach);
  }

  /** Every runtime's recorded workers under a repository's run directory (status reads them with or without a fleet running). */
  async recordedWorkers(runDir: string): Promise<RecordedWorker[]> {
    const names = Object.keys(FACTORIES) as RuntimeName[];
    return (await Promise.all(names.map((name) => this.workerRuntime(name).recorded(runDir)))).flat();
  }

  /** Ends every worker any runtime of this host started and has not seen end; returns how many. */
  endAllWorkersNow(): number {
    let ended = 0;
    for (const runtime of this.made.values()) ended += runtime.endAllNow();
    return ended;
  }

  /** runtimePreflight with the sandbox's answer kept for the births. */
  preflight(
    config: FleetConfig,
    env: Readonly<Record<string, string | undefined>>,
    refuse: boolean,
    reach: ActionsLook | null = null,
    programs: readonly ProgramToRun[] = [],
  ): Promise<string> {
    return runtimePreflight(config, env, refuse, reach, programs, this.sandboxProbe);
  }
}

/** The name of the runtime in force: AFK_RUNTIME in the host's environment, else config `runtime`. */
export function runtimeNameFor(config: FleetConfig, env?: Readonly<Record<string, string | undefined>>): RuntimeName {
  return runtimeOf(config, env);
}

/**
 * The start's preflight and doctor line for the runtime in force; throws the refusal (with the
 * install command, or `actions init`) when `refuse`, and, dry run too, when the runtime would not
 * find a program the workers run (`programs`: as the start resolved them on this host).
 */
export async function runtimePreflight(
  config: FleetConfig,
  env: Readonly<Record<string, string | undefined>>,
  refuse: boolean,
  reach: ActionsLook | null = null,
  programs: readonly ProgramToRun[] = [],
  probe: SandboxProbe = new SandboxProbe(),
): Promise<string> {
  if (runtimeOf(config, env) === "actions") return actionsStep(config, reach, refuse, env);
  return runtimeStep(config, env, refuse, programs, probe);
}

/** What the runtime in force lets a worker reach (sandbox/lets-through.ts), for the start's "will run". */
export function runtimeReachFor(
  config: FleetConfig,
  hostEnv: Readonly<Record<string, string | undefined>>,
  workerEnv: Readonly<Record<string, string | undefined>>,
  engines: readonly (string | null)[],
): RuntimeReach {
  return runtimeReach(runtimeOf(config, hostEnv), config, hostEnv, workerEnv, engines);
}
