// What a failed attempt costs in requests, counted on the forge (issue 11, "Fewer requests"):
// required CI, one issue that lands and one whose CI always fails (retry 1, so one retry and an
// escalation). The retry's note heads the closed PR's description, written by the closing request
// (no comment of its own); the escalation reads its evidence from the head the snapshot judged
// (no read of the PR), and makes no board that nobody saw open: its comment is the one it writes.
// A squash landing onto the default branch leaves closing the issue to GitHub ("Closes #n" in the
// fleet's PR): no request of ours closes or reads the issue, and the claim waits for a listing to
// show it closed. MergeCloses on its own, over the real forge and claim refs: a GitHub that did not
// close the issue within the grace gets it closed by the fleet; one that did costs nothing.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startCiRunner } from "../server/demo/ci-runner.js";
import { VALIDATION_MARKER } from "../server/fleet/effects/validation.js";
import { RETRY_MARKER } from "../server/board/render.js";
import { createGitHubForge } from "../server/gh/github-forge.js";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { Lease } from "../server/gh/lease.js";
import { parseNamespace } from "../server/state/claims.js";
import { MergeCloses } from "../server/fleet/merge-closes.js";
import { api, protectBranch, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";
const HUMAN = "ready-for-human";
const NS = "refs/afk";
/** The fallback cadence, beyond every deadline here: events move the fleet. */
const SLOW = { busy_seconds: 3600, idle_seconds: 3600, long_idle_seconds: 3600 };

interface Tally {
  total: number;
  counted: number;
}

const cleanups = cleanupsAfterFile();

/** The fleet's requests per route, as the forge counted them. */
async function fleetRoutes(forge: TestForge): Promise<Record<string, Tally>> {
  const acc = (await (await fetch(`${forge.apiUrl}/_forge/accounting`)).json()) as { by_user: Record<string, Record<string, Tally>> };
  return acc.by_user["afk-bot"] ?? {};
}

/** Required CI on main, up-to-date branches required (the demo's protection). */
async function requireCi(forge: TestForge): Promise<void> {
  await protectBranch(forge, { contexts: ["test"], strict: true });
}

async function claimsLeft(forge: TestForge): Promise<number[]> {
  const reader = new GitRefStore({ controlDir: join(await tempDir("afk-reader-"), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
  return parseNamespace(NS, await reader.list(`${NS}/`)).claims.map((c) => c.issue);
}

describe("requests of a failed attempt (required CI, counted on the forge)", () => {
  it("a retry closes its PR with the note in one request; the escalation reads no PR and writes one comment", async () => {
    const forge = await startTestForge({ users: ["ci"] });
    cleanups.push(() => forge.dispose());
    const [good, bad] = (await readyIssues(forge, tasks(2))) as [number, number];
    const dir = await tempDir("afk-requests-");
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript());
    await requireCi(forge);
    // CI fails every head that carries the bad issue's work.
    const ci = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.users.ci ?? forge.token,
      repo: REPO,
      gitUrl: forge.gitUrl,
      workDir: join(dir, "ci"),
      intervalMs: 200,
      testCommand: ["sh", "-c", `test ! -e work-${bad}.txt`],
    });
    cleanups.push(() => ci.stop());
    const host = fleetHost(forge, dir, cleanups);
    await host.start({
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 2,
      auto_merge: true,
      // No live board settles within the run: every board write counted below is a terminal one.
      // The fresh retry (its PR closed): a fix forward keeps the PR open instead (core-decide, e2e-demo).
      config: { retry: 1, fix_forward: false, gate: { ci: "required" }, landing: { strategy: "squash" }, pacing: SLOW, board: { settle_seconds: 3600 } },
    });

    const issue = async (n: number): Promise<{ state: string; labels: { name: string }[] }> =>
      (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; labels: { name: string }[] };
    await waitFor(
      `#${good} landed and #${bad} escalated`,
      async () => (await issue(good)).state === "closed" && (await issue(bad)).labels.some((l) => l.name === HUMAN),
      { deadlineMs: 20 * 60_000, intervalMs: 250 },
    );
    await host.stop({ repo: REPO, stop_workers: true });

    const fleet = await fleetRoutes(forge);
    const total = (route: string): number => fleet[route]?.total ?? 0;
    const pulls = (
      (await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as {
        number: number;
        state: string;
        merged_at: string | null;
        body: string;
        head: { ref: string };
      }[]
    ).filter((p) => p.head.ref.startsWith(`afk/${bad}-`));
    const closed = pulls.filter((p) => p.state === "closed" && p.merged_at === null);
    assert.equal(closed.length, 1, "attempt 1's PR closed by the retry");
    assert.ok(closed[0]!.body.startsWith(RETRY_MARKER), "the retry's note heads the closed PR's description");
    assert.match(closed[0]!.body, /attempt 1 of 2 failed/);
    assert.match(closed[0]!.body, new RegExp(`Closes #${bad}`), "what the PR said when opened is kept below the note");
    assert.equal(total("PATCH /repos/{owner}/{repo}/pulls/{pull_number}"), 1, "one request closed the PR and wrote the note");
    assert.equal(total("GET /repos/{owner}/{repo}/pulls/{pull_number}"), 0, "neither the retry nor the escalation read a PR for its head");
    assert.equal(
      total("GET /repos/{owner}/{repo}/issues/{issue_number}/comments"),
      0,
      "no comment list read: the landed PR's validation note is posted without looking for an earlier one, and neither issue has a comment to find",
    );
    const comments = async (n: number): Promise<string[]> =>
      ((await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as { body: string }[]).map((c) => c.body);
    // A PR that landed carries its one validation note (checks, commits, files); a retried one none.
    for (const p of pulls) {
      const on = await comments(p.number);
      if (p.merged_at === null) assert.deepEqual(on, [], `no comment on PR #${p.number}`);
      else assert.ok(on.length === 1 && on[0]!.includes(VALIDATION_MARKER), `one validation note on PR #${p.number}: ${on.join("\n---\n")}`);
    }
    const onBad = await comments(bad);
    assert.equal(onBad.length, 1, onBad.join("\n---\n"));
    assert.match(onBad[0]!, /afk:escalation/);
    // The landed issue ends with its final board (which PR landed it): the run's only other comment.
    const onGood = await comments(good);
    assert.equal(onGood.length, 1, onGood.join("\n---\n"));
    assert.match(onGood[0]!, /afk-mcp: Merged/);
    assert.match(onGood[0]!, /Landed PR \\?#\d+ on main by a squash merge/);
    // The landed issue's PR carries its one validation note (checks, commits, files).
    const goodPulls = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as { number: number; head: { ref: string } }[]).filter(
      (p) => p.head.ref.startsWith(`afk/${good}-`),
    );
    assert.equal(goodPulls.length, 1);
    const onGoodPr = await comments(goodPulls[0]!.number);
    assert.ok(onGoodPr.length === 1 && onGoodPr[0]!.includes(VALIDATION_MARKER), onGoodPr.join("\n---\n"));
    assert.equal(
      total("POST /repos/{owner}/{repo}/issues/{issue_number}/comments"),
      3,
      "the escalation's comment, the landed issue's final board and its PR's validation note are the run's only ones",
    );
  });
});

describe("closing a landed issue (counted on the forge)", () => {
  it("a squash onto the default branch: GitHub closes the issue, the fleet neither closes nor reads it, and its claim is released", async () => {
    const forge = await startTestForge({ users: ["ci", "watcher"] });
    cleanups.push(() => forge.dispose());
    const issues = await readyIssues(forge, tasks(2));
    const dir = await tempDir("afk-merge-closes-");
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript());
    await requireCi(forge);
    const ci = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.users.ci ?? forge.token,
      repo: REPO,
      gitUrl: forge.gitUrl,
      workDir: join(dir, "ci"),
      intervalMs: 200,
    });
    cleanups.push(() => ci.stop());
    const host = fleetHost(forge, dir, cleanups);
    await host.start({
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 2,
      auto_merge: true,
      config: { gate: { ci: "required" }, landing: { strategy: "squash" }, pacing: SLOW },
    });

    // The test watches with a login of its own, so the fleet's routes are the fleet's alone.
    const watcher = forge.users.watcher!;
    const issue = async (n: number): Promise<{ state: string; state_reason: string | null }> =>
      (await api(forge, "GET", repoPath(forge, `/issues/${n}`), undefined, { token: watcher })).body as { state: string; state_reason: string | null };
    await waitFor("both issues closed", async () => (await Promise.all(issues.map(issue))).every((i) => i.state === "closed"), {
      deadlineMs: 20 * 60_000,
      intervalMs: 250,
    });
    // The stop's tick sees them unlisted and lets the claims go (the next tick would, whenever it came).
    await host.stop({ repo: REPO, stop_workers: true });
    assert.deepEqual(await claimsLeft(forge), [], "no claim left");

    for (const n of issues) assert.equal((await issue(n)).state_reason, "completed", `#${n} closed as completed`);
    const routes = await fleetRoutes(forge);
    const total = (route: string): number => routes[route]?.total ?? 0;
    assert.equal(total("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge"), 2, "both landed through the merge API");
    assert.equal(total("PATCH /repos/{owner}/{repo}/issues/{issue_number}"), 0, "no request of the fleet closed an issue: the merges did");
    assert.equal(total("GET /repos/{owner}/{repo}/issues/{issue_number}"), 0, "an unlisted issue whose PR merged is not read on its own");
    for (const n of issues) {
      const comments = ((await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`), undefined, { token: watcher })).body as { body: string }[]).map(
        (c) => c.body,
      );
      assert.ok(
        comments.some((c) => /Landed PR \\?#\d+ on main by a squash merge/.test(c)),
        `#${n}'s final board names its PR`,
      );
    }
  });
});

describe("MergeCloses (real forge, real claim refs)", () => {
  it("waits out the grace for a merged issue GitHub leaves open, then closes it and releases the claim; one GitHub closed costs no request", async () => {
    const forge = await startTestForge({ users: ["watcher"] });
    cleanups.push(() => forge.dispose());
    const [open, closed] = (await readyIssues(forge, tasks(2))) as [number, number];
    const refs = new GitRefStore({ controlDir: join(await tempDir("afk-closes-"), "control.git"), remoteUrl: forge.gitUrl, token: forge.token });
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = (): Date => new Date(now);
    const lease = new Lease(refs, { namespace: NS, ttlSeconds: 600, heartbeatSeconds: 60 }, "closer", "closer-host", clock);
    const client = createGitHubForge({ repo: REPO, token: forge.token, baseUrl: forge.apiUrl, fast: true });
    const logged: string[] = [];
    const closes = new MergeCloses({ forge: client, lease, clock, graceMs: 30_000, log: (_level, event) => logged.push(event) });
    const claims: Array<{ issue: number; sha: string }> = [];
    for (const n of [open, closed]) {
      const won = await lease.claim(n);
      assert.ok(won.won);
      claims.push({ issue: n, sha: won.sha });
      closes.expect(n, 100 + n, won.sha);
    }
    assert.deepEqual([...closes.expected()].sort(), [open, closed].sort());
    // A human (standing in for GitHub's close) closed one; the other stays open.
    await api(forge, "PATCH", repoPath(forge, `/issues/${closed}`), { state: "closed" }, { token: forge.users.watcher! });
    const before = (await fleetRoutes(forge))["PATCH /repos/{owner}/{repo}/issues/{issue_number}"]?.total ?? 0;

    now += 5_000;
    const held = await closes.settle(claims, new Set([open]), false);
    assert.deepEqual([...held].sort(), [open, closed].sort(), "this tick leaves both alone");
    assert.deepEqual(await claimsLeft(forge), [open], "the closed one's claim is released; the open one's waits");
    assert.equal(((await fleetRoutes(forge))["PATCH /repos/{owner}/{repo}/issues/{issue_number}"]?.total ?? 0) - before, 0, "no close within the grace");
    assert.equal(closes.pending(), true);

    now += 30_000;
    const later = await closes.settle(
      claims.filter((c) => c.issue === open),
      new Set([open]),
      false,
    );
    assert.deepEqual([...later], [open]);
    assert.equal(
      ((await fleetRoutes(forge))["PATCH /repos/{owner}/{repo}/issues/{issue_number}"]?.total ?? 0) - before,
      1,
      "one close, for the one GitHub left open",
    );
    assert.equal(
      ((await api(forge, "GET", repoPath(forge, `/issues/${open}`), undefined, { token: forge.users.watcher! })).body as { state: string }).state,
      "closed",
    );
    assert.deepEqual(await claimsLeft(forge), [], "no claim left");
    assert.equal(closes.pending(), false);
    assert.deepEqual(logged, ["closed_after_merge"]);
  });
});
