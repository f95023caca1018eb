// The event-driven loop, at time scale 1: with the fallback tick an hour away
// (pacing.busy_seconds 3600), PRs still land, because a worker's exit, a watched check
// concluding and a finished landing wake the loop. A loop that waited for its ticks would not
// land the second PR before the deadline. Then the Not Rocket Science Rule on every commit.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { startCiRunner, type CiRunner } from "../server/demo/ci-runner.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { assertBaseOnGatedTrees } from "./support/nrsr.js";

const REPO = "afk/demo";
const READY = "ready-for-agent";
/** The fallback cadence, far beyond every deadline here: only events can move the fleet. */
const SLOW = { busy_seconds: 3600, idle_seconds: 3600, long_idle_seconds: 3600 };

const WORKER = ["#!/bin/sh", "cat > /dev/null", 'echo "work for $AFK_ISSUE" > "work-$AFK_ISSUE.txt"', "git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm \"work for #$AFK_ISSUE\"", ""].join("\n");

interface Record_ {
  ts: string;
  event: string;
  issue?: number;
  data?: { cause?: string };
}

const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function setUp(issues: number, required: boolean): Promise<{ forge: TestForge; host: FleetHost; dir: string; worker: string; ci: CiRunner | null }> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: READY, color: "0e8a16" })).status, 201);
  for (let i = 1; i <= issues; i++) {
    assert.equal((await api(forge, "POST", repoPath(forge, "/issues"), { title: `Task ${i}`, body: "", labels: [READY] })).status, 201);
  }
  const dir = await tempDir("afk-events-");
  const worker = join(dir, "worker.sh");
  await writeFile(worker, WORKER);
  let ci: CiRunner | null = null;
  if (required) {
    const protection = await api(forge, "PUT", `/repos/${REPO}/branches/main/protection`, {
      required_status_checks: { strict: true, contexts: ["test"] },
      enforce_admins: null,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    assert.equal(protection.status, 200);
    const runner = startCiRunner({ apiUrl: forge.apiUrl, token: forge.token, repo: REPO, gitUrl: forge.gitUrl, workDir: join(dir, "ci"), intervalMs: 200, testCommand: ["true"] });
    cleanups.push(() => runner.stop());
    ci = runner;
  }
  const env = { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: join(dir, "state"), PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? dir };
  const host = new FleetHost({ env, timeScale: 1 });
  cleanups.push(async () => {
    await host.stop({ repo: REPO, stop_workers: true }).catch(() => undefined);
    await host.close();
  });
  return { forge, host, dir, worker, ci };
}

async function records(host: FleetHost, lane: "supervisor" | "monitor"): Promise<Record_[]> {
  return (await host.logs({ repo: REPO, lane, tail_lines: 5000 })).records as unknown as Record_[];
}

/** Waits until `n` issues merged; the deadline is generous for a loaded machine and still far below the fallback tick (an hour). */
async function landed(host: FleetHost, n: number): Promise<Record_[]> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    const merged = (await records(host, "supervisor")).filter((r) => r.event === "merged");
    if (merged.length >= n) return merged;
    assert.ok(Date.now() < deadline, `only ${merged.length} of ${n} landed: the loop waits for its ticks instead of events`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("the event-driven loop (time scale 1, fallback tick an hour away)", { concurrency: true }, () => {
  it("required CI: each PR lands when its watched check concludes, the next when a landing finishes", async () => {
    const { forge, host, dir } = await setUp(3, true).then(async (s) => {
      await s.host.start({ repo: REPO, worker_command: `sh ${s.worker}`, target: 3, auto_merge: true, config: { gate: { ci: "required" }, landing: { strategy: "squash" }, pacing: SLOW } });
      return s;
    });
    const merged = await landed(host, 3);
    assert.deepEqual(merged.map((r) => r.issue).sort(), [1, 2, 3]);
    const monitor = await records(host, "monitor");
    const wakes = monitor.filter((r) => r.event === "wake" && r.data?.cause === "checks");
    // Concluded checks woke the loop (one look may find several PRs' checks done).
    assert.ok(wakes.length >= 1, `woken by concluded checks ${wakes.length} time(s)`);
    if (process.env.FLEET_DEBUG) for (const r of [...(await records(host, "supervisor")), ...monitor].sort((a, b) => a.ts.localeCompare(b.ts))) console.error(r.ts, r.event, r.issue ?? "", JSON.stringify(r.data ?? {}).slice(0, 100));
    const lastMerge = Math.max(...merged.map((r) => Date.parse(r.ts)));
    const ticks = monitor.filter((r) => r.event === "tick" && Date.parse(r.ts) <= lastMerge).length;
    assert.ok(ticks <= 30, `${ticks} ticks for 3 landings: no tick storm`);
    const clone = join(dir, "inspect");
    await git(dir, "clone", "--quiet", forge.gitUrl, clone);
    assert.equal((await assertBaseOnGatedTrees(forge, REPO, clone)).length, 3);
  });

  it("local gate: a PR opened is landed by the same burst of ticks", async () => {
    const { forge, host, dir, worker } = await setUp(3, false);
    await host.start({ repo: REPO, worker_command: `sh ${worker}`, target: 3, auto_merge: true, config: { gate: { ci: "local", local_command: "true" }, landing: { strategy: "squash", allow_untested_race: true }, pacing: SLOW } });
    const merged = await landed(host, 3);
    assert.deepEqual(merged.map((r) => r.issue).sort(), [1, 2, 3]);
    const clone = join(dir, "inspect");
    await git(dir, "clone", "--quiet", forge.gitUrl, clone);
    const log = (await git(clone, "log", "--first-parent", "--format=%H", "origin/main")).stdout.split("\n").filter(Boolean);
    assert.equal(log.length, 4, "three squash landings on the seed commit");
  });
});
