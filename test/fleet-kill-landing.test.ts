// Hosts killed in the middle of a landing, for real: the host runs in a process of its own and
// dies by SIGKILL (nothing released, nothing cleaned up), as the chaos harness kills its hosts.
// (1) While CI runs on a train's candidate (the train branch and its draft PR pushed, the landing
// lock held), the host is killed and restarted on the same state: it lands every PR exactly
// once, and what the dead train left (branch, draft PR, lock) is cleaned up. (2) While the local
// gate runs on a single PR, the host is killed and a second host (another machine) takes over:
// it reclaims the stale claim and the dead host's landing lock, and lands the PR once. In both,
// every commit on the base's first-parent line has a tree the gate passed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startCiRunner } from "../server/demo/ci-runner.js";
import { FleetHost } from "../server/host/host.js";
import { api, git, protectBranch, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { crash, spawnHost } from "./support/host-process.js";
import { assertBaseOnGatedTrees } from "./support/nrsr.js";
import { gateScript } from "./support/train-fixtures.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";
const SCALE = 0.05;
const LOCK = "refs/afk/lock/landing";
// A short lease (15 s at this scale), so a second host finds the dead one stale within the test.
const LEASE = { ttl_seconds: 300, heartbeat_seconds: 60 };
const children: ChildProcess[] = [];
const cleanups = cleanupsAfterFile();
cleanups.push(async () => {
  for (const child of children) await crash(child);
});

const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>, explain?: () => Promise<string>): Promise<T> =>
  waitFor(what, probe, { deadlineMs: 240_000, intervalMs: 250, ...(explain ? { explain } : {}) });

interface Rec {
  event: string;
  issue?: number;
  data?: { landings?: Array<{ train: string; issues: number[] }>; swept?: string[] };
}

