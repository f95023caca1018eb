// Running git for the fleet's own operations, through simple-git: argv arrays only (never a
// shell), never a prompt, stable C-locale output, every non-zero exit an error with its code, and
// the token handed to git only as an HTTP header through GIT_CONFIG_* environment variables —
// never in a URL, an argument, a config file or a log.
import { GitConstructError, GitError as SimpleGitError, simpleGit } from "simple-git";
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
const SCRUBBED =
  /^(GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_OBJECT_DIRECTORY|GIT_ALTERNATE_OBJECT_DIRECTORIES|GIT_NAMESPACE|GIT_COMMON_DIR|GIT_PREFIX|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_ASKPASS|SSH_ASKPASS|GIT_TRACE\w*|GIT_CURL_VERBOSE)$/;

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
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const env = gitEnv(options.auth, options.env);
  const stderr: Buffer[] = [];
  let result: GitResult;
  try {
    const stdout = await simpleGit({
      baseDir: options.cwd,
      abort: deadline,
      errors: exitAsError,
      // stdin gets the input, else nothing (closed at once, as /dev/null would be): without
      // content simple-git leaves stdin open, and a git that reads it would wait forever.
      input: () => (options.input !== undefined && options.input !== "" ? options.input : EMPTY),
      trimmed: false,
      // Done when git's output streams closed. simple-git's default also ends a call 50 ms after
      // the exit event, and on a loaded machine that took a push's porcelain lines before they
      // were read (an empty sha where the claim race expected one). A second after the exit is
      // the cap for a remote helper that a timeout's kill left holding stderr open.
      completion: { onClose: true, onExit: 1_000 },
      ...FLEET_GUARDS,
      allowEnvironment: Object.keys(env),
    })
      .env(env)
      .outputHandler((_binary, out, err) => {
        err.on("data", (chunk: Buffer) => stderr.push(chunk));
        // simple-git waits 50 ms more for a git that printed nothing (measured: a silent
        // `merge-base --is-ancestor` 58 ms against 7 ms through execa); an empty chunk once its
        // completion check listens tells it the streams are live, and it returns at close.
        process.nextTick(() => out.emit("data", EMPTY));
      })
      .raw(args);
    result = { stdout, stderr: Buffer.concat(stderr).toString("utf8"), exitCode: 0 };
  } catch (error) {
    if (deadline.aborted) {
      throw new GitError(
        `${command}: timed out after ${Math.round(timeoutMs / 1000)}s`,
        command,
        null,
        redact(Buffer.concat(stderr).toString("utf8"), secrets),
        "the remote did not answer in time: check the network and the remote URL",
      );
    }
    if (!(error instanceof GitExit) || error.exitCode < 0) throw notRun(command, error, secrets);
    result = { stdout: error.stdout, stderr: error.stderr, exitCode: error.exitCode };
  }
  return { ...result, stderr: redact(result.stderr, secrets) };
}

const EMPTY = Buffer.alloc(0);

/**
 * What simple-git may let through for the fleet. The environment is gitEnv's, each variable named
 * in allowEnvironment: the fleet's own GIT_ASKPASS, SSH_ASKPASS and GIT_CONFIG_* (the header), and
 * what it keeps of the host's (an author identity, GIT_SSH_COMMAND). In simple-git 4 a name there
 * also passes the `unsafe` check of its kind (allowUnsafeAskPass, allowUnsafeConfigEnvCount, …),
 * and a GIT_* variable handed over explicitly is refused unless it is named, so naming them is
 * the one switch; GIT_CONFIG_PARAMETERS, which no name unlocks, gitEnv scrubs. Strict: a config
 * key the fleet writes (-c, `git config`, GIT_CONFIG_KEY_*) that is neither git-safe in
 * simple-git's list nor named here is refused before git runs, not warned about.
 */
