// `npm run chaos`: drives afk-mcp as a user would and checks the invariants from the forge alone.
// A local forge, the demo CI runner and scripted workers; `afk-mcp run` hosts SIGKILLed at
// random moments and restarted on the same or on a fresh state dir; forge faults and one-shots;
// a second host on the same repository; a hostile backlog and a second user's PRs. Then:
// lost issues, double merges, base trees CI never passed, refs left behind, orphan workers,
// issues worked twice at once, time to the first useful action after a restart, and the share of
// killed workers' commits that were continued. Prints a table and one `{"chaos": {...}}` line.
//
//   npm run chaos -- [--quick] [--seed N] [--keep]
import { mkdtemp, mkdir, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { mulberry32 } from "../../server/forge-emulator/prng.js";
import { api } from "../../test/support/forge-fixtures.js";
import { ESCALATE_LABEL } from "../../server/demo/backlog.js";
import { createWorld, OBSERVER_USER, REPO, type World } from "./world.js";
import { crash, endDaemonsUnder, interrupt, killGroup, startHost, type Host, type HostOptions } from "./hosts.js";
import { Observer } from "./observe.js";
import { onForge, verdict, worktreeCommits, type OrphanCommits } from "./checks.js";
import { render } from "./report.js";

interface Plan {
  mode: "quick" | "full";
  issues: number;
  kills: number;
  /** Seconds between kills: [min, max). */
  gap: [number, number];
  /** Issues of the separate two-host drain (0: none). */
  twoHostIssues: number;
  /** A drain fails once this long goes by without an issue ending (waitDrained). */
  drainSeconds: number;
}

const PLANS: Record<Plan["mode"], Plan> = {
  quick: { mode: "quick", issues: 10, kills: 5, gap: [4, 12], twoHostIssues: 30, drainSeconds: 240 },
  full: { mode: "full", issues: 40, kills: 20, gap: [3, 15], twoHostIssues: 100, drainSeconds: 1000 },
};

const USAGE =
  "usage: npm run chaos -- [--quick] [--seed N] [--keep]  (--quick: 10 issues, 5 kills and a 30-issue two-host drain; default: 40 issues, 20 kills and a 100-issue two-host drain; --keep leaves the temp dir)";
const TIME_SCALE = 0.05;
const say = (line: string) => process.stderr.write(`chaos: ${line}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function main(): Promise<number> {
  let values: { quick?: boolean; seed?: string; keep?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: { quick: { type: "boolean" }, seed: { type: "string" }, keep: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    say(`${(error as Error).message}; ${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.seed !== undefined && !/^\d+$/.test(values.seed)) {
    say(`--seed takes a whole number, not ${JSON.stringify(values.seed)}; ${USAGE}`);
    return 2;
  }
  const plan = PLANS[values.quick ? "quick" : "full"];
  const seed = values.seed ? Number(values.seed) : Math.floor(Date.now() % 100_000);
  const random = mulberry32(seed);
  const root = await mkdtemp(join(tmpdir(), "afk-chaos-"));
  const started = Date.now();
  say(`${plan.mode} run, seed ${seed}, in ${root}`);
  let result: Record<string, unknown> | null = null;
  try {
    const killPhase = await killsAndRestarts(root, plan, seed, random);
    say(`kills phase: ${JSON.stringify(killPhase)}`);
    const twoHost = plan.twoHostIssues > 0 ? await twoHostDrain(root, plan, seed + 1) : null;
    if (twoHost) say(`two-host phase: ${JSON.stringify(twoHost)}`);
    result = {
      mode: plan.mode,
      seed,
      seconds: Math.round((Date.now() - started) / 1000),
      ...killPhase,
      ok: killPhase.ok === true && (twoHost?.ok ?? true) === true,
      two_host: twoHost,
    };
  } finally {
    // Pass or fail: every host was stopped or killed, so a daemon of any state dir the run used
    // that still runs has outlived its session. Each is ended and fails the run.
    const left = await endDaemonsUnder(root);
    if (left.length > 0) say(`${left.length} daemon(s) still running after the run, killed: ${left.map((d) => `pid ${d.pid} (${d.stateDir})`).join(", ")}`);
    if (result) result = { ...result, daemons_left: left.map((d) => d.stateDir.slice(root.length + 1)), ok: result.ok === true && left.length === 0 };
    if (values.keep) say(`kept ${root}`);
    else await rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
  for (const line of render(result)) process.stdout.write(`${line}\n`);
  process.stdout.write(`${JSON.stringify({ chaos: result })}\n`);
  return result.ok === true ? 0 : 1;
}

function hostOptions(root: string, name: string, stateDir: string): HostOptions {
  return { name, stateDir, logDir: join(root, "logs"), target: 3, timeScale: TIME_SCALE, workerDelayMs: 1500 };
}

/** The issues the fleet should finish that are not closed or escalated yet (null: the forge did not answer). */
async function unfinished(world: World): Promise<number[] | null> {
  const open = await api<{ number: number; labels: { name: string }[]; pull_request?: unknown }[]>(
    world.forge,
    "GET",
    `/repos/${REPO}/issues?state=open&per_page=100`,
    undefined,
    {
      // Polled every 2 s: on the fleet's token it would eat a third of the fleet's hourly budget.
      token: world.forge.users[OBSERVER_USER] ?? world.forge.token,
    },
  );
  if (open.status !== 200) return null;
  const waiting = new Set(world.issues.filter((i) => i.end !== "human").map((i) => i.number));
  return open.body.filter((i) => !i.pull_request && waiting.has(i.number) && !i.labels.some((l) => l.name === ESCALATE_LABEL)).map((i) => i.number);
}

/**
 * Whether the fleet drains: every issue it should finish ends, and it never goes `stallSeconds`
 * without one ending. A drain that keeps ending issues is waited for (up to six stalls in all),
 * so a loaded machine slows the drain without failing it; a fleet that stops moving fails, and
 * what the hosts' supervisor lanes last said of the issues left is told (`stateDirs`).
 */
async function waitDrained(world: World, stallSeconds: number, stateDirs: () => string[]): Promise<{ drained: boolean; why: string }> {
  const start = Date.now();
  let left: number[] | null = null;
  let movedAt = start;
  for (;;) {
    const now = await unfinished(world).catch(() => null);
    if (now?.length === 0) return { drained: true, why: `drained in ${Math.round((Date.now() - start) / 1000)}s` };
    if (now !== null && (left === null || now.length < left.length)) {
      left = now;
      movedAt = Date.now();
    }
    const stalled = Date.now() - movedAt > stallSeconds * 1000;
    if (stalled || Date.now() - start > 6 * stallSeconds * 1000) {
      const names = (left ?? []).map((n) => `#${n}`).join(", ") || "?";
      const why = stalled ? `none ended in the last ${stallSeconds}s` : `after ${6 * stallSeconds}s`;
      return { drained: false, why: `not drained: ${names} left, ${why}${await lastWords(stateDirs(), new Set(left ?? []))}` };
    }
    await sleep(2000);
  }
}

/** The last supervisor records of each host about `issues`, for a drain that failed. */
async function lastWords(stateDirs: string[], issues: Set<number>): Promise<string> {
  const out: string[] = [];
  for (const dir of stateDirs) {
    const text = await readFile(join(dir, "lanes", ...REPO.split("/"), "supervisor.jsonl"), "utf8").catch(() => "");
    const rows = text
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        try {
          return JSON.parse(line) as { ts?: string; issue?: number; event?: string; msg?: string };
        } catch {
          return null;
        }
      })
      .filter((r) => r !== null && (r.issue === undefined || issues.has(r.issue)));
    out.push(`\n  ${dir}:`, ...rows.slice(-12).map((r) => `    ${r!.ts ?? ""} ${r!.event ?? ""} ${(r!.msg ?? "").slice(0, 200)}`));
  }
  return out.join("\n");
}

