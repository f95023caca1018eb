// The event-driven loop, at time scale 1: with the fallback tick an hour away
// (pacing.busy_seconds 3600), PRs still land, because a worker's exit, a watched check
// concluding and a finished landing wake the loop. A loop that waited for its ticks would not
// land the second PR before the deadline. Then the Not Rocket Science Rule on every commit.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { FleetHost } from "../server/host/host.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { formatLandingLock } from "../server/landing/land.js";
import { startCiRunner, type CiRunner } from "../server/demo/ci-runner.js";
import { git, protectBranch, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { assertBaseOnGatedTrees } from "./support/nrsr.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";
/** The fallback cadence, far beyond every deadline here: only events can move the fleet. */
const SLOW = { busy_seconds: 3600, idle_seconds: 3600, long_idle_seconds: 3600 };
/** Issue 11's goal for the fleet's rate-limited requests per landed issue. */
const CEILING_PER_ISSUE = 15;

interface Record_ {
  ts: string;
  event: string;
  issue?: number;
  msg?: string;
  data?: { cause?: string; merges_held?: number[]; landing_waits?: string | null };
}

interface Tally {
  total: number;
  counted: number;
}

/** The fleet's own requests that counted against its rate limit (the forge's accounting, by login). */
async function fleetCounted(forge: TestForge, reset = false): Promise<number> {
  const res = await fetch(`${forge.apiUrl}/_forge/accounting${reset ? "/reset" : ""}`, { method: reset ? "POST" : "GET" });
  const body = (await res.json()) as { by_user?: Record<string, Record<string, Tally>> };
  return Object.values(body.by_user?.["afk-bot"] ?? {}).reduce((sum, t) => sum + t.counted, 0);
}

const cleanups = cleanupsAfterFile();

async function setUp(issues: number, required: boolean): Promise<{ forge: TestForge; host: FleetHost; dir: string; worker: string; ci: CiRunner | null }> {
  // The CI runner has a login of its own, so the forge's accounting tells its requests apart.
  const forge = await startTestForge({ users: ["ci"] });
  cleanups.push(() => forge.dispose());
  await readyIssues(forge, tasks(issues));
  const dir = await tempDir("afk-events-");
  const worker = join(dir, "worker.sh");
  await writeFile(worker, workScript());
  let ci: CiRunner | null = null;
  if (required) {
    await protectBranch(forge, { contexts: ["test"], strict: true });
    const runner = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.users.ci ?? forge.token,
      repo: REPO,
      gitUrl: forge.gitUrl,
      workDir: join(dir, "ci"),
      intervalMs: 200,
      testCommand: ["true"],
    });
    cleanups.push(() => runner.stop());
    ci = runner;
  }
  const host = fleetHost(forge, dir, cleanups);
  return { forge, host, dir, worker, ci };
}

async function records(host: FleetHost, lane: "supervisor" | "monitor"): Promise<Record_[]> {
  return (await host.logs({ repo: REPO, lane, tail_lines: 5000 })).records as unknown as Record_[];
}

/** Waits until `n` issues merged; the deadline is generous for a loaded machine and still far below the fallback tick (an hour). */
async function landed(host: FleetHost, n: number): Promise<Record_[]> {
  let merged: Record_[] = [];
  return waitFor(
    `${n} landings (the loop waits for its ticks instead of events?)`,
    async () => {
      merged = (await records(host, "supervisor")).filter((r) => r.event === "merged");
      return merged.length >= n && merged;
    },
    { deadlineMs: 20 * 60_000, intervalMs: 250, explain: () => `only ${merged.length} of ${n} landed` },
  );
}

/** All three issues landed, one squash commit each on the seed. */
async function threeSquashLandings(forge: TestForge, host: FleetHost, dir: string): Promise<void> {
  const merged = await landed(host, 3);
  assert.deepEqual(merged.map((r) => r.issue).sort(), [1, 2, 3]);
  const clone = join(dir, "inspect");
  await git(dir, "clone", "--quiet", forge.gitUrl, clone);
  const log = (await git(clone, "log", "--first-parent", "--format=%H", "origin/main")).stdout.split("\n").filter(Boolean);
  assert.equal(log.length, 4, "three squash landings on the seed commit");
}

