// Shared helpers for tests against the local forge: a forge in a temp directory, a tiny REST
// client over fetch (no Octokit, so tests see exactly what the forge answers), and real git
// in temporary clones. Git runs asynchronously: the forge serves from this same process, so
// a synchronous child process would deadlock it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdtemp, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before } from "node:test";
import { promisify } from "node:util";
import { startForge, type ForgeOptions, type RunningForge } from "../../server/forge-emulator/index.js";
import { conformanceRecorder, type ConformanceRecorder } from "./conformance.js";

const pexec = promisify(execFile);

export interface TestForge extends RunningForge {
  /** Every REST response checked against GitHub's OpenAPI description. */
  conformance: ConformanceRecorder;
  /**
   * Schema problems in the answers so far. A 304 (documented by GitHub for conditional
   * requests in general, not per operation) and routes outside the subset are not problems.
   */
  violations(): string[];
  /** Closes the forge, removes its directory. */
  dispose(): Promise<void>;
}

const scratch: string[] = [];

/**
 * Removes every scratch dir, each on its own: one that a straggling child (a git, a daemon
 * draining) is still writing into fails alone, after retries, and the rest still go.
 */
function removeScratch(): void {
  for (const dir of scratch.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch (error) {
      process.stderr.write(`test: could not remove ${dir}: ${(error as Error).message}\n`);
    }
  }
}
process.once("exit", removeScratch);
// A run interrupted (Ctrl-C reaches every test process; a timeout sends SIGTERM) ends without
// "exit" hooks: clean up first, then end as the signal would have. (`on`, not `once`: see
// server/host/shutdown.ts on execa's signal-exit.)
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const) {
  process.on(signal, () => {
    removeScratch();
    process.exit(code);
  });
}