/** The worktree commits of every issue a host's state dir holds: what a kill leaves behind. */
async function leftBehind(stateDir: string, kind: OrphanCommits["kind"]): Promise<OrphanCommits[]> {
  const dir = join(stateDir, "worktrees", ...REPO.split("/"));
  const out: OrphanCommits[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = /^issue-(\d+)$/.exec(name);
    if (!m) continue;
    const shas = await worktreeCommits(join(dir, name));
    if (shas.length > 0) out.push({ issue: Number(m[1]), kind, stateDir, shas, pushedAtKill: 0, lostWithMachine: [] });
  }
  return out;
}

async function faultsOn(world: World, random: () => number): Promise<string> {
  const forgeApi = (method: string, path: string, body?: unknown) => api(world.forge, method, path, body, { token: null });
  await forgeApi("DELETE", "/_forge/faults");
  const r = random();
  if (r < 0.25) {
    await forgeApi("POST", "/_forge/faults", { route: "POST", error_rate: 0.1, seed: Math.floor(random() * 1e6) });
    return "10% of POSTs fail";
  }
  if (r < 0.4) {
    await forgeApi("POST", "/_forge/faults", { secondary_rate_limit: true, route: "/labels", error_rate: 0.3, seed: Math.floor(random() * 1e6) });
    return "secondary rate limit on label writes";
  }
  if (r < 0.55) {
    await forgeApi("POST", "/_forge/once", { kind: "base_moves_before_merge" });
    return "one-shot: the base moves before the next merge";
  }
  if (r < 0.7) {
    await forgeApi("POST", "/_forge/once", { kind: "merge_405" });
    return "one-shot: the next merge answers 405";
  }
  return "no fault";
}

