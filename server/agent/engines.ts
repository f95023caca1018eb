// Engine profiles: WHAT a worker runs (docs/architecture.md, "Workers: engines and runtimes").
// A profile builds the command line of one agent CLI run unattended (binary, trust and
// permission flags, model flag, machine-readable output, a per-attempt budget where the CLI
// takes one) and names how its usage is read (spend.ts). `command` is the user's opaque
// worker_command, unchanged. Users add or override profiles under `engines` in config.
//
// The command line is a FIXED shell string: the brief reaches the CLI on stdin (the brief file,
// see server/runtimes/local/spawn.ts), never interpolated; only the binary, model and budget from config are quoted in.
import type { FleetConfig } from "../../schemas/config.js";
import { shellQuote } from "./shell.js";

export type UsageFormat = "claude-json" | "codex-json" | "gemini-json" | "none";

export interface EngineProfile {
  name: string;
  /** The program, a name looked up on the worker's PATH (in its login shell) or an absolute path. */
  binary: string;
  /** Arguments before the model flag: the unattended, trust and output flags. */
  args: readonly string[];
  /** The flag that takes the model (`--model`), or null when the CLI takes none. */
  modelFlag: string | null;
  /** The flag that takes a per-attempt USD budget, or null: the fleet enforces it from the usage. */
  budgetFlag: string | null;
  /** Arguments after everything else (codex: `-` = the prompt is stdin). */
  trailing: readonly string[];
  /** Variables set in front of the program (Gemini's workspace trust). Not secrets: config text. */
  env: Readonly<Record<string, string>>;
  /** How its output carries tokens and cost. */
  usage: UsageFormat;
  /** Variables that point it at another provider: named in the start's preflight when set. */
  baseUrlVars: readonly string[];
  /** Start it in a login shell (`$SHELL -l -c`), so the user's PATH from their profile applies. */
  loginShell: boolean;
  /** The opaque command of the `command` engine (the worker_command), else null. */
  command: string | null;
  /** The model when neither the start nor the route names one; null: the CLI's own default. */
  defaultModel: string | null;
}

/**
 * The built-in profiles. Flags chosen to work unattended AS ROOT and without IS_SANDBOX
 * (docs/engines.md, "The built-in profiles"; measured with Claude Code 2.1.197 and Codex 0.171):
 * - claude: headless `-p` reads the prompt from stdin; `acceptEdits` plus the tools it may use
 *   without asking (bypassPermissions is refused as root). stream-json keeps the output moving for
 *   the stall detector and ends with the result line carrying `total_cost_usd` and `usage`.
 * - codex: `exec` reads the prompt from `-` (stdin). Its own `workspace-write` sandbox makes
 *   `.git` read-only, so the agent could never commit: it runs with `danger-full-access`, and
 *   isolation is the runtime's job (the sandbox runtime), not the engine's.
 * - gemini: the worktree is a new, untrusted folder: GEMINI_CLI_TRUST_WORKSPACE, and yolo approval.
 */
export const BUILTIN_ENGINES: Readonly<Record<string, EngineProfile>> = {
  claude: {
    name: "claude",
    binary: "claude",
    args: [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      "Bash",
      "Edit",
      "Write",
      "Read",
      "Glob",
      "Grep",
      "--max-turns",
      "200",
    ],
    modelFlag: "--model",
    budgetFlag: "--max-budget-usd",
    trailing: [],
    env: {},
    usage: "claude-json",
    baseUrlVars: ["ANTHROPIC_BASE_URL"],
    loginShell: true,
    command: null,
    defaultModel: null,
  },
  codex: {
    name: "codex",
    binary: "codex",
    args: ["exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access"],
    modelFlag: "--model",
    budgetFlag: null,
    trailing: ["-"],
    env: {},
    usage: "codex-json",
    baseUrlVars: ["OPENAI_BASE_URL", "CODEX_HOME"],
    loginShell: true,
    command: null,
    defaultModel: null,
  },
  gemini: {
    name: "gemini",
    binary: "gemini",
    args: ["--output-format", "stream-json", "--approval-mode", "yolo"],
    modelFlag: "--model",
    budgetFlag: null,
    trailing: [],
    env: { GEMINI_CLI_TRUST_WORKSPACE: "true" },
    usage: "gemini-json",
    baseUrlVars: ["GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"],
    loginShell: true,
    command: null,
    defaultModel: null,
  },
  command: {
    name: "command",
    binary: "",
    args: [],
    modelFlag: null,
    budgetFlag: null,
    trailing: [],
    env: {},
    usage: "none",
    baseUrlVars: [],
    loginShell: false,
    command: null,
    defaultModel: null,
  },
};

