// The local forge's issue side over real HTTP: issues, labels, comments, dependencies and
// sub-issues, and GitHub's HTTP manners (auth, pagination, ETag, rate-limit headers).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { api, repoPath, startTestForge, type TestForge } from "./support/forge-fixtures.js";

let forge: TestForge;
const issues = (suffix = ""): string => repoPath(forge, `/issues${suffix}`);

before(async () => {
  forge = await startTestForge({ users: ["alice"] });
});

after(async () => {
  await forge.dispose();
  assert.deepEqual(forge.violations(), [], "every answer matches GitHub's OpenAPI description");
});

describe("auth", () => {
  it("GET /user returns the caller", async () => {
    const me = await api(forge, "GET", "/user");
    assert.equal(me.status, 200);
    assert.equal(me.body.login, "afk-bot");
    const alice = await api(forge, "GET", "/user", undefined, { token: forge.users.alice });
    assert.equal(alice.body.login, "alice");
  });

  it("accepts token, Bearer and Basic credentials", async () => {
    for (const authorization of [`token ${forge.token}`, `Bearer ${forge.token}`, `Basic ${Buffer.from(`x:${forge.token}`).toString("base64")}`]) {
      const r = await api(forge, "GET", "/user", undefined, { token: null, headers: { authorization } });
      assert.equal(r.status, 200, authorization.split(" ")[0]);
    }
  });

  it("refuses a write without a token and any request with a bad one", async () => {
    const anon = await api(forge, "POST", issues(), { title: "x" }, { token: null });
    assert.equal(anon.status, 401);
    assert.equal(anon.body.message, "Requires authentication");
    assert.ok(anon.body.documentation_url);
    const bad = await api(forge, "GET", issues(), undefined, { token: "afkf_nope" });
    assert.equal(bad.status, 401);
    assert.equal(bad.body.message, "Bad credentials");
    const read = await api(forge, "GET", issues(), undefined, { token: null });
    assert.equal(read.status, 200);
  });

  it("gives the default user admin and others push", async () => {
    const admin = await api(forge, "GET", repoPath(forge));
    assert.equal(admin.body.permissions.admin, true);
    assert.equal(admin.body.default_branch, "main");
    assert.equal(admin.body.clone_url, forge.gitUrl);
    const alice = await api(forge, "GET", repoPath(forge), undefined, { token: forge.users.alice });
    assert.deepEqual([alice.body.permissions.admin, alice.body.permissions.push], [false, true]);
  });

  it("answers 404 for unknown routes and other repositories", async () => {
    assert.equal((await api(forge, "GET", "/repos/someone/else/issues")).status, 404);
    const r = await api(forge, "GET", repoPath(forge, "/no-such-thing"));
    assert.equal(r.status, 404);
    assert.equal(r.body.message, "Not Found");
  });
});

describe("issues", () => {
  it("creates, reads and updates an issue", async () => {
    const created = await api(forge, "POST", issues(), { title: "First", body: "text", labels: ["bug"], assignees: ["alice"] });
    assert.equal(created.status, 201);
    const n = created.body.number;
    assert.equal(created.body.state, "open");
    assert.deepEqual(
      created.body.labels.map((l: { name: string }) => l.name),
      ["bug"],
    );
    assert.equal(created.body.assignees[0].login, "alice");
    assert.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(created.body.html_url, new RegExp(`^${forge.apiUrl}/${forge.repo}/issues/${n}$`));
    assert.notEqual(created.body.id, n);

    const closed = await api(forge, "PATCH", issues(`/${n}`), { state: "closed", state_reason: "not_planned" });
    assert.equal(closed.body.state, "closed");
    assert.equal(closed.body.state_reason, "not_planned");
    assert.ok(closed.body.closed_at);
    const reopened = await api(forge, "PATCH", issues(`/${n}`), { state: "open", title: "First!" });
    assert.equal(reopened.body.state_reason, "reopened");
    assert.equal((await api(forge, "GET", issues(`/${n}`))).body.title, "First!");
  });

  it("validates bodies with 422 Validation Failed", async () => {
    const r = await api(forge, "POST", issues(), { body: "no title" });
    assert.equal(r.status, 422);
    assert.equal(r.body.message, "Validation Failed");
    assert.deepEqual(r.body.errors, [{ resource: "Issue", field: "title", code: "missing_field" }]);
    assert.equal((await api(forge, "GET", issues("/999999"))).status, 404);
  });

  it("filters by state, labels and creator", async () => {
    await api(forge, "POST", issues(), { title: "alice's", labels: ["ready", "bug"] }, { token: forge.users.alice });
    const ready = await api(forge, "GET", issues("?labels=ready,BUG"));
    assert.deepEqual(
      ready.body.map((i: { title: string }) => i.title),
      ["alice's"],
    );
    const byAlice = await api(forge, "GET", issues("?creator=alice&state=all"));
    assert.ok(byAlice.body.every((i: { user: { login: string } }) => i.user.login === "alice"));
    const all = await api(forge, "GET", issues("?state=all&direction=asc"));
    const numbers = all.body.map((i: { number: number }) => i.number);
    assert.deepEqual(
      numbers,
      [...numbers].sort((a, b) => a - b),
    );
  });

  it("paginates with Link headers on the host the client used", async () => {
    for (let i = 0; i < 7; i++) await api(forge, "POST", issues(), { title: `page item ${i}`, labels: ["paged"] });
    const first = await api(forge, "GET", issues("?labels=paged&per_page=3"));
    assert.equal(first.body.length, 3);
    const link = first.headers.get("link") ?? "";
    assert.match(link, /<http:\/\/127\.0\.0\.1:\d+\/repos\/afk\/demo\/issues\?labels=paged&per_page=3&page=2>; rel="next"/);
    assert.match(link, /page=3>; rel="last"/);
    const last = await api(forge, "GET", issues("?labels=paged&per_page=3&page=3"));
    assert.equal(last.body.length, 1);
    const lastLink = last.headers.get("link") ?? "";
    assert.match(lastLink, /page=2>; rel="prev"/);
    assert.match(lastLink, /page=1>; rel="first"/);
    assert.doesNotMatch(lastLink, /rel="next"/);
    const seen = new Set([...first.body, ...(await api(forge, "GET", issues("?labels=paged&per_page=3&page=2"))).body, ...last.body].map((i) => i.number));
    assert.equal(seen.size, 7);
    const capped = await api(forge, "GET", issues("?state=all&per_page=500"));
    assert.ok(capped.body.length <= 100);
  });
});