async function killsAndRestarts(root: string, plan: Plan, seed: number, random: () => number): Promise<Record<string, unknown>> {
  const dir = join(root, "kills");
  await mkdir(join(dir, "logs"), { recursive: true });
  const world = await createWorld(dir, { issues: plan.issues, seed });
  const observer = new Observer(world.forge.bareRepo, dir);
  observer.phase = "kills";
  observer.start();
  const orphans: OrphanCommits[] = [];
  const recorded = new Set<string>();
  const kills = { same_state: 0, fresh_state: 0 };
  const faults: string[] = [];
  let stateN = 0;
  const freshState = () => join(dir, `state-${++stateN}`);
  let host: Host = startHost(world, hostOptions(dir, `host-${stateN + 1}`, freshState()));
  let stops: { forced: boolean; code: number | null; signal: string | null }[] = [];
  let orphanWorkers = 0;
  let drainedInTime = false;
  /** Daemons a kill found that the lock did not name yet: their session died while starting them. */
  let unlockedDaemons = 0;
  try {
    for (let k = 0; k < plan.kills; k += 1) {
      await sleep((plan.gap[0] + random() * (plan.gap[1] - plan.gap[0])) * 1000);
      if ((await unfinished(world).catch(() => null))?.length === 0) break;
      const same = random() < 0.5;
      const kind = same ? "same_state" : "fresh_state";
      unlockedDaemons += await crash(host);
      kills[kind] += 1;
      // Each kill records the commits not recorded before: a worktree outlives several restarts.
      for (const o of await leftBehind(host.stateDir, kind)) {
        // A lost machine's commits survive only if a checkpoint pushed them before the kill.
        const fresh: string[] = [];
        let pushed = 0;
        for (const sha of o.shas) {
          if (recorded.has(sha)) continue;
          recorded.add(sha);
          if (await onForge(world, sha)) pushed += 1;
          else fresh.push(sha);
        }
        if (fresh.length + pushed > 0) orphans.push({ ...o, stateDir: host.stateDir, shas: fresh, pushedAtKill: pushed, lostWithMachine: [] });
      }
      if (!same) {
        // A lost machine: its workers die with it, and so do the commits an earlier same-state
        // restart had not pushed yet (they are counted apart: no later host can continue them).
        for (const o of orphans) {
          if (o.stateDir !== host.stateDir) continue;
          for (const sha of o.shas) if (!o.lostWithMachine.includes(sha) && !(await onForge(world, sha))) o.lostWithMachine.push(sha);
        }
        for (const w of await observer.workers()) if (w.stateDir === host.stateDir) killGroup(w.pgid, "SIGKILL");
      }
      faults.push(await faultsOn(world, random));
      const stateDir = same ? host.stateDir : freshState();
      host = startHost(world, hostOptions(dir, `host-${k + 2}`, stateDir));
      await observer.markRestart(kind, host.startedAt);
      say(`kill ${k + 1}/${plan.kills}: restarted on ${same ? "the same" : "a fresh"} state dir (${faults.at(-1)})`);
    }
    await api(world.forge, "DELETE", "/_forge/faults", undefined, { token: null });
    observer.phase = "drain";
    const drain = await waitDrained(world, plan.drainSeconds, () => [host.stateDir]);
    drainedInTime = drain.drained;
    say(drain.why);
    stops = [await interrupt(host, 120_000)];
    // Workers of killed hosts run to their end; what still runs a while after the stop is an orphan.
    await sleep(5000);
    const left = await observer.workers();
    orphanWorkers = left.length;
    for (const w of left) killGroup(w.pgid, "SIGKILL");
  } finally {
    await observer.stop();
    if (host.alive()) unlockedDaemons += await crash(host);
  }
  const v = await verdict(world, orphans);
  await world.close();
  const recover = (kind?: string) => median(observer.recoveries.filter((r) => kind === undefined || r.kind === kind).map((r) => r.seconds));
  const ok =
    drainedInTime &&
    v.lost.length === 0 &&
    v.doubleMerged.length === 0 &&
    v.foreignMerged.length === 0 &&
    v.untestedBaseTrees.length === 0 &&
    v.refsLeft.claim + v.refsLeft.lock + v.refsLeft.probe === 0 &&
    orphanWorkers === 0 &&
    observer.overlaps.length === 0 &&
    !v.hostileExecuted &&
    v.wrongEnds.length === 0;
  return {
    ok,
    issues: world.issues.length,
    kills: { total: kills.same_state + kills.fresh_state, ...kills, daemons_not_yet_locked: unlockedDaemons },
    faults,
    drained: drainedInTime,
    lost: v.lost,
    wrong_ends: v.wrongEnds,
    double_merged: v.doubleMerged,
    foreign_merged: v.foreignMerged,
    base_commits: v.baseCommits,
    peer_base_commits: v.peerBaseCommits,
    untested_base_trees: v.untestedBaseTrees,
    refs_left: v.refsLeft,
    orphan_workers: orphanWorkers,
    worked_twice_at_once: observer.overlaps,
    recovery_s: { median: recover(), same_state_median: recover("same_state"), fresh_state_median: recover("fresh_state"), samples: observer.recoveries },
    commits_continued: v.commitsContinued,
    hostile_executed: v.hostileExecuted,
    final_stop: stops,
  };
}