export class EngineError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
    this.name = "EngineError";
  }
}

type EngineOverride = FleetConfig["engines"][string];

/** The profile named `name`: a built-in with the config's overrides, or one the config defines. */
export function engineProfile(config: Pick<FleetConfig, "engines">, name: string): EngineProfile {
  const override: EngineOverride | undefined = config.engines[name];
  const builtin = BUILTIN_ENGINES[name];
  if (!builtin && !override) {
    const known = [...new Set([...Object.keys(BUILTIN_ENGINES), ...Object.keys(config.engines)])].sort();
    throw new EngineError("engine", `unknown engine ${JSON.stringify(name)}: use one of ${known.join(", ")}, or define it under "engines" in config`);
  }
  const from = builtin ?? BUILTIN_ENGINES[override!.like ?? "command"]!;
  const o = override ?? ({} as Partial<EngineOverride>);
  const profile: EngineProfile = {
    ...from,
    name,
    binary: o.binary ?? from.binary,
    args: o.args ?? from.args,
    modelFlag: o.model_flag !== undefined ? o.model_flag : from.modelFlag,
    budgetFlag: o.budget_flag !== undefined ? o.budget_flag : from.budgetFlag,
    trailing: from.trailing,
    env: from.env,
    usage: o.usage ?? from.usage,
    loginShell: from.loginShell,
    command: o.command ?? from.command,
    defaultModel: o.default_model ?? from.defaultModel,
  };
  if (profile.command === null && profile.binary === "") {
    throw new EngineError(`engines.${name}`, 'needs "binary" (the agent CLI) or "command" (an opaque shell command)');
  }
  return profile;
}

/** The agent CLI engines the config knows (built-in or defined), by name: what a dry-run plan lets an `afk-engine/` label name. */
export function knownEngines(config: Pick<FleetConfig, "engines">): string[] {
  const names = new Set([...Object.keys(BUILTIN_ENGINES), ...Object.keys(config.engines)]);
  return [...names]
    .filter((name) => {
      try {
        return engineProfile(config, name).command === null && name !== "command";
      } catch {
        return false;
      }
    })
    .sort();
}

export interface EngineRun {
  model?: string | null;
  /** The per-attempt USD budget, handed to the CLI when its profile has a flag for it. */
  budgetUsd?: number | null;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A model id the CLI can take: no shell or option syntax. */
export function checkModel(model: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,199}$/.test(model)) {
    throw new EngineError("model", `${JSON.stringify(model)} is not a model id (letters, digits and . _ : / @ - only, not starting with "-")`);
  }
}

/** The shell string that runs one attempt of `profile`. */
export function engineCommand(profile: EngineProfile, run: EngineRun = {}): string {
  if (profile.command !== null) return profile.command;
  const words: string[] = [];
  for (const [name, value] of Object.entries(profile.env)) {
    if (!ENV_NAME.test(name)) throw new EngineError(`engines.${profile.name}.env`, `${JSON.stringify(name)} is not a variable name`);
    words.push(`${name}=${shellQuote(value)}`);
  }
  words.push(shellQuote(profile.binary), ...profile.args.map(shellQuote));
  if (run.model) {
    checkModel(run.model);
    if (profile.modelFlag === null)
      throw new EngineError("model", `engine ${profile.name} takes no model flag: drop the model, or set engines.${profile.name}.model_flag`);
    words.push(shellQuote(profile.modelFlag), shellQuote(run.model));
  }
  if (run.budgetUsd != null && profile.budgetFlag !== null) words.push(shellQuote(profile.budgetFlag), shellQuote(String(run.budgetUsd)));
  words.push(...profile.trailing.map(shellQuote));
  return words.join(" ");
}
