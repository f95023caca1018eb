// An open issue with the fleet's own open PR and no claim (a claim a human or a takeover released,
// a lost race, the paging race the chaos run found): the fleet claims it again and carries the PR
// through the gate to land, with no worker; a PR another login opened on a fleet-named branch is
// never adopted. The real client against the local forge, real git, a scripted worker.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { api, cloneRepo, git, openPull, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, markingWorkScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

describe("the fleet's own open PR with no claim", () => {
  it("is claimed again and lands through the gate, with no worker; another login's PR is never adopted", async () => {
    const forge = await startTestForge({ users: ["alice"] });
    cleanups.push(() => forge.dispose());
    const [orphan, bait] = (await readyIssues(forge, ["orphaned work", "bait"])) as [number, number];
    const dir = await tempDir("afk-orphans-");
    // The fleet's PR, as the fleet opens one: its login, its branch for the issue, "Closes #n".
    const mine = await cloneRepo(forge);
    const pr = await openPull(forge, mine, `afk/${orphan}-orphaned-work`, { path: `work-${orphan}.txt`, title: "orphaned work", body: `Closes #${orphan}` });
    // The same shape from alice: a fleet-named branch, but not the fleet's PR.
    const hers = await cloneRepo(forge, forge.users.alice!);
    await git(hers, "fetch", "--quiet", "origin");
    await git(hers, "checkout", "--quiet", "-B", `afk/${bait}-bait`, "origin/main");
    await writeFile(join(hers, `work-${bait}.txt`), "not the fleet's\n");
    await git(hers, "add", "-A");
    await git(hers, "-c", "user.name=alice", "-c", "user.email=alice@example.com", "commit", "--quiet", "-m", "bait");
    await git(hers, "push", "--quiet", "origin", `afk/${bait}-bait`);
    const baitPr = await api(
      forge,
      "POST",
      repoPath(forge, "/pulls"),
      { title: "bait", head: `afk/${bait}-bait`, base: "main", body: `Closes #${bait}` },
      { token: forge.users.alice! },
    );
    assert.equal(baitPr.status, 201, JSON.stringify(baitPr.body));

    // A worker that leaves a mark: the test asserts none starts for the adopted PR.
    const marks = join(dir, "marks");
    await mkdir(marks);
    const worker = join(dir, "worker.sh");
    await writeFile(worker, markingWorkScript(marks));
    const host = fleetHost(forge, dir, cleanups);
    await host.start({
      repo: forge.repo,
      worker_command: `sh ${worker}`,
      target: 2,
      auto_merge: true,
      config: {
        gate: { ci: "local", local_command: "ls work-*.txt >/dev/null" },
        landing: { strategy: "push" },
        pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 },
      },
    });

    const issue = async (n: number): Promise<{ state: string }> => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string };
    const supervisor = async (): Promise<Array<{ event?: unknown; issue?: unknown; msg?: unknown }>> =>
      (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 500 })).records;
    await waitFor(`#${orphan} closed by its PR #${pr.number} landing`, async () => (await issue(orphan)).state === "closed", {
      deadlineMs: 5 * 60_000,
      intervalMs: 250,
      explain: async () => (await supervisor()).map((r) => `${String(r.event)} ${String(r.msg)}`).join("\n"),
    });
    await host.stop({ repo: forge.repo, stop_workers: true });

    const landed = (await api(forge, "GET", repoPath(forge, `/pulls/${pr.number}`))).body as { merged: boolean };
    assert.equal(landed.merged, true, "the fleet's PR landed");
    const records = await supervisor();
    const adopted = records.filter((r) => r.event === "pr_adopted");
    assert.deepEqual(
      adopted.map((r) => r.issue),
      [orphan],
      "adopted once, and only the fleet's own PR",
    );
    assert.match(String(adopted[0]!.msg), new RegExp(`claimed again to carry the fleet's open PR #${pr.number}`));
    assert.deepEqual(
      (await readdir(marks)).filter((f) => f.startsWith("spawned-")),
      [],
      "no worker started: the PR is the work",
    );
    // The bait: never adopted, never merged, never dispatched afresh (its open PR excludes it).
    const baitNow = (await api(forge, "GET", repoPath(forge, `/pulls/${baitPr.body.number as number}`))).body as { state: string; merged: boolean };
    assert.deepEqual([baitNow.state, baitNow.merged], ["open", false]);
    assert.equal((await issue(bait)).state, "open");
    // No claim left behind.
    assert.equal(
      (await git(mine, "ls-remote", "origin", "refs/afk/*")).stdout
        .split("\n")
        .filter((l) => l.includes("/claim/"))
        .join("\n"),
      "",
    );
  });
});
