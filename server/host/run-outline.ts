// What a start will run, said in the dry run's and the start's answer (plan.run): the command,
// each engine a route may take (binary, version, provider, model, budget), and the runtime with
// what it lets through. Made from what the start verified (engine-start.ts) and the runtime's
// own rules (runtimes/sandbox/lets-through.ts), never from guesses.
import type { FleetConfig } from "../../schemas/config.js";
import type { PlanOutput } from "../../schemas/tools.js";
import { engineProfile } from "../agent/engines.js";
import { runtimeReachFor, type RuntimeRegistry } from "../runtimes/registry.js";
import { budgetWords, probeEnvOf, type EngineStart } from "./engine-start.js";
import { UsageError } from "../gh/errors.js";
import type { RoutePolicy } from "../state/route.js";
import type { LandingChoice } from "../state/landing-choice.js";
import type { StepListener } from "./api.js";
import { startEngine } from "./engine-start.js";
import { startRuntimeLine } from "./actions-init.js";
import { assess, type RepoAccess } from "./repo-access.js";
import { assessedSteps } from "./steps.js";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A start's preflight up to its decision, each stage said as a step: the engine verified (a dry
 * run with an engine too: that is what a dry run is for), the preconditions and the backlog
 * read (with each dispatched issue's route), the runtime; the plan then says what will run.
 */
export async function assessRun(
  connected: RepoAccess,
  clock: () => Date,
  input: {
    engine?: string | undefined;
    model?: string | undefined;
    worker_command?: string | undefined;
    dry_run?: boolean | undefined;
    auto_merge?: boolean | null | undefined;
  },
  env: { host: Env; project: Env },
  runtimes: RuntimeRegistry,
  onStep: StepListener = () => undefined,
): Promise<{ plan: PlanOutput; landing: LandingChoice; chosen: EngineStart | null; runtimeNote: string }> {
  const { conn } = connected;
  // A dry run checks the engine (binary, version, provider) and, where the runtime runs them, the workers' programs too.
  const chosen = await startEngine(input, conn.config, env.project);
  if (chosen?.step) onStep(chosen.step);
  const { plan, landing } = await assess(connected, clock, input.auto_merge === null ? null : input.auto_merge === true, startRouting(chosen, conn.config));
  for (const step of assessedSteps(plan)) onStep(step);
  const runtime = await startRuntimeLine(conn, env.project, !input.dry_run, onStep, runtimes, chosen?.programs ?? []);
  return {
    plan: { ...plan, run: runOutline(chosen, input.worker_command ?? null, conn.config, env, runtime.line) },
    landing,
    chosen,
    runtimeNote: runtime.note,
  };
}

export function runOutline(
  start: EngineStart | null,
  workerCommand: string | null,
  config: FleetConfig,
  env: { host: Env; project: Env },
  runtimeText: string,
): NonNullable<PlanOutput["run"]> {
  const engines = Object.values(start?.engines ?? {}).map((e) => ({
    name: e.name,
    path: e.path,
    version: e.version,
    provider: e.provider,
    model: e.model,
    budget: budgetWords(config.budget.usd_per_attempt, engineProfile(config, e.name).budgetFlag),
  }));
  const worker = probeEnvOf(config, env.project);
  const names = start?.engine ? engines.map((e) => e.name) : [null];
  return {
    command: start?.command ?? workerCommand,
    engines,
    runtime: { ...runtimeReachFor(config, env.host, worker, names), text: runtimeText },
  };
}

/** An engine start's route policy (state/route.ts) and each engine's default model, for the plan's routes; undefined: no engine. */
export function startRouting(
  start: EngineStart | null,
  config: FleetConfig,
): { policy: RoutePolicy; defaultModels: Record<string, string | null> } | undefined {
  if (!start?.engine) return undefined;
  return {
    policy: { start: { engine: start.engine.name, model: start.engine.model }, ladder: config.routing.ladder },
    defaultModels: Object.fromEntries(Object.values(start.engines).map((e) => [e.name, e.model])),
  };
}

/**
 * Refuses a start whose preconditions fail. `typosOnly` (a dry run): only a number the selectors
 * name that is no issue (absent, a pull request) refuses: a typo must not run the rest silently.
 */
export function refuseStart(plan: PlanOutput, typosOnly: boolean): void {
  const failed = plan.preconditions.filter((p) => !p.ok && (!typosOnly || p.name === "named_issues"));
  if (failed.length > 0) throw new UsageError(`project_start refused: ${failed.map((p) => `${p.name}: ${p.message}`).join("; ")}`);
}

/** The start's word on the named issues that will not run now (plan.named holds them all). */
export function namedNote(plan: PlanOutput): string {
  if (plan.totals.named === 0) return "";
  const shown = plan.named.slice(0, 5).map((n) => `#${n.number} (${n.text})`);
  const more = plan.totals.named - shown.length;
  return `; ${plan.totals.named} named issue(s) will not run now: ${shown.join("; ")}${more > 0 ? `; and ${more} more (plan.named)` : ""}`;
}

/** The dry run's word: the failed preconditions, or that a start would be accepted; then the named issues that will not run. */
export function dryRunMessage(plan: PlanOutput): string {
  const failed = plan.preconditions.filter((p) => !p.ok);
  return (
    (failed.length
      ? `dry run: ${failed.length} precondition(s) fail: ${failed.map((p) => p.message).join("; ")}`
      : "dry run: a start would be accepted; nothing was done") + namedNote(plan)
  );
}
