// The environment a worker process gets: a minimal base, the fleet's facts about its task, and
// only what the user names in `worker.env_passthrough`. Tokens never reach a worker by accident
// (docs/architecture.md, invariant 7): GITHUB_TOKEN, ANTHROPIC_API_KEY and friends pass only when named.
//
// Decisions:
// - CI is NOT set. The non-interactivity we need already comes from a closed stdin, no TTY, no
//   controlling terminal and the git knobs below; CI=1 would also change what the agent's own
//   commands do (pnpm switches to --frozen-lockfile and refuses a new dependency, jest --ci stops
//   writing new snapshots). A user who wants it exports CI and lists it in env_passthrough.
// - IS_SANDBOX, GEMINI_CLI_TRUST_WORKSPACE, CODEX_HOME, proxies and CA bundles are the user's
//   to pass (or to set inside the worker command): they are policy or may carry credentials.
// - XDG_* base directories are passed: they are locations, not secrets, and an agent CLI that
//   keeps its login under a moved XDG_CONFIG_HOME could not find it otherwise.

/** Host variables every worker gets when the host has them (plus every LC_*). */
export const BASE_ENV_NAMES: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "XDG_STATE_HOME",
  "XDG_RUNTIME_DIR",
];

const BASE_ENV_PREFIXES: readonly string[] = ["LC_"];

/**
 * Set by the fleet for every worker; nothing the user passes through overrides them.
 * - TERM=dumb, NO_COLOR=1: output is read line by line (quota messages), not painted.
 * - GIT_TERMINAL_PROMPT=0, GCM_INTERACTIVE=never: a git credential prompt fails instead of
 *   hanging an unattended run (docs/architecture.md, runtime lesson 6).
 * - GIT_EDITOR=true: `git commit` without -m aborts and `git merge` keeps its default message,
 *   instead of waiting on an editor nobody will close.
 * - PAGER/GIT_PAGER=cat: never wait on a pager.
 */
export const FIXED_ENV: Readonly<Record<string, string>> = {
  TERM: "dumb",
  NO_COLOR: "1",
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  GIT_EDITOR: "true",
  GIT_PAGER: "cat",
  PAGER: "cat",
};

/** What the fleet tells the worker about its task (see brief.ts for the same facts in prose). */
export interface WorkerFacts {
  AFK_ISSUE: string | number;
  AFK_BRIEF: string;
  AFK_BRANCH: string;
  AFK_BASE: string;
  AFK_WORKTREE: string;
  AFK_REPO: string;
  AFK_ATTEMPT: string | number;
  AFK_VERDICT_FILE: string;
}

export interface WorkerEnvInput {
  /** The host environment to pick from; default `process.env`. */
  base?: Readonly<Record<string, string | undefined>>;
  /** `worker.env_passthrough`: exact names or `PREFIX_*`. */
  passthrough: readonly string[];
  /** `worker.env_deny`: exact names or `PREFIX_*`; wins over passthrough and the base set. */
  deny: readonly string[];
  facts: WorkerFacts;
}

/**
 * Whether `name` matches `pattern`: an exact name, or a prefix ending in "*". A bare "*" (or any
 * pattern that is not a variable name) matches nothing: it would hand every token to the worker.
 */
export function matchesEnvPattern(name: string, pattern: string): boolean {
  if (pattern.endsWith("*")) {
    const prefix = pattern.slice(0, -1);
    return prefix.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(prefix) && name.startsWith(prefix);
  }
  return name === pattern;
}

function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => matchesEnvPattern(name, pattern));
}

function isBaseName(name: string): boolean {
  return BASE_ENV_NAMES.includes(name) || BASE_ENV_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * The worker's whole environment. Order of precedence, later wins:
 * base set and passthrough (both minus the denylist) → FIXED_ENV → the AFK_* facts.
 * So a passthrough pattern can neither smuggle in a denied variable nor override a fleet knob.
 */
export function workerEnv(input: WorkerEnvInput): Record<string, string> {
  const host = input.base ?? process.env;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(host)) {
    if (value === undefined || name === "" || name.includes("=")) continue;
    if (!(isBaseName(name) || matchesAny(name, input.passthrough))) continue;
    if (matchesAny(name, input.deny)) continue;
    env[name] = value;
  }
  Object.assign(env, FIXED_ENV);
  for (const [name, value] of Object.entries(input.facts) as [keyof WorkerFacts, string | number][]) {
    const text = String(value);
    if (text.includes("\0")) {
      throw new Error(`worker env: ${name} contains a NUL byte; the fleet generated a bad value`);
    }
    env[name] = text;
  }
  return env;
}
