// The local forge's `GET /repos/{owner}/{repo}/activity` over real HTTP, real git and a real
// workflow run: a user's pushes (creation, fast-forward, force push, deletion), a push git
// refused in part, REST ref writes and a PR merge, a run token's pushes (github-actions[bot]),
// filters, cursor pagination, 304 on an unchanged listing, and the records surviving a restart
// with the newest 5,000 kept.
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { STATE_FILE } from "../server/forge-emulator/store-persist.js";
import { startForge } from "../server/forge-emulator/index.js";
import { createGitHubForge } from "../server/gh/github-forge.js";
import { api, cloneRepo, commitFile, forgeForFile, git, openPull, repoPath, tempDir, type ApiResponse, type TestForge } from "./support/forge-fixtures.js";

const ZERO = "0".repeat(40);

const PUSHER = `name: pusher
on: workflow_dispatch
jobs:
  push:
    steps:
      - uses: actions/checkout@v4
      - run: |
          git -c user.name=runner -c user.email=runner@example.com commit -q --allow-empty -m "one"
          git push -q origin HEAD:refs/heads/afk/run-$GITHUB_RUN_ID
          git -c user.name=runner -c user.email=runner@example.com commit -q --allow-empty -m "two"
          git push -q origin HEAD:refs/heads/afk/run-$GITHUB_RUN_ID
`;

let forge: TestForge;
let work: string;
let alice: string;
let aliceId: number;

forgeForFile({ users: ["alice"] }, async (f, w) => {
  [forge, work] = [f, w];
  await commitFile(work, ".github/workflows/pusher.yml", PUSHER);
  await git(work, "push", "--quiet", "origin", "HEAD:main");
  alice = await cloneRepo(forge, forge.users.alice);
  aliceId = (await api(forge, "GET", "/user", undefined, { token: forge.users.alice! })).body.id;
});

interface Activity {
  id: number;
  ref: string;
  before: string;
  after: string;
  timestamp: string;
  activity_type: string;
  actor: { login: string; id: number; type: string } | null;
}

async function activity(query = "", token?: string): Promise<ApiResponse<Activity[]>> {
  const r = await api<Activity[]>(forge, "GET", repoPath(forge, `/activity${query}`), undefined, token ? { token } : {});
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r;
}

const rev = async (dir: string, what = "HEAD"): Promise<string> => (await git(dir, "rev-parse", what)).stdout;
const brief = (a: Activity): [string, string, string, string, string | undefined] => [a.activity_type, a.ref, a.before, a.after, a.actor?.login];

describe("pushes over git", () => {
  it("records a user's creation, fast-forward, force push and deletion of a branch, newest first", async () => {
    await git(alice, "checkout", "--quiet", "-B", "feature", "origin/main");
    const one = await commitFile(alice, "f.txt", "one\n");
    await git(alice, "push", "--quiet", "origin", "feature");
    const two = await commitFile(alice, "f.txt", "two\n");
    await git(alice, "push", "--quiet", "origin", "feature");
    await git(alice, "reset", "--quiet", "--hard", one);
    const three = await commitFile(alice, "f.txt", "three\n");
    await git(alice, "push", "--quiet", "--force", "origin", "feature");
    await git(alice, "push", "--quiet", "origin", ":feature");

    const list = (await activity("?ref=feature")).body;
    assert.deepEqual(list.map(brief), [
      ["branch_deletion", "refs/heads/feature", three, ZERO, "alice"],
      ["force_push", "refs/heads/feature", two, three, "alice"],
      ["push", "refs/heads/feature", one, two, "alice"],
      ["branch_creation", "refs/heads/feature", ZERO, one, "alice"],
    ]);
    assert.deepEqual(
      list.map((a) => a.id),
      [...list.map((a) => a.id)].sort((x, y) => y - x),
    );
    assert.ok(list.every((a) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(a.timestamp)));
    assert.deepEqual(list[0]!.actor && [list[0]!.actor.id, list[0]!.actor.type], [aliceId, "User"]);
    // The full ref name selects the same records.
    assert.deepEqual((await activity("?ref=refs/heads/feature")).body, list);
  });

  it("records only the commands of a push that landed", async () => {
    await git(alice, "checkout", "--quiet", "-B", "partial", "origin/main");
    const sha = await commitFile(alice, "p.txt", "p\n");
    // refs/pull/* is hidden: git refuses that command and takes the other one.
    await assert.rejects(git(alice, "push", "--quiet", "origin", "HEAD:refs/heads/partial", "HEAD:refs/pull/1/head"));
    assert.equal(await rev(forge.bareRepo, "refs/heads/partial"), sha);
    assert.deepEqual((await activity("?ref=partial")).body.map(brief), [["branch_creation", "refs/heads/partial", ZERO, sha, "alice"]]);
    assert.deepEqual((await activity("?ref=refs/pull/1/head")).body, []);
  });
});