describe("a host killed mid-landing", { concurrency: true }, () => {
  it("killed while CI runs on its train: restarted on the same state, it lands every PR once and cleans the dead train's branch, draft PR and lock", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const issues = await readyIssues(forge, tasks(3));
    const dir = await tempDir("afk-kill-train-");
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript());
    const gate = await gateScript(0, { trainsOnly: true });
    await writeFile(gate.hold, "");
    // A second required context ("hold") nobody reports keeps every PR pending until the test
    // drops it: then all three turn green in one step, and none can land alone before the train.
    const protect = (contexts: string[]) => protectBranch(forge, { contexts, enforceAdmins: true });
    await protect(["test", "hold"]);
    const seed = (await git(forge.bareRepo, "rev-parse", "refs/heads/main")).stdout;
    const env = hostEnv(forge, join(dir, "state"));
    // The default landing config (trains of up to 4) under required CI.
    const input = {
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: issues.length,
      auto_merge: true,
      config: { gate: { ci: "required" }, landing: { strategy: "push" }, lease: LEASE },
    };
    const first = spawnHost(children, env, "hosta", input, SCALE);
    // The PRs turn green together: the test reports their checks, then drops the "hold" context
    // (a CI runner tests one head at a time, and the first green one would land alone); then the
    // CI runner starts, and holds the train's candidate.
    const heads = await until("the three PRs open", async () => {
      const open = (await openPulls(forge)).filter((p) => /^afk\/\d+-/.test(p.head.ref));
      return open.length === issues.length ? open.map((p) => p.head.sha) : null;
    });
    for (const sha of heads) {
      const run = await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "test", head_sha: sha, status: "completed", conclusion: "success" });
      assert.equal(run.status, 201, JSON.stringify(run.body));
    }
    assert.equal((await protect(["test"])).status, 200);
    const ci = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.token,
      repo: REPO,
      gitUrl: forge.gitUrl,
      workDir: join(dir, "ci"),
      intervalMs: 200,
      testCommand: gate.argv,
    });
    cleanups.push(() => ci.stop());
    await until("CI to hold the train's candidate", async () => existsSync(`${gate.hold}.seen`));
    // The scene at the kill: one train branch with its draft PR, the landing lock held, nothing landed.
    const deadTrain = await trainBranches(forge);
    assert.equal(deadTrain.length, 1, `one train branch: ${deadTrain.join(", ")}`);
    const deadDraft = (await openPulls(forge)).find((p) => p.head.ref === deadTrain[0]);
    assert.ok(deadDraft?.draft, "the train's draft PR is open");
    assert.ok(await refExists(forge, LOCK), "the landing lock is held");
    assert.equal((await git(forge.bareRepo, "rev-parse", "refs/heads/main")).stdout, seed, "nothing landed yet");
    await crash(first);
    await rm(gate.hold); // CI finishes the dead train's candidate (green, but nobody lands it)

    const restarted = new FleetHost({ env, instance: "hosta", timeScale: SCALE });
    cleanups.push(async () => {
      await restarted.stop({ repo: REPO, stop_workers: true }).catch(() => undefined);
      await restarted.close();
    });
    await restarted.start(input);
    const records = async (): Promise<Rec[]> => (await restarted.logs({ repo: REPO, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[];
    const scene = async (): Promise<string> =>
      `train branches ${JSON.stringify(await trainBranches(forge))}, lock ${await refExists(forge, LOCK)}, events ${(await records())
        .map((r) => `${r.event}${r.issue ? `#${r.issue}` : ""}`)
        .slice(-40)
        .join(" ")}`;
    await until("every issue closed", async () => (await Promise.all(issues.map((n) => issueState(forge, n)))).every((s) => s === "closed"), scene);
    await until(
      "the dead train's branch, draft PR and the landing lock gone",
      async () =>
        (await trainBranches(forge)).length === 0 &&
        !(await refExists(forge, LOCK)) &&
        !(await openPulls(forge)).some((p) => p.head.ref.startsWith("afk/train/")),
      scene,
    );

    const dead = (await api(forge, "GET", repoPath(forge, `/pulls/${deadDraft.number}`))).body as { state: string; merged_at: string | null };
    assert.equal(dead.state, "closed", "the dead train's draft PR is closed");
    // The landing's end is taken by a later tick: wait for its records.
    await until("a merged record for every issue", async () => (await records()).filter((r) => r.event === "merged").length >= issues.length, scene);
    const merged = (await records()).filter((r) => r.event === "merged");
    assert.deepEqual(merged.map((r) => r.issue).sort(), [...issues].sort(), "one merged record per issue, none twice");
    const landedByTrains = (await records())
      .filter((r) => r.event === "train")
      .flatMap((r) => r.data?.landings ?? [])
      .flatMap((l) => l.issues);
    assert.deepEqual(landedByTrains.sort(), [...issues].sort(), "every issue landed by a train of the restarted host, once");
    const swept = (await records()).flatMap((r) => (r.event === "train" ? (r.data?.swept ?? []) : []));
    assert.deepEqual(swept, deadTrain, "the restarted host's train swept the dead train's branch");
    await assertLandedOnce(forge, seed, issues.length);
    // Each issue ends with one board saying which train landed it.
    for (const n of issues) {
      // The final board is written after the merged record (under load, a while after): wait for it.
      await until(`#${n}'s final board`, async () => (await fleetComments(forge, n)).some((b) => b.includes("afk-mcp: Merged")));
      const boards = (await fleetComments(forge, n)).filter((b) => b.includes("afk-mcp: Merged"));
      assert.equal(boards.length, 1, `#${n} has one final board`);
      const train = (await records()).flatMap((r) => r.data?.landings ?? []).find((l) => l.issues.includes(n))!;
      assert.ok(boards[0]!.includes(`Landed in train ${train.train}`), `#${n}'s board names its train ${train.train}`);
    }
    const clone = await tempDir("afk-kill-train-clone-");
    await git(clone, "clone", "--quiet", forge.bareRepo, ".");
    assert.ok((await assertBaseOnGatedTrees(forge, REPO, clone)).length >= 1);
    assert.deepEqual(forge.violations(), []);
  });

  it("killed while the local gate runs on its PR: a second host reclaims the claim and the landing lock and lands the PR once", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const [n] = await readyIssues(forge, tasks(1));
    const dir = await tempDir("afk-kill-gate-");
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript());
    const gate = await gateScript();
    await writeFile(gate.hold, "");
    const seed = (await git(forge.bareRepo, "rev-parse", "refs/heads/main")).stdout;
    const input = {
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 1,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: gate.command }, landing: { strategy: "push" }, lease: LEASE },
    };

    const first = spawnHost(children, hostEnv(forge, join(dir, "state-a")), "hosta", input, SCALE);
    await until("the local gate to hold the PR's landing", async () => existsSync(`${gate.hold}.seen`));
    assert.ok(await refExists(forge, LOCK), "the landing lock is held while the gate runs");
    await crash(first);
    await rm(gate.hold); // the orphaned gate command ends; the host that started it is gone

    const second = new FleetHost({ env: hostEnv(forge, join(dir, "state-b")), instance: "hostb", timeScale: SCALE });
    cleanups.push(async () => {
      await second.stop({ repo: REPO, stop_workers: true }).catch(() => undefined);
      await second.close();
    });
    await second.start(input);
    const records = async (): Promise<Rec[]> => (await second.logs({ repo: REPO, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[];
    const scene = async (): Promise<string> =>
      `lock ${await refExists(forge, LOCK)}, events ${(await records())
        .map((r) => `${r.event}${r.issue ? `#${r.issue}` : ""}`)
        .slice(-40)
        .join(" ")}`;
    await until(`#${n} closed`, async () => (await issueState(forge, n!)) === "closed", scene);
    await until("the landing lock released", async () => !(await refExists(forge, LOCK)), scene);

    await until(`#${n}'s merged record`, async () => (await records()).some((r) => r.event === "merged"), scene);
    const events = await records();
    assert.equal(events.filter((r) => r.event === "reclaimed" && r.issue === n).length, 1, "the second host reclaimed the dead host's claim");
    assert.equal(events.filter((r) => r.event === "merged" && r.issue === n).length, 1, "and landed it once");
    const pull = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all"))).body as Array<{ merged_at: string | null }>)[0]!;
    assert.ok(pull.merged_at, "the PR is merged");
    await assertLandedOnce(forge, seed, 1);
    // The landing came within seconds (no live phase settled): the issue still ends with one board naming the PR.
    const pr = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all"))).body as Array<{ number: number }>)[0]!.number;
    // The final board is written after the merged record (under load, a while after): wait for it.
    await until(`#${n}'s final board`, async () => (await fleetComments(forge, n!)).some((b) => /afk-mcp: Merged/.test(b)), scene);
    const boards = await fleetComments(forge, n!);
    assert.equal(boards.length, 1, `one comment by the fleet on #${n}: ${boards.join("\n---\n")}`);
    assert.match(boards[0]!, /afk-mcp: Merged/);
    assert.match(boards[0]!, new RegExp(`Landed PR \\\\?#${pr} on main by a fast-forward push`), "it names the PR that landed it");
    // NRSR under the local gate: every first-parent commit since the seed has a tree the gate passed.
    const passed = new Set((await readFile(gate.trees, "utf8")).split("\n").filter(Boolean));
    for (const line of (await git(forge.bareRepo, "log", "--first-parent", "--format=%H %T", `${seed}..main`)).stdout.split("\n").filter(Boolean)) {
      const [sha, tree] = line.split(" ");
      assert.ok(passed.has(tree!), `commit ${sha} on main has a tree no gate passed`);
    }
    assert.deepEqual(forge.violations(), []);
  });
});