const FLEET_GUARDS = {
  strict: true,
  // `--git-dir` is the fleet's own argument, a path it made (the sandbox's private git dir, the
  // control repository), never issue data; simple-git 4 refuses it unless told.
  unsafe: { allowUnsafeConfigPaths: true },
  allowConfig: [
    "credential.helper", // emptied, so that the header is the only credential (gitEnv)
    "commit.gpgSign", // off for the fleet's own commits (landing-git.ts, wip.ts, work-repo.ts)
    "tag.gpgSign", // and its tags (work-repo.ts)
    "push.gpgSign", // off for its pushes (gitrefs.ts, landing-git.ts, worktrees.ts)
    "remote.origin.url", // the remote of the control and work repositories (gitrefs.ts, work-repo.ts)
    "remote.origin.fetch", // a worker's own `git fetch` (work-repo.ts)
    "branch.*.remote", // an issue branch's upstream (worktrees.ts)
    "branch.*.merge",
    // A sandboxed worker's private repository (runtimes/sandbox/private-git.ts): a bare init made
    // a worktree's, its fleet-side signing off, reflogs kept, the worktree's author identity.
    "core.bare",
    "core.logAllRefUpdates",
    "commit.gpgsign",
    "tag.gpgsign",
    "user.name",
    "user.email",
  ],
} as const;

/**
 * simple-git's `errors` option: every non-zero exit rejects the task with the code and what git
 * printed (its default passes an exit with nothing on stderr as success: `merge-base
 * --is-ancestor` and every quiet check would resolve either way). A GitError of simple-git's
 * own, so that it is passed on as it is.
 */
function exitAsError(error: Buffer | Error | undefined, result: { stdOut: Buffer[]; stdErr: Buffer[]; exitCode: number }): Buffer | Error | undefined {
  if (result.exitCode === 0) return error;
  return new GitExit(result.exitCode, Buffer.concat(result.stdOut).toString("utf8"), Buffer.concat(result.stdErr).toString("utf8"));
}

class GitExit extends SimpleGitError {
  constructor(
    readonly exitCode: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(undefined, `exit code ${exitCode}`);
  }
}

// git did not run: it is not on PATH (a negative code is the spawn's errno), the directory is
// missing, or simple-git refused the call before spawning it.
function notRun(command: string, error: unknown, secrets: string[]): GitError {
  if (error instanceof GitExit) {
    const cause = /ENOENT/.test(error.stderr) ? "git is not installed or not on PATH" : redact(firstMeaningfulLine(error.stderr) ?? "could not run", secrets);
    return new GitError(`${command}: ${cause}`, command, null, "", "install git (2.31 or newer) and make sure it is on PATH");
  }
  if (error instanceof GitConstructError) {
    return new GitError(
      `${command}: the working directory does not exist`,
      command,
      null,
      "",
      "the repository's directory was removed: start the project again to recreate it",
    );
  }
  const reason = redact(error instanceof Error ? error.message : String(error), secrets);
  return new GitError(`${command}: refused before git ran: ${reason}`, command, null, "", "");
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
  if (
    /authentication failed|could not read username|could not read password|invalid username or password|http 401|returned error: 401|bad credentials/.test(text)
  ) {
    return "the remote refused the credentials: check GITHUB_TOKEN (or GH_TOKEN, or `gh auth login`)";
  }
  if (/http 403|returned error: 403|permission to .* denied|write access .* not granted|forbidden/.test(text)) {
    return "the token may not push to this repository: it needs contents write access";
  }
  if (
    /could not resolve host|failed to connect|connection refused|couldn't connect|connection timed out|operation timed out|network is unreachable|ssl|unable to access/.test(
      text,
    )
  ) {
    return "the remote is unreachable: check the remote URL, GITHUB_API_URL and the network";
  }
  if (/repository not found|does not appear to be a git repository|not found|returned error: 404/.test(text)) {
    return "the remote repository was not found: check the repository name and that the token can see it";
  }
  return "";
}

function firstMeaningfulLine(stderr: string): string | null {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^hint:/.test(line));
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
