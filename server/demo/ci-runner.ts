// The demo's local CI: polls the forge's open pull requests (and the merge queue's groups on
// `gh-readonly-queue/...`) and, for every head sha it has not judged yet, runs the sample's
// tests on exactly that commit and reports a check run — the way a GitHub Actions workflow
// `on: [pull_request, merge_group]` would. A failing run's output carries a
// bounded excerpt of the failures: the evidence the fleet hands to the next attempt's brief.
//
// One run at a time (the demo runs on someone's laptop). Transient HTTP or git errors are
// reported to `onLog` and retried on the next poll; nothing here throws out of the loop.
// It plays an external CI service, so it talks to the forge's REST API with fetch, not
// through the fleet's Forge interface.
import { tailBytes } from "../text/text.js";
import { execFile } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { SAMPLE_TEST_ARGS } from "./sample.js";

export interface CiRunnerOptions {
  /** The forge's REST base, e.g. http://127.0.0.1:PORT. */
  apiUrl: string;
  token: string;
  /** "owner/name". */
  repo: string;
  /** Clone URL; the token is sent as an HTTP header, never put in the URL or argv. */
  gitUrl: string;
  /** A directory the runner owns: its clone and per-run checkouts live here. */
  workDir: string;
  /** Pause between polls; default 1000 ms. */
  intervalMs?: number;
  /** The check run's name; default "test". */
  checkName?: string;
  /** A test run taking longer is killed and reported `timed_out`; default 120 s. */
  timeoutMs?: number;
  /** The test command run in the checkout (argv); default [node, --test, --test-reporter=spec]. */
  testCommand?: readonly string[];
  /** Progress and errors, one line each. */
  onLog?: (line: string) => void;
}

export interface CiRunnerStats {
  polls: number;
  /** Completed check runs posted. */
  runs: number;
  passed: number;
  failed: number;
  /** Polls or runs that hit an error (retried later). */
  errors: number;
  /** The sha being tested right now, or null. */
  running: string | null;
  lastError: string | null;
}

export interface CiRunner {
  /** Stops polling, kills a test run in progress, and resolves when the loop has ended. */
  stop(): Promise<void>;
  stats(): CiRunnerStats;
}

/** GitHub caps a check run's output.text at 65535 characters; the evidence stays well below. */
export const CI_EXCERPT_MAX_BYTES = 8 * 1024;
const OUTPUT_MAX_BYTES = 4 * 1024 * 1024;

interface PullHead {
  number: number;
  sha: string;
  ref: string;
}

interface TestResult {
  conclusion: "success" | "failure" | "timed_out";
  title: string;
  summary: string;
  text: string;
}

class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    what: string,
    body: string,
  ) {
    super(`${what}: HTTP ${status}${body ? ` ${body.slice(0, 200)}` : ""}`);
  }
}

/** Tail of `text` in at most `maxBytes` UTF-8 bytes, cut at a line start when one is near. */
function excerptTail(text: string, maxBytes: number): string {
  const cut = tailBytes(text, maxBytes);
  if (!cut.cut) return text;
  const nl = cut.text.indexOf("\n");
  return `[… ${cut.bytes - maxBytes} earlier bytes cut]\n${nl >= 0 && nl < 200 ? cut.text.slice(nl + 1) : cut.text}`;
}

/**
 * The evidence from a failed `node --test` run (spec reporter): its "failing tests" section
 * when there is one, else the whole output; Node's own stack frames dropped, the checkout's
 * temporary path replaced by ".", bounded to CI_EXCERPT_MAX_BYTES.
 */
