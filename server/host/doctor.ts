// `afk-mcp doctor`: what this machine and these credentials give the fleet, one check per
// line — Node, git, the API URL, the token (where it comes from, whose it is, its scopes) and
// the state directory — each one that is not fine naming the command that fixes it.
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { homedir } from "node:os";
import semver from "semver";
import { dirname } from "node:path";
import { apiBaseUrl, resolveToken, DEFAULT_API_URL, type ResolvedToken } from "../gh/auth.js";
import { ForgeError, GitError } from "../gh/errors.js";
import { git } from "../gh/git.js";
import { inspectToken, type TokenInfo } from "../gh/token-info.js";
import { stateDir } from "../paths.js";
import { readCodexFinding } from "./codex-config.js";
import { DEFAULT_CONFIG } from "../../schemas/config.js";
import { runtimePreflight as runtimeStep } from "../runtimes/registry.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface DoctorCheck {
  name: "node" | "git" | "api_url" | "token" | "scopes" | "state_dir" | "codex" | "runtime";
  status: CheckStatus;
  detail: string;
  /** A command or step that fixes it; null when there is nothing to fix. */
  fix: string | null;
}

/** The oldest Node line afk-mcp supports (package.json `engines`), and the lines the suite runs on. */
export const SUPPORTED_NODE_MAJOR = 22;
const TESTED_NODE = "Node 22 and 24";
/** The local forge (`afk-mcp forge`, `afk-mcp demo`) merges with `git merge-tree --write-tree`. */
const FORGE_GIT = "2.38";

export interface DoctorOptions {
  env?: NodeJS.ProcessEnv;
  /** `process.versions.node` unless given (tests). */
  nodeVersion?: string;
  timeoutMs?: number;
}

export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const env = options.env ?? process.env;
  const checks: DoctorCheck[] = [nodeCheck(options.nodeVersion ?? process.versions.node), await gitCheck()];

  let baseUrl: string | null = null;
  let urlProblem: string | null = null;
  try {
    baseUrl = apiBaseUrl(env);
  } catch (error) {
    urlProblem = (error as Error).message;
  }
  let token: ResolvedToken | null = null;
  let tokenProblem: string | null = null;
  try {
    token = await resolveToken({ env });
  } catch (error) {
    tokenProblem = (error as Error).message;
  }

  let info: TokenInfo | null = null;
  let failure: ForgeError | null = null;
  if (baseUrl !== null && token !== null) {
    try {
      info = await inspectToken({ baseUrl, token: token.token, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) });
    } catch (error) {
      failure = error instanceof ForgeError ? error : new ForgeError("unexpected", (error as Error).message, null, "report this");
    }
  }

  checks.push(apiUrlCheck(env, baseUrl, urlProblem, info, failure));
  checks.push(tokenCheck(token, tokenProblem, info, failure));
  checks.push(scopesCheck(info));
  checks.push(await stateDirCheck(env));
  checks.push({ name: "codex", ...(await readCodexFinding(env)) });
  // Which runtime a start with the default config would run (a repository's `runtime` may choose "local").
  const runtime = await runtimeStep(DEFAULT_CONFIG, env, false).catch((error: unknown) => `fail: ${(error as Error).message}`);
  checks.push({
    name: "runtime",
    status: runtime.startsWith("fail: ") ? "fail" : runtime.includes("cannot run") ? "warn" : "ok",
    detail: runtime.replace(/^fail: /, ""),
    fix: runtime.includes("cannot run") ? 'apt-get install bubblewrap socat, or set runtime "local" in .github/afk.json' : null,
  });
  return checks;
}

/** 0 when nothing failed (warnings included), 1 otherwise. */
export function doctorExitCode(checks: readonly DoctorCheck[]): number {
  return checks.some((c) => c.status === "fail") ? 1 : 0;
}

export function nodeCheck(version: string): DoctorCheck {
  const major = semver.coerce(version)?.major ?? 0;
  const detail = `Node ${version.replace(/^v/, "")}`;
  if (major >= SUPPORTED_NODE_MAJOR) return { name: "node", status: "ok", detail: `${detail} (the suite runs on ${TESTED_NODE})`, fix: null };
  const fix = `install Node ${SUPPORTED_NODE_MAJOR} or newer, e.g. \`nvm install 24\` (https://nodejs.org)`;
  if (major >= 20)
    return { name: "node", status: "warn", detail: `${detail} is past its end of life; afk-mcp supports Node ${SUPPORTED_NODE_MAJOR} and newer`, fix };
  return { name: "node", status: "fail", detail: `${detail} is too old: afk-mcp needs Node ${SUPPORTED_NODE_MAJOR} or newer`, fix };
}