function hostEnv(forge: TestForge, stateDir: string): Record<string, string> {
  return {
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_TOKEN: forge.token,
    // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
    AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
    AFK_STATE_DIR: stateDir,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
  };
}

async function trainBranches(forge: TestForge): Promise<string[]> {
  return (await git(forge.bareRepo, "for-each-ref", "--format=%(refname:short)", "refs/heads/afk/train/")).stdout.split("\n").filter(Boolean);
}

async function refExists(forge: TestForge, ref: string): Promise<boolean> {
  return (await git(forge.bareRepo, "for-each-ref", "--format=%(refname)", ref)).stdout.trim() === ref;
}

async function openPulls(forge: TestForge): Promise<Array<{ number: number; draft: boolean; head: { ref: string; sha: string } }>> {
  return (await api(forge, "GET", repoPath(forge, "/pulls?state=open&per_page=100"))).body;
}

async function fleetComments(forge: TestForge, n: number): Promise<string[]> {
  const comments = (await api(forge, "GET", repoPath(forge, `/issues/${n}/comments?per_page=100`))).body as Array<{ body: string; user: { login: string } }>;
  return comments.filter((c) => c.body.includes("afk:board") || c.body.includes("afk-mcp:")).map((c) => c.body);
}

async function issueState(forge: TestForge, n: number): Promise<string> {
  return (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.state as string;
}

/**
 * Nothing merged twice: every fleet PR's head is a parent of exactly one commit on the base's
 * first-parent line since the seed, and that line holds at most one commit per PR.
 */
async function assertLandedOnce(forge: TestForge, seed: string, prs: number): Promise<void> {
  const line = (await git(forge.bareRepo, "log", "--first-parent", "--format=%H %P", `${seed}..main`)).stdout.split("\n").filter(Boolean);
  assert.ok(line.length >= 1 && line.length <= prs, `${line.length} first-parent commits for ${prs} PR(s)`);
  const pulls = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Array<{ head: { ref: string; sha: string } }>).filter(
    (p) => !p.head.ref.startsWith("afk/train/"),
  );
  assert.equal(pulls.length, prs);
  for (const p of pulls) {
    // Landed by a landing or train commit naming the head as a parent, or by a fast-forward to it.
    const landings = line.filter((l) => {
      const [sha, , ...merged] = l.split(" ");
      return sha === p.head.sha || merged.includes(p.head.sha);
    });
    assert.equal(landings.length, 1, `${p.head.ref} (${p.head.sha.slice(0, 12)}) landed by exactly one commit on main, not ${landings.length}`);
  }
}
