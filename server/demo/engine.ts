// `afk-mcp demo --engine claude|codex`: the demo's backlog drained by the real agent CLI, driven
// by the demo's scripted model on 127.0.0.1 (scripted-model.ts), no login and no network. The
// scripted model answers each conversation with one tool call the CLI itself offers (its shell
// tool): run the demo's recipe program (worker.ts) on the brief, which edits the worktree,
// commits, or writes the verdict its issue expects; then it closes with "done". So every issue
// reaches the end the demo checks, through the real CLI's own tools, process and exit.
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../gh/errors.js";
import { startScriptedModel, type ScriptedModel, type ScriptStep } from "./scripted-model.js";
import { workerShellCommand } from "./worker-command.js";

export type DemoEngine = "claude" | "codex";

const CLI: Record<DemoEngine, { binary: string; pkg: string; model: string }> = {
  claude: { binary: "claude", pkg: "@anthropic-ai/claude-code", model: "claude-sonnet-4-5-20250929" },
  codex: { binary: "codex", pkg: "@openai/codex", model: "gpt-5" },
};

/** What the scripted model bills, USD per million tokens. */
const PRICES: Record<string, { input: number; output: number }> = {
  [CLI.claude.model]: { input: 3, output: 15 },
  [CLI.codex.model]: { input: 1.25, output: 10 },
};

export interface DemoEngineRun {
  engine: DemoEngine;
  model: string;
  /** project_start's config additions: the engine's binary, the variables the workers get, prices. */
  config: Record<string, unknown>;
  /** Variables of the host (passed through to the workers): the scripted model's URL, a temporary HOME. */
  env: Record<string, string>;
  scripted: ScriptedModel;
}

/** The CLI: this package's own (a dev checkout's devDependencies), else one on PATH; null when neither. */
export function findCli(engine: DemoEngine, path = process.env.PATH ?? "", own = true): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; own && i < 5; i++) {
    const local = join(dir, "node_modules", ".bin", CLI[engine].binary);
    if (existsSync(local)) return local;
    dir = dirname(dir);
  }
  for (const entry of path.split(":").filter(Boolean)) {
    const candidate = join(entry, CLI[engine].binary);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** Starts the scripted model and lays out the CLI's environment under `dir`. Refuses, with the install command, when the CLI is missing. */
/**
 * The scripted model's part in each conversation. "recipe": one call, the recipe program. "explore":
 * as an agent meeting the issue would, it first asks git whether the branch already holds an
 * earlier attempt's commits (a fix forward continues on the PR's branch): if so it goes straight to
 * the fix; else it reads the brief and looks around the project first (three more turns), then
 * works. `npm run bench -- --only fix-forward` weighs the two ways a retry starts with it.
 */
export function demoScript(kind: "recipe" | "explore"): ScriptStep[] {
  const work: ScriptStep = { shell: `${workerShellCommand({ AFK_DEMO_DELAY_MS: "200" })} < "$AFK_BRIEF"` };
  if (kind === "recipe") return [work];
  const check: ScriptStep = { shell: "git show --stat --format=%s HEAD | head -20" };
  return [
    { shell: "git log --format=%B | grep -c 'Scripted demo worker' || true", when: { match: "^[1-9]", then: [work, check] } },
    { shell: 'sed -n 1,80p "$AFK_BRIEF"' },
    { shell: "git ls-files | head -60" },
    { shell: "cat package.json" },
    work,
    check,
  ];
}

export async function demoEngine(
  engine: string,
  dir: string,
  path = process.env.PATH ?? "",
  own = true,
  script: "recipe" | "explore" = "recipe",
): Promise<DemoEngineRun> {
  if (engine !== "claude" && engine !== "codex")
    throw new UsageError(`--engine must be claude or codex (the CLIs the demo's scripted model speaks to), not ${JSON.stringify(engine)}`);
  const cli = CLI[engine];
  const binary = findCli(engine, path, own);
  if (binary === null)
    throw new UsageError(
      `demo --engine ${engine} runs the real ${engine} CLI, which is not installed: npm i -g ${cli.pkg} (no login is needed: the demo drives it with its scripted model on 127.0.0.1)`,
    );
  const scripted = await startScriptedModel({ script: demoScript(script), prices: PRICES });
  const home = join(dir, "agent-home");
  // The CLI's own scratch files (Claude Code's $TMPDIR/claude-<uid>) go with the demo's dir.
  const tmp = join(dir, "agent-tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  const env: Record<string, string> = {
    HOME: home,
    TMPDIR: tmp,
    DISABLE_AUTOUPDATER: "1",
    NO_PROXY: "127.0.0.1,localhost",
    ...(engine === "claude"
      ? { ANTHROPIC_BASE_URL: scripted.url, ANTHROPIC_API_KEY: "demo-scripted-model", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" }
      : { OPENAI_API_KEY: "demo-scripted-model", CODEX_HOME: join(home, ".codex") }),
  };
  if (engine === "codex") await writeCodexConfig(join(home, ".codex"), scripted.url);
  return {
    engine,
    model: cli.model,
    scripted,
    env,
    config: {
      engines: { [engine]: { binary } },
      worker: { env_passthrough: Object.keys(env).filter((k) => k !== "HOME" && k !== "TMPDIR") },
      prices: { [CLI.codex.model]: { input_per_mtok: PRICES[CLI.codex.model]!.input, output_per_mtok: PRICES[CLI.codex.model]!.output } },
    },
  };
}

/**
 * Codex's config: the scripted provider, and off what it otherwise fetches from the internet
 * (the release check, the plugin marketplace sync, metrics).
 */
export async function writeCodexConfig(codexHome: string, url: string): Promise<void> {
  await mkdir(codexHome, { recursive: true });
  await writeFile(
    join(codexHome, "config.toml"),
    [
      'model_provider = "scripted"',
      "check_for_update_on_startup = false",
      "",
      "[model_providers.scripted]",
      'name = "scripted model API (afk-mcp demo)"',
      `base_url = "${url}/v1"`,
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      "",
      "[features]",
      "plugins = false",
      "",
      "[analytics]",
      "enabled = false",
      "",
      "[otel]",
      'metrics_exporter = "none"',
      "",
    ].join("\n"),
  );
}
