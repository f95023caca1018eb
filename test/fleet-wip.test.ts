// Nothing a worker left is lost on escalation: a worker commits a first step, leaves a modified
// file and untracked ones (one in a new directory) uncommitted, and gives up with no retries
// left. Before the claim goes, the fleet commits the leftovers as a marked work-in-progress
// checkpoint on the issue branch, pushes it (fenced by the claim), and names the branch and the
// commit in the escalation comment. Real forge over HTTP, real git, a real worker process.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { WIP_SUBJECT } from "../server/worktrees/wip.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const cleanup: (() => Promise<unknown>)[] = [];

after(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

describe("escalation keeps the worker's uncommitted work", () => {
  it("commits modified and untracked files as a work-in-progress checkpoint, pushes the branch and names it", { timeout: 240_000 }, async () => {
    const forge: TestForge = await startTestForge();
    cleanup.push(() => forge.dispose());
    assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" })).status, 201);
    const n = (await api(forge, "POST", repoPath(forge, "/issues"), { title: "Half done", labels: ["ready-for-agent"] })).body.number as number;
    const planDir = await tempDir("afk-plan-");
    await writeFile(join(planDir, String(n)), "dirty\n");
    const env = {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: await tempDir("afk-wip-"),
      AFK_USER_PLAN: planDir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    };
    const host = new FleetHost({ env, instance: "wiphost", timeScale: 0.05 });
    cleanup.push(() => host.close());
    await host.start({ repo: forge.repo, worker_command: `sh ${WORKER}`, target: 1, config: { retry: 0, gate: { ci: "local", local_command: "true" } } });

    // The comment is the escalation's last request: the label is on by then.
    const escalation = await waitFor(
      "the escalation comment",
      async () => {
        const comments = (await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as Array<{ body: string }>;
        return comments.map((c) => c.body).find((b) => b.includes("keeps the last attempt's work"));
      },
      { deadlineMs: 180_000 },
    );
    const labels = ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.labels as Array<{ name: string }>).map((l) => l.name);
    assert.ok(labels.includes("ready-for-human"), labels.join(", "));

    // The branch on the forge: the worker's commit, then the checkpoint with every leftover.
    const branch = (await git(forge.bareRepo, "for-each-ref", "--format=%(refname:short)", `refs/heads/afk/${n}-*`)).stdout.trim();
    assert.match(branch, new RegExp(`^afk/${n}-half-done$`));
    assert.ok(escalation.includes(`Branch \`${branch}\``), "the comment names the pushed branch");
    const subjects = (await git(forge.bareRepo, "log", "--format=%s", "main.." + branch)).stdout.trim().split("\n");
    assert.deepEqual(subjects, [`${WIP_SUBJECT} (#${n})`, `step 1 of #${n}`]);
    const tip = (await git(forge.bareRepo, "rev-parse", branch)).stdout.trim();
    assert.ok(escalation.includes(`\`${tip.slice(0, 12)}\``) && escalation.includes("3 files"), escalation);
    const files = (await git(forge.bareRepo, "diff-tree", "--no-commit-id", "--name-status", "-r", tip)).stdout.trim().split("\n").sort();
    assert.deepEqual(files, [`A\tnotes/draft.txt`, `A\tscratch-${n}.txt`, `M\tissue-${n}.txt`]);
    assert.equal((await git(forge.bareRepo, "show", `${tip}:issue-${n}.txt`)).stdout.trim(), `step 2 of ${n}, uncommitted`);
    // The claim is gone (no phantom lock), and exactly one checkpoint was made.
    assert.equal((await git(forge.bareRepo, "for-each-ref", "refs/afk/claim/")).stdout.trim(), "");
    const records = (await host.logs({ repo: forge.repo, lane: "supervisor", issue: n, tail_lines: 500 })).records;
    assert.equal(records.filter((r) => r.event === "wip_checkpoint").length, 1);
  });
});
