// The local forge as one GitHub with several repositories (one server, shared users, tokens,
// accounting and rate limit) and with per-token permissions: a read-only collaborator reads,
// opens issues and comments, but its pushes and ref writes are refused as GitHub refuses them.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { api, authedGitUrl, cloneRepo, commitFile, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { join } from "node:path";

let forge: TestForge;

before(async () => {
  forge = await startTestForge({ repos: ["afk/two", "other/three"] });
});

after(async () => {
  await forge.dispose();
  assert.deepEqual(forge.violations(), []);
});

describe("several repositories on one forge", () => {
  it("serves each repository with its own issues, refs and git, under one token", async () => {
    assert.deepEqual(
      forge.more.map((m) => m.repo),
      ["afk/two", "other/three"],
    );
    const first = await api(forge, "POST", repoPath(forge, "/issues"), { title: "in demo" });
    const second = await api(forge, "POST", "/repos/afk/two/issues", { title: "in two" });
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    // Each repository numbers its own issues.
    assert.equal(second.body.number, 1);
    const listed = await api(forge, "GET", "/repos/afk/two/issues?state=all");
    assert.deepEqual(
      listed.body.map((i: { title: string }) => i.title),
      ["in two"],
    );
    const repo = await api(forge, "GET", "/repos/other/three");
    assert.equal(repo.status, 200);
    assert.equal(repo.body.full_name, "other/three");
    assert.equal(repo.body.permissions.push, true);
    assert.equal((await api(forge, "GET", "/repos/other/nope")).status, 404);

    // git: clone and push the second repository with the same token; the first is untouched.
    const parent = await tempDir("afk-clone-");
    const dir = join(parent, "w");
    const url = authedGitUrl({ ...forge, gitUrl: forge.more[0]!.gitUrl });
    await git(parent, "clone", "--quiet", url, dir);
    const sha = await commitFile(dir, "two.txt", "2\n");
    await git(dir, "push", "--quiet", "origin", "HEAD:refs/heads/feature");
    assert.equal((await git(forge.more[0]!.bareRepo, "rev-parse", "refs/heads/feature")).stdout, sha);
    await assert.rejects(git(forge.bareRepo, "rev-parse", "--verify", "--quiet", "refs/heads/feature"));
  });

  it("accounts every repository's requests in one place, against one rate limit", async () => {
    await fetch(`${forge.apiUrl}/_forge/accounting/reset`, { method: "POST" });
    await api(forge, "GET", "/repos/afk/two/issues");
    await api(forge, "GET", repoPath(forge, "/issues"));
    const accounting = (await (await fetch(`${forge.apiUrl}/_forge/accounting`)).json()) as { total: number };
    assert.equal(accounting.total, 2);
    const a = await api(forge, "GET", "/repos/afk/two");
    const b = await api(forge, "GET", repoPath(forge));
    assert.equal(Number(a.headers.get("x-ratelimit-used")) + 1, Number(b.headers.get("x-ratelimit-used")));
  });
});

describe("a read-only token", () => {
  let reader: string;
  before(async () => {
    const r = await fetch(`${forge.apiUrl}/_forge/users`, { method: "POST", body: JSON.stringify({ login: "reader", push: false }) });
    const body = (await r.json()) as { token: string; push: boolean };
    assert.equal(body.push, false);
    reader = body.token;
  });

  it("sees permissions.push false on every repository, and reads", async () => {
    for (const path of [repoPath(forge), "/repos/afk/two"]) {
      const r = await api(forge, "GET", path, undefined, { token: reader });
      assert.equal(r.status, 200);
      assert.equal(r.body.permissions.push, false);
      assert.equal(r.body.permissions.pull, true);
      assert.equal(r.body.permissions.admin, false);
    }
    assert.equal((await api(forge, "GET", repoPath(forge, "/git/matching-refs/heads/"), undefined, { token: reader })).status, 200);
  });

  it("may open issues and comment, but not write refs or labels", async () => {
    const issue = await api(forge, "POST", repoPath(forge, "/issues"), { title: "from a reader" }, { token: reader });
    assert.equal(issue.status, 201);
    const comment = await api(forge, "POST", repoPath(forge, `/issues/${issue.body.number}/comments`), { body: "hi" }, { token: reader });
    assert.equal(comment.status, 201);
    const main = await api(forge, "GET", repoPath(forge, "/git/ref/heads/main"));
    const ref = await api(forge, "POST", repoPath(forge, "/git/refs"), { ref: "refs/afk/probe", sha: main.body.object.sha }, { token: reader });
    assert.equal(ref.status, 403);
    assert.equal(ref.body.message, "Resource not accessible by personal access token");
    const label = await api(forge, "POST", repoPath(forge, "/labels"), { name: "x", color: "000000" }, { token: reader });
    assert.equal(label.status, 403);
    assert.equal((await api(forge, "GET", repoPath(forge, "/git/ref/afk/probe"))).status, 404, "nothing was written");
  });

  it("cannot push: git reports GitHub's 403 and the ref stays as it was", async () => {
    const work = await cloneRepo(forge, reader);
    await commitFile(work, "r.txt", "r\n");
    const refused = await git(work, "push", "origin", "HEAD:refs/heads/reader-branch").then(
      () => null,
      (e: { stderr?: string }) => e.stderr ?? "",
    );
    assert.ok(refused !== null, "the push was refused");
    assert.match(refused, /Permission to afk\/demo\.git denied to reader/);
    assert.match(refused, /403/);
    await assert.rejects(git(forge.bareRepo, "rev-parse", "--verify", "--quiet", "refs/heads/reader-branch"));
  });
});
