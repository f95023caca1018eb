// The local forge's lifecycle and control surface: state that survives a restart, seeds,
// coalesced state writes, fault injection, request accounting, runtime users, forgeMain as
// a process, and a size check on listing a large backlog.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { StatePersister } from "../server/forge-emulator/store-persist.js";
import { emptyState } from "../server/forge-emulator/state.js";
import { api, cloneRepo, git, openPull, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

describe("restart persistence", () => {
  it("restores users, tokens, issues, labels, comments, PRs and counters", async () => {
    const dir = await tempDir();
    const first = await startTestForge({ dir, users: ["alice"] });
    let prNumber: number;
    try {
      const issue = (await api(first, "POST", repoPath(first, "/issues"), { title: "survives", labels: ["kept"] })).body;
      await api(first, "POST", repoPath(first, `/issues/${issue.number}/comments`), { body: "still here" }, { token: first.users.alice });
      const work = await cloneRepo(first);
      prNumber = (await openPull(first, work, "persisted")).number;
      await api(first, "POST", repoPath(first, "/git/refs"), { ref: "refs/afk/claim/1", sha: (await git(work, "rev-parse", "origin/main")).stdout });
    } finally {
      await first.close();
    }
    const second = await startTestForge({ dir });
    try {
      assert.equal(second.token, first.token);
      assert.equal(second.users.alice, first.users.alice);
      const issue = await api(second, "GET", repoPath(second, "/issues/1"));
      assert.equal(issue.body.title, "survives");
      assert.equal(issue.body.comments, 1);
      assert.deepEqual(
        issue.body.labels.map((l: { name: string }) => l.name),
        ["kept"],
      );
      const pr = await api(second, "GET", repoPath(second, `/pulls/${prNumber}`));
      assert.equal(pr.body.head.ref, "persisted");
      assert.equal(pr.body.mergeable_state, "clean");
      assert.equal((await api(second, "GET", repoPath(second, "/git/ref/afk/claim/1"))).status, 200);
      const next = await api(second, "POST", repoPath(second, "/issues"), { title: "next" }, { token: second.users.alice });
      assert.equal(next.body.number, prNumber + 1);
      assert.ok(next.body.id > pr.body.id);
      assert.equal((await api(second, "GET", "/user", undefined, { token: first.users.alice })).body.login, "alice");
    } finally {
      await second.dispose();
    }
  });

  it("refuses to reopen a directory under another repository name", async () => {
    const dir = await tempDir();
    const f = await startTestForge({ dir, repo: "octo/one" });
    await f.close();
    await assert.rejects(startTestForge({ dir, repo: "octo/two" }), /holds octo\/one/);
    const again = await startTestForge({ dir });
    assert.equal(again.repo, "octo/one");
    await again.dispose();
  });
});

describe("state writes", () => {
  it("coalesces a burst of changes into one atomic write", async () => {
    const dir = await tempDir();
    let counter = 0;
    const persister = new StatePersister(dir, () => ({ ...emptyState("a/b", "main"), nextNumber: counter }));
    for (let i = 0; i < 1000; i++) {
      counter = i + 1;
      persister.schedule();
    }
    await persister.flush();
    assert.equal(persister.writes, 1);
    const saved = JSON.parse(await readFile(join(dir, "forge-state.json"), "utf8"));
    assert.equal(saved.nextNumber, 1000);
    persister.schedule();
    await persister.flush();
    assert.equal(persister.writes, 2);
  });
});

describe("seed", () => {
  it("creates files, labels and a backlog with relations on a fresh forge only", async () => {
    const dir = await tempDir();
    const seedFile = join(await tempDir("afk-seed-"), "seed.json");
    await writeFile(
      seedFile,
      JSON.stringify({
        files: { "README.md": "# seeded\n", "src/app.txt": "app\n" },
        labels: [{ name: "ready-for-agent", color: "0e8a16", description: "pick me" }],
        issues: [
          { title: "epic", sub_issues: [2, 3] },
          { title: "first", labels: ["ready-for-agent"], author: "human" },
          { title: "second", labels: ["ready-for-agent"], blocked_by: [2] },
          { title: "old", state: "closed" },
        ],
      }),
    );
    const forge = await startTestForge({ dir, seed: seedFile });
    try {
      assert.equal((await git(forge.bareRepo, "show", "main:src/app.txt")).stdout, "app");
      const label = await api(forge, "GET", repoPath(forge, "/labels/ready-for-agent"));
      assert.equal(label.body.description, "pick me");
      const list = await api(forge, "GET", repoPath(forge, "/issues?labels=ready-for-agent&direction=asc"));
      assert.deepEqual(
        list.body.map((i: { title: string }) => i.title),
        ["first", "second"],
      );
      assert.equal(list.body[0].user.login, "human");
      assert.equal(list.body[1].issue_dependencies_summary.blocked_by, 1);
      const epic = await api(forge, "GET", repoPath(forge, "/issues/1"));
      assert.equal(epic.body.sub_issues_summary.total, 2);
      assert.equal((await api(forge, "GET", repoPath(forge, "/issues/4"))).body.state, "closed");
    } finally {
      await forge.close();
    }
    // Reopening with the seed again changes nothing.
    const again = await startTestForge({ dir, seed: seedFile });
    assert.equal((await api(again, "GET", repoPath(again, "/issues?state=all"))).body.length, 4);
    await again.dispose();
  });
});

describe("control surface", () => {
  let forge: TestForge;
  before(async () => {
    forge = await startTestForge();
  });
  after(async () => {
    await forge.dispose();
    assert.deepEqual(forge.violations(), []);
  });

  it("injects errors on a chosen route only, and clears them", async () => {
    await api(forge, "POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/issues", error_rate: 1 });
    const failed = await api(forge, "GET", repoPath(forge, "/issues"));
    assert.ok([500, 502].includes(failed.status), String(failed.status));
    assert.equal((await api(forge, "GET", repoPath(forge))).status, 200);
    assert.equal((await api(forge, "DELETE", "/_forge/faults")).status, 204);
    assert.equal((await api(forge, "GET", repoPath(forge, "/issues"))).status, 200);
  });

  it("injects secondary rate limits with retry-after, and latency", async () => {
    await api(forge, "POST", "/_forge/faults", { route: "/labels", secondary_rate_limit: 1 });
    const limited = await api(forge, "GET", repoPath(forge, "/labels"));
    assert.equal(limited.status, 403);
    assert.equal(limited.headers.get("retry-after"), "1");
    assert.match(limited.body.message, /secondary rate limit/);
    await api(forge, "DELETE", "/_forge/faults");
    // Latency on one route: a request to another route, sent after it, answers first.
    await api(forge, "POST", "/_forge/faults", { route: "GET /user", latency_ms: 3_000 });
    const order: string[] = [];
    const slow = api(forge, "GET", "/user").then((r) => order.push(`user ${r.status}`));
    await api(forge, "GET", repoPath(forge, "/labels")).then((r) => order.push(`labels ${r.status}`));
    await slow;
    assert.deepEqual(order, ["labels 200", "user 200"]);
    await api(forge, "DELETE", "/_forge/faults");
  });

  it("random faults follow a seeded RNG", async () => {
    const run = async (): Promise<number[]> => {
      await api(forge, "DELETE", "/_forge/faults");
      await api(forge, "POST", "/_forge/faults", { route: "GET /user", error_rate: 0.5, seed: 42 });
      const out: number[] = [];
      for (let i = 0; i < 12; i++) out.push((await api(forge, "GET", "/user")).status);
      return out;
    };
    const a = await run();
    assert.deepEqual(await run(), a);
    assert.ok(a.includes(200) && a.some((s) => s >= 500), a.join(","));
    await api(forge, "DELETE", "/_forge/faults");
  });

  it("accounts requests per route template; 304s are not counted", async () => {
    await api(forge, "POST", "/_forge/accounting/reset");
    const first = await api(forge, "GET", repoPath(forge, "/issues"));
    await api(forge, "GET", repoPath(forge, "/issues"), undefined, { headers: { "if-none-match": first.headers.get("etag")! } });
    await api(forge, "POST", repoPath(forge, "/issues"), { title: "counted" });
    await api(forge, "GET", repoPath(forge, "/git/ref/afk%2Fclaim%2F9"));
    const acc = (await api(forge, "GET", "/_forge/accounting")).body;
    assert.deepEqual([acc.total, acc.counted, acc.not_modified], [4, 3, 1]);
    assert.deepEqual(acc.by_route["GET /repos/{owner}/{repo}/issues"], { total: 2, counted: 1, not_modified: 1 });
    assert.deepEqual(acc.by_route["POST /repos/{owner}/{repo}/issues"], { total: 1, counted: 1, not_modified: 0 });
    assert.equal(acc.by_route["GET /repos/{owner}/{repo}/git/ref/{ref}"].total, 1);
    assert.deepEqual(acc.by_status, { "200": 1, "304": 1, "201": 1, "404": 1 });
  });

  it("adds users at runtime", async () => {
    const r = await api(forge, "POST", "/_forge/users", { login: "bob" }, { token: null });
    assert.equal(r.status, 201);
    assert.match(r.body.token, /^afkf_[0-9a-f]{32}$/);
    assert.equal((await api(forge, "GET", "/user", undefined, { token: r.body.token })).body.login, "bob");
    assert.equal((await api(forge, "POST", "/_forge/users", { login: "-bad" })).status, 422);
  });
});

