// A PR opens already synced with a base that moved while its worker ran, so its CI runs once:
// on a base requiring up-to-date branches, the fleet's PR head contains the new base tip from
// the start, and the head CI passed is the head that lands (no second head, no second CI run).
// A base change that conflicts with the work is left to the landing's conflict path: the PR
// opens as the worker left it.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { api, branchTip, cloneRepo, commitFile, git, postCheck, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

interface Rec {
  event: string;
  msg: string;
  issue?: number;
  data?: { pr?: number; head?: string; reason?: string };
}

/** A fleet whose worker waits for `go` before it commits its work, on a strict, CI-gated base. */
async function setup(): Promise<{ forge: TestForge; go: string; lane: () => Promise<Rec[]>; start: () => Promise<unknown> }> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  const rules = [{ type: "required_status_checks", parameters: { strict_required_status_checks_policy: true, required_status_checks: [{ context: "ci" }] } }];
  const r = await api(forge, "POST", repoPath(forge, "/rulesets"), {
    name: "CI",
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
    rules,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  await readyIssues(forge, tasks(1));
  const dir = await tempDir("afk-presync-");
  const go = join(dir, "go");
  const worker = join(dir, "worker.sh");
  // The barrier comes first, so the base moves before the work is committed.
  await writeFile(worker, ["#!/bin/sh", `while [ ! -e '${go}' ]; do sleep 0.1; done`, workScript().split("\n").slice(1).join("\n")].join("\n"));
  const host = fleetHost(forge, dir, cleanups);
  return {
    forge,
    go,
    lane: async () => (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[],
    start: () => host.start({ repo: forge.repo, worker_command: `sh ${worker}`, target: 1, auto_merge: true, config: { gate: { ci: "required" } } }),
  };
}

/** Moves main by one commit of a human's touching `path`, CI-checked first as the base requires. */
async function moveBase(forge: TestForge, path: string, content: string): Promise<string> {
  const clone = await cloneRepo(forge);
  const sha = await commitFile(clone, path, content, `a human's change to ${path}`);
  await git(clone, "push", "-q", "origin", "HEAD:refs/heads/human");
  await postCheck(forge, sha, "success", "ci");
  await git(clone, "push", "-q", "origin", "HEAD:main");
  assert.equal(await branchTip(forge), sha);
  return sha;
}

describe("a PR opens synced with a base that moved while its worker ran", () => {
  it("contains the new base tip from the start, and lands at the head CI passed", { timeout: 10 * 60_000 }, async () => {
    const s = await setup();
    await s.start();
    await waitFor("the worker", async () => (await s.lane()).some((r) => r.event === "worker_born"), { deadlineMs: 5 * 60_000, intervalMs: 100 });
    const moved = await moveBase(s.forge, "human.txt", "a human was here\n");
    await writeFile(s.go, "");
    const opened = await waitFor("the PR", async () => (await s.lane()).find((r) => r.event === "pr_opened"), { deadlineMs: 5 * 60_000, intervalMs: 100 });
    assert.ok(
      (await s.lane()).some((r) => r.event === "presynced"),
      "a presynced record",
    );
    const head = opened.data!.head!;
    assert.equal(
      (await git(s.forge.bareRepo, "merge-base", "--is-ancestor", moved, head).catch(() => null)) !== null,
      true,
      `the PR head ${head} contains the moved base ${moved}`,
    );
    await postCheck(s.forge, head, "success", "ci");
    const pr = opened.data!.pr!;
    await waitFor("the PR merged", async () => ((await api(s.forge, "GET", repoPath(s.forge, `/pulls/${pr}`))).body as { merged: boolean }).merged, {
      deadlineMs: 5 * 60_000,
      intervalMs: 100,
    });
    const merged = (await api(s.forge, "GET", repoPath(s.forge, `/pulls/${pr}`))).body as { head: { sha: string } };
    assert.equal(merged.head.sha, head, "no sync after the PR opened: the head CI passed is the head that landed");
  });

  it("leaves a conflicting base change to the landing: the PR opens as the worker left it", { timeout: 10 * 60_000 }, async () => {
    const s = await setup();
    await s.start();
    const born = await waitFor("the worker", async () => (await s.lane()).find((r) => r.event === "worker_born"), { deadlineMs: 5 * 60_000, intervalMs: 100 });
    // The same file the worker writes, with other content: merging main in would conflict.
    const moved = await moveBase(s.forge, `work-${born.issue}.txt`, "a human's version\n");
    await writeFile(s.go, "");
    const opened = await waitFor("the PR", async () => (await s.lane()).find((r) => r.event === "pr_opened"), { deadlineMs: 5 * 60_000, intervalMs: 100 });
    const skipped = (await s.lane()).find((r) => r.event === "presync_skipped");
    assert.ok(skipped, "a presync_skipped record");
    assert.equal(skipped.data?.reason, "conflict");
    assert.match(skipped.msg, /conflicts in work-\d+\.txt/);
    assert.equal(
      await git(s.forge.bareRepo, "merge-base", "--is-ancestor", moved, opened.data!.head!).catch(() => null),
      null,
      "the PR head does not contain the conflicting base",
    );
  });
});
