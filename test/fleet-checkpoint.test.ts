// Checkpoints across machines, for real: host A (its own process, its own state directory)
// runs a worker that commits a first step and keeps working; the checkpoint pushes that commit
// to the branch; host A is killed (SIGKILL, with its worker). Host B, on another state
// directory (no worktree of A's), takes the claim over and continues at tier 2 from the
// branch tip: the landed work holds both steps, and the first was not redone.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { crash, spawnHost } from "./support/host-process.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const CONFIG = {
  gate: { ci: "local", local_command: "true" },
  worker: { checkpoint_seconds: 30 },
  pacing: { busy_seconds: 10, idle_seconds: 10, long_idle_seconds: 10 },
};
const children: ChildProcess[] = [];
const cleanup: (() => Promise<unknown>)[] = [];

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> => waitFor(what, probe, { deadlineMs: 150_000 });

describe("checkpoints", () => {
  it("a host on another machine continues a killed host's checkpointed commits at tier 2", { timeout: 300_000 }, async () => {
    const forge: TestForge = await startTestForge();
    cleanup.push(() => forge.dispose());
    assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" })).status, 201);
    const n = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "Two steps", labels: ["ready-for-agent"] })).body.number as number;
    const planDir = await tempDir("afk-plan-");
    await writeFile(join(planDir, String(n)), "two-step\n");
    const envFor = async (name: string): Promise<Record<string, string>> => ({
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: await tempDir(`afk-${name}-`),
      AFK_USER_PLAN: planDir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    });
    const input = { repo: forge.repo, worker_command: `sh ${WORKER}`, target: 1, auto_merge: true, config: CONFIG };

    const hostA = spawnHost(children, await envFor("hosta"), "hosta", input, 0.05);
    await until("the first step's commit", async () => existsSync(join(planDir, `${n}.step1`)));
    // The checkpoint: the branch on the forge holds the first step while the worker still runs.
    const branch = await until("the checkpoint push", async () => {
      const refs = (await git(forge.bareRepo, "for-each-ref", "--format=%(refname:short)", `refs/heads/afk/${n}-*`)).stdout;
      const name = refs.split("\n").find(Boolean);
      if (!name) return null;
      const log = (await git(forge.bareRepo, "log", "--format=%s", name)).stdout;
      return log.includes(`step 1 of #${n}`) ? name : null;
    });
    const workerPid = Number(await readFile(join(planDir, `${n}.1.pid`), "utf8"));
    await crash(hostA);
    // The worker may already be gone (it can die with its host's pipes); a crash leaves it either way.
    try {
      process.kill(-workerPid, "SIGKILL");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }

    // Host B: another state directory, so no worktree to continue in; it takes the claim over.
    const hostB = new FleetHost({ env: await envFor("hostb"), instance: "hostb", timeScale: 0.05 });
    cleanup.push(() => hostB.close());
    const taken = await hostB.takeover({ repo: forge.repo, instance: "hosta", confirm: true });
    assert.deepEqual(
      taken.taken.map((t) => t.issue),
      [n],
    );
    await hostB.start(input);
    await until("the continued work to land", async () => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.state === "closed");

    const born = (await hostB.logs({ repo: forge.repo, lane: "supervisor", issue: n, tail_lines: 500 })).records.filter((r) => r.event === "worker_born");
    assert.equal((born.at(-1)!.data as { tier: number }).tier, 2, "continued from the branch tip the checkpoint pushed");
    const landed = (await git(forge.bareRepo, "log", "--format=%s", "main")).stdout.split("\n");
    assert.ok(landed.includes(`step 1 of #${n}`) && landed.includes(`step 2 of #${n}`), `main holds both steps:\n${landed.join("\n")}`);
    assert.equal(landed.filter((s) => s === `step 1 of #${n}`).length, 1, "the first step was not redone");
    assert.ok(branch.startsWith(`afk/${n}-`));
  });
});