async function gitCheck(): Promise<DoctorCheck> {
  let text: string;
  try {
    text = (await git(["--version"], { cwd: homedir(), timeoutMs: 15_000 })).stdout.trim();
  } catch (error) {
    const reason = error instanceof GitError ? error.message.replace(/^git --version: /, "") : String(error);
    return {
      name: "git",
      status: "fail",
      detail: reason,
      fix: `install git ${FORGE_GIT} or newer (https://git-scm.com/downloads) and put it on PATH`,
    };
  }
  return gitVersionCheck(text);
}

export function gitVersionCheck(versionLine: string): DoctorCheck {
  const m = /git version (\d+\.\d+)/.exec(versionLine);
  if (!m)
    return {
      name: "git",
      status: "warn",
      detail: `cannot read the version from "${versionLine}"`,
      fix: `make sure \`git\` on PATH is git ${FORGE_GIT} or newer`,
    };
  if (semver.gte(semver.coerce(m[1])!, semver.coerce(FORGE_GIT)!)) return { name: "git", status: "ok", detail: versionLine, fix: null };
  return {
    name: "git",
    status: "warn",
    detail: `${versionLine}: the fleet works, but the local forge (afk-mcp forge, afk-mcp demo) needs git ${FORGE_GIT} for \`git merge-tree --write-tree\``,
    fix: `upgrade git to ${FORGE_GIT} or newer (https://git-scm.com/downloads)`,
  };
}

function apiUrlCheck(env: NodeJS.ProcessEnv, baseUrl: string | null, problem: string | null, info: TokenInfo | null, failure: ForgeError | null): DoctorCheck {
  const origin = env.GITHUB_API_URL?.trim() ? "from GITHUB_API_URL" : "GITHUB_API_URL is unset";
  const fix = `set GITHUB_API_URL to the REST API root (GitHub Enterprise: https://HOST/api/v3), or unset it for ${DEFAULT_API_URL}`;
  if (baseUrl === null) return { name: "api_url", status: "fail", detail: problem ?? "not a URL", fix };
  if (failure !== null && failure.kind === "unreachable") {
    return {
      name: "api_url",
      status: "fail",
      detail: `${baseUrl} (${origin}) did not answer: ${failure.message.replace(/^.*?: cannot reach/, "cannot reach")}`,
      fix: `check the network and the proxy, or ${fix}`,
    };
  }
  // A root that is not GitHub's REST API answers GET /user with a 404 or a page that is not JSON.
  if (failure !== null && apiIsWrong(failure)) {
    return { name: "api_url", status: "fail", detail: `${baseUrl} (${origin}) does not answer as GitHub's REST API: ${failure.message}`, fix };
  }
  const contact = info !== null || failure !== null ? "answers" : "(not contacted without a token)";
  return { name: "api_url", status: "ok", detail: `${baseUrl} (${origin}) ${contact}`, fix: null };
}

/** Failures that say the API URL is wrong or down, not that the token is. */
function apiIsWrong(failure: ForgeError): boolean {
  return failure.kind === "unreachable" || failure.kind === "not_found" || failure.kind === "unexpected" || failure.kind === "server";
}

function tokenCheck(token: ResolvedToken | null, problem: string | null, info: TokenInfo | null, failure: ForgeError | null): DoctorCheck {
  if (token === null) {
    return {
      name: "token",
      status: "fail",
      detail: problem === null || problem.startsWith("no GitHub token") ? "none in GITHUB_TOKEN or GH_TOKEN, and `gh auth token` gave none" : problem,
      fix: "export GITHUB_TOKEN=<a token with repo access>, or sign in with `gh auth login` (afk-mcp then uses `gh auth token`)",
    };
  }
  if (info !== null) {
    const rate = info.rateLimit
      ? `; ${info.rateLimit.remaining} of ${info.rateLimit.limit} requests left until ${new Date(info.rateLimit.reset * 1000).toISOString().slice(11, 16)} UTC`
      : "";
    return { name: "token", status: "ok", detail: `from ${token.source}, signed in as ${info.login}${rate}`, fix: null };
  }
  if (failure === null || apiIsWrong(failure))
    return { name: "token", status: "skip", detail: `from ${token.source}; not checked: the API URL did not answer as GitHub's`, fix: null };
  if (failure.kind === "rate_limited")
    return {
      name: "token",
      status: "warn",
      detail: `from ${token.source}: ${failure.message}`,
      fix: "wait for the reset, or use a token with a higher limit (a GitHub App installation)",
    };
  const fix =
    failure.kind === "forbidden"
      ? failure.hint
      : token.source === "gh auth token"
        ? "sign in again with `gh auth login` (or `gh auth refresh`)"
        : `set ${token.source} to a valid token (e.g. export ${token.source}=$(gh auth token)), or unset it to use \`gh auth token\``;
  return { name: "token", status: "fail", detail: `from ${token.source}: ${failure.message}`, fix };
}