describe("writes through the REST API", () => {
  it("records ref creates, updates and deletes, a non-branch ref is never a force push, and a merge", async () => {
    const main = await rev(forge.bareRepo, "refs/heads/main");
    await git(work, "fetch", "--quiet", "origin");
    await git(work, "checkout", "--quiet", "-B", "side", "origin/main");
    const side = await commitFile(work, "side.txt", "side\n");
    await git(work, "push", "--quiet", "origin", "side");
    const refs = repoPath(forge, "/git/refs");
    assert.equal((await api(forge, "POST", refs, { ref: "refs/afk/claim/1", sha: side })).status, 201);
    assert.equal((await api(forge, "PATCH", `${refs}/afk%2Fclaim%2F1`, { sha: main, force: true })).status, 200);
    assert.equal((await api(forge, "DELETE", `${refs}/afk%2Fclaim%2F1`)).status, 204);
    assert.deepEqual((await activity("?ref=refs/afk/claim/1&direction=asc")).body.map(brief), [
      ["branch_creation", "refs/afk/claim/1", ZERO, side, "afk-bot"],
      ["push", "refs/afk/claim/1", side, main, "afk-bot"],
      ["branch_deletion", "refs/afk/claim/1", main, ZERO, "afk-bot"],
    ]);
    // A branch moved back through the API is a force push.
    assert.equal((await api(forge, "PATCH", `${refs}/heads/side`, { sha: main, force: true })).status, 200);
    assert.deepEqual(brief((await activity("?ref=side")).body[0]!), ["force_push", "refs/heads/side", side, main, "afk-bot"]);

    const pr = await openPull(forge, work, "to-merge");
    const merged = await api(forge, "PUT", repoPath(forge, `/pulls/${pr.number}/merge`), { merge_method: "merge" });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    assert.deepEqual(brief((await activity("?ref=main&activity_type=pr_merge")).body[0]!), ["pr_merge", "refs/heads/main", main, merged.body.sha, "afk-bot"]);
  });
});

describe("pushes by a workflow run's token", () => {
  it("shows github-actions[bot] creating and then pushing to the run's branch", async () => {
    const d = await api(forge, "POST", repoPath(forge, "/actions/workflows/pusher.yml/dispatches"), { ref: "main", return_run_details: true });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const id = d.body.workflow_run_id as number;
    let run = (await api(forge, "GET", repoPath(forge, `/actions/runs/${id}`))).body;
    for (let i = 0; i < 1200 && run.status !== "completed"; i++) {
      await sleep(100);
      run = (await api(forge, "GET", repoPath(forge, `/actions/runs/${id}`))).body;
    }
    assert.equal(run.conclusion, "success");
    const ref = `refs/heads/afk/run-${id}`;
    const tip = await rev(forge.bareRepo, ref);
    const first = await rev(forge.bareRepo, `${ref}^`);
    assert.equal(await rev(forge.bareRepo, `${first}^`), run.head_sha);
    const bot = (await activity(`?actor=${encodeURIComponent("github-actions[bot]")}&direction=asc`)).body;
    assert.deepEqual(bot.map(brief), [
      ["branch_creation", ref, ZERO, first, "github-actions[bot]"],
      ["push", ref, first, tip, "github-actions[bot]"],
    ]);
    assert.deepEqual(bot[0]!.actor && [bot[0]!.actor.id, bot[0]!.actor.type], [41898282, "Bot"]);
    assert.deepEqual(
      (await activity(`?ref=afk/run-${id}`)).body.map((a) => a.id).reverse(),
      bot.map((a) => a.id),
    );
  });
});

