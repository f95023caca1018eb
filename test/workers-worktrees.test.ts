// Worktrees per issue, against real git repositories in temporary directories: a bare "origin"
// used as the remote by path, a "seed" clone standing in for maintainers and strangers.
import { describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A hostile global config: signing on with a gpg that always fails, and no identity. The
// fleet's commits and a worker's plain `git commit` must still work without a prompt.
const CONFIG_ROOT = await mkdtemp(join(tmpdir(), "afk-wt-config-"));
await writeFile(
  join(CONFIG_ROOT, "gitconfig"),
  "[commit]\n\tgpgSign = true\n[tag]\n\tgpgSign = true\n[gpg]\n\tprogram = false\n[init]\n\tdefaultBranch = main\n",
);
process.env.GIT_CONFIG_GLOBAL = join(CONFIG_ROOT, "gitconfig");
process.env.GIT_CONFIG_NOSYSTEM = "1";
for (const name of ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"]) delete process.env[name];
process.on("exit", () => rmSync(CONFIG_ROOT, { recursive: true, force: true }));

const { git } = await import("../server/gh/git.js");
const { assertSafeBranchName } = await import("../server/gh/git.js");
const { WorkRepo, PushRejectedError } = await import("../server/worktrees/worktrees.js");
const { safeSlug, issueBranchName } = await import("../server/worktrees/slug.js");
const { FLEET_IDENTITY } = await import("../server/worktrees/work-repo.js");
const { newestMtime } = await import("../server/worktrees/activity.js");

type WorkRepoT = InstanceType<typeof WorkRepo>;

interface Fixture {
  root: string;
  origin: string;
  seed: string;
  wr: WorkRepoT;
}

const TEST_IDENTITY = ["-c", "commit.gpgSign=false", "-c", "user.name=Test", "-c", "user.email=test@example.com"];

async function sh(args: string[], cwd: string): Promise<string> {
  return (await git([...TEST_IDENTITY, ...args], { cwd })).stdout.trim();
}

/** A worker's own commit: plain git, no identity or signing flags. */
async function workerCommit(path: string, file: string, content: string, message: string): Promise<string> {
  await mkdir(join(path, file, ".."), { recursive: true });
  await writeFile(join(path, file), content);
  await git(["add", "--", file], { cwd: path });
  await git(["commit", "--quiet", "-m", message], { cwd: path });
  return (await git(["rev-parse", "HEAD"], { cwd: path })).stdout.trim();
}

/** Somebody else (a maintainer, a stranger) commits on top of origin's `branch` and pushes. */
async function remoteCommit(fx: Fixture, branch: string, file: string, content: string): Promise<string> {
  await sh(["fetch", "--quiet", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`], fx.seed);
  await sh(["checkout", "--quiet", "-B", "scratch", `refs/remotes/origin/${branch}`], fx.seed);
  await mkdir(join(fx.seed, file, ".."), { recursive: true });
  await writeFile(join(fx.seed, file), content);
  await sh(["add", "--", file], fx.seed);
  await sh(["commit", "--quiet", "-m", `remote change to ${file}`], fx.seed);
  await sh(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], fx.seed);
  return sh(["rev-parse", "HEAD"], fx.seed);
}

async function originTip(fx: Fixture, branch: string): Promise<string | null> {
  const out = await sh(["ls-remote", "--refs", fx.origin, `refs/heads/${branch}`], fx.root);
  return out === "" ? null : (out.split("\t")[0] ?? null);
}

async function isAncestor(cwd: string, a: string, b: string): Promise<boolean> {
  return await git(["merge-base", "--is-ancestor", a, b], { cwd }).then(
    () => true,
    () => false,
  );
}

async function fixture(t: TestContext, name = "n"): Promise<Fixture> {
  const root = await mkdtemp(join(tmpdir(), "afk-wt-"));
  t.after(() => rm(root, { recursive: true, force: true }));
  const origin = join(root, "origin.git");
  await sh(["init", "--quiet", "--bare", "-b", "main", origin], root);
  const seed = join(root, "seed");
  await sh(["init", "--quiet", "-b", "main", seed], root);
  await writeFile(join(seed, "README.md"), "line one\nline two\nline three\n");
  await mkdir(join(seed, "src"));
  await writeFile(join(seed, "src", "app.txt"), "app\n");
  await sh(["add", "."], seed);
  await sh(["commit", "--quiet", "-m", "initial"], seed);
  await sh(["remote", "add", "origin", origin], seed);
  await sh(["push", "--quiet", "origin", "HEAD:refs/heads/main"], seed);
  const wr = new WorkRepo({
    repoDir: join(root, "state", "work", "o", `${name}.git`),
    worktreeRoot: join(root, "state", "worktrees", "o", name),
    remoteUrl: origin,
  });
  return { root, origin, seed, wr };
}

// Each test has its own repositories: they run side by side, since most of the time is git
// process start-up.
describe("worktrees", { concurrency: 4 }, () => {
  test("tier 3 starts from the freshly fetched base, never a stale local one", async (t) => {
    const fx = await fixture(t);
    const first = await fx.wr.prepare({ issue: 1, title: "First", base: "main" });
    assert.equal(first.tier, 3);
    // A stale local base in the work repository, then the base moves on origin.
    await sh(["update-ref", "refs/heads/main", first.baseSha], fx.wr.repoDir);
    const moved = await remoteCommit(fx, "main", "news.txt", "new\n");

    const p = await fx.wr.prepare({ issue: 2, title: "Second issue", base: "main", attempt: 1 });
    assert.equal(p.tier, 3);
    assert.equal(p.branch, "afk/2-second-issue");
    assert.equal(p.path, join(fx.wr.worktreeRoot, "issue-2"));
    assert.equal(p.baseSha, moved);
    assert.equal(p.head, moved);
    assert.equal(p.baseContained, true);
    assert.equal(p.remoteSha, null);
    assert.ok(await isAncestor(p.path, moved, "HEAD"));
    assert.equal(await readFile(join(p.path, "news.txt"), "utf8"), "new\n");
    // The worker's own push/pull go to its branch, not to the base.
    assert.equal(await sh(["config", "--get", `branch.${p.branch}.merge`], p.path), `refs/heads/${p.branch}`);
    assert.equal(await sh(["rev-parse", "--abbrev-ref", "HEAD"], p.path), p.branch);
  });

  test("tier 1 reuses the worktree as the worker left it: commits, dirty files, a stale index.lock", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 3, title: "Reuse me", base: "main" });
    const committed = await workerCommit(p.path, "src/feature.txt", "feature\n", "worker commit");
    // No identity anywhere else: the work repo supplied one; signing is off despite the global config.
    assert.equal((await git(["config", "--get", "user.email"], { cwd: p.path })).stdout.trim(), FLEET_IDENTITY.email);
    await writeFile(join(p.path, "README.md"), "edited, not committed\n");
    await writeFile(join(p.path, "scratch.txt"), "untracked\n");
    const lock = join(fx.root, (await sh(["rev-parse", "--path-format=absolute", "--git-path", "index.lock"], p.path)).replace(fx.root, ""));
    await writeFile(lock, "");

    const again = await fx.wr.prepare({ issue: 3, title: "Reuse me", base: "main" });
    assert.equal(again.tier, 1);
    assert.equal(again.path, p.path);
    assert.equal(again.branch, p.branch);
    assert.equal(again.head, committed);
    assert.equal(await readFile(join(p.path, "README.md"), "utf8"), "edited, not committed\n");
    assert.equal(await readFile(join(p.path, "scratch.txt"), "utf8"), "untracked\n");
    assert.equal(existsSync(lock), false);
    await workerCommit(p.path, "more.txt", "more\n", "commits work again");
  });

  test("tier 1 also covers a worker that died mid-rebase (detached HEAD, rebase in progress)", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 17, title: "Rebasing", base: "main" });
    await workerCommit(p.path, "README.md", "line one\nMINE\nline three\n", "mine");
    await remoteCommit(fx, "main", "README.md", "line one\nTHEIRS\nline three\n");
    await git(["fetch", "--quiet", "origin"], { cwd: p.path });
    await assert.rejects(git(["rebase", "origin/main"], { cwd: p.path }));
    const again = await fx.wr.prepare({ issue: 17, title: "Rebasing", base: "main" });
    assert.equal(again.tier, 1);
    assert.equal(again.branch, p.branch);
    assert.equal(again.displaced, null);
  });

  test("a token is sent as a header only: never in the work repo's config or the worktree", async (t) => {
    const fx = await fixture(t);
    const token = "ghp_0123456789abcdefSECRET";
    const wr = new WorkRepo({ repoDir: join(fx.root, "tok", "n.git"), worktreeRoot: join(fx.root, "tok", "wt"), remoteUrl: fx.origin, auth: { token } });
    const p = await wr.prepare({ issue: 18, title: "Token", base: "main" });
    await workerCommit(p.path, "t.txt", "t\n", "t");
    await wr.push(18);
    assert.equal((await git(["config", "--get", "remote.origin.url"], { cwd: p.path })).stdout.trim(), fx.origin);
    for (const file of [join(wr.repoDir, "config"), join(p.path, ".git")]) {
      assert.doesNotMatch(await readFile(file, "utf8"), /SECRET/);
    }
  });

  test("tier 2 recreates the worktree at the pushed tip after the directory was deleted", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 4, title: "Pushed work", base: "main" });
    const pushed = await workerCommit(p.path, "a.txt", "a\n", "a");
    assert.deepEqual(await fx.wr.push(4), { branch: p.branch, sha: pushed, previous: null, pushed: true });
    await rm(p.path, { recursive: true, force: true });

    const again = await fx.wr.prepare({ issue: 4, title: "Pushed work", base: "main" });
    assert.equal(again.tier, 2);
    assert.equal(again.head, pushed);
    assert.equal(again.remoteSha, pushed);
    assert.equal(again.remoteContained, true);
    assert.equal(await readFile(join(again.path, "a.txt"), "utf8"), "a\n");

    // Unpushed local commits on top of the pushed tip: the local tip contains it, so it wins.
    const local = await workerCommit(again.path, "b.txt", "b\n", "b");
    await rm(again.path, { recursive: true, force: true });
    const third = await fx.wr.prepare({ issue: 4, title: "Pushed work", base: "main" });
    assert.equal(third.tier, 2);
    assert.equal(third.head, local);
    assert.deepEqual(third.backupRefs, []);

    // Another machine (its own work repo) continues from what was pushed.
    const other = new WorkRepo({ repoDir: join(fx.root, "other", "n.git"), worktreeRoot: join(fx.root, "other", "wt"), remoteUrl: fx.origin });
    const elsewhere = await other.prepare({ issue: 4, title: "Pushed work", base: "main" });
    assert.equal(elsewhere.tier, 2);
    assert.equal(elsewhere.head, pushed);
  });

  test("tier 2 with diverged tips takes origin's and keeps the local one as a backup ref", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 5, title: "Diverge", base: "main" });
    const x = await workerCommit(p.path, "x.txt", "x\n", "x");
    await fx.wr.push(5);
    const y = await remoteCommit(fx, p.branch, "y.txt", "y\n");
    const z = await workerCommit(p.path, "z.txt", "z\n", "z");
    await rm(p.path, { recursive: true, force: true });

    const again = await fx.wr.prepare({ issue: 5, title: "Diverge", base: "main" });
    assert.equal(again.tier, 2);
    assert.equal(again.head, y);
    assert.ok(await isAncestor(again.path, x, y));
    assert.equal(again.backupRefs.length, 1);
    assert.match(again.backupRefs[0]!, /^refs\/afk-backup\/5\/\d{8}T\d{6}Z-[0-9a-f]{12}$/);
    assert.equal(await sh(["rev-parse", again.backupRefs[0]!], fx.wr.repoDir), z);
    assert.equal(existsSync(join(again.path, "z.txt")), false);
  });

  test("a renamed issue continues on its existing branch", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 6, title: "Old title", base: "main" });
    const sha = await workerCommit(p.path, "w.txt", "w\n", "w");
    await fx.wr.push(6);
    await rm(p.path, { recursive: true, force: true });
    const again = await fx.wr.prepare({ issue: 6, title: "A brand new title", base: "main" });
    assert.equal(again.tier, 2);
    assert.equal(again.branch, "afk/6-old-title");
    assert.equal(again.head, sha);
  });

  test("hostile titles give short valid branch names and run nothing", async (t) => {
    const fx = await fixture(t);
    const marker = join(fx.root, "pwned-XYZ");
    const hostile = [
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      `fix; touch ${marker}; echo`,
      "$(rm -rf ~)",
      "line one\nline two\r\n\ttabbed",
      "x".repeat(100_000),
      "a b ".repeat(30_000),
      "🔥🚀 emoji only 🎉",
      "🔥🚀🎉",
      "\u202Eevil\u202C \u200Fright-to-left\u200E",
      "-leading dash",
      "--option=value",
      "refs/heads/../../etc",
      "trailing.lock",
      "a..b.lock.",
      "@{upstream} ~^:?*[\\",
      "Café crème brûlée — Straße, Æsir, Łódź",
      "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ",
      "",
      "   ",
      "don't stop",
    ];
    for (const title of hostile) {
      const branch = issueBranchName(7, title);
      assert.match(branch, /^afk\/7(-[a-z0-9]+)*$/, JSON.stringify(title.slice(0, 40)));
      assert.ok(branch.length <= "afk/7-".length + 40, branch);
      assertSafeBranchName(branch);
      await git(["check-ref-format", "--branch", branch], { cwd: fx.root });
    }
    const table: [string, string][] = [
      ["$(rm -rf ~)", "rm-rf"],
      ["Café crème brûlée — Straße, Æsir, Łódź", "cafe-creme-brulee-strasse-aesir-lodz"],
      ["ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ", "fullwidth-text"],
      ["\u202Eevil\u202C", "evil"],
      ["🔥🚀🎉", ""],
      ["don't stop", "dont-stop"],
      ["trailing.lock", "trailing-lock"],
      ["Add the thing that makes the other thing work properly again", "add-the-thing-that-makes-the-other-thing"],
    ];
    for (const [title, slug] of table) assert.equal(safeSlug(title), slug, title);
    assert.equal(issueBranchName(7, "🔥🚀🎉"), "afk/7");

    for (const [issue, title] of [
      [20, hostile[0]!],
      [21, hostile[1]!],
      [22, hostile[2]!],
      [23, "x".repeat(100_000)],
    ] as const) {
      const p = await fx.wr.prepare({ issue, title, base: "main" });
      assert.equal(p.tier, 3);
      assert.equal(p.path, join(fx.wr.worktreeRoot, `issue-${issue}`));
    }
    assert.equal(existsSync(marker), false);
  });

  test("progress reports commits ahead, dirtiness, the last commit and the newest mtime", async (t) => {
    const fx = await fixture(t);
    const none = await fx.wr.progress(8, "main");
    assert.deepEqual(
      { ...none, path: "" },
      { worktree: false, path: "", branch: null, head: null, commitsAhead: 0, dirty: false, lastCommitAt: null, worktreeMtime: null },
    );

    const p = await fx.wr.prepare({ issue: 8, title: "Progress", base: "main" });
    const fresh = await fx.wr.progress(8, "main");
    assert.equal(fresh.worktree, true);
    assert.equal(fresh.branch, p.branch);
    assert.equal(fresh.head, p.baseSha);
    assert.equal(fresh.commitsAhead, 0);
    assert.equal(fresh.dirty, false);
    assert.equal(fresh.lastCommitAt, null);
    assert.ok(fresh.worktreeMtime instanceof Date);

    // node_modules and .git are not looked at: a far-future file there does not count.
    const future = new Date(Date.now() + 86_400_000 * 365);
    await mkdir(join(p.path, "node_modules", "pkg"), { recursive: true });
    await writeFile(join(p.path, "node_modules", "pkg", "index.js"), "");
    await utimes(join(p.path, "node_modules", "pkg", "index.js"), future, future);
    await utimes(join(p.path, "node_modules"), future, future);
    await writeFile(join(p.path, "notes.txt"), "untracked\n");
    const dirty = await fx.wr.progress(8, "main");
    assert.equal(dirty.dirty, true);
    assert.ok(dirty.worktreeMtime!.getTime() < future.getTime() - 1000);
    assert.ok(dirty.worktreeMtime!.getTime() >= fresh.worktreeMtime!.getTime());

    await rm(join(p.path, "node_modules"), { recursive: true });
    // Commit dates have whole seconds: bound the last one by the clock around the commits.
    const before = Math.floor(Date.now() / 1000) * 1000;
    await workerCommit(p.path, "notes.txt", "untracked\n", "one");
    const sha = await workerCommit(p.path, "two.txt", "two\n", "two");
    const afterCommits = Date.now();
    const ahead = await fx.wr.progress(8, "main");
    assert.equal(ahead.commitsAhead, 2);
    assert.equal(ahead.dirty, false);
    assert.equal(ahead.head, sha);
    assert.ok(ahead.lastCommitAt instanceof Date);
    assert.ok(ahead.lastCommitAt.getTime() >= before && ahead.lastCommitAt.getTime() <= afterCommits, ahead.lastCommitAt.toISOString());

    // Without the worktree, the branch's facts are still there.
    await fx.wr.remove(8);
    const gone = await fx.wr.progress(8, "main");
    assert.equal(gone.worktree, false);
    assert.equal(gone.commitsAhead, 2);
    assert.equal(gone.worktreeMtime, null);
  });

  test("newestMtime is bounded and skips .git and node_modules", async (t) => {
    const root = await mkdtemp(join(tmpdir(), "afk-mtime-"));
    t.after(() => rm(root, { recursive: true, force: true }));
    const old = new Date("2020-01-01T00:00:00Z");
    const newer = new Date("2021-01-01T00:00:00Z");
    await mkdir(join(root, "a", "b"), { recursive: true });
    await mkdir(join(root, ".git"));
    await writeFile(join(root, "a", "b", "deep.txt"), "");
    await writeFile(join(root, ".git", "HEAD"), "");
    await utimes(join(root, "a", "b", "deep.txt"), newer, newer);
    for (const dir of [join(root, "a", "b"), join(root, "a"), join(root, ".git")]) await utimes(dir, old, old);
    assert.equal((await newestMtime(root))?.toISOString(), newer.toISOString());
    assert.equal((await newestMtime(root, { maxDepth: 1 }))?.toISOString(), old.toISOString());
    assert.equal(await newestMtime(join(root, "missing")), null);
  });

  test("syncWithBase merges the base in (never rebases), and reports nothing to do the second time", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 9, title: "Sync", base: "main" });
    const mine = await workerCommit(p.path, "mine.txt", "mine\n", "mine");
    const theirs = await remoteCommit(fx, "main", "theirs.txt", "theirs\n");

    const synced = await fx.wr.syncWithBase(9, "main");
    assert.equal(synced.ok, true);
    assert.ok(synced.ok && synced.merged);
    const head = synced.ok ? synced.head : "";
    assert.ok(await isAncestor(p.path, mine, head), "the worker's commit is kept as is");
    assert.ok(await isAncestor(p.path, theirs, head));
    assert.equal((await sh(["rev-list", "--parents", "-n", "1", head], p.path)).split(" ").length, 3, "a merge commit");
    assert.equal(await sh(["status", "--porcelain"], p.path), "");

    assert.deepEqual(await fx.wr.syncWithBase(9, "main"), { ok: true, head, merged: false });
  });

  test("syncWithBase on a conflict aborts, names the file and leaves the worktree clean", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 10, title: "Conflict", base: "main" });
    const mine = await workerCommit(p.path, "README.md", "line one\nMINE\nline three\n", "mine");
    await remoteCommit(fx, "main", "README.md", "line one\nTHEIRS\nline three\n");

    assert.deepEqual(await fx.wr.syncWithBase(10, "main"), { ok: false, reason: "conflict", conflicts: ["README.md"], dirty: [] });
    assert.equal(await sh(["status", "--porcelain"], p.path), "");
    assert.equal(await sh(["rev-parse", "HEAD"], p.path), mine);
    assert.equal(existsSync(join(fx.wr.repoDir, "worktrees", "issue-10", "MERGE_HEAD")), false);

    // Uncommitted tracked changes: nothing is attempted.
    await writeFile(join(p.path, "src", "app.txt"), "changed\n");
    assert.deepEqual(await fx.wr.syncWithBase(10, "main"), { ok: false, reason: "dirty", conflicts: [], dirty: ["src/app.txt"] });
    assert.equal(await readFile(join(p.path, "src", "app.txt"), "utf8"), "changed\n");
  });

  test("push under a lease never overwrites a stranger's push", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 11, title: "Lease", base: "main" });
    const first = await workerCommit(p.path, "one.txt", "1\n", "one");
    assert.equal((await fx.wr.push(11)).sha, first);
    assert.deepEqual(await fx.wr.push(11), { branch: p.branch, sha: first, previous: first, pushed: false });
    const second = await workerCommit(p.path, "two.txt", "2\n", "two");
    assert.deepEqual(await fx.wr.push(11, { expectedRemoteSha: first }), { branch: p.branch, sha: second, previous: first, pushed: true });

    const stranger = await remoteCommit(fx, p.branch, "stranger.txt", "s\n");
    await workerCommit(p.path, "three.txt", "3\n", "three");
    await assert.rejects(fx.wr.push(11, { expectedRemoteSha: second }), (error: unknown) => {
      assert.ok(error instanceof PushRejectedError);
      assert.equal(error.actual, stranger);
      assert.match(error.message, /does not contain/);
      return true;
    });
    await assert.rejects(fx.wr.push(11), PushRejectedError);
    assert.equal(await originTip(fx, p.branch), stranger);

    // Once the stranger's commit is merged in, the push is a plain fast-forward again.
    await git(["fetch", "--quiet", "origin"], { cwd: p.path });
    await git(["merge", "--quiet", "--no-edit", `origin/${p.branch}`], { cwd: p.path });
    const merged = await sh(["rev-parse", "HEAD"], p.path);
    assert.equal((await fx.wr.push(11)).sha, merged);
    assert.equal(await originTip(fx, p.branch), merged);
  });

  test("fresh starts over from base, backs up the old tip, and may replace the old push", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 12, title: "Retry me", base: "main" });
    const old = await workerCommit(p.path, "bad.txt", "bad\n", "bad attempt");
    await fx.wr.push(12);
    await writeFile(join(p.path, "junk.txt"), "junk\n");
    const moved = await remoteCommit(fx, "main", "base2.txt", "b\n");

    const again = await fx.wr.fresh({ issue: 12, title: "Retry me (renamed)", base: "main", attempt: 2 });
    assert.equal(again.tier, 3);
    assert.equal(again.branch, p.branch, "the branch name is kept so the PR follows");
    assert.equal(again.head, moved);
    assert.equal(existsSync(join(again.path, "junk.txt")), false);
    assert.equal(existsSync(join(again.path, "bad.txt")), false);
    assert.equal(again.backupRefs.length, 1);
    assert.equal(await sh(["rev-parse", again.backupRefs[0]!], fx.wr.repoDir), old);

    // The old attempt on origin is not continued by a later prepare...
    await rm(again.path, { recursive: true, force: true });
    const re = await fx.wr.prepare({ issue: 12, title: "Retry me", base: "main" });
    assert.equal(re.tier, 3);
    // ...and the next push replaces it.
    const next = await workerCommit(re.path, "good.txt", "good\n", "good attempt");
    assert.deepEqual(await fx.wr.push(12), { branch: p.branch, sha: next, previous: old, pushed: true });
    assert.equal(await originTip(fx, p.branch), next);
  });

  test("something else at the issue's path is moved aside, never deleted", async (t) => {
    const fx = await fixture(t);
    const stray = fx.wr.worktreePath(13);
    await mkdir(stray, { recursive: true });
    await writeFile(join(stray, "precious.txt"), "keep me\n");
    const p = await fx.wr.prepare({ issue: 13, title: "Stray", base: "main" });
    assert.equal(p.tier, 3);
    assert.ok(p.displaced);
    assert.equal(await readFile(join(p.displaced, "precious.txt"), "utf8"), "keep me\n");

    // A worktree left detached is moved aside with its registration.
    await sh(["checkout", "--quiet", "--detach"], p.path);
    const again = await fx.wr.prepare({ issue: 13, title: "Stray", base: "main" });
    assert.equal(again.tier, 3);
    assert.ok(again.displaced && existsSync(join(again.displaced, "README.md")));
    assert.equal(await sh(["rev-parse", "--abbrev-ref", "HEAD"], again.path), p.branch);
  });

  test("hasChangesAgainstBase: nothing, a change, and a change that already landed", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 14, title: "Changes", base: "main" });
    assert.equal(await fx.wr.hasChangesAgainstBase(14, "main"), false);
    await workerCommit(p.path, "f.txt", "f\n", "f");
    assert.equal(await fx.wr.hasChangesAgainstBase(14, "main"), true);
    // The same change lands on base some other way (a squash): nothing left to add.
    await remoteCommit(fx, "main", "f.txt", "f\n");
    assert.equal(await fx.wr.hasChangesAgainstBase(14, "main"), false);
    assert.equal(await fx.wr.hasChangesAgainstBase(99, "main"), false);
  });

  test("remove deletes the worktree and prunes it; the branch only on request", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 15, title: "Remove", base: "main" });
    await writeFile(join(p.path, "dirty.txt"), "x\n");
    assert.deepEqual(await fx.wr.remove(15), { removed: true });
    assert.equal(existsSync(p.path), false);
    assert.doesNotMatch(await sh(["worktree", "list", "--porcelain"], fx.wr.repoDir), /issue-15/);
    assert.equal(await sh(["rev-parse", `refs/heads/${p.branch}`], fx.wr.repoDir), p.head);
    assert.deepEqual(await fx.wr.remove(15), { removed: false });
    await fx.wr.remove(15, { deleteBranch: true });
    assert.equal(await sh(["for-each-ref", "refs/heads/"], fx.wr.repoDir), "");
  });

  test("checkoutAt puts the worktree at a head pushed from elsewhere (a review), keeping a local tip it lacks", async (t) => {
    const fx = await fixture(t);
    const p = await fx.wr.prepare({ issue: 19, title: "Reviewed", base: "main" });
    await workerCommit(p.path, "w.txt", "w\n", "worker");
    await fx.wr.push(19);
    // A human pushes on top of the PR branch; this host's worktree still sits at the old tip.
    const late = await remoteCommit(fx, p.branch, "late.txt", "late\n");
    const again = await fx.wr.prepare({ issue: 19, title: "Reviewed", base: "main" });
    assert.equal(again.tier, 1);
    assert.notEqual(again.head, late);
    assert.equal(await fx.wr.checkoutAt(19, late), late);
    assert.equal(await readFile(join(p.path, "late.txt"), "utf8"), "late\n");
    assert.equal(await sh(["rev-parse", "--abbrev-ref", "HEAD"], p.path), p.branch, "still on the issue's branch");
    // A local commit the head lacks (an earlier reviewer's unpushed fix) is set aside, not lost.
    const stray = await workerCommit(p.path, "stray.txt", "stray\n", "unpushed");
    assert.equal(await fx.wr.checkoutAt(19, late), late);
    const backups = await sh(["for-each-ref", "--format=%(objectname)", "refs/afk-backup/19/"], fx.wr.repoDir);
    assert.ok(backups.split("\n").includes(stray), `backed up: ${backups}`);
    // A head this repository does not have leaves the worktree where it is.
    assert.equal(await fx.wr.checkoutAt(19, "f".repeat(40)), late);
  });

  test("refusals name the problem: a missing base, bad input, a credential in the URL", async (t) => {
    const fx = await fixture(t);
    await assert.rejects(fx.wr.prepare({ issue: 16, title: "x", base: "nope" }), /base branch "nope" does not exist on origin/);
    await assert.rejects(fx.wr.prepare({ issue: 16, title: "x", base: "--upload-pack=evil" }), /invalid branch name/);
    await assert.rejects(fx.wr.prepare({ issue: 0, title: "x", base: "main" }), /invalid issue number/);
    await assert.rejects(fx.wr.syncWithBase(16, "main"), /has no worktree/);
    assert.throws(
      () => new WorkRepo({ repoDir: join(fx.root, "r.git"), worktreeRoot: join(fx.root, "w"), remoteUrl: "https://user:secret@example.com/o/n.git" }),
      /carries credentials/,
    );
  });
});
