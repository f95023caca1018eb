// The local forge's git side: the refs API over the bare repository (claims are refs), git
// smart HTTP (anonymous clone, authenticated push), and what a push does to pull requests.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { api, commitFile, forgeForFile, git, openPull, pushBranch, repoPath, tempDir, type TestForge } from "./support/forge-fixtures.js";

let forge: TestForge;
let work: string;
let mainSha: string;
const refs = (suffix: string): string => repoPath(forge, `/git${suffix}`);

forgeForFile({ users: ["alice"] }, async (f, w) => {
  [forge, work] = [f, w];
  mainSha = (await git(work, "rev-parse", "origin/main")).stdout;
});

describe("refs API", () => {
  it("creates a ref once: the second create is 422 Reference already exists", async () => {
    const first = await api(forge, "POST", refs("/refs"), { ref: "refs/afk/claim/42", sha: mainSha });
    assert.equal(first.status, 201);
    assert.equal(first.body.ref, "refs/afk/claim/42");
    assert.equal(first.body.object.sha, mainSha);
    const second = await api(forge, "POST", refs("/refs"), { ref: "refs/afk/claim/42", sha: mainSha });
    assert.equal(second.status, 422);
    assert.equal(second.body.message, "Reference already exists");
    assert.equal((await git(forge.bareRepo, "rev-parse", "refs/afk/claim/42")).stdout, mainSha);
  });

  it("only one of many concurrent creates wins", async () => {
    const attempts = await Promise.all(Array.from({ length: 8 }, () => api(forge, "POST", refs("/refs"), { ref: "refs/afk/claim/race", sha: mainSha })));
    assert.deepEqual(attempts.map((a) => a.status).sort(), [201, 422, 422, 422, 422, 422, 422, 422]);
  });

  it("refuses two-level refs, unknown objects and read-only namespaces", async () => {
    assert.equal((await api(forge, "POST", refs("/refs"), { ref: "refs/x", sha: mainSha })).status, 422);
    assert.equal((await api(forge, "POST", refs("/refs"), { ref: "refs/afk/claim/7", sha: "0".repeat(39) + "1" })).status, 422);
    assert.equal((await api(forge, "POST", refs("/refs"), { ref: "refs/pull/1/head", sha: mainSha })).status, 422);
    assert.equal((await api(forge, "POST", refs("/refs"), { ref: "refs/afk/claim/7" })).status, 422);
  });

  it("reads refs with %2F-encoded names and lists a namespace", async () => {
    const one = await api(forge, "GET", refs("/ref/afk%2Fclaim%2F42"));
    assert.equal(one.status, 200);
    assert.equal(one.body.ref, "refs/afk/claim/42");
    const plain = await api(forge, "GET", refs("/ref/afk/claim/42"));
    assert.equal(plain.body.object.sha, mainSha);
    assert.equal((await api(forge, "GET", refs("/ref/afk%2Fclaim%2F404"))).status, 404);
    const ns = await api(forge, "GET", refs("/matching-refs/afk%2Fclaim%2F"));
    assert.deepEqual(
      ns.body.map((r: { ref: string }) => r.ref),
      ["refs/afk/claim/42", "refs/afk/claim/race"],
    );
    const prefix = await api(forge, "GET", refs("/matching-refs/heads/ma"));
    assert.deepEqual(
      prefix.body.map((r: { ref: string }) => r.ref),
      ["refs/heads/main"],
    );
    assert.deepEqual((await api(forge, "GET", refs("/matching-refs/afk%2Fnothing%2F"))).body, []);
  });

  it("updates with fast-forward checks unless forced, and deletes with 204", async () => {
    const child = await commitFile(work, "ff.txt", "ff\n");
    await git(work, "push", "--quiet", "origin", `${child}:refs/heads/ff-target`);
    await git(work, "reset", "--quiet", "--hard", "origin/main");
    const ff = await api(forge, "PATCH", refs("/refs/afk%2Fclaim%2F42"), { sha: child });
    assert.equal(ff.status, 200);
    assert.equal(ff.body.object.sha, child);
    const back = await api(forge, "PATCH", refs("/refs/afk%2Fclaim%2F42"), { sha: mainSha, force: false });
    assert.equal(back.status, 422);
    assert.equal(back.body.message, "Update is not a fast forward");
    const forced = await api(forge, "PATCH", refs("/refs/afk%2Fclaim%2F42"), { sha: mainSha, force: true });
    assert.equal(forced.body.object.sha, mainSha);
    assert.equal((await api(forge, "PATCH", refs("/refs/afk%2Fclaim%2Fnone"), { sha: mainSha })).status, 422);
    assert.equal((await api(forge, "DELETE", refs("/refs/afk%2Fclaim%2F42"))).status, 204);
    assert.equal((await api(forge, "DELETE", refs("/refs/afk%2Fclaim%2F42"))).status, 422);
    assert.equal((await api(forge, "GET", refs("/ref/afk/claim/42"))).status, 404);
  });
});

