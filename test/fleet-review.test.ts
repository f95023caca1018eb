// Review before landing, for real: a local forge, a fleet with scripted workers
// (test/support/workers/scripted.sh) and scripted reviewers (reviewer.sh).
// Human approvals: a base that requires one approving review holds a green PR as awaiting_review
// (status, the board, one note on the PR) with its claim kept; it lands once a second forge user
// approves it. A request for changes ends the attempt, and the reviewer's words reach the next
// worker's brief. The fleet never approves anything itself.
// The review stage: approve lands, fix pushes the reviewer's commit and lands it, refute sends the
// findings to the next attempt, a hanging reviewer is killed and the review runs again.
import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { api, git, protectBranch, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const REVIEWER = join(ROOT, "test", "support", "workers", "reviewer.sh");
const REPO = "afk/demo";
const NOTE = "<!-- afk:awaiting-review -->";
const ASK = "Please call the file greeting.txt, not issue-N.txt";

let forge: TestForge;
let host: FleetHost;
let planDir: string;

beforeEach(async () => {
  forge = await startTestForge({ users: ["alice", "bob"] });
  planDir = await tempDir("afk-review-plan-");
});

afterEach(async () => {
  await host?.stop({ repo: REPO, stop_workers: true }).catch(() => undefined);
  await host?.close();
  await forge?.dispose();
});

/** Issues with the ready label, each with its scripted worker's plan ("commit" by default). */
async function issues(titles: string[], bodies: string[] = []): Promise<number[]> {
  await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" });
  const numbers: number[] = [];
  for (const [i, title] of titles.entries()) {
    const n = (await api(forge, "POST", repoPath(forge, "/issues"), { title, body: bodies[i] ?? "", labels: ["ready-for-agent"] })).body.number as number;
    await writeFile(join(planDir, String(n)), "commit\n");
    numbers.push(n);
  }
  return numbers;
}

async function startFleet(config: Record<string, unknown>, target: number, autoMerge = true): Promise<void> {
  host = new FleetHost({
    env: {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: await tempDir("afk-review-state-"),
      AFK_USER_PLAN: planDir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    },
    timeScale: 0.05,
  });
  await host.start({
    repo: REPO,
    worker_command: `sh ${WORKER}`,
    target,
    auto_merge: autoMerge,
    config: {
      gate: { ci: "local", local_command: "true" },
      landing: { strategy: "squash", allow_untested_race: true },
      pacing: { busy_seconds: 10, idle_seconds: 10, long_idle_seconds: 10 },
      board: { settle_seconds: 0 },
      ...config,
    },
  });
}

async function closed(n: number): Promise<boolean> {
  return (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.state === "closed";
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const as = (login: string) => ({ token: forge.users[login]! });

async function pullFor(n: number, state = "all"): Promise<Json | undefined> {
  const r = await api(forge, "GET", repoPath(forge, `/pulls?state=${state}&per_page=100`));
  return (r.body as Json[]).find((p) => new RegExp(`^afk/${n}-`).test(p.head.ref));
}

function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 180_000): Promise<T> {
  return waitFor(what, probe, {
    deadlineMs: timeoutMs,
    intervalMs: 250,
    explain: async () =>
      (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 30 })).records.map((r) => `  ${String(r.event)}: ${String(r.msg)}`).join("\n"),
  });
}

async function mineRow(n: number): Promise<Json | undefined> {
  const status = await host.status({ repo: REPO, scope: "project" });
  return (status.plan?.mine as Json[] | undefined)?.find((m) => m.issue === n);
}

