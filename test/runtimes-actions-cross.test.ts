// A push from one issue's runner into another issue's branch, on the local forge's Actions runner
// with the real `afk-mcp worker` (dist/server/bin.js): every run's job token can push to every
// branch of the repository, so a hostile (prompt-injected) engine on issue A pushes a commit of its
// own onto issue B's branch while B's run is in flight. B's host trusts only the tips B's beats
// reported: it puts B's branch back, says so on B's board and in status, spends no attempt of B's,
// and B lands with exactly its own commits. A's run, the one that pushed there, ends with that
// reason on A's board, and A's next attempt starts fresh and lands. Nothing else is blamed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ACTIONS_CONFIG as CONFIG, actionsWorld, closed, comments, engineByIssue, runLogs, workflowRuns } from "./support/actions-fixtures.js";
import { git } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, laneRows, laneText } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

/**
 * A (engine mode cross:B) pushes onto B's branch once B's partial work is on origin, then does its
 * own work. B: "hold" waits until the test lets it go (after the branch was put back), then
 * works; "late" finishes as soon as it sees the foreign tip, so its last push meets it (the runner
 * says so in a beat and tries again once the host has put the branch back).
 */
async function crossPush(victim: "hold" | "late"): Promise<void> {
  const { forge, dir, issues } = await actionsWorld(cleanups, ["Attacker", "Victim"], "afk-act-cross-", { actionsConcurrency: 2 });
  const [a, b] = issues as [number, number];
  const go = join(dir, "go");
  await mkdir(go);
  const command = await engineByIssue(dir, { [a]: `cross:${b}`, [b]: victim }, go);
  const host = fleetHost(forge, dir, cleanups, { AFK_RUNTIME: "actions" });
  await host.start({ repo: forge.repo, worker_command: command, target: 2, auto_merge: true, config: CONFIG });
  const story = async () =>
    `${await runLogs(forge)}\n===== supervisor\n${await laneText(host, forge.repo, "supervisor")}\n===== worker\n${await laneText(host, forge.repo, "worker", 600)}`;

  // A's push lands on B's branch; B's host, at B's next beat, finds a tip no beat of B's reported and puts it back.
  const undone = await waitFor(
    `#${b}'s host to put its branch back`,
    async () =>
      (await laneRows(host, forge.repo, "worker")).find((r) => r.issue === b && /^afk: a push this issue's run never made moved afk\//.test(String(r.msg))) ??
      null,
    { deadlineMs: 4 * 60_000, intervalMs: 250, explain: story },
  );
  const branch = /moved (afk\/\S+) to/.exec(String(undone.msg))![1]!;
  assert.match(branch, new RegExp(`^afk/${b}-`));
  const tip = (await git(forge.bareRepo, "rev-parse", `refs/heads/${branch}`)).stdout.trim();
  const onBranch = (await git(forge.bareRepo, "log", "--format=%s", tip)).stdout.split("\n");
  assert.ok(onBranch.includes(`partial work for #${b}`) && !onBranch.some((l) => l.startsWith("hostile commit")), onBranch.join("\n"));
  if (victim === "hold") {
    assert.equal(onBranch[0], `partial work for #${b}`, "the branch is back at B's own tip");
    // Status says it while B runs.
    const status = await host.status({ repo: forge.repo, scope: "issue", issue: b });
    assert.match(String(status.issue?.detail), new RegExp(`note: a push this issue's run never made moved ${branch} to [0-9a-f]{12}`));
  }

  // B goes on (a late B has already): its work lands on top of its partial work.
  await writeFile(join(go, `go-${b}`), "");
  for (const n of [a, b]) await waitFor(`#${n} landed and closed`, () => closed(forge, n), { deadlineMs: 6 * 60_000, intervalMs: 500, explain: story });
  const told = await story();
  await host.stop({ repo: forge.repo, stop_workers: true });

  // A failure tells the lanes as they were once both issues had landed.
  try {
    // B landed with exactly its own commits; the hostile file never reached main.
    const subjects = (await git(forge.bareRepo, "log", "--format=%s", "main")).stdout.split("\n");
    assert.ok(subjects.includes(`partial work for #${b}`) && subjects.includes(`work for #${b}`), subjects.join("\n"));
    assert.ok(!subjects.some((s) => s.startsWith("hostile commit")), subjects.join("\n"));
    assert.ok(!(await git(forge.bareRepo, "ls-tree", "-r", "--name-only", "main")).stdout.includes("hostile-"), "no hostile file on main");
    for (const n of [a, b]) assert.equal((await git(forge.bareRepo, "show", `main:work-${n}.txt`)).stdout.trim(), `work for ${n}`);

    // One run for B (no attempt spent on A's push); two for A.
    const titles = (await workflowRuns(forge)).map((r) => r.display_title).sort();
    assert.deepEqual(titles, [`afk #${a} attempt 1`, `afk #${a} attempt 2`, `afk #${b} attempt 1`].sort());

    // B's board names the foreign push and no failure; A's names its push into B's branch.
    const boardB = await comments(forge, b);
    assert.match(
      boardB,
      new RegExp(`> Note: a push this issue's run never made moved ${branch} to [0-9a-f]{12} .*the host put the branch back at [0-9a-f]{12}`),
    );
    assert.doesNotMatch(boardB, /failed:/, boardB);
    assert.match(await comments(forge, a), new RegExp(`Attempt 1 failed: the runner pushed to refs/heads/${branch}, another issue's branch`));

    // A retried once, fresh (tier 3); nobody else was blamed or escalated.
    const supervisor = await laneRows(host, forge.repo, "supervisor");
    assert.deepEqual(
      supervisor.filter((r) => r.event === "retry").map((r) => r.issue),
      [a],
      await laneText(host, forge.repo, "supervisor"),
    );
    assert.equal(supervisor.filter((r) => r.event === "escalate" || r.event === "escalation").length, 0);
    const born = supervisor.filter((r) => r.event === "worker_born" && r.issue === a && r.attempt === 2);
    assert.equal(born.length, 1);
    assert.equal((born[0]!.data as { tier?: unknown }).tier, 3, "A's next attempt starts fresh");
    assert.deepEqual(
      supervisor.filter((r) => r.event === "runtime_notice").map((r) => r.issue),
      [b],
    );
    assert.ok(!(await laneText(host, forge.repo, "worker", 2000)).includes("ghs_"), "no run token in the lanes");
  } catch (error) {
    (error as Error).message += `\n${told}`;
    throw error;
  }
}

describe("a runner's push into another issue's branch (actions runtime, real afk-mcp worker, real git)", () => {
  it(
    "the victim's host puts its branch back (no attempt spent, only its own commits land, its board and status say why); the pushing run's attempt fails with that reason and the next one starts fresh and lands",
    { timeout: 600_000 },
    () => crossPush("hold"),
  );

  it(
    "a victim whose last push meets the foreign tip: its runner says so in a beat and pushes again once its host put the branch back; nothing of its work is lost",
    { timeout: 600_000 },
    () => crossPush("late"),
  );
});