describe("git smart HTTP", () => {
  it("clones anonymously", async () => {
    const dir = await tempDir("afk-anon-");
    await git(dir, "clone", "--quiet", forge.gitUrl, "c");
    assert.equal((await git(`${dir}/c`, "rev-parse", "HEAD")).stdout, (await git(forge.bareRepo, "rev-parse", "main")).stdout);
  });

  it("refuses a push without a token, or with a bad one", async () => {
    await git(work, "checkout", "--quiet", "-B", "anon", "origin/main");
    await commitFile(work, "anon.txt", "anon\n");
    await assert.rejects(git(work, "push", "--quiet", forge.gitUrl, "anon"), /Authentication failed|could not read Username|401/);
    await assert.rejects(git(work, "push", "--quiet", forge.gitUrl.replace("http://", "http://x:afkf_bad@"), "anon"), /Authentication failed|401/);
    assert.equal((await api(forge, "GET", refs("/ref/heads/anon"))).status, 404);
  });

  it("accepts a push with the token as password, and hidden refs", async () => {
    await git(work, "push", "--quiet", "origin", "anon", "HEAD:refs/afk/heartbeat/i1");
    assert.equal((await api(forge, "GET", refs("/ref/heads/anon"))).status, 200);
    const hb = await api(forge, "GET", refs("/matching-refs/afk/heartbeat/"));
    assert.equal(hb.body.length, 1);
    // A plain fetch does not bring hidden refs; an explicit refspec does.
    await git(work, "fetch", "--quiet", "origin", "+refs/afk/*:refs/remotes/afk/*");
    assert.ok((await git(work, "rev-parse", "refs/remotes/afk/heartbeat/i1")).stdout);
  });

  it("rejects a stale --force-with-lease push (server-side compare-and-swap)", async () => {
    const lease = (await git(work, "rev-parse", "HEAD")).stdout;
    await git(work, "push", "--quiet", "origin", "HEAD:refs/afk/claim/lease");
    await commitFile(work, "other.txt", "x\n");
    await git(work, "push", "--quiet", "--force", "origin", "HEAD:refs/afk/claim/lease");
    await git(work, "reset", "--quiet", "--hard", "HEAD~1");
    await commitFile(work, "mine.txt", "y\n");
    await assert.rejects(
      git(work, "push", "--quiet", `--force-with-lease=refs/afk/claim/lease:${lease}`, "origin", "HEAD:refs/afk/claim/lease"),
      /stale info|rejected/,
    );
  });
});

describe("pushes and pull requests", () => {
  it("a PR's head follows its branch after a push", async () => {
    const pr = await openPull(forge, work, "follow");
    const next = await commitFile(work, "follow-2.txt", "2\n");
    await git(work, "push", "--quiet", "origin", "follow");
    const got = await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`));
    assert.equal(got.body.head.sha, next);
    assert.notEqual(next, pr.head);
  });

  it("pushing the PR's commits to main marks it merged and applies closing keywords", async () => {
    const a = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "to close" })).body.number;
    const b = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "also closes" })).body.number;
    const c = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "only mentioned" })).body.number;
    const pr = await openPull(forge, work, "pushed", { body: `Fixes #${a}, resolves ${forge.repo}#${b}, see #${c}` });
    await git(work, "push", "--quiet", "origin", "pushed:main");
    const got = await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`));
    assert.equal(got.body.merged, true);
    assert.equal(got.body.state, "closed");
    assert.equal(got.body.merge_commit_sha, pr.head);
    assert.equal(got.body.merged_by.login, "afk-bot");
    const ia = (await api(forge, "GET", repoPath(forge, `/issues/${a}`))).body;
    assert.deepEqual([ia.state, ia.state_reason], ["closed", "completed"]);
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${b}`))).body.state, "closed");
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${c}`))).body.state, "open");
  });

  it("deleting a PR's head branch closes nothing", async () => {
    const n = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "stays open" })).body.number;
    const pr = await openPull(forge, work, "deleted", { body: `Closes #${n}` });
    await git(work, "push", "--quiet", "origin", ":deleted");
    const got = await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`));
    assert.deepEqual([got.body.state, got.body.merged, got.body.head.sha], ["open", false, pr.head]);
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.state, "open");
  });

  it("a merge into a non-default branch does not apply closing keywords", async () => {
    await pushBranch(work, "release", "release.txt", "r\n");
    const n = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "not on default" })).body.number;
    const pr = await openPull(forge, work, "to-release", { base: "release", body: `Closes #${n}` });
    await git(work, "push", "--quiet", "origin", "to-release:release");
    assert.equal((await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`))).body.merged, true);
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.state, "open");
  });

  it("notices branches moved behind its back (a push straight into the bare repository)", async () => {
    const pr = await openPull(forge, work, "sideways");
    await git(work, "push", "--quiet", forge.bareRepo, `sideways:main`);
    const got = await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`));
    assert.deepEqual([got.body.merged, got.body.state], [true, "closed"]);
  });

  it("refuses pushes into refs/pull/*, as GitHub does", async () => {
    await assert.rejects(git(work, "push", "--quiet", "origin", "HEAD:refs/pull/1/head"), /hidden ref/);
  });

  it("the issues list includes pull requests with a pull_request key", async () => {
    const list = await api(forge, "GET", repoPath(forge, "/issues?state=all&per_page=100"));
    const prs = list.body.filter((i: { pull_request?: unknown }) => i.pull_request);
    assert.ok(prs.length >= 3);
    assert.ok(prs.every((i: { pull_request: { url: string } }) => /\/pulls\/\d+$/.test(i.pull_request.url)));
    const merged = prs.find((i: { pull_request: { merged_at: string | null } }) => i.pull_request.merged_at);
    assert.ok(merged);
  });
});
