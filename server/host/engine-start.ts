// The engine of a start (project_start `engine` and `model`, `afk-mcp run --engine`): the
// profile resolved from config, its command line built, its binary verified in the worker
// environment. Every refusal names the key and the fix (docs/architecture.md, invariant 8).
import type { FleetConfig } from "../../schemas/config.js";
import { UsageError } from "../gh/errors.js";
import type { EngineChoice } from "../fleet/registration.js";
import { checkEngine, resolveProgram, type EngineCheck } from "../agent/engine-probe.js";
import { programOf } from "../agent/shell.js";
import { runtimeNameFor, type ProgramToRun } from "../runtimes/registry.js";
import { EngineError, checkModel, engineCommand, engineProfile } from "../agent/engines.js";
import { workerEnv } from "../agent/env.js";

export interface EngineStart {
  command: string;
  engine: EngineChoice | null;
  /** Every engine a route may take (the start's and the ladder's), verified. */
  engines: Record<string, EngineChoice>;
  /** One preflight line: the engine, where its binary is, its version, the provider in force. */
  step: string | null;
  /** The programs the workers run (the command's, each engine's binary), as found on this host: the runtime looks for them where it runs workers. */
  programs: ProgramToRun[];
}

/** The worker command's program, found by the workers' shell; refuses a program that is not there at all. */
async function commandProgram(command: string, env: Record<string, string>): Promise<ProgramToRun[]> {
  const program = programOf(command);
  // A relative path is the worktree's (the worker's working directory), which every runtime shows: nothing to look for here.
  if (program === null || (program.includes("/") && !program.startsWith("/") && !program.startsWith("~/"))) return [];
  const found = await resolveProgram(program, env);
  if (found.kind === "builtin") return [];
  if (found.kind === "missing")
    throw new UsageError(
      `project_start refused: worker_command: its program ${JSON.stringify(program)} ${found.why}: install it, name it by its absolute path, or put its directory on PATH`,
    );
  return [{ what: "the worker command's program", named: program, path: found.path, pathVar: found.pathVar }];
}

/**
 * The start's engine or command, verified (dry run too: that is what a dry run is for); null for
 * a dry run that names neither. The command's program is looked up here unless workers run on a runner.
 */