describe("required approvals", () => {
  it("holds a green PR for a human's approval, lands it once approved, and retries on changes requested", { timeout: 300_000 }, async () => {
    const numbers = await issues(["greet in English", "greet in French"]);
    const [approved, refused] = numbers as [number, number];
    await protectBranch(forge, { contexts: null, enforceAdmins: true, approvals: 1 });
    await startFleet({}, 2);

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
    assert.ok(
      (board.body as Json[]).some((c) => c.body.includes("waiting for a human's approving review")),
      "the board says why it waits",
    );
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${approved}`))).body.state, "open");

    // Alice approves the first: it lands.
    const first = (await pullFor(approved, "open"))!;
    assert.equal((await api(forge, "POST", repoPath(forge, `/pulls/${first.number}/reviews`), { event: "APPROVE", body: "" }, as("alice"))).status, 200);
    await until(`#${approved} merged`, async () => (await pullFor(approved))?.merged_at);
    await until(`#${approved} closed`, () => closed(approved));

    // Bob asks for changes on the second: the attempt ends and his words reach the next brief.
    const second = (await pullFor(refused, "open"))!;
    assert.equal(
      (await api(forge, "POST", repoPath(forge, `/pulls/${second.number}/reviews`), { event: "REQUEST_CHANGES", body: ASK }, as("bob"))).status,
      200,
    );
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
    await until(`#${refused} closed`, () => closed(refused));

    // The fleet never reviewed anything itself, and left no claim behind.
    for (const pr of [first.number, second.number, next.number]) {
      const reviews = await api(forge, "GET", repoPath(forge, `/pulls/${pr}/reviews`));
      assert.ok(
        (reviews.body as Json[]).every((r) => r.user.login !== "afk-bot"),
        `PR #${pr}: no review by the fleet's login`,
      );
    }
    const notes = await api(forge, "GET", repoPath(forge, `/issues/${first.number}/comments`));
    assert.equal((notes.body as Json[]).filter((c) => c.body.includes(NOTE)).length, 1, "one note per PR, not one per tick");
    await until("no claim left", async () => (await git(planDir, "ls-remote", forge.gitUrl, "refs/afk/claim/*")).stdout === "");
  });
});

