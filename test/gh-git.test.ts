// server/gh/git.ts through simple-git, in real temporary repositories: every non-zero exit
// carries its code (the quiet checks the landing relies on), stdin gets the input or nothing,
// the environment the fleet builds reaches git, config keys the fleet does not write are refused
// before git runs, and a git that cannot run or does not answer is a GitError that says so.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { git, gitRaw } from "../server/gh/git.js";
import { GitError } from "../server/gh/errors.js";
import { tempDir } from "./support/forge-fixtures.js";

const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

async function repoWithTwoCommits(): Promise<{ cwd: string; first: string; second: string }> {
  const cwd = await tempDir("afk-git-");
  const run = (...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
  run("init", "--quiet");
  run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "one");
  run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "two");
  return { cwd, first: run("rev-parse", "HEAD~1"), second: run("rev-parse", "HEAD") };
}

test("every non-zero exit carries its code: merge-base --is-ancestor answers 0 or 1", async () => {
  const { cwd, first, second } = await repoWithTwoCommits();
  assert.equal((await gitRaw(["merge-base", "--is-ancestor", first, second], { cwd })).exitCode, 0);
  assert.equal((await gitRaw(["merge-base", "--is-ancestor", second, first], { cwd })).exitCode, 1);
  assert.equal((await gitRaw(["cat-file", "-e", EMPTY_BLOB], { cwd })).exitCode, 1, "a missing object is exit 1, with nothing on stderr");
  await assert.rejects(git(["merge-base", "--is-ancestor", second, first], { cwd }), (error: unknown) => {
    assert.ok(error instanceof GitError);
    assert.equal(error.exitCode, 1);
    assert.match(error.message, /^git merge-base --is-ancestor .* failed: exit code 1$/);
    return true;
  });
  const missing = await gitRaw(["rev-parse", "--verify", "no-such-ref"], { cwd });
  assert.equal(missing.exitCode, 128);
  assert.match(missing.stderr, /fatal: Needed a single revision/);
});

test("stdin gets the input, else nothing: a git that reads it never waits", async () => {
  const { cwd } = await repoWithTwoCommits();
  assert.equal((await git(["hash-object", "--stdin"], { cwd })).stdout, `${EMPTY_BLOB}\n`, "no input: stdin is closed at once");
  assert.equal((await git(["hash-object", "--stdin"], { cwd, input: "" })).stdout, `${EMPTY_BLOB}\n`);
  const blob = execFileSync("git", ["hash-object", "--stdin"], { cwd, input: "hello\n", encoding: "utf8" });
  assert.equal((await git(["hash-object", "--stdin"], { cwd, input: "hello\n" })).stdout, blob);
});

test("output is as git printed it (untrimmed), and stderr of a success is kept", async () => {
  const { cwd } = await repoWithTwoCommits();
  const listed = await git(["for-each-ref", "--format=%(refname)%00", "refs/heads/"], { cwd });
  assert.match(listed.stdout, /^refs\/heads\/\w+\0\n$/);
  const target = join(await tempDir("afk-git-clone-"), "copy");
  const cloned = await git(["clone", "--quiet", "--no-checkout", cwd, target], { cwd });
  assert.equal(cloned.exitCode, 0);
  const noisy = await git(["clone", "--no-checkout", cwd, `${target}-2`], { cwd });
  assert.match(noisy.stderr, /Cloning into/);
});

test("the environment the fleet builds reaches git: an identity from options.env, the host's variables", async () => {
  const { cwd } = await repoWithTwoCommits();
  const tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
  const saved = process.env.GIT_COMMITTER_EMAIL;
  process.env.GIT_COMMITTER_EMAIL = "host@example.test";
  try {
    const env = { GIT_AUTHOR_NAME: "fleet", GIT_AUTHOR_EMAIL: "fleet@example.test", GIT_COMMITTER_NAME: "fleet" };
    const sha = (await git(["commit-tree", "--no-gpg-sign", tree, "-m", "x"], { cwd, env })).stdout.trim();
    const body = (await git(["cat-file", "commit", sha], { cwd })).stdout;
    assert.match(body, /^author fleet <fleet@example\.test> /m);
    assert.match(body, /^committer fleet <host@example\.test> /m, "the host's GIT_COMMITTER_EMAIL passed through");
  } finally {
    if (saved === undefined) delete process.env.GIT_COMMITTER_EMAIL;
    else process.env.GIT_COMMITTER_EMAIL = saved;
  }
});

test("config keys the fleet does not write are refused before git runs; its own pass", async () => {
  const { cwd } = await repoWithTwoCommits();
  for (const args of [
    ["-c", "core.sshCommand=touch pwned", "status"],
    ["-c", "alias.st=!touch pwned", "st"],
    ["config", "core.hooksPath", "/tmp"],
  ]) {
    await assert.rejects(git(args, { cwd }), (error: unknown) => {
      assert.ok(error instanceof GitError, `${args.join(" ")}: a GitError`);
      assert.match(error.message, /refused before git ran/);
      assert.equal(error.exitCode, null);
      return true;
    });
  }
  assert.equal((await gitRaw(["config", "--get", "core.hooksPath"], { cwd })).exitCode, 1, "nothing was written");
  await git(["config", "branch.afk/1-x.remote", "origin"], { cwd });
  await git(["-c", "commit.gpgSign=false", "-c", "push.gpgSign=false", "status", "--porcelain"], { cwd });
});

test("a git that cannot run or does not answer is a GitError that says so", async (t) => {
  await assert.rejects(git(["status"], { cwd: join(await tempDir("afk-git-"), "gone") }), /the working directory does not exist/);
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket)); // accepts, never answers
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  const cwd = await tempDir("afk-git-");
  await assert.rejects(git(["ls-remote", `http://127.0.0.1:${port}/x.git`], { cwd, timeoutMs: 500 }), (error: unknown) => {
    assert.ok(error instanceof GitError);
    assert.match(error.message, /timed out after/);
    assert.equal(error.exitCode, null);
    return true;
  });
});
