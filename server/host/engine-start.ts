// The engine of a start (project_start `engine` and `model`, `afk-mcp run --engine`): the
// profile resolved from config, its command line built, its binary verified in the worker
// environment. Every refusal names the key and the fix (docs/architecture.md, invariant 8).
import type { FleetConfig } from "../../schemas/config.js";
import { UsageError } from "../gh/errors.js";
import type { EngineChoice } from "../fleet/registration.js";
import { checkEngine } from "../agent/engine-probe.js";
import { EngineError, checkModel, engineCommand, engineProfile } from "../agent/engines.js";
import { workerEnv } from "../agent/env.js";

export interface EngineStart {
  command: string;
  engine: EngineChoice | null;
  /** Every engine a route may take (the start's and the ladder's), verified. */
  engines: Record<string, EngineChoice>;
  /** One preflight line: the engine, where its binary is, its version, the provider in force. */
  step: string | null;
}

/** Resolves and verifies the start's engine; the opaque worker_command when none is named. */
export async function engineForStart(
  input: { engine?: string | undefined; model?: string | undefined; worker_command?: string | undefined },
  config: FleetConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<EngineStart> {
  const refuse = (error: unknown): never => {
    if (error instanceof EngineError) throw new UsageError(`project_start refused: ${error.message}`);
    throw error;
  };
  if (input.engine === undefined || input.engine === "command") {
    if (input.model !== undefined) throw new UsageError('project_start refused: model: the "command" engine (worker_command) takes no model; name an engine such as "claude" or "codex", or drop model');
    const profile = input.engine === "command" ? engineProfile(config, "command") : null;
    const command = input.worker_command ?? profile?.command ?? null;
    if (command === null) throw new UsageError('project_start: worker_command is required (the shell command that starts one agent in its worktree), or engine (e.g. "claude", "codex"), unless dry_run is true');
    return { command, engine: null, engines: {}, step: null };
  }
  if (input.worker_command !== undefined) throw new UsageError(`project_start refused: pass engine or worker_command, not both (engine ${JSON.stringify(input.engine)} builds its own command line; to run a command of your own use engine "command")`);
  try {
    const profile = engineProfile(config, input.engine);
    const model = input.model ?? profile.defaultModel;
    if (model !== null) checkModel(model);
    const priced = profile.usage === "codex-json" || profile.usage === "gemini-json";
    if (priced && model !== null && Object.keys(config.prices).length > 0 && config.prices[model] === undefined) {
      throw new EngineError("prices", `no price for model ${JSON.stringify(model)} (engine ${profile.name} reports tokens only): add prices.${model} {input_per_mtok, output_per_mtok}, or pick a priced model (${Object.keys(config.prices).join(", ")})`);
    }
    const command = engineCommand(profile, { model, budgetUsd: config.budget.usd_per_attempt });
    const probeEnv = workerEnv({
      base: env,
      passthrough: config.worker.env_passthrough,
      deny: config.worker.env_deny,
      facts: { AFK_ISSUE: 0, AFK_BRIEF: "", AFK_BRANCH: "", AFK_BASE: "", AFK_WORKTREE: "", AFK_REPO: "", AFK_ATTEMPT: 0, AFK_VERDICT_FILE: "" },
    });
    const check = await checkEngine(profile, probeEnv);
    const engine: EngineChoice = { name: profile.name, model, usage: profile.usage, loginShell: profile.loginShell, path: check.path, version: check.version, provider: check.provider };
    const engines: Record<string, EngineChoice> = { [profile.name]: engine };
    const rungs: string[] = [];
    for (const [i, rung] of config.routing.ladder.entries()) {
      const name = rung.engine ?? profile.name;
      if (rung.model !== undefined) checkModel(rung.model);
      rungs.push(`attempt ${i + 2}: ${name}${rung.model ? ` ${rung.model}` : ""}`);
      if (engines[name]) continue;
      const other = engineProfile(config, name);
      if (other.command !== null) throw new EngineError(`routing.ladder.${i}.engine`, `${name} is an opaque command: a ladder rung names an agent CLI engine`);
      const seen = await checkEngine(other, probeEnv);
      engines[name] = { name, model: other.defaultModel, usage: other.usage, loginShell: other.loginShell, path: seen.path, version: seen.version, provider: seen.provider };
    }
    const budget = config.budget.usd_per_attempt === null ? "" : profile.budgetFlag ? `, per-attempt budget $${config.budget.usd_per_attempt} passed as ${profile.budgetFlag}` : `, per-attempt budget $${config.budget.usd_per_attempt} enforced by the fleet`;
    const provider = check.provider.length > 0 ? `, custom provider ${check.provider.join(" ")}` : "";
    const ladder = rungs.length > 0 ? `; ladder ${rungs.join(", ")}` : "";
    return { command, engine, engines, step: `engine ${profile.name}${model ? ` (model ${model})` : ""}: ${check.path}, version ${check.version}${provider}${budget}${ladder}` };
  } catch (error) {
    return refuse(error);
  }
}
