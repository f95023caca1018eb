// What a failed attempt costs in requests, counted on the forge (issue 11, "Fewer requests"):
// required CI, one issue that lands and one whose CI always fails (retry 1, so one retry and an
// escalation). The retry's note heads the closed PR's description, written by the closing request
// (no comment of its own); the escalation reads its evidence from the head the snapshot judged
// (no read of the PR), and makes no board that nobody saw open: its comment is the one it writes.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startCiRunner } from "../server/demo/ci-runner.js";
import { RETRY_MARKER } from "../server/board/render.js";
import { api, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";
const HUMAN = "ready-for-human";
/** The fallback cadence, beyond every deadline here: events move the fleet. */
const SLOW = { busy_seconds: 3600, idle_seconds: 3600, long_idle_seconds: 3600 };

interface Tally {
  total: number;
  counted: number;
}

const cleanups = cleanupsAfterFile();

describe("requests of a failed attempt (required CI, counted on the forge)", () => {
  it("a retry closes its PR with the note in one request; the escalation reads no PR and writes one comment", async () => {
    const forge = await startTestForge({ users: ["ci"] });
    cleanups.push(() => forge.dispose());
    const [good, bad] = (await readyIssues(forge, tasks(2))) as [number, number];
    const dir = await tempDir("afk-requests-");
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript());
    const protection = await api(forge, "PUT", repoPath(forge, "/branches/main/protection"), {
      required_status_checks: { strict: true, contexts: ["test"] },
      enforce_admins: null,
      required_pull_request_reviews: null,
      restrictions: null,
    });
    assert.equal(protection.status, 200);
    // CI fails every head that carries the bad issue's work.
    const ci = startCiRunner({ apiUrl: forge.apiUrl, token: forge.users.ci ?? forge.token, repo: REPO, gitUrl: forge.gitUrl, workDir: join(dir, "ci"), intervalMs: 200, testCommand: ["sh", "-c", `test ! -e work-${bad}.txt`] });
    cleanups.push(() => ci.stop());
    const host = fleetHost(forge, dir, cleanups);
    await host.start({
      repo: REPO,
      worker_command: `sh ${worker}`,
      target: 2,
      auto_merge: true,
      // No live board settles within the run: every board write counted below is a terminal one.
      config: { retry: 1, gate: { ci: "required" }, landing: { strategy: "squash" }, pacing: SLOW, board: { settle_seconds: 3600 } },
    });

    const issue = async (n: number): Promise<{ state: string; labels: { name: string }[] }> => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; labels: { name: string }[] };
    await waitFor(
      `#${good} landed and #${bad} escalated`,
      async () => (await issue(good)).state === "closed" && (await issue(bad)).labels.some((l) => l.name === HUMAN),
      { deadlineMs: 20 * 60_000, intervalMs: 250 },
    );
    await host.stop({ repo: REPO, stop_workers: true });

    const acc = (await (await fetch(`${forge.apiUrl}/_forge/accounting`)).json()) as { by_user: Record<string, Record<string, Tally>> };
    const fleet = acc.by_user["afk-bot"] ?? {};
    const total = (route: string): number => fleet[route]?.total ?? 0;
    const pulls = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as { number: number; state: string; merged_at: string | null; body: string; head: { ref: string } }[]).filter((p) =>
      p.head.ref.startsWith(`afk/${bad}-`),
    );
    const closed = pulls.filter((p) => p.state === "closed" && p.merged_at === null);
    assert.equal(closed.length, 1, "attempt 1's PR closed by the retry");
    assert.ok(closed[0]!.body.startsWith(RETRY_MARKER), "the retry's note heads the closed PR's description");
    assert.match(closed[0]!.body, /attempt 1 of 2 failed/);
    assert.match(closed[0]!.body, new RegExp(`Closes #${bad}`), "what the PR said when opened is kept below the note");
    assert.equal(total("PATCH /repos/{owner}/{repo}/pulls/{pull_number}"), 1, "one request closed the PR and wrote the note");
    assert.equal(total("GET /repos/{owner}/{repo}/pulls/{pull_number}"), 0, "neither the retry nor the escalation read a PR for its head");
    const comments = async (n: number): Promise<string[]> => ((await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as { body: string }[]).map((c) => c.body);
    for (const p of pulls) assert.deepEqual(await comments(p.number), [], `no comment on PR #${p.number}`);
    const onBad = await comments(bad);
    assert.equal(onBad.length, 1, onBad.join("\n---\n"));
    assert.match(onBad[0]!, /afk:escalation/);
    // The landed issue ends with its final board (which PR landed it): the run's only other comment.
    const onGood = await comments(good);
    assert.equal(onGood.length, 1, onGood.join("\n---\n"));
    assert.match(onGood[0]!, /afk-mcp: Merged/);
    assert.match(onGood[0]!, /Landed PR \\?#\d+ on main by a squash merge/);
    assert.equal(total("POST /repos/{owner}/{repo}/issues/{issue_number}/comments"), 2, "the escalation's comment and the landed issue's final board are the run's only ones");
  });
});
