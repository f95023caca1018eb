// A landing in the background shares the fleet's work repository with the tick's own git calls
// (a birth's fetch and `worktree add`, progress reads, a worktree's removal), with the local
// gate's scratch worktrees and with a worker's own `git fetch`. On real git, with the base
// moving all the while, these overlap round after round: no call of the fleet may fail on
// git's locks (a ref lock: "cannot lock ref ... but expected"; a half-made worktree: "bad object
// worktrees/<name>/HEAD"), and the landing's fetches never write the shared remote-tracking refs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_CONFIG, type FleetConfig } from "../schemas/config.js";
import { LandingGit } from "../server/landing/landing-git.js";
import { runCommandGate } from "../server/landing/command-gate.js";
import { WorkRepo } from "../server/worktrees/worktrees.js";
import { git, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile } from "./support/fleet-fixtures.js";

const ROUNDS = 10;
const cleanups = cleanupsAfterFile();

describe("the landing's git beside the tick's, on one work repository", () => {
  it("a landing's fetch writes only its private refs, never origin/<base>", async () => {
    const { workRepo, auth, clone, branches } = await scene();
    const lg = new LandingGit(workRepo, auth);
    await workRepo.prepare({ issue: 1, title: "one", base: "main" }); // the tick fetched origin/main
    const before = await workRepo.git.revParse("refs/remotes/origin/main");
    const moved = await moveBase(clone, 1);
    const fetched = await lg.fetchBranches("main", branches, "t1");
    assert.equal(fetched.base, moved, "the landing saw the moved base");
    const tips = await lg.fetchTips("main", branches[0]!, 2);
    assert.equal(tips.base, moved);
    assert.equal(await workRepo.git.revParse("refs/remotes/origin/main"), before, "origin/main is the tick's: the landing left it alone");
    await lg.dropScope("t1");
    await lg.dropPrivateRefs(2);
    assert.deepEqual((await workRepo.git.refs("refs/afk-train/")).length + (await workRepo.git.refs("refs/afk-landing/")).length, 0);
  });

  it(
    `${ROUNDS} rounds of landing fetches and of births and removals overlap local gates, a worker's fetch and base moves: no fleet call fails on a lock`,
    { timeout: 300_000 },
    async () => {
      const { workRepo, auth, clone, branches } = await scene();
      const lg = new LandingGit(workRepo, auth);
      const config = structuredClone(DEFAULT_CONFIG) as FleetConfig;
      config.gate.ci = "local";
      config.gate.local_command = "true";
      await workRepo.prepare({ issue: 9, title: "worker", base: "main" });
      const failures: string[] = [];
      const done = { landing: 0, gate: 0, tick: 0, moves: 0, workerFetches: 0 };
      let stop = false;
      const fail = (who: string) => (error: unknown) => void failures.push(`${who}: ${String((error as Error).message).split("\n")[0]}`);

      const landing = (async () => {
        for (let r = 0; r < ROUNDS; r += 1) {
          await (async () => {
            await lg.fetchBranches("main", branches, `s${r}`);
            await lg.fetchTips("main", branches[r % branches.length]!, 1);
            await lg.fetchBase("main", `s${r}`);
            await lg.dropPrivateRefs(1);
            await lg.dropScope(`s${r}`);
            done.landing += 1;
          })().catch(fail("landing"));
        }
      })();
      // The gate runs as often as it can meanwhile (each run ends the command's process group).
      const gate = (async () => {
        while (!stop) {
          await (async () => {
            const sha = (await workRepo.git.revParse("refs/remotes/origin/main"))!;
            const run = await runCommandGate({ workRepo, config, auth }, sha, null);
            assert.ok(run.passed, run.excerpt);
            done.gate += 1;
          })().catch(fail("local gate"));
        }
      })();
      const tick = (async () => {
        for (let r = 0; r < ROUNDS; r += 1) {
          const n = 1 + (r % 4);
          await (async () => {
            await workRepo.prepare({ issue: n, title: `issue ${n}`, base: "main" });
            await workRepo.progress(n, "main");
            if (r % 3 === 0) await workRepo.remove(n);
            done.tick += 1;
          })().catch(fail("tick"));
        }
      })();
      // A human pushing to the base, and a worker fetching in its worktree: other processes,
      // whose lock holds the fleet can only outwait.
      const mover = (async () => {
        while (!stop) {
          await moveBase(clone, done.moves);
          done.moves += 1;
          await sleep(20);
        }
      })();
      const worker = (async () => {
        while (!stop) {
          await git(workRepo.worktreePath(9), "fetch", "--quiet", "origin").catch(() => undefined);
          done.workerFetches += 1;
          await sleep(50);
        }
      })();
      await Promise.all([landing, tick]);
      stop = true;
      await Promise.all([gate, mover, worker]);

      assert.deepEqual(failures, []);
      assert.deepEqual({ landing: done.landing, tick: done.tick }, { landing: ROUNDS, tick: ROUNDS });
      assert.ok(
        done.gate >= 2 && done.moves >= 3 && done.workerFetches >= 3,
        `meanwhile ${done.gate} gate runs, ${done.moves} base moves, ${done.workerFetches} worker fetches`,
      );
      assert.deepEqual((await workRepo.git.refs("refs/afk-train/")).length, 0, "every train scope dropped");
    },
  );

  it("the tick's fetch waits out a remote-tracking ref lock another process holds for seconds", async () => {
    const { workRepo, clone } = await scene();
    await workRepo.prepare({ issue: 1, title: "one", base: "main" }); // origin/main exists in the work repo
    const moved = await moveBase(clone, 1);
    // Another process (a worker's own fetch, stalled on a loaded machine) holds origin/main's lock for 2 s.
    const lock = join(workRepo.repoDir, "refs", "remotes", "origin", "main.lock");
    await writeFile(lock, "");
    const held = sleep(2_000).then(() => rm(lock));
    const result = await workRepo.git.fetchRaw(["fetch", "--no-tags", "--quiet", "origin", "+refs/heads/main:refs/remotes/origin/main"]);
    await held;
    assert.equal(result.exitCode, 0, `the fetch gave up on the lock: ${result.stderr}`);
    assert.equal(await workRepo.git.revParse("refs/remotes/origin/main"), moved);
  });
});