export async function startEngine(
  input: { engine?: string | undefined; model?: string | undefined; worker_command?: string | undefined; dry_run?: boolean | undefined },
  config: FleetConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<EngineStart | null> {
  if (input.dry_run && input.engine === undefined && input.worker_command === undefined) return null;
  return engineForStart(input, config, env, runtimeNameFor(config, env) !== "actions");
}

/** A worker's environment without a task: what an engine is probed in and a sandbox lets through. */
export function probeEnvOf(config: FleetConfig, env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return workerEnv({
    base: env,
    passthrough: config.worker.env_passthrough,
    deny: config.worker.env_deny,
    facts: { AFK_ISSUE: 0, AFK_BRIEF: "", AFK_BRANCH: "", AFK_BASE: "", AFK_WORKTREE: "", AFK_REPO: "", AFK_ATTEMPT: 0, AFK_VERDICT_FILE: "" },
  });
}

/** How an engine's per-attempt budget is held: "$2 passed as --max-budget-usd", or enforced by the fleet from its usage. */
export function budgetWords(usd: number | null, flag: string | null): string {
  if (usd === null) return "none (budget.usd_per_attempt is not set)";
  return flag ? `$${usd} passed as ${flag}` : `$${usd} enforced by the fleet`;
}

/** Resolves and verifies the start's engine; the opaque worker_command when none is named. */
export async function engineForStart(
  input: { engine?: string | undefined; model?: string | undefined; worker_command?: string | undefined },
  config: FleetConfig,
  env: Readonly<Record<string, string | undefined>>,
  /** Whether workers run on this host (not on a runner elsewhere): the worker command's program is looked up here. */
  onThisHost = true,
): Promise<EngineStart> {
  const refuse = (error: unknown): never => {
    if (error instanceof EngineError) throw new UsageError(`project_start refused: ${error.message}`);
    throw error;
  };
  if (input.engine === undefined || input.engine === "command") {
    if (input.model !== undefined)
      throw new UsageError(
        'project_start refused: model: the "command" engine (worker_command) takes no model; name an engine such as "claude" or "codex", or drop model',
      );
    const profile = input.engine === "command" ? engineProfile(config, "command") : null;
    const command = input.worker_command ?? profile?.command ?? null;
    if (command === null)
      throw new UsageError(
        'project_start: worker_command is required (the shell command that starts one agent in its worktree), or engine (e.g. "claude", "codex"), unless dry_run is true',
      );
    const routed = config.selectors.findIndex((sel) => sel.engine !== undefined || sel.model !== undefined);
    if (routed >= 0)
      throw new UsageError(
        `project_start refused: selectors.${routed}: a selector's engine and model route an engine start; start with engine (e.g. "claude"), or drop them from the selector`,
      );
    if (config.routing.ladder.length > 0)
      throw new UsageError(
        'project_start refused: routing.ladder: the ladder routes an engine start; start with engine (e.g. "claude"), or set routing.ladder to []',
      );
    return { command, engine: null, engines: {}, step: null, programs: onThisHost ? await commandProgram(command, probeEnvOf(config, env)) : [] };
  }
  if (input.worker_command !== undefined)
    throw new UsageError(
      `project_start refused: pass engine or worker_command, not both (engine ${JSON.stringify(input.engine)} builds its own command line; to run a command of your own use engine "command")`,
    );
  try {
    const profile = engineProfile(config, input.engine);
    const model = input.model ?? profile.defaultModel;
    if (model !== null) checkModel(model);
    const priced = (usage: string, m: string | null, key: string): void => {
      if ((usage === "codex-json" || usage === "gemini-json") && m !== null && Object.keys(config.prices).length > 0 && config.prices[m] === undefined) {
        throw new EngineError(
          key,
          `no price for model ${JSON.stringify(m)} (it reports tokens only): add prices.${m} {input_per_mtok, output_per_mtok}, or pick a priced model (${Object.keys(config.prices).join(", ")})`,
        );
      }
    };
    priced(profile.usage, model, "prices");
    const command = engineCommand(profile, { model, budgetUsd: config.budget.usd_per_attempt });
    const probeEnv = probeEnvOf(config, env);
    const check = await checkEngine(profile, probeEnv);
    const programs: ProgramToRun[] = [];
    const binaryOf = (name: string, binary: string, seen: EngineCheck): void => {
      if (seen.path.startsWith("/")) programs.push({ what: `engine ${name}'s binary`, named: binary, path: seen.path, pathVar: seen.pathVar });
    };
    binaryOf(profile.name, profile.binary, check);
    const engine: EngineChoice = {
      name: profile.name,
      model,
      usage: profile.usage,
      loginShell: profile.loginShell,
      path: check.path,
      version: check.version,
      provider: check.provider,
    };
    const engines: Record<string, EngineChoice> = { [profile.name]: engine };
    // Every engine a route may take is verified now, not at its first birth: each ladder rung's,
    // each selector's, and each agent CLI defined under "engines" (an afk-engine/ label may name it).
    const verify = async (name: string, key: string): Promise<EngineChoice> => {
      const known = engines[name];
      if (known) return known;
      const other = (() => {
        try {
          return engineProfile(config, name);
        } catch (error) {
          throw error instanceof EngineError && error.key === "engine" ? new EngineError(key, error.message.slice("engine: ".length)) : error;
        }
      })();
      if (other.command !== null) throw new EngineError(key, `${name} is an opaque command: a route names an agent CLI engine`);
      const seen = await checkEngine(other, probeEnv);
      binaryOf(name, other.binary, seen);
      return (engines[name] = {
        name,
        model: other.defaultModel,
        usage: other.usage,
        loginShell: other.loginShell,
        path: seen.path,
        version: seen.version,
        provider: seen.provider,
      });
    };
    const routes: Array<{ key: string; engine: string | undefined; model: string | undefined; words: string }> = [
      ...config.routing.ladder.map((rung, i) => ({ key: `routing.ladder.${i}`, engine: rung.engine, model: rung.model, words: `attempt ${i + 2}` })),
      ...config.selectors.map((sel, i) => ({ key: `selectors.${i}`, engine: sel.engine, model: sel.model, words: `selector ${i + 1}` })),
    ];
    const rungs: string[] = [];
    for (const route of routes) {
      if (route.engine === undefined && route.model === undefined) continue;
      const name = route.engine ?? profile.name;
      if (route.model !== undefined) {
        try {
          checkModel(route.model);
        } catch (error) {
          throw error instanceof EngineError ? new EngineError(`${route.key}.model`, error.message.slice("model: ".length)) : error;
        }
      }
      const chosen = await verify(name, `${route.key}.engine`);
      priced(chosen.usage, route.model ?? (name === profile.name ? model : chosen.model), `${route.key}.model`);
      rungs.push(`${route.words}: ${name}${route.model ? ` ${route.model}` : ""}`);
    }
    for (const name of Object.keys(config.engines)) {
      if (engines[name] || engineProfile(config, name).command !== null) continue;
      const chosen = await verify(name, `engines.${name}`);
      priced(chosen.usage, chosen.model, `engines.${name}.default_model`);
    }
    const budget = config.budget.usd_per_attempt === null ? "" : `, per-attempt budget ${budgetWords(config.budget.usd_per_attempt, profile.budgetFlag)}`;
    const provider = check.provider.length > 0 ? `, custom provider ${check.provider.join(" ")}` : "";
    const others = Object.keys(engines).filter((n) => n !== profile.name);
    const ladder =
      (rungs.length > 0 ? `; routes ${rungs.join(", ")}` : "") +
      (others.length > 0 ? `; also verified: ${others.map((n) => `${n} (${engines[n]!.version})`).join(", ")}` : "");
    return {
      command,
      engine,
      engines,
      step: `engine ${profile.name}${model ? ` (model ${model})` : ""}: ${check.path}, version ${check.version}${provider}${budget}${ladder}`,
      programs,
    };
  } catch (error) {
    return refuse(error);
  }
}