describe("the event-driven loop (time scale 1, fallback tick an hour away)", { concurrency: true }, () => {
  it("required CI: each PR lands when its watched check concludes, the next when a landing finishes", async () => {
    const { forge, host, dir } = await setUp(3, true).then(async (s) => {
      await fleetCounted(s.forge, true);
      await s.host.start({
        repo: REPO,
        worker_command: `sh ${s.worker}`,
        target: 3,
        auto_merge: true,
        config: { gate: { ci: "required" }, landing: { strategy: "squash" }, pacing: SLOW },
      });
      return s;
    });
    const merged = await landed(host, 3);
    const counted = await fleetCounted(forge);
    assert.deepEqual(merged.map((r) => r.issue).sort(), [1, 2, 3]);
    // The fleet's own rate-limited requests for the whole run: claims, PRs, boards, checks, landings.
    assert.ok(counted / 3 <= CEILING_PER_ISSUE, `${counted} counted requests for 3 landed issues (ceiling ${CEILING_PER_ISSUE} each)`);
    const monitor = await records(host, "monitor");
    const wakes = monitor.filter((r) => r.event === "wake" && r.data?.cause === "checks");
    // Concluded checks woke the loop (one look may find several PRs' checks done).
    assert.ok(wakes.length >= 1, `woken by concluded checks ${wakes.length} time(s)`);
    if (process.env.FLEET_DEBUG)
      for (const r of [...(await records(host, "supervisor")), ...monitor].sort((a, b) => a.ts.localeCompare(b.ts)))
        console.error(r.ts, r.event, r.issue ?? "", JSON.stringify(r.data ?? {}).slice(0, 100));
    const lastMerge = Math.max(...merged.map((r) => Date.parse(r.ts)));
    const ticks = monitor.filter((r) => r.event === "tick" && Date.parse(r.ts) <= lastMerge).length;
    assert.ok(ticks <= 30, `${ticks} ticks for 3 landings: no tick storm`);
    const clone = join(dir, "inspect");
    await git(dir, "clone", "--quiet", forge.gitUrl, clone);
    assert.equal((await assertBaseOnGatedTrees(forge, REPO, clone)).length, 3);
  });

  it("required CI, three green PRs: each lands in the first tick after its check concludes, and the next syncs in the same tick", async () => {
    const { forge, host, dir, worker } = await setUp(3, true);
    const config = { gate: { ci: "required" as const }, landing: { strategy: "squash" as const }, pacing: SLOW };
    // Merges held until all three PRs are green, then a restart with merges authorized: the
    // landing queue then starts with three green PRs, whatever the machine's load.
    await host.start({ repo: REPO, worker_command: `sh ${worker}`, target: 3, auto_merge: false, config });
    let held: unknown[] = [];
    await waitFor(
      "3 PRs green and held",
      async () => (held = (await records(host, "monitor")).filter((r) => r.event === "tick").at(-1)?.data?.merges_held ?? []).length === 3,
      // As generous as the file's other waits for workers and CI: the whole run of test:long timed
      // out here at 4 minutes, five scenarios at once beside another file.
      { deadlineMs: 20 * 60_000, intervalMs: 250, explain: () => `only ${held.length} of 3 PRs green and held` },
    );
    await host.stop({ repo: REPO, stop_workers: false });
    // Every ref update the forge takes from here on, in the order it took them (git runs the hook).
    const refLog = join(dir, "ref-updates.log");
    await writeFile(join(forge.bareRepo, "hooks", "post-receive"), `#!/bin/sh\ncat >> '${refLog}'\n`, { mode: 0o755 });
    await host.start({ repo: REPO, worker_command: `sh ${worker}`, target: 3, auto_merge: true, config });
    const merged = await landed(host, 3);

    const lanes = [...(await records(host, "supervisor")), ...(await records(host, "monitor"))]
      .filter((r) => ["merged", "land_synced", "tick", "wake", "started"].includes(r.event))
      .sort((a, b) => a.ts.localeCompare(b.ts));
    const restart = lanes.map((r) => r.event).lastIndexOf("started");
    const events = lanes.slice(restart + 1);
    const order = events.filter((r) => r.event !== "tick" && r.event !== "wake").map((r) => `${r.event}#${r.issue}`);
    const [first, second, third] = merged.map((r) => r.issue);
    assert.deepEqual(order, [`merged#${first}`, `land_synced#${second}`, `merged#${second}`, `land_synced#${third}`, `merged#${third}`]);
    const ticksBetween = (a: string, b: string): number => {
      const from = events.findIndex((r) => `${r.event}#${r.issue}` === a);
      const to = events.findIndex((r) => `${r.event}#${r.issue}` === b);
      return events.slice(from, to).filter((r) => r.event === "tick").length;
    };
    for (const [prev, next] of [
      [first, second],
      [second, third],
    ]) {
      // A landing frees the slot and the next green PR syncs in the same tick (no tick between).
      assert.equal(ticksBetween(`merged#${prev}`, `land_synced#${next}`), 0, `#${next} synced in the tick that landed #${prev}`);
      // Its checks concluding wake the loop, and the tick they start lands it: the sync's tick ends, the next merges.
      assert.equal(ticksBetween(`land_synced#${next}`, `merged#${next}`), 1, `#${next} landed in the first tick after its sync`);
      const wakes = events.slice(
        events.findIndex((r) => `${r.event}#${r.issue}` === `land_synced#${next}`),
        events.findIndex((r) => `${r.event}#${r.issue}` === `merged#${next}`),
      );
      assert.equal(wakes.filter((r) => r.event === "wake" && r.data?.cause === "checks").length, 1, `one concluded-check wake for #${next}`);
    }
    // What the forge saw: a landing took the lock once per merge, none for a sync (it moves no
    // base); and the next PR's sync was pushed before the landed one's claim was let go (its
    // bookkeeping waits for the tick's other actions, so the next CI run starts sooner).
    const updates = (await readFile(refLog, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ") as [string, string, string]);
    const zero = /^0+$/;
    const at = (test: (u: [string, string, string]) => boolean, what: string): number => {
      const i = updates.findIndex(test);
      assert.ok(i >= 0, `the forge saw ${what}: ${updates.map((u) => u[2]).join(", ")}`);
      return i;
    };
    assert.equal(
      updates.filter(([old, , ref]) => ref === "refs/afk/lock/landing" && zero.test(old)).length,
      3,
      "the landing lock taken once per merge, never for a sync",
    );
    for (const [prev, next] of [
      [first, second],
      [second, third],
    ]) {
      const synced = at(([, , ref]) => ref.startsWith(`refs/heads/afk/${next}-`), `the sync of #${next}`);
      const released = at(([, neu, ref]) => ref === `refs/afk/claim/${prev}` && zero.test(neu), `the release of #${prev}'s claim`);
      assert.ok(synced < released, `#${next}'s sync was pushed before #${prev}'s claim was released`);
    }
    const clone = join(dir, "inspect");
    await git(dir, "clone", "--quiet", forge.gitUrl, clone);
    assert.equal((await assertBaseOnGatedTrees(forge, REPO, clone)).length, 3);
  });

  it("another host's landing lock: one land_busy record when the wait starts (naming the holder), one when it ends, however many ticks wait; every tick's report says it", async () => {
    const { forge, host, dir, worker } = await setUp(1, true);
    const lockRef = "refs/afk/lock/landing";
    const other = new GitRefStore({ controlDir: join(dir, "other-host.git"), remoteUrl: forge.gitUrl, token: forge.token });
    const lock = await other.create(
      lockRef,
      formatLandingLock({ instance: "fleet-two", host: "host-two", at: new Date().toISOString(), issue: 99, ttlSeconds: 3600 }),
    );
    assert.ok(lock.won);
    const pacing = { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 };
    await host.start({
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 1,
      auto_merge: true,
      config: { gate: { ci: "required" }, landing: { strategy: "squash" }, pacing },
    });
    const waiting = async (): Promise<Record_[]> =>
      (await records(host, "monitor")).filter((r) => r.event === "tick" && typeof r.data?.landing_waits === "string");
    let ticks: Record_[] = [];
    await waitFor("four ticks that found the lock held", async () => (ticks = await waiting()).length >= 4, {
      deadlineMs: 10 * 60_000,
      intervalMs: 250,
      explain: () => `${ticks.length} so far`,
    });
    const during = await records(host, "supervisor");
    const busy = during.filter((r) => r.event === "land_busy");
    assert.equal(busy.length, 1, `one land_busy record for ${ticks.length} waiting ticks`);
    assert.match(busy[0]!.msg ?? "", /#1: waiting for the landing lock: .*fleet-two on host-two/);
    assert.equal(during.filter((r) => r.event === "land_busy_ended").length, 0, "the wait has not ended");
    for (const t of ticks) assert.match(t.data?.landing_waits ?? "", /fleet-two on host-two/, "each waiting tick's report names the holder");
    const status = await host.status({ repo: REPO });
    assert.match(status.last_tick ?? "", /landing waits: .*fleet-two on host-two/, "status shows the wait");

    assert.ok((await other.remove(lockRef, lock.won ? lock.sha : "")).won, "the other host's landing ends");
    await landed(host, 1);
    const after = await records(host, "supervisor");
    assert.equal(after.filter((r) => r.event === "land_busy").length, 1, "still one land_busy record");
    const ended = after.filter((r) => r.event === "land_busy_ended");
    assert.equal(ended.length, 1, "one record when the wait ended");
    assert.match(ended[0]!.msg ?? "", /fleet-two on host-two/);
    assert.ok(after.findIndex((r) => r.event === "land_busy_ended") < after.findIndex((r) => r.event === "merged"), "the wait ended before the landing");
  });

  it("local gate: while a long gate runs in the background, the loop goes on (exits handled, PRs opened, workers started); its end lands the PR", async () => {
    const { forge, host, dir, worker } = await setUp(3, false);
    // The gate holds until the test lets it go: only a loop that does not wait for it can open the other PRs meanwhile.
    const release = join(dir, "release");
    const runs = join(dir, "gate-runs");
    const gate = `echo run >> '${runs}'; while [ ! -f '${release}' ]; do sleep 0.1; done`;
    await host.start({
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 1,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: gate, timeout_seconds: 3600 }, landing: { strategy: "squash", allow_untested_race: true }, pacing: SLOW },
    });
    // A loop that waited for the landing would never get there: the gate holds until released below.
    await waitFor("3 PRs opened while the gate runs", async () => (await records(host, "supervisor")).filter((r) => r.event === "pr_opened").length === 3, {
      deadlineMs: 20 * 60_000,
      intervalMs: 250,
    });
    // All of that happened while the first landing's gate still held: one run, nothing merged.
    assert.equal((await readFile(runs, "utf8")).split("\n").filter(Boolean).length, 1, "one gate run, still holding");
    assert.equal(existsSync(release), false);
    const supervisor = await records(host, "supervisor");
    assert.equal(supervisor.filter((r) => r.event === "merged").length, 0, "nothing landed before the gate ended");
    assert.deepEqual(
      supervisor
        .filter((r) => r.event === "pr_opened")
        .map((r) => r.issue)
        .sort(),
      [1, 2, 3],
      "with one worker at a time, #3's worker started and exited while #1's gate held",
    );
    await writeFile(release, "");
    await threeSquashLandings(forge, host, dir);
  });

  it("local gate: a PR opened is landed by the same burst of ticks", async () => {
    const { forge, host, dir, worker } = await setUp(3, false);
    await host.start({
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 3,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: "true" }, landing: { strategy: "squash", allow_untested_race: true }, pacing: SLOW },
    });
    await threeSquashLandings(forge, host, dir);
  });
});
