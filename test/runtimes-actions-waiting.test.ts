// A runner's push onto the branch of an issue whose run has ended and whose PR waits to land, on
// the local forge's Actions runner with the real `afk-mcp worker` (dist/server/bin.js). No run of
// the victim is in flight, so no branch guard watches its branch; the landing's turn asks the
// runtime who pushed the head (server/runtimes/actions/head-vet.ts): the repository's activity
// names the runner token, this host's branch of the issue lacks the commit, so the branch is put
// back where it was before that push, the board says so, no attempt of the victim's is
// spent, and the victim lands with exactly its own work. The pushing run's attempt fails with the
// reason; its next one starts fresh and lands.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ACTIONS_CONFIG as CONFIG, actionsWorld, closed, comments, engineByIssue, runLogs, workflowRuns } from "./support/actions-fixtures.js";
import { api, cloneRepo, commitFile, git, repoPath, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, laneRows, laneText } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

interface Pull {
  number: number;
  state: string;
  head: { ref: string; sha: string };
}

async function openPullOf(forge: TestForge, n: number): Promise<Pull | null> {
  const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=open&per_page=100"))).body as Pull[];
  return pulls.find((p) => p.head.ref.startsWith(`afk/${n}-`)) ?? null;
}

async function subjects(forge: TestForge, rev: string): Promise<string[]> {
  return (await git(forge.bareRepo, "log", "--format=%s", rev)).stdout.split("\n").filter(Boolean);
}

