// The local completion gate (`gate.ci: "local"`): the user's opaque gate command, run through
// their shell on the exact tree that is about to land, with a bounded tail of its output kept
// as evidence. Same spawning rules as a worker (server/runtimes/local/spawn.ts): argv [shell, "-c", command], never
// `shell: true`; its own session and process group, ended as a whole on timeout and after the
// leader exits; stdin is /dev/null; stdout and stderr are read by us and never reach our own
// stdout (the MCP stream); the environment is exactly what the caller passes.
//
// Exactness: a gate result is about a commit's tree. `gateCommit` runs the command in the
// issue's worktree only when that worktree is at the commit with nothing untracked or changed;
// otherwise in a scratch worktree checked out detached at the commit, so a file the worker
// forgot to commit can never make a gate green. Results are cached per (command, tree).
import { stripAnsi } from "../../text/text.js";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, rm, stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { git, gitRaw } from "../../gh/git.js";
import { redactText } from "../../text/redact.js";
import { clean } from "../../text/fenced.js";
import { BASE_ENV_NAMES, FIXED_ENV, matchesEnvPattern } from "../../agent/env.js";
import { resolveShell } from "../../agent/shell.js";
import { endGroup } from "./spawn.js";
import { setTimeout as sleep } from "node:timers/promises";
import { LRUCache } from "lru-cache";

export interface GateRunOptions {
  /** The user's gate command, opaque: handed to the shell as its one `-c` argument. */
  command: string;
  cwd: string;
  /** The whole environment of the command (see `gateEnv`); nothing else is inherited. */
  env: Record<string, string>;
  timeoutSeconds: number;
  /** How many bytes of the tail of the combined output are kept as the excerpt. */
  excerptBytes: number;
  /** Default: `env.SHELL` when it is a known POSIX shell, else /bin/sh. */
  shell?: string;
  /** SIGTERM → SIGKILL grace for the process group. Default 5 s. */
  killGraceMs?: number;
  /** Extra strings to redact from the excerpt (tokens the caller knows of). */
  secrets?: readonly string[];
}

export interface GateRun {
  passed: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Bounded tail of stdout and stderr interleaved as they arrived; ANSI stripped, tokens redacted. */
  excerpt: string;
  /** Set when the command could not be started at all. */
  error: string | null;
}

const DRAIN_MS = 2_000;

/**
 * The gate's environment: the same minimal base a worker gets (PATH, HOME, locale, ...), the
 * fleet's non-interactive knobs, and only the host variables the user names (`passthrough`,
 * minus `deny`). Tokens reach the gate only when named.
 */
export function gateEnv(
  options: { base?: Readonly<Record<string, string | undefined>>; passthrough?: readonly string[]; deny?: readonly string[] } = {},
): Record<string, string> {
  const host = options.base ?? process.env;
  const passthrough = options.passthrough ?? [];
  const deny = options.deny ?? [];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(host)) {
    if (value === undefined || name === "" || name.includes("=")) continue;
    const base = BASE_ENV_NAMES.includes(name) || name.startsWith("LC_");
    if (!base && !passthrough.some((p) => matchesEnvPattern(name, p))) continue;
    if (deny.some((p) => matchesEnvPattern(name, p))) continue;
    env[name] = value;
  }
  return Object.assign(env, FIXED_ENV);
}

/** Keeps the last `limit` bytes written to it. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    if (this.limit <= 0) {
      this.truncated ||= chunk.length > 0;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.size - this.limit;
      this.truncated = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Printable text from raw output bytes: cut at a UTF-8 boundary, CRs and escapes removed. */
export function cleanOutput(bytes: Buffer, truncated: boolean, secrets: readonly string[] = []): string {
  let start = 0;
  // A tail cut mid-character starts with continuation bytes (10xxxxxx): skip them.
  while (start < bytes.length && start < 4 && (bytes[start]! & 0xc0) === 0x80) start += 1;
  let text = bytes.subarray(start).toString("utf8");
  // Escape sequences go first, whole; then control characters but tab and newline.
  text = clean(stripAnsi(text));
  text = redactText(text, secrets);
  return truncated ? `…${text}` : text;
}