export function failureExcerpt(output: string, checkoutDir: string): string {
  const text = output.split(checkoutDir).join(".").replace(/\r\n?/g, "\n");
  const marker = text.lastIndexOf("failing tests:");
  const section = marker >= 0 ? text.slice(text.lastIndexOf("\n", marker) + 1) : text;
  const lines = section.split("\n").filter((line) => !/^\s+at .*\((?:node:|internal\/)/.test(line) && !/^\s+at (?:async )?node:/.test(line));
  return excerptTail(lines.join("\n").trim(), CI_EXCERPT_MAX_BYTES);
}

/** Counts from the spec reporter's closing lines ("ℹ tests 3", "ℹ pass 1", ...). */
function counts(output: string): { tests?: number; pass?: number; fail?: number } {
  const grab = (name: string): number | undefined => {
    const m = new RegExp(`^\\S* ?${name} (\\d+)$`, "m").exec(output);
    return m ? Number(m[1]) : undefined;
  };
  return { tests: grab("tests"), pass: grab("pass"), fail: grab("fail") };
}

/** The environment for git and the tests: no tokens, no inherited test-runner or loader state. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "LANG", "TZ", "SystemRoot"]) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  // NODE_TEST_CONTEXT would make a nested `node --test` report to its parent instead of us.
  return { ...env, NO_COLOR: "1", GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", ...extra };
}

function run(
  cmd: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; signal?: AbortSignal },
): Promise<{ code: number | null; signal: string | null; output: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    execFile(
      cmd,
      [...args],
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 0, killSignal: "SIGKILL", maxBuffer: OUTPUT_MAX_BYTES, signal: opts.signal, encoding: "utf8" },
      (err, stdout, stderr) => {
        const output = `${stdout}${stderr ? `\n${stderr}` : ""}`;
        if (!err) return resolve({ code: 0, signal: null, output, timedOut: false });
        const e = err as NodeJS.ErrnoException & { code?: unknown; signal?: NodeJS.Signals | null; killed?: boolean };
        if (e.name === "AbortError") return reject(err);
        if (typeof e.code === "string") return reject(err); // ENOENT and friends: could not run it
        const timedOut = Boolean(opts.timeoutMs) && e.killed === true && Date.now() - started >= (opts.timeoutMs ?? 0);
        resolve({ code: typeof e.code === "number" ? e.code : null, signal: e.signal ?? null, output, timedOut });
      },
    );
  });
}

export function startCiRunner(opts: CiRunnerOptions): CiRunner {
  const intervalMs = opts.intervalMs ?? 1_000;
  const checkName = opts.checkName ?? "test";
  const timeoutMs = opts.timeoutMs ?? 120_000;
  // The spec reporter's "failing tests" section is the evidence failureExcerpt looks for.
  const testCommand = opts.testCommand ?? [process.execPath, ...SAMPLE_TEST_ARGS, "--test-reporter=spec"];
  const log = (line: string): void => {
    try {
      opts.onLog?.(`ci: ${line}`);
    } catch {
      // A logging callback must not stop CI.
    }
  };
  const api = opts.apiUrl.replace(/\/+$/, "");
  const cloneDir = join(opts.workDir, "clone");
  const gitEnv = childEnv({
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Bearer ${opts.token}`,
  });

  const done = new Set<string>();
  const stats: CiRunnerStats = { polls: 0, runs: 0, passed: 0, failed: 0, errors: 0, running: null, lastError: null };
  const abort = new AbortController();
  let stopped = false;
  let wake: (() => void) | null = null;
  let cloneReady = false;

  const request = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: {
        accept: "application/vnd.github+json",
        authorization: `token ${opts.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: abort.signal,
    });
    const text = await res.text();
    if (!res.ok) throw new HttpStatusError(res.status, `${method} ${path}`, text);
    return (text ? JSON.parse(text) : null) as T;
  };

  const git = async (args: string[], cwd = cloneDir): Promise<string> => {
    const r = await run("git", args, { cwd, env: gitEnv, signal: abort.signal, timeoutMs: 60_000 });
    if (r.code !== 0) throw new Error(`git ${args[0]} failed (${r.code ?? r.signal}): ${r.output.trim().slice(-400)}`);
    return r.output.trim();
  };

  const ensureClone = async (): Promise<void> => {
    if (cloneReady) return;
    await rm(cloneDir, { recursive: true, force: true });
    await mkdir(cloneDir, { recursive: true });
    await git(["init", "--quiet"]);
    await git(["remote", "add", "origin", opts.gitUrl]);
    cloneReady = true;
  };

  const openHeads = async (): Promise<PullHead[]> => {
    const heads: PullHead[] = [];
    for (let page = 1; page <= 20; page++) {
      type Pull = { number: number; head: { sha: string; ref: string; repo: { full_name: string } | null } };
      const pulls = await request<Pull[]>("GET", `/repos/${opts.repo}/pulls?state=open&per_page=100&page=${page}`);
      for (const p of pulls) {
        // Same-repository heads only: CI with secrets does not run fork code unasked.
        if (p.head.repo && p.head.repo.full_name.toLowerCase() !== opts.repo.toLowerCase()) continue;
        heads.push({ number: p.number, sha: p.head.sha, ref: p.head.ref });
      }
      if (pulls.length < 100) break;
    }
    // Merge groups of GitHub's merge queue: CI configured `on: merge_group` tests their heads too.
    type Ref = { ref: string; object: { sha: string } };
    const groups = await request<Ref[]>("GET", `/repos/${opts.repo}/git/matching-refs/heads/gh-readonly-queue/`);
    for (const g of groups) {
      const n = /\/pr-(\d+)-[0-9a-f]+$/.exec(g.ref);
      heads.push({ number: n ? Number(n[1]) : 0, sha: g.object.sha, ref: g.ref.replace(/^refs\/heads\//, "") });
    }
    return heads.sort((a, b) => a.number - b.number);
  };

  /** Whether a completed run of ours is already on the sha (a restarted runner, another runner). */
  const alreadyJudged = async (sha: string): Promise<boolean> => {
    type Runs = { check_runs: { name: string; status: string; id: number }[] };
    const r = await request<Runs>("GET", `/repos/${opts.repo}/commits/${sha}/check-runs?check_name=${encodeURIComponent(checkName)}&filter=latest`);
    const latest = r.check_runs.filter((c) => c.name === checkName).sort((a, b) => b.id - a.id)[0];
    return latest?.status === "completed";
  };

  const runTests = async (sha: string): Promise<TestResult> => {
    const checkout = join(opts.workDir, `run-${sha.slice(0, 12)}`);
    await rm(checkout, { recursive: true, force: true });
    await git(["worktree", "prune"]);
    await git(["fetch", "--quiet", "--no-tags", "origin", sha]);
    await git(["worktree", "add", "--quiet", "--detach", "--force", checkout, sha]);
    try {
      const started = Date.now();
      const [cmd, ...args] = testCommand;
      const r = await run(cmd!, args, { cwd: checkout, env: childEnv(), timeoutMs, signal: abort.signal });
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const c = counts(r.output);
      const tally = c.tests !== undefined ? `${c.tests} tests, ${c.pass ?? 0} passed, ${c.fail ?? 0} failed` : "no test summary";
      const command = `\`${opts.testCommand ? testCommand.join(" ") : "node --test"}\``;
      if (r.timedOut) {
        return {
          conclusion: "timed_out",
          title: `tests timed out after ${Math.round(timeoutMs / 1000)} s`,
          summary: `${command} on ${sha.slice(0, 7)} was killed after ${seconds} s.`,
          text: failureExcerpt(r.output, checkout),
        };
      }
      if (r.code === 0) {
        return { conclusion: "success", title: `tests passed (${tally})`, summary: `${command} on ${sha.slice(0, 7)}: ${tally} in ${seconds} s.`, text: "" };
      }
      return {
        conclusion: "failure",
        title: c.fail ? `${c.fail} of ${c.tests ?? "?"} tests failed` : `tests failed (exit ${r.code ?? r.signal})`,
        summary: `${command} on ${sha.slice(0, 7)} exited with ${r.code ?? r.signal}: ${tally} in ${seconds} s.`,
        text: failureExcerpt(r.output, checkout),
      };
    } finally {
      await git(["worktree", "remove", "--force", checkout]).catch(() => rm(checkout, { recursive: true, force: true }));
    }
  };

  const check = async (head: PullHead): Promise<void> => {
    if (await alreadyJudged(head.sha)) {
      done.add(head.sha);
      return;
    }
    stats.running = head.sha;
    log(`testing #${head.number} ${head.ref} @ ${head.sha.slice(0, 7)}`);
    type Run = { id: number };
    const created = await request<Run>("POST", `/repos/${opts.repo}/check-runs`, {
      name: checkName,
      head_sha: head.sha,
      status: "in_progress",
      started_at: new Date().toISOString(),
      output: { title: "running the tests", summary: `\`node --test\` on ${head.sha.slice(0, 7)}` },
    });
    const result = await runTests(head.sha);
    // The excerpt goes in as plain text: the fleet fences it when it quotes it in a brief.
    const output = { title: result.title, summary: result.summary, ...(result.text ? { text: result.text } : {}) };
    await request("PATCH", `/repos/${opts.repo}/check-runs/${created.id}`, {
      status: "completed",
      conclusion: result.conclusion,
      completed_at: new Date().toISOString(),
      output,
    });
    done.add(head.sha);
    stats.runs += 1;
    if (result.conclusion === "success") stats.passed += 1;
    else stats.failed += 1;
    log(`#${head.number} @ ${head.sha.slice(0, 7)}: ${result.conclusion} (${result.title})`);
  };

  const failed = (what: string, err: unknown): void => {
    if (stopped) return;
    stats.errors += 1;
    stats.lastError = `${what}: ${(err as Error).message}`;
    log(`${stats.lastError} (retrying on the next poll)`);
  };

  const poll = async (): Promise<void> => {
    stats.polls += 1;
    let heads: PullHead[];
    try {
      await ensureClone();
      heads = await openHeads();
    } catch (err) {
      failed("poll", err);
      return;
    }
    for (const head of heads) {
      if (stopped) return;
      if (done.has(head.sha)) continue;
      try {
        await check(head);
      } catch (err) {
        failed(`#${head.number} @ ${head.sha.slice(0, 7)}`, err);
        if (/git (?:fetch|worktree)/.test((err as Error).message)) cloneReady = false;
      } finally {
        stats.running = null;
      }
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await poll();
      if (stopped) break;
      await new Promise<void>((ok) => {
        const timer = setTimeout(ok, intervalMs);
        wake = () => {
          clearTimeout(timer);
          ok();
        };
      });
      wake = null;
    }
  })();

  return {
    async stop() {
      if (!stopped) {
        stopped = true;
        abort.abort();
        wake?.();
      }
      await loop;
    },
    stats: () => ({ ...stats }),
  };
}
