// Epics that close: an epic the ready label picks, with two sub-issues the fleet works and lands.
// Once both are closed, the fleet closes the epic as completed with one comment listing them.
// Each landed PR carries one validation comment (checks, commits, files), upserted.
// Real forge over HTTP (sub-issues and their summary as GitHub renders them), real git, real workers.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { EPIC_DONE_MARKER } from "../server/fleet/effects/close-epic.js";
import { upsertValidation, VALIDATION_MARKER } from "../server/fleet/effects/validation.js";
import { createGitHubForge } from "../server/gh/github-forge.js";
import { silentLogger } from "../server/gh/octokit.js";
import { api, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const cleanup: (() => Promise<unknown>)[] = [];

after(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

describe("epics.close_when_done", () => {
  it("closes a picked epic once its sub-issues landed, with one comment listing them", { timeout: 240_000 }, async () => {
    const forge: TestForge = await startTestForge();
    cleanup.push(() => forge.dispose());
    assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" })).status, 201);
    const make = async (title: string) =>
      (await api(forge, "POST", repoPath(forge, "/issues"), { title, labels: ["ready-for-agent"] })).body as { number: number; id: number };
    const epic = await make("The epic");
    const children = [await make("First part"), await make("Second part")];
    for (const child of children)
      assert.equal((await api(forge, "POST", repoPath(forge, `/issues/${epic.number}/sub_issues`), { sub_issue_id: child.id })).status, 201);
    const planDir = await tempDir("afk-plan-");
    const env = {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: await tempDir("afk-epics-"),
      AFK_USER_PLAN: planDir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    };
    for (const child of children) await writeFile(join(planDir, String(child.number)), "commit\n");
    const host = new FleetHost({ env, instance: "epichost", timeScale: 0.05 });
    cleanup.push(() => host.close());
    await host.start({
      repo: forge.repo,
      worker_command: `sh ${WORKER}`,
      target: 2,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: "true" } },
    });

    const issue = async (n: number) => (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; state_reason: string | null };
    await waitFor("the epic closed", async () => (await issue(epic.number)).state === "closed", { deadlineMs: 200_000 });
    for (const child of children) assert.equal((await issue(child.number)).state, "closed", `#${child.number} landed first`);
    assert.equal((await issue(epic.number)).state_reason, "completed");
    const comments = ((await api(forge, "GET", repoPath(forge, `/issues/${epic.number}/comments`))).body as Array<{ body: string }>).filter((c) =>
      c.body.includes(EPIC_DONE_MARKER),
    );
    assert.equal(comments.length, 1, "one closing comment");
    assert.ok(comments[0]!.body.includes(`#${children[0]!.number}, #${children[1]!.number}`), comments[0]!.body);
    // Each landed PR carries one validation comment: the gate's check, its commit, its file; a
    // second upsert by a caller that may come twice (mayExist) finds it and changes nothing.
    const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=closed"))).body as Array<{ number: number; body: string }>;
    assert.equal(pulls.length, 2);
    const gh = createGitHubForge({ repo: forge.repo, token: forge.token, baseUrl: forge.apiUrl, fast: true, logger: silentLogger });
    for (const pull of pulls) {
      const notes = ((await api(forge, "GET", repoPath(forge, `/issues/${pull.number}/comments`))).body as Array<{ body: string }>).filter((c) =>
        c.body.includes(VALIDATION_MARKER),
      );
      assert.equal(notes.length, 1, `one validation comment on PR #${pull.number}`);
      const n = Number(/Closes #(\d+)/.exec(pull.body)?.[1]);
      assert.match(notes[0]!.body, /Checks \(1\):\n- local gate `true`: passed/);
      assert.match(notes[0]!.body, new RegExp(`Commits \\(1\\):\\n- \`[0-9a-f]{12}\` fix #${n}`));
      assert.match(notes[0]!.body, new RegExp(`Files touched \\(1\\):\\n- \`issue-${n}.txt\``));
      assert.equal(await upsertValidation(gh, "afk-bot", pull.number, notes[0]!.body, { mayExist: true }), "unchanged");
      assert.equal(await upsertValidation(gh, "afk-bot", pull.number, `${notes[0]!.body}\nedited`, { mayExist: true }), "updated");
      const after = ((await api(forge, "GET", repoPath(forge, `/issues/${pull.number}/comments`))).body as Array<{ body: string }>).filter((c) =>
        c.body.includes(VALIDATION_MARKER),
      );
      assert.equal(after.length, 1, "upserted, never duplicated");
    }
    const records = (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 1000 })).records;
    assert.equal(records.filter((r) => r.event === "epic_closed").length, 1);
    assert.equal(records.filter((r) => r.event === "worker_born" && r.issue === epic.number).length, 0, "an epic is never worked");
  });
});
