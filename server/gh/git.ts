// Running git for the fleet's own operations: argv arrays only (never a shell), never a
// prompt, stable C-locale output, and the token handed to git only as an HTTP header through
// GIT_CONFIG_* environment variables — never in a URL, an argument, a config file or a log.
import { execa } from "execa";
import { GitError, UsageError } from "./errors.js";
import { hasControlCharacter, redact } from "./auth.js";

export interface GitAuth {
  token: string;
  /**
   * The remote the header is for. The header is scoped to its origin (`http.<origin>/.extraHeader`)
   * so that a redirect to another host never receives it.
   */
  url?: string;
}

export interface GitRunOptions {
  cwd: string;
  auth?: GitAuth | null;
  /** Written to git's stdin (closed afterwards); stdin is /dev/null otherwise. */
  input?: string;
  /** Extra environment (e.g. author identity for commit-tree). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

// Inherited variables that would redirect git to another repository or config, or prompt.
const SCRUBBED = /^(GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_OBJECT_DIRECTORY|GIT_ALTERNATE_OBJECT_DIRECTORIES|GIT_NAMESPACE|GIT_COMMON_DIR|GIT_PREFIX|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_ASKPASS|SSH_ASKPASS|GIT_TRACE\w*|GIT_CURL_VERBOSE)$/;

/** The environment for one git call; exported so tests can check what git receives. */
export function gitEnv(auth?: GitAuth | null, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !SCRUBBED.test(name)) env[name] = value;
  }
  Object.assign(env, extra, {
    GIT_TERMINAL_PROMPT: "0",
    // An askpass that answers nothing: a missing credential fails instead of waiting.
    GIT_ASKPASS: "true",
    SSH_ASKPASS: "true",
    LC_ALL: "C",
    LANG: "C",
  });
  const config: [string, string][] = [];
  if (auth) {
    const basic = Buffer.from(`x-access-token:${auth.token}`).toString("base64");
    config.push([`http.${headerScope(auth.url)}extraHeader`, `Authorization: Basic ${basic}`]);
    // No credential helper: the header is the only credential, and nothing gets stored.
    config.push(["credential.helper", ""]);
  }
  env.GIT_CONFIG_COUNT = String(config.length);
  config.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

// "http.https://github.com/.extraHeader" applies to that origin only; without a URL, to all.
function headerScope(url: string | undefined): string {
  if (!url) return "";
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return `${parsed.origin}/.`;
  } catch {
    // a path or scp-like remote: no HTTP, the header is never sent
  }
  return "";
}

/** Runs git; throws GitError (token redacted) when it cannot start, times out or exits non-zero. */
export async function git(args: string[], options: GitRunOptions): Promise<GitResult> {
  const result = await gitRaw(args, options);
  if (result.exitCode !== 0) {
    throw gitFailure(args, result, options.auth);
  }
  return result;
}

/** Runs git and returns its exit code and output; throws only when git could not run at all. */
export async function gitRaw(args: string[], options: GitRunOptions): Promise<GitResult> {
  const secrets = options.auth ? [options.auth.token] : [];
  const command = redact(`git ${args.join(" ")}`, secrets);
  const result = await execa("git", args, {
    cwd: options.cwd,
    env: gitEnv(options.auth, options.env),
    extendEnv: false,
    reject: false,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" as const }),
    stripFinalNewline: false,
    windowsHide: true,
  });
  const stdout = String(result.stdout ?? "");
  const stderr = redact(String(result.stderr ?? ""), secrets);
  if (result.timedOut) {
    throw new GitError(
      `${command}: timed out after ${Math.round((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)}s`,
      command,
      null,
      stderr,
      "the remote did not answer in time: check the network and the remote URL",
    );
  }
  if (result.exitCode === undefined || result.exitCode === null) {
    const cause = (result as { code?: string }).code === "ENOENT" || /ENOENT/.test(result.message ?? "") ? "git is not installed or not on PATH" : redact(result.shortMessage ?? "could not run", secrets);
    throw new GitError(`${command}: ${cause}`, command, null, stderr, "install git (2.31 or newer) and make sure it is on PATH");
  }
  return { stdout, stderr, exitCode: result.exitCode };
}

