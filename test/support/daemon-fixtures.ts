// Helpers for tests that run the real daemon: a forge with issues and a scripted-worker plan, an
// env with its own state dir, the CLI as a child process, and a teardown that stops the daemon
// and ends every worker group the test's workers recorded (no process outlives the suite).
import { execFile, type ChildProcess } from "node:child_process";
import { after } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { DaemonClient } from "../../server/daemon/client.js";
import { readFileSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { readProcTable } from "../../server/runtimes/local/proc.js";
import { readLock } from "../../server/daemon/lock.js";
import { daemonPaths } from "../../server/daemon/paths.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./forge-fixtures.js";
import { BIN } from "./paths.js";
import { waitFor } from "./wait.js";

const pexec = promisify(execFile);

export const READY = "ready-for-agent";

/**
 * A quiet scripted worker: it writes nothing to stdout (a worker whose host process died would
 * get SIGPIPE on its first line), records its pid, waits for `<issue>.go` when the plan says
 * "await", then commits. Stands in for an agent that works silently for a while.
 */
export const QUIET_WORKER = `#!/bin/sh
set -u
plan=$AFK_USER_PLAN; n=$AFK_ISSUE; a=$AFK_ATTEMPT
echo $$ >"$plan/$n.$a.pid"
cat >/dev/null
if [ "$(cat "$plan/$n" 2>/dev/null)" = await ]; then
  while [ ! -e "$plan/$n.go" ]; do sleep 0.1; done
fi
printf 'done %s\\n' "$n" >"issue-$n.txt"
git add -- "issue-$n.txt" >/dev/null 2>&1
git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -q -m "fix #$n" >/dev/null 2>&1
`;

/**
 * A chatty scripted worker: commits a first half, then prints a line to stdout and one to
 * stderr every tenth of a second (counting them in `<issue>.count`) until `<issue>.go` exists, then commits the rest. Stands in for
 * an agent narrating its work, which must survive the daemon that started it.
 */
export const CHATTY_WORKER = `#!/bin/sh
set -u
plan=$AFK_USER_PLAN; n=$AFK_ISSUE; a=$AFK_ATTEMPT
echo $$ >"$plan/$n.$a.pid"
cat >/dev/null
commit() { git add -- "$1" >/dev/null 2>&1; git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -q -m "$2" >/dev/null 2>&1; }
printf 'first %s\\n' "$n" >"first-$n.txt"
commit "first-$n.txt" "first half of #$n"
i=0
while [ ! -e "$plan/$n.go" ]; do
  i=$((i + 1))
  echo "working $i"
  echo "still here $i" >&2
  echo "$i" >"$plan/$n.count"
  sleep 0.1
done
printf 'done %s\\n' "$n" >"issue-$n.txt"
commit "issue-$n.txt" "fix #$n"
`;

export interface DaemonWorld {
  forge: TestForge;
  env: Record<string, string>;
  planDir: string;
  worker: string;
  issues: number[];
}

/** A forge serving `repos` beside afk/demo (each with the ready label), a plan, a state dir. */
export async function daemonWorld(titles: string[], plan: "await" | "commit" = "await", repos: string[] = []): Promise<DaemonWorld> {
  const forge = await startTestForge({ repos });
  for (const repo of [forge.repo, ...repos]) await api(forge, "POST", `/repos/${repo}/labels`, { name: READY, color: "0e8a16" });
  const planDir = await tempDir("afk-plan-");
  const issues: number[] = [];
  for (const title of titles) {
    const r = await api(forge, "POST", repoPath(forge, "/issues"), { title, labels: [READY] });
    issues.push(r.body.number as number);
    await writeFile(join(planDir, String(r.body.number)), plan);
  }
  const worker = join(planDir, "worker.sh");
  await writeFile(worker, QUIET_WORKER, { mode: 0o755 });
  // Short: a Unix socket path must stay under ~100 bytes.
  const state = await tempDir("afks-");
  const env = {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: state,
    AFK_USER_PLAN: planDir,
    AFK_TIME_SCALE: "0.05",
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
  return { forge, env, planDir, worker, issues };
}

/** The config every daemon scenario starts from: a local gate, brisk pacing. */
export const BASE_CONFIG = {
  gate: { ci: "local", local_command: "true" },
  pacing: { busy_seconds: 10, idle_seconds: 10, long_idle_seconds: 10 },
};

export async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await pexec(process.execPath, [BIN, ...args], { env, timeout: 180_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** The pid of the daemon holding the world's state dir, or null. */
export async function daemonPid(env: Record<string, string>): Promise<number | null> {
  return (await readLock(daemonPaths(env).lock))?.pid ?? null;
}

/** Whether a process runs (a zombie nobody reaped does not count: it is gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** The pids the workers recorded (`<issue>.<attempt>.pid`), by file name. */
export async function workerPids(planDir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const name of await readdir(planDir)) {
    if (name.endsWith(".pid")) out.set(name.slice(0, -4), Number((await readFile(join(planDir, name), "utf8")).trim()));
  }
  return out;
}

/** Everything the daemon wrote: its lane's files (`daemon.jsonl`, `daemon.1.jsonl`) and daemon.log. */
export async function daemonWritings(env: Record<string, string>): Promise<string> {
  const paths = daemonPaths(env);
  const files = [paths.log, join(paths.lanes, "daemon.1.jsonl"), join(paths.lanes, "daemon.jsonl")];
  return (await Promise.all(files.map((f) => readFile(f, "utf8").catch(() => "")))).join("");
}

/** What a daemon test file starts, ended after its last test: children killed, MCP clients and sessions closed, then each world torn down. */
export interface DaemonTestScope {
  worlds: DaemonWorld[];
  clients: DaemonClient[];
  servers: Client[];
  children: ChildProcess[];
}

export function daemonTestScope(): DaemonTestScope {
  const scope: DaemonTestScope = { worlds: [], clients: [], servers: [], children: [] };
  after(async () => {
    for (const child of scope.children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const m of scope.servers) await m.close().catch(() => undefined);
    for (const c of scope.clients) await c.close().catch(() => undefined);
    await Promise.all(scope.worlds.map((w) => teardown(w)));
  });
  return scope;
}

/** Stops the world's daemon (ending workers), kills what any worker left, closes the forge. */
export async function teardown(world: DaemonWorld): Promise<void> {
  // DAEMON_DEBUG=1: the daemon's lane and daemon.log on stderr, for a failure's story.
  if (process.env.DAEMON_DEBUG) console.error((await daemonWritings(world.env)) || "(nothing from the daemon)");
  await cli(world.env, "daemon", "stop", "--kill-workers");
  const pid = await daemonPid(world.env);
  if (pid !== null && alive(pid)) process.kill(pid, "SIGKILL");
  const table = (await readProcTable()) ?? [];
  for (const worker of (await workerPids(world.planDir)).values()) {
    const entry = table.find((p) => p.pid === worker);
    if (entry) {
      try {
        process.kill(-entry.pgrp, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  await world.forge.dispose();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `probe` answers truthy; the deadline is a guard against a hang, not a timing assertion. */
export function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> {
  // A daemon being restarted refuses a probe now and then: that is "not yet", not a failure.
  return waitFor(what, () => probe().catch(() => null), { deadlineMs: timeoutMs });
}

/** The issues the world's forge holds a claim ref for, in order. */
export async function claims(w: DaemonWorld): Promise<number[]> {
  const { stdout } = await git(w.planDir, "ls-remote", w.forge.gitUrl, "refs/afk/claim/*");
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => Number(l.split("\t")[1]!.split("/").pop()))
    .sort((a, b) => a - b);
}

/** The issues the fleet opened a PR for (open or not), by the PR's branch, in order. */
export async function pullsFor(w: DaemonWorld): Promise<number[]> {
  const r = await api(w.forge, "GET", repoPath(w.forge, "/pulls?state=all&per_page=100"));
  return (r.body as { head: { ref: string } }[]).map((p) => Number(/^afk\/(\d+)/.exec(p.head.ref)?.[1])).sort((a, b) => a - b);
}
