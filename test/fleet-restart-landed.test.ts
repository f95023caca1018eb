// A host killed between a landing and its wrap-up: the base moved and the fleet's PR merged, but
// the issue is still open and the claim still held. The restarted process, which recognises its
// instance, must settle that landing (close the issue, release the claim, say "merged" on the
// board), not take the claim for one with no PR and send a worker to redo landed work; so must a
// host that reclaims such a claim from a dead peer. An interrupted claim with no PR beside them is
// continued by a worker as usual. Real client, local forge, real git, a scripted worker.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { formatClaimMessage } from "../server/state/snapshot.js";
import { api, cloneRepo, git, openPull, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, markingWorkScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();
const INSTANCE = "restart01";

describe("a restart after a crash between a merge and its wrap-up", () => {
  it("closes the landed issue and releases its claim with no worker; a claim with no PR is continued", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const [landed, coding, peers] = (await readyIssues(forge, ["landed before the crash", "coding at the crash", "landed by a dead peer"])) as [
      number,
      number,
      number,
    ];
    const dir = await tempDir("afk-restart-landed-");
    const refs = new GitRefStore({ controlDir: join(dir, "control"), remoteUrl: forge.gitUrl, token: forge.token });
    // The dead peer's claim is three hours old (past the default 75 min lease) and it left no heartbeat: stale at once.
    for (const [n, instance, ago] of [
      [landed, INSTANCE, 0],
      [coding, INSTANCE, 0],
      [peers, "dead0001", 3 * 3_600_000],
    ] as const) {
      assert.equal((await refs.create(`refs/afk/claim/${n}`, formatClaimMessage({ instance, host: "box", at: new Date(Date.now() - ago) }))).won, true);
    }
    // The landing the crash cut short: the fleet's PR (its login, its branch) merged onto the base;
    // no closing keyword, so nothing but the fleet would close the issue.
    const clone = await cloneRepo(forge);
    const land = async (n: number, slug: string): Promise<number> => {
      const pr = await openPull(forge, clone, `afk/${n}-${slug}`, { path: `work-${n}.txt`, title: slug, body: `Work for #${n}.` });
      const merged = await api(forge, "PUT", repoPath(forge, `/pulls/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
      assert.equal(merged.status, 200, JSON.stringify(merged.body));
      return pr.number;
    };
    const prs = new Map([
      [landed, await land(landed, "landed-before-the-crash")],
      [peers, await land(peers, "landed-by-a-dead-peer")],
    ]);
    const issue = async (n: number): Promise<{ state: string; state_reason: string | null }> =>
      (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; state_reason: string | null };
    for (const n of prs.keys()) assert.equal((await issue(n)).state, "open");

    // The restart: the same instance, a worker that leaves a mark for each issue it is started on.
    const marks = join(dir, "marks");
    await mkdir(marks);
    const worker = join(dir, "worker.sh");
    await writeFile(worker, markingWorkScript(marks));
    const host = fleetHost(forge, dir, cleanups, {}, { instance: INSTANCE });
    await host.start({
      repo: forge.repo,
      worker_command: `sh ${worker}`,
      target: 3,
      auto_merge: true,
      config: {
        gate: { ci: "local", local_command: "true" },
        landing: { strategy: "push" },
        pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
      },
    });

    const supervisor = async (): Promise<Array<{ event?: unknown; issue?: unknown; msg?: unknown }>> =>
      (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 500 })).records;
    await waitFor(
      `#${landed}, #${coding} and #${peers} closed`,
      async () => (await Promise.all([landed, coding, peers].map(issue))).every((i) => i.state === "closed"),
      {
        deadlineMs: 5 * 60_000,
        intervalMs: 250,
        explain: async () => (await supervisor()).map((r) => `${String(r.event)} #${String(r.issue)} ${String(r.msg)}`).join("\n"),
      },
    );
    await host.stop({ repo: forge.repo, stop_workers: true });

    assert.deepEqual((await readdir(marks)).sort(), [`spawned-${coding}`], "a worker continued the claim with no PR; none redid the landed work");
    const records = await supervisor();
    const settled = records.filter((r) => r.event === "landed_unsettled");
    assert.deepEqual(
      settled.map((r) => r.issue).sort((a, b) => Number(a) - Number(b)),
      [landed, peers],
      "each landing is settled once",
    );
    assert.ok(
      records.some((r) => r.event === "reclaimed" && r.issue === peers),
      "the dead peer's claim was reclaimed first",
    );
    const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=all"))).body as Array<{ head: { ref: string } }>;
    for (const [n, pr] of prs) {
      assert.equal((await issue(n)).state_reason, "completed");
      assert.match(String(settled.find((r) => r.issue === n)!.msg), new RegExp(`PR #${pr} merged`));
      // The board says what landed it.
      const comments = (await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as Array<{ body: string }>;
      const said = new RegExp(`### afk-mcp: Merged[\\s\\S]*PR \\\\?#${pr} landed before its host stopped`);
      assert.ok(
        comments.some((c) => said.test(c.body)),
        comments.map((c) => c.body).join("\n---\n"),
      );
      // Only the one PR for the landed issue.
      assert.equal(pulls.filter((p) => p.head.ref.startsWith(`afk/${n}-`)).length, 1);
    }
    // The wrap-up the crash skipped is done too: the landed PRs' branches are deleted.
    const branches = (await git(clone, "ls-remote", "origin", "refs/heads/afk/*")).stdout;
    for (const n of prs.keys()) assert.doesNotMatch(branches, new RegExp(`refs/heads/afk/${n}-`), `the branch of #${n} is gone: ${branches}`);
    // No claim left behind.
    assert.equal(
      (await git(clone, "ls-remote", "origin", "refs/afk/*")).stdout
        .split("\n")
        .filter((l) => l.includes("/claim/"))
        .join("\n"),
      "",
    );
  });
});