/** Runs the gate command once. Never throws for the command's own failure: that is a red gate. */
export async function runGate(options: GateRunOptions): Promise<GateRun> {
  const started = Date.now();
  const failed = (error: string): GateRun => ({
    passed: false,
    exitCode: null,
    signal: null,
    timedOut: false,
    durationMs: Date.now() - started,
    excerpt: redactText(error, options.secrets ?? []),
    error,
  });
  if (options.command.trim() === "") return failed("the gate command is empty: set gate.local_command");
  if (options.command.includes("\0")) return failed("the gate command contains a NUL byte: fix gate.local_command");
  let shell: string;
  if (options.shell !== undefined) {
    if (!isAbsolute(options.shell)) return failed(`shell ${JSON.stringify(options.shell)} is not an absolute path`);
    shell = options.shell;
  } else {
    shell = resolveShell(options.env.SHELL ?? process.env.SHELL);
  }
  const isDir = await stat(options.cwd).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) return failed(`cannot run the gate: ${options.cwd} is not a directory`);

  const tail = new TailBuffer(Math.max(0, Math.floor(options.excerptBytes)));
  let child: ChildProcess;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let closed: Promise<void>;
  try {
    child = spawn(shell, ["-c", options.command], {
      cwd: options.cwd,
      env: options.env,
      detached: true, // own session and process group: no terminal, and one kill ends all
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    // Listeners first: a command that exits at once must not be missed.
    exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on("data", (chunk: Buffer) => tail.push(chunk));
      stream.on("error", () => {});
    }
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    return failed(`cannot start the gate command with ${shell} in ${options.cwd}: ${e.code ?? e.message}`);
  }
  child.on("error", () => {});
  const pid = child.pid!;
  const graceMs = options.killGraceMs ?? 5_000;
  let timedOut = false;
  let ending: Promise<void> | null = null;
  const endAll = (): Promise<void> => (ending ??= endGroup(pid, graceMs));
  const timer = setTimeout(
    () => {
      timedOut = true;
      void endAll();
    },
    Math.max(1, options.timeoutSeconds) * 1000,
  );

  const exit = await exited;
  clearTimeout(timer);
  // Leftovers (a server started in the background) would hold the pipes and the worktree.
  await endAll().catch(() => undefined);
  await Promise.race([closed, sleep(DRAIN_MS)]);
  child.stdout?.destroy();
  child.stderr?.destroy();
  const durationMs = Date.now() - started;
  let excerpt = cleanOutput(tail.bytes(), tail.truncated, options.secrets ?? []);
  if (timedOut) excerpt += `${excerpt === "" || excerpt.endsWith("\n") ? "" : "\n"}[afk: the gate command was killed after ${options.timeoutSeconds}s]`;
  return {
    passed: !timedOut && exit.code === 0,
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    durationMs,
    excerpt,
    error: null,
  };
}

/** Gate results per (command, tree): a tree is gated once. Bounded, the least recently set dropped first. */
export class GateCache {
  private readonly entries: LRUCache<string, GateRun>;

  constructor(limit = 256) {
    this.entries = new LRUCache({ max: limit });
  }

  get(command: string, tree: string): GateRun | undefined {
    return this.entries.peek(key(command, tree));
  }

  set(command: string, tree: string, run: GateRun): void {
    this.entries.set(key(command, tree), run);
  }

  /** Trees that passed `command`, for diagnostics and tests. */
  passedTrees(command: string): string[] {
    const prefix = `${command}\0`;
    const trees: string[] = [];
    this.entries.rforEach((run, k) => {
      if (k.startsWith(prefix) && run.passed) trees.push(k.slice(prefix.length));
    });
    return trees;
  }
}

function key(command: string, tree: string): string {
  return `${command}\0${tree}`;
}

export interface GateCommitOptions extends Omit<GateRunOptions, "cwd"> {
  /** The bare work repository that holds `sha`. */
  repoDir: string;
  /** The commit to gate (must be present in repoDir). */
  sha: string;
  /** The worktree: used when it is exactly at `sha` and clean. */
  worktree?: string | null;
  /** Where scratch worktrees go (created if absent). */
  scratchRoot: string;
  cache?: GateCache;
  /** Run the command even when the cache has this tree's result (a re-run of a red gate); the new result replaces it. */
  fresh?: boolean;
  /**
   * Runs the scratch worktree's add and removal alone among the repository's other git moves
   * (WorkRepo.exclusive): a fetch that overlaps a `worktree add` fails on its half-made HEAD.
   */
  alone?: <T>(job: () => Promise<T>) => Promise<T>;
}

export interface GateCommitResult extends GateRun {
  sha: string;
  tree: string;
  /** Where the command ran. */
  cwd: string;
  cached: boolean;
}

/** Runs the gate on exactly the tree of `sha` (see the module comment), once per tree. */
export async function gateCommit(options: GateCommitOptions): Promise<GateCommitResult> {
  const tree = (await git(["rev-parse", "--verify", `${options.sha}^{tree}`], { cwd: options.repoDir })).stdout.trim();
  const hit = options.fresh ? undefined : options.cache?.get(options.command, tree);
  if (hit) return { ...hit, sha: options.sha, tree, cwd: "", cached: true };

  const alone = options.alone ?? (<T>(job: () => Promise<T>): Promise<T> => job());
  let cwd: string | null = null;
  let scratch: string | null = null;
  if (options.worktree && (await exactlyAt(options.worktree, options.sha))) cwd = options.worktree;
  if (cwd === null) {
    await mkdir(options.scratchRoot, { recursive: true });
    scratch = join(options.scratchRoot, `gate-${options.sha.slice(0, 12)}-${randomBytes(4).toString("hex")}`);
    const at = scratch;
    await alone(() => git(["worktree", "add", "--detach", "--quiet", at, options.sha], { cwd: options.repoDir }));
    cwd = scratch;
  }
  try {
    const run = await runGate({ ...options, cwd });
    options.cache?.set(options.command, tree, run);
    return { ...run, sha: options.sha, tree, cwd, cached: false };
  } finally {
    if (scratch !== null) {
      const at = scratch;
      await alone(async () => {
        await gitRaw(["worktree", "remove", "--force", at], { cwd: options.repoDir }).catch(() => undefined);
        await rm(at, { recursive: true, force: true }).catch(() => undefined);
        await gitRaw(["worktree", "prune"], { cwd: options.repoDir }).catch(() => undefined);
      });
    }
  }
}

// HEAD is `sha`, and nothing is changed or untracked (ignored files, e.g. node_modules, may stay).
async function exactlyAt(worktree: string, sha: string): Promise<boolean> {
  const head = await gitRaw(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: worktree }).catch(() => null);
  if (!head || head.exitCode !== 0 || head.stdout.trim() !== sha) return false;
  const status = await gitRaw(["--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=normal"], { cwd: worktree }).catch(() => null);
  return status !== null && status.exitCode === 0 && status.stdout === "";
}