describe("a runner's push onto a PR that waits to land (actions runtime, real afk-mcp worker, real git)", () => {
  it(
    "the landing's turn puts the branch back (no attempt of the victim's spent, its board says why, only its own work lands); the pushing run's attempt fails and its next one lands",
    { timeout: 600_000 },
    async () => {
      const { forge, dir, issues } = await actionsWorld(cleanups, ["Attacker", "Victim"], "afk-act-wait-", { actionsConcurrency: 2 });
      const [a, b] = issues as [number, number];
      const go = join(dir, "go");
      await mkdir(go);
      const command = await engineByIssue(dir, { [a]: `after:${b}`, [b]: "work" }, go);
      const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
      const story = async () =>
        `${await runLogs(forge)}\n===== supervisor\n${await laneText(host, forge.repo, "supervisor")}\n===== worker\n${await laneText(host, forge.repo, "worker", 600)}`;

      // Merges held: the victim's PR opens and waits, its run ended.
      await host.start({ repo: forge.repo, worker_command: command, target: 2, config: CONFIG });
      const waiting = await waitFor(`#${b}'s PR open`, () => openPullOf(forge, b), { deadlineMs: 4 * 60_000, intervalMs: 250, explain: story });
      const own = waiting.head.sha;
      assert.deepEqual(await subjects(forge, own).then((s) => s.slice(0, 1)), [`work for #${b}`]);

      // Now the attacker's run pushes a commit of its own onto the waiting PR's branch.
      await writeFile(join(go, `go-${a}`), "");
      await waitFor(
        `a hostile commit on #${b}'s branch`,
        async () => ((await subjects(forge, `refs/heads/${waiting.head.ref}`))[0]?.startsWith("hostile commit") ? true : null),
        { deadlineMs: 4 * 60_000, intervalMs: 250, explain: story },
      );
      // The attacker's attempt 1 fails for it (its run's end sees the push); attempt 2 opens its PR.
      await waitFor(`#${a}'s PR open`, () => openPullOf(forge, a), { deadlineMs: 4 * 60_000, intervalMs: 250, explain: story });
      const hostile = (await git(forge.bareRepo, "rev-parse", `refs/heads/${waiting.head.ref}`)).stdout.trim();
      assert.equal((await openPullOf(forge, b))?.head.sha, hostile, "the PR waits with the foreign head on it");

      // The user authorizes merges: the fleet is started again with auto_merge.
      await host.stop({ repo: forge.repo });
      await host.start({ repo: forge.repo, worker_command: command, target: 2, auto_merge: true, config: CONFIG });
      for (const n of [a, b]) await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 4 * 60_000, intervalMs: 500, explain: story });
      const told = await story();
      await host.stop({ repo: forge.repo, stop_workers: true });

      try {
        // The victim landed with exactly its own work; the hostile commit never reached main.
        const onMain = await subjects(forge, "main");
        assert.ok(onMain.includes(`work for #${b}`) && onMain.includes(`work for #${a}`), onMain.join("\n"));
        assert.ok(!onMain.some((s) => s.startsWith("hostile commit")), onMain.join("\n"));
        assert.ok(!(await git(forge.bareRepo, "ls-tree", "-r", "--name-only", "main")).stdout.includes("hostile-"), "no hostile file on main");

        // The branch was put back from the host (the fleet's login, not the runner's), at the victim's own head.
        const activity = (await api(forge, "GET", repoPath(forge, `/activity?ref=${encodeURIComponent(`refs/heads/${waiting.head.ref}`)}&per_page=100`)))
          .body as Array<{ before: string; after: string; actor: { login: string } | null }>;
        const putBack = activity.filter((e) => e.before === hostile && e.after === own);
        assert.equal(putBack.length, 1, JSON.stringify(activity));
        assert.notEqual(putBack[0]!.actor?.login, "github-actions[bot]");

        // One run for the victim (no attempt spent on the push); two for the attacker.
        const titles = (await workflowRuns(forge)).map((r) => r.display_title).sort();
        assert.deepEqual(titles, [`afk #${a} attempt 1`, `afk #${a} attempt 2`, `afk #${b} attempt 1`].sort());

        // The victim's board names the foreign push and no failure.
        const boardB = await comments(forge, b);
        const said = new RegExp(
          `a workflow run's job token pushed ${hostile.slice(0, 12)} onto ${waiting.head.ref}, PR #${waiting.number}'s branch, after this issue's run had ended .*the host put the branch back at ${own.slice(0, 12)}`,
        );
        assert.match(boardB, said);
        assert.doesNotMatch(boardB, /failed:/, boardB);
        // (Status says the note while the claim is held; once #b landed the claim is gone and the
        // answer is "not open", so which one this point meets is a race: tools-render's "where one
        // issue stands" holds the note's place in the status answer.)

        // The attacker retried once, for its push; the victim was never retried, nobody escalated; the notice is the victim's alone.
        const supervisor = await laneRows(host, forge.repo, "supervisor");
        const retries = supervisor.filter((r) => r.event === "retry");
        assert.deepEqual(
          retries.map((r) => r.issue),
          [a],
        );
        assert.match(String(retries[0]!.msg), new RegExp(`the runner pushed to refs/heads/${waiting.head.ref}, another issue's branch`));
        assert.equal(supervisor.filter((r) => r.event === "escalate" || r.event === "escalation").length, 0);
        const notices = supervisor.filter((r) => r.event === "runtime_notice");
        assert.ok(notices.length >= 1 && notices.every((r) => r.issue === b), JSON.stringify(notices));
      } catch (error) {
        (error as Error).message += `\n${told}`;
        throw error;
      }
    },
  );

  it("a user's own push onto the waiting PR (a fix by hand) is not the runner's: it lands as before, and nothing is said", { timeout: 600_000 }, async () => {
    const { forge, dir, issues } = await actionsWorld(cleanups, ["Fixed by hand"], "afk-act-wait-user-");
    const [n] = issues as [number];
    const command = await engineByIssue(dir, { [n]: "work" });
    const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
    const story = async () => `${await runLogs(forge)}\n===== supervisor\n${await laneText(host, forge.repo, "supervisor")}`;
    await host.start({ repo: forge.repo, worker_command: command, target: 1, config: CONFIG });
    const waiting = await waitFor(`#${n}'s PR open`, () => openPullOf(forge, n), { deadlineMs: 4 * 60_000, intervalMs: 250, explain: story });

    // The user pushes a commit onto the PR's branch with their own token.
    const clone = await cloneRepo(forge);
    await git(clone, "checkout", "--quiet", "-B", "fix", `origin/${waiting.head.ref}`);
    await commitFile(clone, `fix-${n}.txt`, "fixed by hand\n", `a fix by hand for #${n}`);
    await git(clone, "push", "--quiet", "origin", `fix:refs/heads/${waiting.head.ref}`);

    await host.stop({ repo: forge.repo });
    await host.start({ repo: forge.repo, worker_command: command, target: 1, auto_merge: true, config: CONFIG });
    await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 4 * 60_000, intervalMs: 500, explain: story });
    const told = await story();
    await host.stop({ repo: forge.repo, stop_workers: true });

    const onMain = await subjects(forge, "main");
    assert.ok(onMain.includes(`a fix by hand for #${n}`) && onMain.includes(`work for #${n}`), `${onMain.join("\n")}\n${told}`);
    const supervisor = await laneRows(host, forge.repo, "supervisor");
    assert.deepEqual(
      supervisor.filter((r) => r.event === "runtime_notice" || r.event === "retry"),
      [],
      told,
    );
    assert.equal((await workflowRuns(forge)).length, 1);
  });
});