describe("listing", () => {
  it("filters by type and actor, and refuses values outside GitHub's", async () => {
    const all = (await activity("?per_page=100")).body;
    const force = (await activity("?activity_type=force_push&per_page=100")).body;
    assert.deepEqual(
      force,
      all.filter((a) => a.activity_type === "force_push"),
    );
    assert.equal(force.length, 2);
    const byAlice = (await activity("?actor=ALICE&per_page=100")).body;
    assert.deepEqual(
      byAlice,
      all.filter((a) => a.actor?.login === "alice"),
    );
    assert.equal(byAlice.length, 5);
    for (const bad of ["activity_type=merge", "direction=up", "time_period=decade", "after=nonsense"]) {
      assert.equal((await api(forge, "GET", repoPath(forge, `/activity?${bad}`))).status, 422, bad);
    }
    assert.deepEqual((await activity("?time_period=day&per_page=100")).body, all);
  });

  it("pages with before/after cursors in the Link header, both ways", async () => {
    const all = (await activity("?per_page=100")).body.map((a) => a.id);
    assert.ok(all.length > 5);
    const next = (r: ApiResponse, rel: string): string | null => {
      const m = new RegExp(`<([^>]+)>; rel="${rel}"`).exec(r.headers.get("link") ?? "");
      return m ? m[1]! : null;
    };
    // Every page's ids in `rel` order from `r`, and the last page reached.
    const walk = async (r: ApiResponse<Activity[]>, rel: "next" | "prev"): Promise<{ pages: number[][]; last: ApiResponse<Activity[]> }> => {
      const pages: number[][] = [];
      for (;;) {
        pages.push(r.body.map((a) => a.id));
        const url = next(r, rel);
        if (!url) return { pages, last: r };
        r = await api<Activity[]>(forge, "GET", url);
      }
    };
    const first: ApiResponse<Activity[]> = await activity("?per_page=2");
    assert.equal(next(first, "prev"), null);
    const forward = await walk(first, "next");
    assert.deepEqual(forward.pages.flat(), all);
    // From the last page back to the first through rel="prev".
    const back = await walk(forward.last, "prev");
    assert.deepEqual(back.pages.reverse().flat(), all);
    assert.deepEqual(
      (await activity("?direction=asc&per_page=100")).body.map((a) => a.id),
      [...all].reverse(),
    );
  });

  it("the actions runtime's pushesBy pages back to `since` past a page of 100 (twenty runs' beats fill one in five minutes), and stops there", async () => {
    const api0 = createGitHubForge({ repo: forge.repo, token: forge.users.alice!, baseUrl: forge.apiUrl, fast: true }).actions();
    const early = await commitFile(alice, "early.txt", "early\n", "early");
    await git(alice, "push", "--quiet", "origin", `${early}:refs/heads/afk/early`);
    await sleep(1100); // activity timestamps are whole seconds: `since` is the start of a second after the early push's
    const since = Math.floor(Date.now() / 1000) * 1000;
    const head = await commitFile(alice, "many.txt", "many\n", "many");
    // 150 branches in one push: 150 records, newer than `since`, in front of the early one.
    const refspecs = Array.from({ length: 150 }, (_, i) => `${head}:refs/heads/afk/many-${i}`);
    await git(alice, "push", "--quiet", "origin", ...refspecs);
    const all = await api0.pushesBy("alice", { since: since - 60_000 });
    assert.ok(all.length >= 151, `${all.length} pushes read`);
    assert.ok(
      all.some((p) => p.ref === "refs/heads/afk/early"),
      "the push before the 150 is on the second page",
    );
    const recent = await api0.pushesBy("alice", { since });
    assert.equal(recent.filter((p) => p.ref.startsWith("refs/heads/afk/many-")).length, 150);
    assert.ok(!recent.some((p) => p.ref === "refs/heads/afk/early"), "nothing older than since");
    const onePage = await api0.pushesBy("alice", { since: since - 60_000, maxPages: 1 });
    assert.equal(onePage.length, 100);
    const onto = await api0.pushesBy("alice", { ref: "refs/heads/afk/early" });
    assert.deepEqual(
      onto.map((p) => [p.ref, p.after]),
      [["refs/heads/afk/early", early]],
    );
  });

  it("answers an unchanged listing 304 at no rate-limit cost, and a new push changes it", async () => {
    const first = await activity();
    const etag = first.headers.get("etag");
    assert.ok(etag);
    const remaining = first.headers.get("x-ratelimit-remaining");
    const again = await api(forge, "GET", repoPath(forge, "/activity"), undefined, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("x-ratelimit-remaining"), remaining);
    await git(alice, "checkout", "--quiet", "-B", "later", "origin/main");
    const sha = await commitFile(alice, "later.txt", "later\n");
    await git(alice, "push", "--quiet", "origin", "later");
    const changed = await api<Activity[]>(forge, "GET", repoPath(forge, "/activity"), undefined, { headers: { "if-none-match": etag } });
    assert.equal(changed.status, 200);
    assert.deepEqual(brief(changed.body[0]!), ["branch_creation", "refs/heads/later", ZERO, sha, "alice"]);
  });
});

describe("persistence", () => {
  it("keeps the records across a restart, the newest 5,000", async () => {
    const dir = await tempDir("afk-activity-");
    let running = await startForge({ dir });
    const sha = (await git(running.bareRepo, "rev-parse", "refs/heads/main")).stdout;
    const refs = `/repos/${running.repo}/git/refs`;
    assert.equal((await api(running, "POST", refs, { ref: "refs/afk/claim/1", sha })).status, 201);
    await running.close();
    const file = join(dir, STATE_FILE);
    const state = JSON.parse(await readFile(file, "utf8"));
    assert.equal(state.activity.length, 1);
    // 5,000 older records in front of the real one (ids below the forge's first id).
    const old = Array.from({ length: 5000 }, (_, i) => ({ ...state.activity[0], id: i + 1, ref: `refs/afk/old/${i + 1}` }));
    state.activity = [...old, ...state.activity];
    await writeFile(file, JSON.stringify(state));
    running = await startForge({ dir });
    try {
      assert.equal((await api(running, "DELETE", `${refs}/afk%2Fclaim%2F1`)).status, 204);
      // 5,002 records: the two oldest made room.
      const oldest = await api<Activity[]>(running, "GET", `/repos/${running.repo}/activity?direction=asc&per_page=1`);
      assert.equal(oldest.body[0]!.id, 3);
      const newest = await api<Activity[]>(running, "GET", `/repos/${running.repo}/activity?per_page=2`);
      assert.deepEqual(newest.body.map(brief), [
        ["branch_deletion", "refs/afk/claim/1", sha, ZERO, "afk-bot"],
        ["branch_creation", "refs/afk/claim/1", ZERO, sha, "afk-bot"],
      ]);
    } finally {
      await running.close();
    }
  });
});