/** A GitError for a non-zero exit, with a hint when the cause is recognisable. */
export function gitFailure(args: string[], result: GitResult, auth?: GitAuth | null): GitError {
  const secrets = auth ? [auth.token] : [];
  const command = redact(`git ${args.join(" ")}`, secrets);
  const stderr = redact(result.stderr, secrets);
  const reason = firstMeaningfulLine(stderr) ?? `exit code ${result.exitCode}`;
  return new GitError(`${command} failed: ${reason}`, command, result.exitCode, stderr, hintFor(stderr));
}

/** Recognises the usual failures of talking to a remote. */
export function hintFor(stderr: string): string {
  const text = stderr.toLowerCase();
  if (/authentication failed|could not read username|could not read password|invalid username or password|http 401|returned error: 401|bad credentials/.test(text)) {
    return "the remote refused the credentials: check GITHUB_TOKEN (or GH_TOKEN, or `gh auth login`)";
  }
  if (/http 403|returned error: 403|permission to .* denied|write access .* not granted|forbidden/.test(text)) {
    return "the token may not push to this repository: it needs contents write access";
  }
  if (/could not resolve host|failed to connect|connection refused|couldn't connect|connection timed out|operation timed out|network is unreachable|ssl|unable to access/.test(text)) {
    return "the remote is unreachable: check the remote URL, GITHUB_API_URL and the network";
  }
  if (/repository not found|does not appear to be a git repository|not found|returned error: 404/.test(text)) {
    return "the remote repository was not found: check the repository name and that the token can see it";
  }
  return "";
}

function firstMeaningfulLine(stderr: string): string | null {
  const lines = stderr.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !/^hint:/.test(line));
  const important = lines.find((line) => /^(fatal|error):/.test(line));
  return (important ?? lines[0] ?? null)?.slice(0, 400) ?? null;
}

/** Guards a user-supplied string (branch, ref, remote) that git would read as an option. */
export function assertNotOption(value: string, what: string): void {
  if (typeof value !== "string" || value === "" || value.startsWith("-")) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(value)}: it must not be empty or start with "-"`);
  }
  if (hasControlCharacter(value)) {
    throw new UsageError(`invalid ${what} ${JSON.stringify(value)}: it must not contain control characters`);
  }
}

/** Guards a branch name (short, as in "afk/12-fix"): git's rules plus no leading "-". */
export function assertSafeBranchName(branch: string): void {
  assertNotOption(branch, "branch name");
  const bad =
    branch.includes("..") ||
    branch.includes("@{") ||
    branch === "@" ||
    /[\s~^:?*[\\]/.test(branch) ||
    branch.endsWith("/") ||
    branch.endsWith(".") ||
    branch.split("/").some((part) => part === "" || part.startsWith(".") || part.endsWith(".lock"));
  if (bad) {
    throw new UsageError(
      `invalid branch name ${JSON.stringify(branch)}: no "..", "@{", whitespace, ~^:?*[\\, empty or dot-led parts, or trailing "/" "." ".lock"`,
    );
  }
}

/** A remote URL must not carry credentials: the token travels only in a header. */
export function assertNoCredentialsInUrl(url: string): void {
  assertNotOption(url, "remote URL");
  try {
    const parsed = new URL(url);
    if ((parsed.protocol === "http:" || parsed.protocol === "https:") && (parsed.username || parsed.password)) {
      throw new UsageError("the remote URL carries credentials: remove them and set GITHUB_TOKEN instead");
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // not a URL (a path, or scp-like user@host:path): nothing to check
  }
}

// ---- what git prints ---------------------------------------------------------------------------

/**
 * `git push --porcelain` prints "<flag>\t<from>:<to>\t<summary> (<reason>)" per ref; "!" is a
 * rejection. The summary and reason of a rejection of `ref`, or null when it was not refused.
 */
export function pushRejection(stdout: string, ref: string): string | null {
  for (const line of stdout.split("\n")) {
    const [flag, refs, summary] = line.split("\t");
    if (flag === "!" && refs !== undefined && refs.endsWith(`:${ref}`)) return summary ?? "rejected";
  }
  return null;
}

/** The fields of a `-z` listing. */
export function nulSeparated(text: string): string[] {
  return text.split("\0").filter((field) => field !== "");
}

// "error: The following untracked working tree files would be overwritten by merge:\n\tpath"
export function overwrittenFiles(stderr: string): string[] {
  const files: string[] = [];
  let listing = false;
  for (const line of stderr.split("\n")) {
    if (/would be overwritten by merge:\s*$/.test(line)) listing = true;
    else if (listing && line.startsWith("\t")) files.push(line.slice(1));
    else listing = false;
  }
  return files;
}
