// A fleet scenario on the local forge in one place: a backlog of ready issues, a scripted worker
// that commits a file per issue, an in-process FleetHost on that forge, and the file's cleanups.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after } from "node:test";
import type { PROJECT_LANES } from "../../schemas/lanes.js";
import { FleetHost } from "../../server/host/host.js";
import type { ForgeOptions } from "../../server/forge-emulator/index.js";
import { api, repoPath, startTestForge, tempDir, type TestForge } from "./forge-fixtures.js";

export const READY = "ready-for-agent";

/** Shell lines that write `work-<issue>.txt` and commit it: a change of its own per issue. */
export const COMMIT_WORK = [
  'echo "work for $AFK_ISSUE" > "work-$AFK_ISSUE.txt"',
  'git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm "work for #$AFK_ISSUE"',
];

/** A fleet that gates on a local command and lands by pushing, ticking every 5 s of its time scale. */
export const PUSH_LANDING = {
  gate: { ci: "local", local_command: "true" },
  landing: { strategy: "push" },
  pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
} as const;

/** A worker script that reads its brief, commits its work, then runs `then` (a barrier, a wait). */
export function workScript(...then: string[]): string {
  return ["#!/bin/sh", "cat > /dev/null", ...COMMIT_WORK, ...then, ""].join("\n");
}

/** workScript, leaving `<marks>/spawned-<issue>` first: which issues a worker was started on. */
export function markingWorkScript(marks: string, ...then: string[]): string {
  return ["#!/bin/sh", "cat > /dev/null", `touch "${marks}/spawned-$AFK_ISSUE"`, ...COMMIT_WORK, ...then, ""].join("\n");
}

/** The `ready-for-agent` label and one ready issue per title; returns their numbers. */
export async function readyIssues(forge: TestForge, titles: readonly string[]): Promise<number[]> {
  assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: READY, color: "0e8a16" })).status, 201);
  const numbers: number[] = [];
  for (const title of titles) {
    const r = await api(forge, "POST", repoPath(forge, "/issues"), { title, body: "", labels: [READY] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    numbers.push(r.body.number as number);
  }
  return numbers;
}

/** A forge (disposed after the file's tests), a temp dir named by `prefix`, and one ready issue per title. */
export async function issueWorld(
  cleanups: Cleanups,
  titles: readonly string[],
  prefix: string,
  options: Partial<ForgeOptions> = {},
): Promise<{ forge: TestForge; dir: string; issues: number[] }> {
  const forge = await startTestForge(options);
  cleanups.push(() => forge.dispose());
  const dir = await tempDir(prefix);
  return { forge, dir, issues: await readyIssues(forge, titles) };
}

/** `Task 1` … `Task n`. */
export const tasks = (n: number): string[] => Array.from({ length: n }, (_, i) => `Task ${i + 1}`);

export type Cleanups = Array<() => Promise<unknown>>;

/** Steps run after the file's tests, last registered first; a failing step does not stop the rest. */
export function cleanupsAfterFile(): Cleanups {
  const cleanups: Cleanups = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  });
  return cleanups;
}

/** The environment of a host on `forge` with its state under `dir` (`env` on top): fleetHost's, and a host process's (host-process.ts). */
export function fleetEnv(forge: TestForge, dir: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: join(dir, "state"),
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? dir,
    ...env,
  };
}

/**
 * An in-process host at time scale 1 on `forge`, state under `dir`; stopped (workers too) and
 * closed at cleanup. `as`: the instance it acts as (a restart's), the clock it reads, a compressed
 * time scale (for what waits minutes at time scale 1), the directory its calls come from.
 */
export function fleetHost(
  forge: TestForge,
  dir: string,
  cleanups: Cleanups,
  env: Record<string, string> = {},
  as: { instance?: string; clock?: () => Date; timeScale?: number; cwd?: string } = {},
): FleetHost {
  const host = new FleetHost({ env: fleetEnv(forge, dir, env), timeScale: 1, ...as });
  cleanups.push(async () => {
    await host.stop({ repo: forge.repo, stop_workers: true }).catch(() => undefined);
    await host.close();
  });
  return host;
}

type ProjectLane = (typeof PROJECT_LANES)[number];

/** A lane record as a test reads it: the fields every record has, and the tags (`pid`, `run`) some carry. */
export interface LaneRow {
  event?: unknown;
  msg?: unknown;
  issue?: unknown;
  attempt?: unknown;
  [tag: string]: unknown;
}

/** The newest `tail` records of one of the host's lanes for `repo`, oldest first. */
export async function laneRows(host: FleetHost, repo: string, lane: ProjectLane, tail = 2000): Promise<LaneRow[]> {
  return (await host.logs({ repo, lane, tail_lines: tail })).records as LaneRow[];
}

/** A lane as text, one record a line (`event #issue: msg`): a failure's story. */
export async function laneText(host: FleetHost, repo: string, lane: ProjectLane, tail = 400): Promise<string> {
  return (await laneRows(host, repo, lane, tail)).map((r) => `${String(r.event)} #${String(r.issue)}: ${String(r.msg)}`).join("\n");
}