describe("conditional requests and rate limits", () => {
  it("answers 304 for a matching ETag without spending rate limit", async () => {
    const first = await api(forge, "GET", issues());
    const etag = first.headers.get("etag");
    assert.match(etag ?? "", /^W\/"[0-9a-f]{40}"$/);
    const used = Number(first.headers.get("x-ratelimit-used"));
    const again = await api(forge, "GET", issues(), undefined, { headers: { "if-none-match": etag! } });
    assert.equal(again.status, 304);
    assert.equal(again.body, null);
    assert.equal(Number(again.headers.get("x-ratelimit-used")), used);
    assert.equal(Number(again.headers.get("x-ratelimit-remaining")), 5000 - used);
    const after = await api(forge, "GET", issues());
    assert.equal(Number(after.headers.get("x-ratelimit-used")), used + 1);
  });

  it("a change invalidates the ETag", async () => {
    const first = await api(forge, "GET", issues());
    await api(forge, "POST", issues(), { title: "changes the list" });
    const again = await api(forge, "GET", issues(), undefined, { headers: { "if-none-match": first.headers.get("etag")! } });
    assert.equal(again.status, 200);
  });

  it("reports per-token budgets in headers and /rate_limit", async () => {
    const anon = await api(forge, "GET", repoPath(forge), undefined, { token: null });
    assert.equal(anon.headers.get("x-ratelimit-limit"), "60");
    assert.equal(anon.headers.get("x-ratelimit-resource"), "core");
    const alice = await api(forge, "GET", repoPath(forge), undefined, { token: forge.users.alice });
    assert.equal(alice.headers.get("x-ratelimit-limit"), "5000");
    assert.ok(alice.headers.get("x-github-request-id"));
    const rl = await api(forge, "GET", "/rate_limit", undefined, { token: forge.users.alice });
    assert.equal(rl.body.resources.core.used, Number(alice.headers.get("x-ratelimit-used")));
    assert.equal(rl.body.rate.limit, 5000);
  });
});

describe("labels", () => {
  it("creates, refuses duplicates (any case) and reads by name", async () => {
    const c = await api(forge, "POST", repoPath(forge, "/labels"), { name: "afk-attempt/1", color: "#ff0000", description: "retry" });
    assert.equal(c.status, 201);
    assert.equal(c.body.color, "ff0000");
    const dup = await api(forge, "POST", repoPath(forge, "/labels"), { name: "AFK-ATTEMPT/1" });
    assert.equal(dup.status, 422);
    assert.equal(dup.body.errors[0].code, "already_exists");
    const got = await api(forge, "GET", repoPath(forge, "/labels/afk-attempt%2F1"));
    assert.equal(got.body.description, "retry");
  });

  it("adds and removes labels on an issue; removing an absent one is 404", async () => {
    const n = (await api(forge, "POST", issues(), { title: "labelled" })).body.number;
    const added = await api(forge, "POST", issues(`/${n}/labels`), { labels: ["ready-for-agent", "afk-attempt/1"] });
    assert.deepEqual(added.body.map((l: { name: string }) => l.name).sort(), ["afk-attempt/1", "ready-for-agent"]);
    const removed = await api(forge, "DELETE", issues(`/${n}/labels/afk-attempt%2F1`));
    assert.equal(removed.status, 200);
    assert.deepEqual(
      removed.body.map((l: { name: string }) => l.name),
      ["ready-for-agent"],
    );
    const again = await api(forge, "DELETE", issues(`/${n}/labels/afk-attempt%2F1`));
    assert.equal(again.status, 404);
    assert.equal(again.body.message, "Label does not exist");
  });
});

