// A host killed between a landing and its wrap-up: the base moved and the fleet's PR merged, but
// the issue is still open and the claim still held. The restarted process, which recognises its
// instance, must settle that landing (close the issue, release the claim, say "merged" on the
// board), not take the claim for one with no PR and send a worker to redo landed work. An
// interrupted claim with no PR beside it is continued by a worker as usual. Real client, local
// forge, real git, a scripted worker.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { formatClaimMessage } from "../server/state/snapshot.js";
import { api, cloneRepo, git, openPull, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();
const INSTANCE = "restart01";

describe("a restart after a crash between a merge and its wrap-up", () => {
  it("closes the landed issue and releases its claim with no worker; a claim with no PR is continued", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const [landed, coding] = (await readyIssues(forge, ["landed before the crash", "coding at the crash"])) as [number, number];
    const dir = await tempDir("afk-restart-landed-");
    const refs = new GitRefStore({ controlDir: join(dir, "control"), remoteUrl: forge.gitUrl, token: forge.token });
    for (const n of [landed, coding]) {
      assert.equal((await refs.create(`refs/afk/claim/${n}`, formatClaimMessage({ instance: INSTANCE, host: "box", at: new Date() }))).won, true);
    }
    // The landing the crash cut short: the fleet's PR (its login, its branch) merged onto the base;
    // no closing keyword, so nothing but the fleet would close the issue.
    const clone = await cloneRepo(forge);
    const pr = await openPull(forge, clone, `afk/${landed}-landed-before-the-crash`, { path: `work-${landed}.txt`, title: "landed before the crash", body: `Work for #${landed}.` });
    const merged = await api(forge, "PUT", repoPath(forge, `/pulls/${pr.number}/merge`), { merge_method: "squash", sha: pr.head });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    const issue = async (n: number): Promise<{ state: string; state_reason: string | null }> => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; state_reason: string | null };
    assert.equal((await issue(landed)).state, "open");

    // The restart: the same instance, a worker that leaves a mark for each issue it is started on.
    const marks = join(dir, "marks");
    await mkdir(marks);
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript().replace("cat > /dev/null", `cat > /dev/null\ntouch "${marks}/spawned-$AFK_ISSUE"`));
    const host = fleetHost(forge, dir, cleanups, {}, { instance: INSTANCE });
    await host.start({
      repo: forge.repo,
      worker_command: `sh ${worker}`,
      target: 2,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: "true" }, landing: { strategy: "push" }, pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 } },
    });

    const supervisor = async (): Promise<Array<{ event?: unknown; issue?: unknown; msg?: unknown }>> => (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 500 })).records;
    await waitFor(`#${landed} and #${coding} closed`, async () => (await issue(landed)).state === "closed" && (await issue(coding)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 250,
      explain: async () => (await supervisor()).map((r) => `${String(r.event)} #${String(r.issue)} ${String(r.msg)}`).join("\n"),
    });
    await host.stop({ repo: forge.repo, stop_workers: true });

    assert.deepEqual((await readdir(marks)).sort(), [`spawned-${coding}`], "a worker continued the claim with no PR; none redid the landed work");
    assert.equal((await issue(landed)).state_reason, "completed");
    const records = await supervisor();
    const settled = records.filter((r) => r.event === "landed_before_restart");
    assert.deepEqual(settled.map((r) => r.issue), [landed], "the landing is settled once");
    assert.match(String(settled[0]!.msg), new RegExp(`PR #${pr.number} merged`));
    // The board says what landed it.
    const comments = (await api(forge, "GET", repoPath(forge, `/issues/${landed}/comments`))).body as Array<{ body: string }>;
    const said = new RegExp(`### afk-mcp: Merged[\\s\\S]*PR \\\\?#${pr.number} landed before the fleet restarted`);
    assert.ok(comments.some((c) => said.test(c.body)), comments.map((c) => c.body).join("\n---\n"));
    // Only the one PR for the landed issue, and no claim left behind.
    const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=all"))).body as Array<{ head: { ref: string } }>;
    assert.equal(pulls.filter((p) => p.head.ref.startsWith(`afk/${landed}-`)).length, 1);
    assert.equal((await git(clone, "ls-remote", "origin", "refs/afk/*")).stdout.split("\n").filter((l) => l.includes("/claim/")).join("\n"), "");
  });
});