/** Scopes a classic token needs: `repo` (private repositories) or at least `public_repo`. */
export function scopesCheck(info: TokenInfo | null): DoctorCheck {
  if (info === null) return { name: "scopes", status: "skip", detail: "not checked: the token was not accepted", fix: null };
  if (info.scopes === null) {
    return {
      name: "scopes",
      status: "ok",
      detail:
        "a fine-grained or app token (no OAuth scopes): it needs Contents, Issues and Pull requests (read and write) on the repository; " +
        "`afk-mcp plan --repo OWNER/NAME` checks them there",
      fix: null,
    };
  }
  const scopes = new Set(info.scopes);
  const listed = info.scopes.length ? info.scopes.join(", ") : "none";
  if (!scopes.has("repo") && !scopes.has("public_repo")) {
    return {
      name: "scopes",
      status: "fail",
      detail: `classic token scopes: ${listed}; the fleet needs "repo" to push branches, open PRs and label issues`,
      fix: "gh auth refresh -s repo (or create a token with the repo scope)",
    };
  }
  if (!scopes.has("repo")) {
    return {
      name: "scopes",
      status: "warn",
      detail: `classic token scopes: ${listed}; "public_repo" reaches public repositories only`,
      fix: "gh auth refresh -s repo, for private repositories",
    };
  }
  if (!scopes.has("workflow")) {
    return {
      name: "scopes",
      status: "warn",
      detail: `classic token scopes: ${listed}; without "workflow", a worker's change to .github/workflows/ cannot be pushed`,
      fix: "gh auth refresh -s workflow",
    };
  }
  return { name: "scopes", status: "ok", detail: `classic token scopes: ${listed}`, fix: null };
}

async function stateDirCheck(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const dir = stateDir(env);
  const origin = env.AFK_STATE_DIR ? "AFK_STATE_DIR" : env.XDG_STATE_HOME ? "$XDG_STATE_HOME/afk-mcp" : "the default";
  const where = `${dir} (${origin})`;
  const elsewhere = "or set AFK_STATE_DIR to a directory of yours";
  let info;
  try {
    info = await stat(dir);
  } catch {
    const parent = await nearestExisting(dir);
    if (parent !== null && (await writable(parent))) return { name: "state_dir", status: "ok", detail: `${where} will be created on first use`, fix: null };
    return {
      name: "state_dir",
      status: "fail",
      detail: `${where} cannot be created: ${parent ?? "no parent"} is not writable`,
      fix: `mkdir -p -m 700 ${shellWord(dir)}, ${elsewhere}`,
    };
  }
  if (!info.isDirectory()) return { name: "state_dir", status: "fail", detail: `${where} is not a directory`, fix: `remove ${shellWord(dir)}, ${elsewhere}` };
  if (!(await writable(dir)))
    return { name: "state_dir", status: "fail", detail: `${where} is not writable`, fix: `chmod u+rwx ${shellWord(dir)}, ${elsewhere}` };
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid)
    return {
      name: "state_dir",
      status: "fail",
      detail: `${where} belongs to uid ${info.uid}, not to you (uid ${uid})`,
      fix: `set AFK_STATE_DIR to a directory of yours`,
    };
  if ((info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8);
    return {
      name: "state_dir",
      status: "warn",
      detail: `${where} is open to other users (mode ${mode}); it holds logs and worker briefs`,
      fix: `chmod 700 ${shellWord(dir)}`,
    };
  }
  return { name: "state_dir", status: "ok", detail: where, fix: null };
}

async function nearestExisting(path: string): Promise<string | null> {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    try {
      if ((await stat(dir)).isDirectory()) return dir;
    } catch {
      // keep climbing
    }
    if (dirname(dir) === dir) return null;
  }
}

async function writable(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// Paths go into a suggested command: quote them when the shell would split or expand them.
function shellWord(text: string): string {
  return /^[\w./~-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