describe("comments", () => {
  it("creates, lists, edits", async () => {
    const n = (await api(forge, "POST", issues(), { title: "talk" })).body.number;
    const c = await api(forge, "POST", issues(`/${n}/comments`), { body: "hello" }, { token: forge.users.alice });
    assert.equal(c.status, 201);
    assert.equal(c.body.user.login, "alice");
    assert.match(c.body.html_url, new RegExp(`/issues/${n}#issuecomment-${c.body.id}$`));
    const edited = await api(forge, "PATCH", issues(`/comments/${c.body.id}`), { body: "hello again" });
    assert.equal(edited.body.body, "hello again");
    const list = await api(forge, "GET", issues(`/${n}/comments`));
    assert.deepEqual(
      list.body.map((x: { body: string }) => x.body),
      ["hello again"],
    );
    assert.equal((await api(forge, "GET", issues(`/${n}`))).body.comments, 1);
    assert.equal((await api(forge, "GET", issues(`/comments/${c.body.id}`))).body.id, c.body.id);
  });
});

describe("dependencies and sub-issues", () => {
  it("links by id and summarises on the issue", async () => {
    const make = async (title: string) => (await api(forge, "POST", issues(), { title })).body as { number: number; id: number };
    const epic = await make("epic");
    const a = await make("a");
    const b = await make("b");
    const byNumber = await api(forge, "POST", issues(`/${b.number}/dependencies/blocked_by`), { issue_id: a.number });
    assert.equal(byNumber.status, 404, "a number is not an id");
    const dep = await api(forge, "POST", issues(`/${b.number}/dependencies/blocked_by`), { issue_id: a.id });
    assert.equal(dep.status, 201);
    assert.equal(dep.body.number, a.number);
    let bNow = (await api(forge, "GET", issues(`/${b.number}`))).body;
    assert.deepEqual(bNow.issue_dependencies_summary, { blocked_by: 1, blocking: 0, total_blocked_by: 1, total_blocking: 0 });
    assert.deepEqual(
      (await api(forge, "GET", issues(`/${a.number}/dependencies/blocking`))).body.map((i: { number: number }) => i.number),
      [b.number],
    );
    await api(forge, "PATCH", issues(`/${a.number}`), { state: "closed" });
    bNow = (await api(forge, "GET", issues(`/${b.number}`))).body;
    assert.equal(bNow.issue_dependencies_summary.blocked_by, 0);
    assert.equal(bNow.issue_dependencies_summary.total_blocked_by, 1);
    const del = await api(forge, "DELETE", issues(`/${b.number}/dependencies/blocked_by/${a.id}`));
    assert.equal(del.status, 200);
    assert.deepEqual((await api(forge, "GET", issues(`/${b.number}/dependencies/blocked_by`))).body, []);

    const sub = await api(forge, "POST", issues(`/${epic.number}/sub_issues`), { sub_issue_id: a.id });
    assert.equal(sub.status, 201);
    await api(forge, "POST", issues(`/${epic.number}/sub_issues`), { sub_issue_id: b.id });
    const e = (await api(forge, "GET", issues(`/${epic.number}`))).body;
    assert.deepEqual(e.sub_issues_summary, { total: 2, completed: 1, percent_completed: 50 });
    const parent = await api(forge, "GET", issues(`/${a.number}/parent`));
    assert.equal(parent.body.number, epic.number);
    assert.equal((await api(forge, "GET", issues(`/${a.number}`))).body.parent_issue_url, `${forge.apiUrl}${issues(`/${epic.number}`)}`);
    const rm = await api(forge, "DELETE", issues(`/${epic.number}/sub_issue`), { sub_issue_id: a.id });
    assert.equal(rm.status, 200);
    assert.equal((await api(forge, "GET", issues(`/${a.number}/parent`))).status, 404);
    assert.deepEqual(
      (await api(forge, "GET", issues(`/${epic.number}/sub_issues`))).body.map((i: { number: number }) => i.number),
      [b.number],
    );
  });
});