/** A fresh directory under the OS temp dir, removed when the test process exits. */
export async function tempDir(prefix = "afk-forge-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/** tempDir for code that cannot wait (a describe body, a synchronous helper). */
export function tempDirSync(prefix = "afk-forge-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/**
 * One forge and a clone of it for a whole test file: started before its tests, disposed after
 * them, and the file fails if any answer broke GitHub's schemas.
 */
export function forgeForFile(opts: Partial<ForgeOptions>, ready: (forge: TestForge, work: string) => void | Promise<void>): void {
  let forge: TestForge | undefined;
  before(async () => {
    forge = await startTestForge(opts);
    await ready(forge, await cloneRepo(forge));
  });
  after(async () => {
    if (!forge) return;
    await forge.dispose();
    assert.deepEqual(forge.violations(), []);
  });
}

/** A forge in a fresh temp directory whose every REST answer is validated against GitHub's schemas. */
export async function startTestForge(opts: Partial<ForgeOptions> = {}): Promise<TestForge> {
  const dir = opts.dir ?? (await tempDir());
  const conformance = conformanceRecorder();
  const forge = await startForge({
    ...opts,
    dir,
    onResponse: (r) => {
      conformance.onResponse(r);
      opts.onResponse?.(r);
    },
  });
  return {
    ...forge,
    conformance,
    violations: () => conformance.violations().filter((v) => !/ 304: /.test(v) && !v.includes("no operation in the GitHub OpenAPI subset matches")),
    dispose: async () => {
      await forge.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// Tests read answers field by field and assert on them: an untyped body keeps them short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiOptions {
  /** A token, or null for an anonymous request; default: the forge's default token. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** One REST call; `body` is sent as JSON. Parses JSON answers, returns null for empty ones. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function api<T = any>(forge: RunningForge, method: string, path: string, body?: unknown, opts: ApiOptions = {}): Promise<ApiResponse<T>> {
  const token = opts.token === undefined ? forge.token : opts.token;
  const headers: Record<string, string> = { accept: "application/vnd.github+json", ...opts.headers };
  if (token) headers.authorization = `token ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path.startsWith("http") ? path : `${forge.apiUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
}

/** `/repos/{owner}/{repo}` + suffix for this forge. */
export function repoPath(forge: RunningForge, suffix = ""): string {
  return `/repos/${forge.repo}${suffix}`;
}

export interface GitResult {
  stdout: string;
  stderr: string;
}

export async function git(cwd: string, ...args: string[]): Promise<GitResult> {
  const env = {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "test@example.com",
    GIT_COMMITTER_NAME: "Test Author",
    GIT_COMMITTER_EMAIL: "test@example.com",
    GIT_CONFIG_NOSYSTEM: "1",
  };
  const r = await pexec("git", args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
  return { stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

/** The git URL with a token as Basic-auth password (what a credential helper would send). */
export function authedGitUrl(forge: RunningForge, token = forge.token): string {
  return forge.gitUrl.replace("http://", `http://x-access-token:${token}@`);
}

/** A clone whose `origin` pushes with the default token. */
export async function cloneRepo(forge: RunningForge, token = forge.token): Promise<string> {
  const parent = await tempDir("afk-clone-");
  const dir = join(parent, "work");
  await git(parent, "clone", "--quiet", authedGitUrl(forge, token), dir);
  return dir;
}

/** Writes a file and commits it; returns the new commit sha. */
export async function commitFile(dir: string, path: string, content: string, message = `change ${path}`): Promise<string> {
  const full = join(dir, path);
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, content);
  await git(dir, "add", "--", path);
  await git(dir, "commit", "--quiet", "-m", message);
  return (await git(dir, "rev-parse", "HEAD")).stdout;
}

/** Creates `branch` from origin's `base`, commits one file, pushes; returns the head sha. */
export async function pushBranch(dir: string, branch: string, path: string, content: string, base = "main"): Promise<string> {
  await git(dir, "fetch", "--quiet", "origin");
  await git(dir, "checkout", "--quiet", "-B", branch, `origin/${base}`);
  const sha = await commitFile(dir, path, content, `${branch}: ${path}`);
  await git(dir, "push", "--quiet", "origin", `${branch}:refs/heads/${branch}`);
  return sha;
}

/** Opens a PR from a freshly pushed branch; returns its number and head sha. */
export async function openPull(
  forge: RunningForge,
  dir: string,
  branch: string,
  opts: { path?: string; content?: string; title?: string; body?: string; base?: string } = {},
): Promise<{ number: number; head: string }> {
  const head = await pushBranch(dir, branch, opts.path ?? `${branch}.txt`, opts.content ?? `${branch}\n`, opts.base);
  const r = await api(forge, "POST", repoPath(forge, "/pulls"), {
    title: opts.title ?? `PR for ${branch}`,
    body: opts.body ?? "",
    head: branch,
    base: opts.base ?? "main",
  });
  if (r.status !== 201) throw new Error(`create PR ${branch}: ${r.status} ${JSON.stringify(r.body)}`);
  return { number: r.body.number as number, head };
}

/** The sha the forge's bare repository holds for `branch`. */
export async function branchTip(forge: RunningForge, branch = "main"): Promise<string> {
  return (await git(forge.bareRepo, "rev-parse", `refs/heads/${branch}`)).stdout;
}

/** Posts a completed check run named `name` on `sha`. */
export async function postCheck(forge: RunningForge, sha: string, conclusion: "success" | "failure" = "success", name = "ci"): Promise<void> {
  const r = await api(forge, "POST", repoPath(forge, "/check-runs"), {
    name,
    head_sha: sha,
    status: "completed",
    conclusion,
    output: { title: conclusion, summary: `${name} ${conclusion}` },
  });
  assert.equal(r.status, 201, `check run ${name} on ${sha}: ${JSON.stringify(r.body)}`);
}

export interface Protection {
  /** Required status check contexts; null requires none. */
  contexts: readonly string[] | null;
  /** Branches must be up to date with the base before they merge (default false). */
  strict?: boolean;
  /** Whether admins are held to it too (default null: not). */
  enforceAdmins?: boolean | null;
  /** Approving reviews required (default: no review rule). */
  approvals?: number;
  dismissStaleReviews?: boolean;
  /** The protected branch (default "main"). */
  branch?: string;
}

/** Sets classic branch protection as the forge's admin (one PUT, the whole rule); asserts it took. */
export async function protectBranch(forge: RunningForge, p: Protection): Promise<ApiResponse> {
  const reviews =
    p.approvals === undefined
      ? null
      : { required_approving_review_count: p.approvals, ...(p.dismissStaleReviews === undefined ? {} : { dismiss_stale_reviews: p.dismissStaleReviews }) };
  const r = await api(forge, "PUT", repoPath(forge, `/branches/${encodeURIComponent(p.branch ?? "main")}/protection`), {
    required_status_checks: p.contexts === null ? null : { strict: p.strict ?? false, contexts: p.contexts },
    enforce_admins: p.enforceAdmins ?? null,
    required_pull_request_reviews: reviews,
    restrictions: null,
  });
  assert.equal(r.status, 200, `protect ${p.branch ?? "main"}: ${JSON.stringify(r.body)}`);
  return r;
}