/** A forge with four fleet branches, a work repository on it, and a clone that moves the base. */
async function scene(): Promise<{ workRepo: WorkRepo; auth: { token: string; url: string }; clone: string; branches: string[] }> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  const state = await tempDir("afk-contention-");
  const auth = { token: forge.token, url: forge.gitUrl };
  const workRepo = new WorkRepo({ repoDir: join(state, "work.git"), worktreeRoot: join(state, "worktrees"), remoteUrl: forge.gitUrl, auth });
  const clone = join(state, "clone");
  await git(state, "clone", "--quiet", forge.bareRepo, clone);
  const branches: string[] = [];
  for (let i = 1; i <= 4; i += 1) {
    const branch = `afk/${i}-branch`;
    await git(clone, "checkout", "--quiet", "-b", branch, "origin/main");
    await writeFile(join(clone, `f${i}.txt`), `${i}\n`);
    await git(clone, "add", "--", `f${i}.txt`);
    await git(clone, "commit", "--quiet", "-m", `work ${i}`);
    await git(clone, "push", "--quiet", "origin", branch);
    branches.push(branch);
  }
  await git(clone, "checkout", "--quiet", "main");
  return { workRepo, auth, clone, branches };
}

/** A human's push to main; returns the new tip. */
async function moveBase(clone: string, n: number): Promise<string> {
  await writeFile(join(clone, "moving.txt"), `${n}\n`);
  await git(clone, "add", "--", "moving.txt");
  await git(clone, "commit", "--quiet", "-m", `human ${n}`);
  await git(clone, "push", "--quiet", "origin", "main");
  return (await git(clone, "rev-parse", "HEAD")).stdout;
}