describe("forgeMain", () => {
  it("prints one JSON line, serves, and shuts down cleanly on SIGTERM", async () => {
    const dir = await tempDir();
    // Runs from source under tsx and from dist/ after `npm run build`: use this file's extension.
    const fromSource = import.meta.url.endsWith(".ts");
    const index = fileURLToPath(new URL(`../server/forge-emulator/index.${fromSource ? "ts" : "js"}`, import.meta.url));
    const script = `import { forgeMain } from ${JSON.stringify(index)};\nawait forgeMain({ dir: ${JSON.stringify(dir)} }, (l) => process.stdout.write(l + "\\n"));\n`;
    const loader = fromSource ? ["--import", "tsx"] : [];
    const child = spawn(process.execPath, [...loader, "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((ok, fail) => {
      let buf = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        buf += d;
        if (buf.includes("\n")) ok(buf.split("\n")[0]!);
      });
      child.on("exit", (code) => fail(new Error(`forgeMain exited early (${code})`)));
    });
    const info = JSON.parse(line);
    assert.deepEqual(Object.keys(info).sort(), ["api_url", "git_url", "repo", "token", "users"]);
    const me = await fetch(`${info.api_url}/user`, { headers: { authorization: `Bearer ${info.token}` } });
    assert.equal(((await me.json()) as { login: string }).login, "afk-bot");
    const exited = new Promise<number | null>((ok) => child.on("exit", (code) => ok(code)));
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
    const state = JSON.parse(await readFile(join(dir, "forge-state.json"), "utf8"));
    assert.equal(state.users[0].token, info.token);
  });
});

describe("a large backlog", () => {
  it("lists 1,000 issues page by page quickly", async () => {
    const seedFile = join(await tempDir("afk-seed-"), "seed.json");
    const issues = Array.from({ length: 1000 }, (_, i) => ({
      title: `issue ${i + 1}`,
      labels: i % 2 ? ["ready-for-agent"] : [],
      blocked_by: i > 0 && i % 10 === 0 ? [i] : [],
    }));
    await writeFile(seedFile, JSON.stringify({ issues }));
    const forge = await startTestForge({ seed: seedFile });
    try {
      // Warm the schema validator so the timing below measures the forge.
      await api(forge, "GET", repoPath(forge, "/issues?per_page=1"));
      const t = performance.now();
      let seen = 0;
      for (let round = 0; round < 3; round++) {
        for (let page = 1; page <= 10; page++) {
          const r = await api(forge, "GET", repoPath(forge, `/issues?per_page=100&page=${page}`));
          seen += r.body.length;
        }
      }
      const ms = performance.now() - t;
      assert.equal(seen, 3000);
      // 30 pages of 100 issues, validated against the schema in this process: generous bound.
      assert.ok(ms < 15_000, `${Math.round(ms)} ms`);
    } finally {
      await forge.dispose();
    }
  });
});
