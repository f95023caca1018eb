// The worktree HEAD and ref cache over real git (server/worktrees/rev-cache.ts): it tells git's
// answer, asks git again whenever something the answer rests on moved (a commit, a checkout, a
// packed ref, a detached HEAD, a moved remote-tracking ref), and not while nothing did.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { RevCache } from "../server/worktrees/rev-cache.js";
import { commitFile, git, tempDir } from "./support/forge-fixtures.js";

async function revParse(cwd: string, rev: string): Promise<string | null> {
  try {
    return (await git(cwd, "rev-parse", "--verify", "--quiet", rev)).stdout || null;
  } catch {
    return null;
  }
}

describe("RevCache", () => {
  it("a linked worktree's HEAD: git's answer, asked again only when it moved", async () => {
    const dir = await tempDir("afk-revcache-");
    const seed = join(dir, "seed");
    await git(dir, "init", "--quiet", "-b", "main", seed);
    const first = await commitFile(seed, "a.txt", "a\n");
    const bare = join(dir, "work.git");
    await git(dir, "clone", "--quiet", "--bare", seed, bare);
    const wt = join(dir, "wt");
    await git(bare, "worktree", "add", "--quiet", "-b", "afk/1", wt, "main");

    const cache = new RevCache();
    const head = () => cache.head(wt, () => revParse(wt, "HEAD^{commit}"));
    const step = async (why: string, asked: number) => {
      assert.equal(await head(), await revParse(wt, "HEAD^{commit}"), `${why}: git's answer`);
      assert.equal(cache.stats.asked, asked, `${why}: git runs`);
    };
    assert.equal(await head(), first);
    assert.equal(cache.stats.asked, 1);
    await step("nothing moved", 1);
    await step("still nothing", 1);

    await commitFile(wt, "b.txt", "b\n");
    await step("a commit", 2);
    await step("after the commit", 2);

    await git(bare, "pack-refs", "--all");
    await step("the branch packed (its loose file gone)", 3);
    await step("packed, unchanged", 3);
    await commitFile(wt, "c.txt", "c\n");
    await step("a commit over a packed ref", 4);

    await git(wt, "checkout", "--quiet", "-b", "afk/1-other");
    await step("another branch checked out", 5);
    await git(wt, "checkout", "--quiet", "--detach", first);
    assert.equal(await head(), first);
    await step("detached at a commit", 6);
    await git(wt, "checkout", "--quiet", "afk/1");
    await step("back on the branch", 7);

    // A ref moved by another process (update-ref writes a new file over it).
    await git(bare, "update-ref", "refs/heads/afk/1", first);
    assert.equal(await head(), first);
    await step("the branch moved from outside", 8);
  });

  it("a remote-tracking ref in a bare repository; no answer is never kept", async () => {
    const dir = await tempDir("afk-revcache-");
    const repo = join(dir, "repo");
    await git(dir, "init", "--quiet", "-b", "main", repo);
    const one = await commitFile(repo, "a.txt", "a\n");
    const two = await commitFile(repo, "b.txt", "b\n");
    const cache = new RevCache();
    const ref = "refs/remotes/origin/main";
    const tip = () => cache.ref(repo, ref, () => revParse(repo, `${ref}^{commit}`));

    assert.equal(await tip(), null, "no such ref yet");
    assert.equal(await tip(), null);
    assert.equal(cache.stats.asked, 2, "no answer: asked every time");
    await git(repo, "update-ref", ref, one);
    assert.equal(await tip(), one);
    assert.equal(await tip(), one);
    assert.equal(cache.stats.asked, 3);
    await git(repo, "update-ref", ref, two);
    assert.equal(await tip(), two);
    assert.equal(cache.stats.asked, 4);

    // A worktree with no commit yet (an unborn branch) is asked each time too.
    const empty = join(dir, "empty");
    await git(dir, "init", "--quiet", "-b", "main", empty);
    const head = () => cache.head(empty, () => revParse(empty, "HEAD^{commit}"));
    assert.equal(await head(), null);
    assert.equal(await head(), null);
    assert.equal(cache.stats.asked, 6);
    const born = await commitFile(empty, "a.txt", "a\n");
    assert.equal(await head(), born);
    assert.equal(await head(), born);
    assert.equal(cache.stats.asked, 7);
  });
});
