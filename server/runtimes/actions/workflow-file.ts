// The workflow the `actions` runtime dispatches, as `afk-mcp actions init` proposes it: one run
// per worker attempt. Every input reaches the step through `env:` (an input spliced into `run:`
// would be shell code: a branch name, a brief), the engine's API key is a repository secret, a
// concurrency group per issue keeps a second run of one issue from running beside the first
// (the claim is the first guard), and the job's limit stays under the hosted runners' 6 hours.

/** The dispatch inputs, in the order the workflow declares them (GitHub allows 25, and 65,535 characters in all). */
export const WORKFLOW_INPUTS = ["issue", "branch", "base", "attempt", "engine", "command", "brief", "run_ref", "beat_seconds", "env"] as const;
export type WorkflowInput = (typeof WORKFLOW_INPUTS)[number];

/** GitHub's cap on a dispatch's inputs, all values together. */
export const INPUTS_MAX_CHARS = 65_535;
/** The job's limit in minutes: under the 360 a hosted runner allows, leaving the host's stop room to land. */
export const JOB_TIMEOUT_MINUTES = 350;

/** The secrets the workflow hands the engine (each empty where the repository has none). */
export const ENGINE_SECRETS = ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY"] as const;

const DESCRIPTIONS: Record<WorkflowInput, string> = {
  issue: "The issue number",
  branch: "The issue branch the worker continues and pushes",
  base: "The branch the fleet lands on",
  attempt: "The attempt number",
  engine: "The engine profile (claude, codex, ...), empty for an opaque command",
  command: "The engine's command line",
  brief: "The brief (the worker's stdin)",
  run_ref: "The ref the runner pushes its heartbeats to",
  beat_seconds: "Seconds between heartbeats",
  env: "Non-secret variables for the engine, as JSON",
};

export interface WorkflowFileOptions {
  /** The command the step runs (default `npx -y afk-mcp@<version> worker`). */
  worker: string;
  /** Install an engine CLI before the step (`npm i -g …`); none by default. */
  setup?: string[];
}

/** The workflow file's text. */
export function workflowFile(options: WorkflowFileOptions): string {
  const yamlString = (s: string): string => JSON.stringify(s);
  const inputs = WORKFLOW_INPUTS.map((name) =>
    [
      `      ${name}:`,
      `        description: ${yamlString(DESCRIPTIONS[name])}`,
      `        required: ${name === "engine" || name === "env" || name === "beat_seconds" ? "false" : "true"}`,
      `        type: string`,
      ...(name === "beat_seconds" ? [`        default: "60"`] : name === "env" ? [`        default: "{}"`] : []),
    ].join("\n"),
  );
  const env = WORKFLOW_INPUTS.map((name) => {
    const variable = name === "brief" ? "AFK_BRIEF_TEXT" : name === "command" ? "AFK_COMMAND" : name === "env" ? "AFK_ENV_JSON" : `AFK_${name.toUpperCase()}`;
    return `          ${variable}: \${{ inputs.${name} }}`;
  });
  const secrets = ENGINE_SECRETS.map((s) => `          ${s}: \${{ secrets.${s} }}`);
  const setup = (options.setup ?? []).map((line, i) => [`      - name: Install the engine (${i + 1})`, `        run: ${yamlString(line)}`].join("\n"));
  return [
    "# Written by `afk-mcp actions init`: the workflow an afk-mcp fleet dispatches, one run per",
    '# worker attempt (runtime "actions"). Inputs reach the step through env:, never inside run:.',
    "# The engine's API key is a repository secret (Settings > Secrets and variables > Actions).",
    "name: afk worker",
    'run-name: "afk #${{ inputs.issue }} attempt ${{ inputs.attempt }}"',
    "on:",
    "  workflow_dispatch:",
    "    inputs:",
    ...inputs,
    "concurrency:",
    "  group: afk-issue-${{ inputs.issue }}",
    "  cancel-in-progress: true",
    "permissions:",
    "  contents: write",
    "jobs:",
    "  worker:",
    "    runs-on: ubuntu-latest",
    `    timeout-minutes: ${JOB_TIMEOUT_MINUTES}`,
    "    steps:",
    "      - uses: actions/checkout@v4",
    "        with:",
    "          fetch-depth: 0",
    "      - uses: actions/setup-node@v4",
    "        with:",
    "          node-version: 22",
    ...setup,
    "      - name: afk-mcp worker",
    "        env:",
    ...env,
    ...secrets,
    `        run: ${yamlString(options.worker)}`,
    "",
  ].join("\n");
}
