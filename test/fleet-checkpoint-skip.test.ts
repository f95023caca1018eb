// A quiet worker's periodic checkpoint: once one found nothing to push, the next runs the
// progress scan (six git runs) again only when the worktree's HEAD or the base's tip moved; the
// pushes are the same as scanning every time. Real git for HEAD and the base; the work
// repository's scan and push are counted stand-ins.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Checkpoints } from "../server/fleet/checkpoint.js";
import type { Lease } from "../server/gh/lease.js";
import type { WorkRepo } from "../server/worktrees/worktrees.js";
import { commitFile, git, tempDir } from "./support/forge-fixtures.js";

describe("Checkpoints", () => {
  it("scans again only when the worktree's HEAD or the base moved", async () => {
    const dir = await tempDir("afk-checkpoint-");
    const seed = join(dir, "seed");
    await git(dir, "init", "--quiet", "-b", "main", seed);
    const first = await commitFile(seed, "a.txt", "a\n");
    const bare = join(dir, "work.git");
    await git(dir, "clone", "--quiet", "--bare", seed, bare);
    await git(bare, "update-ref", "refs/remotes/origin/main", first);
    const wt = join(dir, "wt");
    await git(bare, "worktree", "add", "--quiet", "-b", "afk/1", wt, "main");

    const rev = async (ref: string, cwd: string) => (await git(cwd, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`)).stdout || null;
    let scans = 0;
    const pushes: string[] = [];
    const workRepo = {
      repoDir: bare,
      worktreePath: () => wt,
      git: { revParse: (ref: string, cwd = bare) => rev(ref, cwd) },
      async progress() {
        scans += 1;
        const head = await rev("HEAD", wt);
        const ahead = Number((await git(wt, "rev-list", "--count", `refs/remotes/origin/main..${head}`)).stdout);
        return { worktree: true, head, commitsAhead: ahead };
      },
      async push() {
        const sha = (await rev("HEAD", wt))!;
        pushes.push(sha);
        return { pushed: true, sha, branch: "afk/1" };
      },
    } as unknown as WorkRepo;
    const lease = { fence: async () => undefined } as unknown as Lease;
    const checkpoints = new Checkpoints({ workRepo, lease, base: "main", everyMs: 1_000, clock: () => new Date(), log: () => undefined });
    const periodic = () => checkpoints.push(1, "claim", "periodic");

    assert.equal(await periodic(), null, "no commit: nothing to push");
    assert.equal(await periodic(), null);
    assert.equal(scans, 0, "HEAD at the base's tip: nothing ahead, no scan");

    const c1 = await commitFile(wt, "b.txt", "b\n");
    assert.equal(await periodic(), c1, "a commit is pushed");
    assert.equal(scans, 1);
    assert.equal(await periodic(), null, "already pushed");
    assert.equal(scans, 2);
    assert.equal(await periodic(), null);
    assert.equal(await periodic(), null);
    assert.equal(scans, 2, "pushed and unmoved: no scan");

    const c2 = await commitFile(wt, "c.txt", "c\n");
    await git(bare, "update-ref", "refs/remotes/origin/main", c1);
    assert.equal(await periodic(), c2, "moved: scanned and pushed");
    assert.equal(await periodic(), null);
    assert.equal(scans, 4);
    await git(bare, "update-ref", "refs/remotes/origin/main", first);
    assert.equal(await periodic(), null);
    assert.equal(scans, 5, "the base moved (back): scanned again");
    assert.equal(await periodic(), null);
    assert.equal(scans, 5);

    assert.equal(await checkpoints.push(1, "claim", "exit"), null);
    assert.equal(scans, 6, "the exit's checkpoint always scans");
    checkpoints.forget(1);
    assert.equal(await periodic(), c2, "a forgotten issue is scanned anew (and its tip pushed again)");
    assert.equal(scans, 7);
    assert.deepEqual(pushes, [c1, c2, c2]);
  });
});