/** Two hosts from the start on one repository, each with its own state dir: no issue may be worked by both. */
async function twoHostDrain(root: string, plan: Plan, seed: number): Promise<Record<string, unknown>> {
  const dir = join(root, "two-host");
  await mkdir(join(dir, "logs"), { recursive: true });
  const world = await createWorld(dir, { issues: plan.twoHostIssues, seed });
  const observer = new Observer(world.forge.bareRepo, dir);
  observer.phase = "two-host";
  observer.start();
  const hosts = [startHost(world, hostOptions(dir, "left", join(dir, "state-left"))), startHost(world, hostOptions(dir, "right", join(dir, "state-right")))];
  let drainedInTime = false;
  try {
    const drain = await waitDrained(world, plan.drainSeconds, () => hosts.map((h) => h.stateDir));
    drainedInTime = drain.drained;
    say(`two hosts: ${drain.why}`);
    for (const h of hosts) await interrupt(h, 120_000);
  } finally {
    await observer.stop();
    for (const h of hosts) if (h.alive()) await crash(h);
  }
  const v = await verdict(world, []);
  await world.close();
  const worked = observer.workedBy.get("two-host") ?? new Map<number, Set<string>>();
  const shared = [...worked].filter(([, dirs]) => dirs.size > 1).map(([issue]) => issue);
  const perHost = hosts.map((h) => [...worked.values()].filter((dirs) => dirs.has(h.stateDir)).length);
  return {
    ok:
      drainedInTime &&
      shared.length === 0 &&
      v.lost.length === 0 &&
      v.doubleMerged.length === 0 &&
      v.foreignMerged.length === 0 &&
      v.untestedBaseTrees.length === 0 &&
      v.refsLeft.claim + v.refsLeft.lock + v.refsLeft.probe === 0 &&
      observer.overlaps.length === 0,
    issues: world.issues.length,
    drained: drainedInTime,
    per_host: perHost,
    shared,
    lost: v.lost,
    double_merged: v.doubleMerged,
    foreign_merged: v.foreignMerged,
    untested_base_trees: v.untestedBaseTrees,
    refs_left: v.refsLeft,
    worked_twice_at_once: observer.overlaps,
  };
}

function median(values: (number | null)[]): number | null {
  const xs = values.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = Math.floor(xs.length / 2);
  return Math.round((xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2) * 10) / 10;
}

// Ctrl-C of the harness: the exit hooks end every host's process group and the forge.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`chaos: ${(error as Error).stack ?? String(error)}`);
    process.exit(2);
  },
);