describe("the review stage", () => {
  // The "fix" round's marks are exactly ["fix"]: a reviewer's commits reach the branch only with
  // its verdict (the workers' exit checkpoint once pushed them first, so the verdict found the
  // head moved and recorded "none").
  it(
    "approve lands, fix lands the reviewer's commit, refute retries with the findings, a hung reviewer is killed and the review runs again",
    { timeout: 300_000 },
    async () => {
      const [ok, fixed, refuted, hung] = (await issues(["approve me", "fix me", "refute me", "hang on me"])) as [number, number, number, number];
      await writeFile(join(planDir, `${fixed}.review`), "fix\n");
      await writeFile(join(planDir, `${refuted}.review.1`), "refute The greeting must say hello, not hi\n");
      await writeFile(join(planDir, `${hung}.review.1`), "hang\n");
      // A stall after 3 s quiet and a kill after 6 s (60 s and 120 s, scaled).
      await startFleet({ review: { command: `sh ${REVIEWER}`, max_rounds: 2 }, retry: 1, stall: { quiet_seconds: 60, kill_seconds: 120 } }, 4);

      for (const n of [ok, fixed, refuted, hung]) await until(`#${n} closed`, () => closed(n));

      const reviewsOf = async (pr: number): Promise<Json[]> => (await api(forge, "GET", repoPath(forge, `/pulls/${pr}/reviews`))).body as Json[];
      const marks = async (n: number): Promise<string[]> => {
        const all: string[] = [];
        const prs = (await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Json[];
        for (const p of prs.filter((x) => x.head.ref.startsWith(`afk/${n}-`)).sort((a, b) => a.number - b.number)) {
          for (const r of await reviewsOf(p.number)) {
            const m = /afk:review (\{.*?\}) -->/.exec(r.body);
            assert.equal(r.user.login, "afk-bot", "reviews are posted by the fleet's login");
            assert.equal(r.state, "COMMENTED", "the fleet comments, it never approves its own PR");
            if (m) all.push((JSON.parse(m[1]!) as { verdict: string }).verdict);
          }
        }
        return all;
      };
      assert.deepEqual(await marks(ok), ["approve"]);
      assert.deepEqual(await marks(fixed), ["fix"]);
      assert.deepEqual(await marks(refuted), ["refute", "approve"]);
      assert.deepEqual(await marks(hung), ["approve"], "the killed round left no verdict");

      // Each reviewer got a review brief with the diff; the fix landed on the base.
      const brief = await readFile(join(planDir, `${ok}.review.1.brief`), "utf8");
      assert.match(brief, /# Review PR #\d+ for issue/);
      assert.match(brief, new RegExp(`\\+done ${ok}`), "the diff is in the brief");
      const inspect = await tempDir("afk-review-inspect-");
      await git(inspect, "clone", "--quiet", forge.gitUrl, "repo");
      assert.equal(existsSync(join(inspect, "repo", `review-fix-${fixed}.txt`)), true, "the reviewer's fix landed");
      // The refutation's findings reached the next attempt's worker.
      assert.match(await readFile(join(planDir, `${refuted}.2.brief`), "utf8"), /The greeting must say hello, not hi/);
      // The hung reviewer was killed, and its lanes say so.
      const killed = await host.logs({ repo: REPO, lane: "liveness", tail_lines: 500 });
      assert.ok(
        killed.records.some((r) => r.event === "killed" && r.issue === hung),
        "the hung reviewer was killed",
      );
      const sup = await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 2000 });
      assert.equal(sup.records.filter((r) => r.event === "reviewer_born" && r.issue === hung).length, 2);
      assert.ok(sup.records.some((r) => r.event === "reviewer_exited" && r.issue === ok));
      await until("no claim left", async () => (await git(planDir, "ls-remote", forge.gitUrl, "refs/afk/claim/*")).stdout === "");
    },
  );

  it("pins the reviewed head: a commit pushed after the approval is reviewed again, never taken as approved", { timeout: 240_000 }, async () => {
    const [n] = (await issues(["pin me"])) as [number];
    // Merges held (no auto_merge), so the approved PR stays open for a human to push to.
    await startFleet({ review: { command: `sh ${REVIEWER}`, max_rounds: 3 } }, 1, false);
    const pr = await until("the PR", () => pullFor(n, "open"));
    const mark = async (): Promise<Array<{ verdict: string; head: string; round: number }>> => {
      const reviews = (await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}/reviews`))).body as Json[];
      return reviews
        .map((r) => /afk:review (\{.*?\}) -->/.exec(r.body))
        .filter((m) => m !== null)
        .map((m) => JSON.parse(m[1]!));
    };
    // (Under load a round may end without a verdict first; the approval is what matters.)
    const first = await until("the first approval", async () => (await mark()).find((m) => m.verdict === "approve"));
    assert.equal(first.head, pr.head.sha);

    // Alice pushes to the PR's branch after the approval.
    const work = await tempDir("afk-review-alice-");
    await git(work, "clone", "--quiet", forge.gitUrl, "repo");
    const repo = join(work, "repo");
    await git(repo, "checkout", "--quiet", pr.head.ref);
    await writeFile(join(repo, "late.txt"), "pushed after the review\n");
    await git(repo, "add", "late.txt");
    await git(repo, "-c", "user.name=alice", "-c", "user.email=alice@example.com", "commit", "--quiet", "-m", "late change");
    const late = (await git(repo, "rev-parse", "HEAD")).stdout;
    await git(repo, "push", "--quiet", `http://alice:${forge.users.alice!}@${forge.gitUrl.replace(/^https?:\/\//, "")}`, `HEAD:refs/heads/${pr.head.ref}`);

    const second = await until("a review of the new head", async () => (await mark()).find((m) => m.head === late && m.verdict === "approve"));
    assert.ok(second.round > first.round, "a new round, not the old approval");
    const lastRun = (await readFile(join(planDir, `${n}.reviews`), "utf8")).trim();
    const brief2 = await readFile(join(planDir, `${n}.review.${lastRun}.brief`), "utf8");
    assert.match(brief2, /\+pushed after the review/, `round 2 saw the late change:\n${brief2}`);
    assert.equal((await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`))).body.merged, false);
  });
});

describe("conflicts seen early", () => {
  it("after a landing, a PR that no longer merges is retried at once with the paths named, before its CI or landing turn", { timeout: 240_000 }, async () => {
    const [one, two] = (await issues(["edit the shared file", "edit the shared file too"])) as [number, number];
    await writeFile(join(planDir, String(one)), "shared shared.txt\n");
    await writeFile(join(planDir, String(two)), "shared shared.txt\n");
    await writeFile(join(planDir, `${two}.2`), "commit\n");
    await startFleet({ gate: { ci: "required" } }, 2);
    const green = async (sha: string) =>
      assert.equal(
        (await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "ci", head_sha: sha, status: "completed", conclusion: "success" })).status,
        201,
      );

    const first = await until("#1's PR", () => pullFor(one, "open"));
    const second = await until("#2's PR", () => pullFor(two, "open"));
    await green(first.head.sha);
    await until(`#${one} closed`, () => closed(one));

    const sup = async () => (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 2000 })).records;
    const early = await until("the early conflict", async () => (await sup()).find((r) => r.event === "early_conflict" && r.issue === two));
    assert.deepEqual((early.data as { files: string[] }).files, ["shared.txt"]);
    const brief = join(planDir, `${two}.2.brief`);
    // The worker writes its brief as it reads it: wait for the words, not for the file.
    await until("the retry's brief", async () => existsSync(brief) && (await readFile(brief, "utf8")).includes("(seen early, after a landing)"));
    assert.match(await readFile(brief, "utf8"), /conflicts in shared\.txt \(seen early, after a landing\)/);
    const old = (await api(forge, "GET", repoPath(forge, `/pulls/${second.number}`))).body;
    assert.deepEqual([old.state, old.merged], ["closed", false], "the unmergeable PR was closed by the retry, never landed");
    assert.equal((await sup()).filter((r) => r.issue === two && /^land_/.test(String(r.event))).length, 0, "it never took a landing turn");

    const next = await until("the retry's PR", async () => {
      const p = await pullFor(two, "open");
      return p && p.number !== second.number ? p : null;
    });
    await green(next.head.sha);
    await until(`#${two} closed`, () => closed(two));
  });

  it(
    "three PRs editing one file: the pairs show in status and on the boards; after the first lands, the second retries and the third waits for it, then retries once",
    { timeout: 360_000 },
    async () => {
      const [one, two, three] = (await issues(["edit the shared file", "edit it too", "and once more"])) as [number, number, number];
      for (const n of [one, two, three]) await writeFile(join(planDir, String(n)), "shared shared.txt\n");
      await startFleet({ gate: { ci: "required" }, conflicts: { hold_max_seconds: 86_400 } }, 3);
      const green = async (sha: string) =>
        assert.equal(
          (await api(forge, "POST", repoPath(forge, "/check-runs"), { name: "ci", head_sha: sha, status: "completed", conclusion: "success" })).status,
          201,
        );
      const plan = async () => (await host.status({ repo: REPO, scope: "project" })).plan!;
      const sup = async () => (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 5000 })).records;

      const first = await until("#1's PR", () => pullFor(one, "open"));
      const old2 = await until("#2's PR", () => pullFor(two, "open"));
      const old3 = await until("#3's PR", () => pullFor(three, "open"));
      // Each pair of the three heads conflicts in shared.txt, merge-tested locally.
      const pairs = await until("three conflicting pairs", async () =>
        (await plan()).conflicting_pairs.length === 3 ? (await plan()).conflicting_pairs : null,
      );
      assert.deepEqual(
        pairs.map((p) => [p.a, p.b, p.files]),
        [
          [one, two, ["shared.txt"]],
          [one, three, ["shared.txt"]],
          [two, three, ["shared.txt"]],
        ],
      );
      const board = async (n: number) =>
        ((await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as Json[]).map((c) => String(c.body)).join("\n");
      await until("#1's board names the conflicts", async () =>
        /Conflicts with in-flight work: #\d+ in shared\.txt; #\d+ in shared\.txt/.test(await board(one)),
      );

      await green(first.head.sha);
      await until(`#${one} closed`, () => closed(one));
      // #2 retries at once; #3 waits for #2's retry to land, and says so in status.
      const hold = await until("#3's conflict hold", async () => (await plan()).conflict_holds.find((h) => h.issue === three));
      assert.deepEqual([hold.pr, hold.files, hold.waiting_for], [old3.number, ["shared.txt"], [two]]);
      assert.match(await board(three), /its retry waits until #\d+ landed or was abandoned/);
      const next2 = await until("#2's retry PR", async () => {
        const p = await pullFor(two, "open");
        return p && p.number !== old2.number ? p : null;
      });
      assert.equal((await api(forge, "GET", repoPath(forge, `/pulls/${old3.number}`))).body.state, "open", "#3's PR waits, not closed yet");
      await green(next2.head.sha);
      await until(`#${two} closed`, () => closed(two));
      const next3 = await until("#3's retry PR", async () => {
        const p = await pullFor(three, "open");
        return p && p.number !== old3.number ? p : null;
      });
      await green(next3.head.sha);
      await until(`#${three} closed`, () => closed(three));

      const records = await sup();
      const at = (event: string, n: number) => records.findIndex((r) => r.event === event && r.issue === n);
      assert.equal(records.filter((r) => r.event === "retry" && r.issue === two).length, 1, "#2 was redone once");
      assert.equal(records.filter((r) => r.event === "retry" && r.issue === three).length, 1, "#3 was redone once, on top of #2");
      assert.ok(at("retry", three) > at("merged", two), "#3's retry came after #2 landed");
      assert.equal(records.filter((r) => r.event === "conflict_held" && r.issue === three).length, 1, "one record of the hold");
      assert.equal(records.filter((r) => r.event === "escalated").length, 0);
    },
  );

  it("dispatch prefers an issue whose named paths no in-flight PR changes, and the plan says so until it no longer holds", { timeout: 240_000 }, async () => {
    const bodies = ["Reword `README.md`.", "Reword the intro of `README.md` too.", "Add a changelog."];
    const [one, two, three] = (await issues(["reword the readme", "reword the readme again", "add a changelog"], bodies)) as [number, number, number];
    await writeFile(join(planDir, String(one)), "shared README.md\n");
    await writeFile(join(planDir, String(two)), "shared README.md\n");
    // #3 works until the test says go: the hold on #2 must stand meanwhile, not for one pass only.
    await writeFile(join(planDir, String(three)), "await commit\n");
    // No CI reports: #1's PR stays in flight, changing README.md.
    await startFleet({ gate: { ci: "required" } }, 1);
    await until("#1's PR", () => pullFor(one, "open"));
    const held = await until("#2 held back on the plan", async () => {
      const plan = (await host.status({ repo: REPO, scope: "project" })).plan;
      return plan?.held_for_overlap.find((h) => h.issue === two);
    });
    assert.deepEqual(held, { issue: two, paths: ["README.md"], instead: three });
    await until("#3's worker", async () => existsSync(join(planDir, `${three}.1.pid`)));
    // Several passes later, while #3 still works, the plan still says why #2 waits.
    const ticks = async () => (await host.logs({ repo: REPO, lane: "monitor", tail_lines: 2000 })).records.filter((r) => r.event === "tick").length;
    const seen = await ticks();
    await until("two more passes", async () => (await ticks()) >= seen + 2);
    const plan = (await host.status({ repo: REPO, scope: "project" })).plan;
    assert.deepEqual(plan?.held_for_overlap, [{ issue: two, paths: ["README.md"], instead: three }]);
    assert.equal(existsSync(join(planDir, `${two}.1.pid`)), false, "#2 has not started");

    // #3 finishes: #2 is the only one left and starts though it overlaps; the hold is gone.
    await writeFile(join(planDir, `${three}.1.go`), "");
    await until("#2's worker", async () => existsSync(join(planDir, `${two}.1.pid`)));
    await until("the hold cleared", async () => ((await host.status({ repo: REPO, scope: "project" })).plan?.held_for_overlap.length ?? 1) === 0);
    const sup = (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 2000 })).records;
    assert.deepEqual(
      sup.filter((r) => r.event === "worker_born").map((r) => r.issue),
      [one, three, two],
      "dispatch order",
    );
    assert.equal(sup.filter((r) => r.event === "overlap_held" && r.issue === two).length, 1, "one record of the hold, not one per pass");
  });

  it("with conflicts.overlap_dispatch off, dispatch keeps the plain order", { timeout: 240_000 }, async () => {
    const [one, two, three] = (await issues(
      ["reword the readme", "reword the readme again", "add a changelog"],
      ["Reword `README.md`.", "Reword `README.md` too.", "Add a changelog."],
    )) as [number, number, number];
    await writeFile(join(planDir, String(one)), "shared README.md\n");
    await writeFile(join(planDir, String(two)), "shared README.md\n");
    await startFleet({ gate: { ci: "required" }, conflicts: { overlap_dispatch: false } }, 1);
    await until(
      "three workers born",
      async () => (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 2000 })).records.filter((r) => r.event === "worker_born").length >= 3,
    );
    const sup = (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 2000 })).records;
    assert.deepEqual(
      sup.filter((r) => r.event === "worker_born").map((r) => r.issue),
      [one, two, three],
    );
    assert.equal(sup.filter((r) => r.event === "overlap_held").length, 0);
  });
});
