// Human approvals honoured, for real: a local forge whose base requires one approving review,
// a fleet with scripted workers (test/support/workers/scripted.sh). A green PR is held as
// awaiting_review (status, the board, one note on the PR) with its claim kept; it lands once a
// second forge user approves it. A request for changes ends the attempt, and the reviewer's
// words reach the next worker's brief. The fleet never approves anything itself.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const REPO = "afk/demo";
const NOTE = "<!-- afk:awaiting-review -->";
const ASK = "Please call the file greeting.txt, not issue-N.txt";

let forge: TestForge;
let host: FleetHost;
let planDir: string;

before(async () => {
  forge = await startTestForge({ users: ["alice", "bob"] });
  planDir = await tempDir("afk-review-plan-");
});

after(async () => {
  await host?.stop({ repo: REPO, stop_workers: true }).catch(() => undefined);
  await host?.close();
  await forge?.dispose();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const as = (login: string) => ({ token: forge.users[login]! });

async function pullFor(n: number, state = "all"): Promise<Json | undefined> {
  const r = await api(forge, "GET", repoPath(forge, `/pulls?state=${state}&per_page=100`));
  return (r.body as Json[]).find((p) => new RegExp(`^afk/${n}-`).test(p.head.ref));
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) {
      const logs = await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 30 });
      assert.fail(`timed out waiting for ${what}\n${logs.records.map((r) => `  ${String(r.event)}: ${String(r.msg)}`).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function mineRow(n: number): Promise<Json | undefined> {
  const status = await host.status({ repo: REPO, scope: "project" });
  return (status.plan?.mine as Json[] | undefined)?.find((m) => m.issue === n);
}

describe("required approvals", () => {
  it("holds a green PR for a human's approval, lands it once approved, and retries on changes requested", { timeout: 300_000 }, async () => {
    await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" });
    const numbers: number[] = [];
    for (const title of ["greet in English", "greet in French"]) {
      numbers.push((await api(forge, "POST", repoPath(forge, "/issues"), { title, labels: ["ready-for-agent"] })).body.number as number);
    }
    const [approved, refused] = numbers as [number, number];
    for (const n of numbers) await writeFile(join(planDir, String(n)), "commit\n");
    const protection = await api(forge, "PUT", repoPath(forge, "/branches/main/protection"), {
      required_status_checks: null,
      enforce_admins: true,
      required_pull_request_reviews: { required_approving_review_count: 1 },
      restrictions: null,
    });
    assert.equal(protection.status, 200);

    host = new FleetHost({
      env: { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: await tempDir("afk-review-state-"), AFK_USER_PLAN: planDir, PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
      timeScale: 0.05,
    });
    await host.start({
      repo: REPO,
      worker_command: `sh ${WORKER}`,
      target: 2,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: "true" }, landing: { strategy: "squash" }, pacing: { busy_seconds: 10, idle_seconds: 10, long_idle_seconds: 10 } },
    });

    // Held: both PRs are green and wait for a human, claims kept, one note per PR saying what is needed.
    for (const n of numbers) {
      const row = await until(`#${n} awaiting_review`, async () => {
        const m = await mineRow(n);
        return m?.status === "awaiting_review" ? m : null;
      });
      assert.match(row.review, /needs 1 more approving review from someone with write access/);
    }
    for (const n of numbers) {
      const pr = (await pullFor(n, "open"))!;
      await until(`the review note on PR #${pr.number}`, async () => {
        const c = await api(forge, "GET", repoPath(forge, `/issues/${pr.number}/comments`));
        return (c.body as Json[]).some((x) => x.body.includes(NOTE));
      });
    }
    const report = await until("a tick that reports the wait", async () => {
      const s = await host.status({ repo: REPO, scope: "project" });
      return s.last_tick?.includes("awaiting review") ? s.last_tick : null;
    });
    assert.match(report, new RegExp(`#${approved}`));
    const board = await api(forge, "GET", repoPath(forge, `/issues/${approved}/comments`));
    assert.ok((board.body as Json[]).some((c) => c.body.includes("waiting for a human's approving review")), "the board says why it waits");
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${approved}`))).body.state, "open");

    // Alice approves the first: it lands.
    const first = (await pullFor(approved, "open"))!;
    assert.equal((await api(forge, "POST", repoPath(forge, `/pulls/${first.number}/reviews`), { event: "APPROVE", body: "" }, as("alice"))).status, 200);
    await until(`#${approved} merged`, async () => (await pullFor(approved))?.merged_at);
    await until(`#${approved} closed`, async () => (await api(forge, "GET", repoPath(forge, `/issues/${approved}`))).body.state === "closed");

    // Bob asks for changes on the second: the attempt ends and his words reach the next brief.
    const second = (await pullFor(refused, "open"))!;
    assert.equal((await api(forge, "POST", repoPath(forge, `/pulls/${second.number}/reviews`), { event: "REQUEST_CHANGES", body: ASK }, as("bob"))).status, 200);
    const brief = join(planDir, `${refused}.2.brief`);
    await until("the retry's brief", async () => existsSync(brief) && (await readFile(brief, "utf8")).includes(ASK));
    const old = await api(forge, "GET", repoPath(forge, `/pulls/${second.number}`));
    assert.equal(old.body.state, "closed", "the refused PR is closed by the retry");
    assert.equal(old.body.merged, false);
    const labels = (await api(forge, "GET", repoPath(forge, `/issues/${refused}`))).body.labels.map((l: Json) => l.name);
    assert.ok(labels.includes("afk-attempt/1"), `attempt label set: ${labels.join(", ")}`);

    // The retry's PR waits again, and lands once approved.
    const next = await until("the retry's PR", async () => {
      const p = await pullFor(refused, "open");
      return p && p.number !== second.number ? p : null;
    });
    await until(`#${refused} awaiting_review again`, async () => (await mineRow(refused))?.status === "awaiting_review");
    await api(forge, "POST", repoPath(forge, `/pulls/${next.number}/reviews`), { event: "APPROVE", body: "better" }, as("bob"));
    await until(`#${refused} closed`, async () => (await api(forge, "GET", repoPath(forge, `/issues/${refused}`))).body.state === "closed");

    // The fleet never reviewed anything itself, and left no claim behind.
    for (const pr of [first.number, second.number, next.number]) {
      const reviews = await api(forge, "GET", repoPath(forge, `/pulls/${pr}/reviews`));
      assert.ok((reviews.body as Json[]).every((r) => r.user.login !== "afk-bot"), `PR #${pr}: no review by the fleet's login`);
    }
    const notes = await api(forge, "GET", repoPath(forge, `/issues/${first.number}/comments`));
    assert.equal((notes.body as Json[]).filter((c) => c.body.includes(NOTE)).length, 1, "one note per PR, not one per tick");
    await until("no claim left", async () => (await git(planDir, "ls-remote", forge.gitUrl, "refs/afk/claim/*")).stdout === "");
  });
});
