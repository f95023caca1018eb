// The fleet on a base that requires GitHub's merge queue (a `merge_queue` ruleset rule), against
// the local forge and the demo's CI runner, which tests PR heads and merge groups alike. Two
// issues whose changes pass alone and fail together: the first PR is enqueued and lands when its
// merge group passes; the second's group fails, the queue removes it, and the fleet treats the
// removal as a red gate — the retry's brief carries the queue's reason — after which the fixed
// attempt lands through the queue too. The fleet never calls the REST merge, and every commit on
// the base's first-parent line is a merge group CI passed on, exactly as it stands.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startCiRunner } from "../server/demo/ci-runner.js";
import type { FleetHost } from "../server/host/host.js";
import { api, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { gql } from "./support/graphql-check.js";
import { cleanupsAfterFile, COMMIT_WORK, fleetHost, readyIssues, tasks } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";

// A later attempt knows what the queue said (its brief) and adds the fix.
const WORKER = [
  "#!/bin/sh",
  'cat > "brief-$AFK_ISSUE-$AFK_ATTEMPT.md"',
  'if [ "$AFK_ATTEMPT" -gt 1 ]; then echo fixed > fixed.txt; fi',
  'mv "brief-$AFK_ISSUE-$AFK_ATTEMPT.md" "$AFK_BRIEF_COPY_DIR/" 2>/dev/null || true',
  ...COMMIT_WORK,
  "",
].join("\n");

// Each change passes alone; both together need fixed.txt.
const CI_TEST =
  'if [ -f work-1.txt ] && [ -f work-2.txt ] && [ ! -f fixed.txt ]; then echo "work-1.txt and work-2.txt together need fixed.txt" >&2; exit 1; fi';

interface Rec {
  event: string;
  issue?: number;
  msg?: string;
}

const cleanups = cleanupsAfterFile();

/** A forge whose default branch requires a merge queue and the check "test", `issues` ready issues, the CI runner, a host. */
async function setUp(issues: number, ciTest: string): Promise<{ forge: TestForge; host: FleetHost; dir: string; briefs: string }> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  await readyIssues(forge, tasks(issues));
  const ruleset = await api(forge, "POST", repoPath(forge, "/rulesets"), {
    name: "queue",
    enforcement: "active",
    target: "branch",
    conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
    rules: [
      {
        type: "merge_queue",
        parameters: {
          check_response_timeout_minutes: 60,
          grouping_strategy: "ALLGREEN",
          max_entries_to_build: 5,
          max_entries_to_merge: 5,
          merge_method: "MERGE",
          min_entries_to_merge: 1,
          min_entries_to_merge_wait_minutes: 5,
        },
      },
      { type: "required_status_checks", parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "test" }] } },
    ],
  });
  assert.equal(ruleset.status, 201);
  const dir = await tempDir("afk-mqueue-");
  const briefs = join(dir, "briefs");
  await git(dir, "init", "--quiet", briefs);
  await writeFile(join(dir, "worker.sh"), WORKER);
  const ci = startCiRunner({
    apiUrl: forge.apiUrl,
    token: forge.token,
    repo: REPO,
    gitUrl: forge.gitUrl,
    workDir: join(dir, "ci"),
    intervalMs: 200,
    testCommand: ["sh", "-c", ciTest],
  });
  cleanups.push(() => ci.stop());
  return { forge, host: fleetHost(forge, dir, cleanups, { AFK_BRIEF_COPY_DIR: briefs }), dir, briefs };
}

/** NRSR under a queue: `count` landings, each a merge group CI passed on exactly as it stands; no group left. */
async function assertQueueGroupsOnly(forge: TestForge, dir: string, count: number): Promise<void> {
  // NRSR: every first-parent commit of main (the seed aside) is a merge group — the previous
  // tip merged with a PR head — on which CI passed exactly as it stands.
  const clone = join(dir, "inspect");
  await git(dir, "clone", "--quiet", forge.gitUrl, clone);
  const line = (await git(clone, "log", "--first-parent", "--format=%H %P", "origin/main")).stdout.split("\n").filter(Boolean);
  const landed = line.filter((l) => l.split(" ").length > 1);
  assert.equal(landed.length, count, "one group commit per landed issue");
  const heads = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Array<{ head: { sha: string }; merged_at: string | null }>)
    .filter((p) => p.merged_at !== null)
    .map((p) => p.head.sha);
  for (const l of landed) {
    const [sha, , second] = l.split(" ");
    assert.ok(heads.includes(second!), `${sha} merges a merged PR's head`);
    const runs = (await api(forge, "GET", repoPath(forge, `/commits/${sha}/check-runs`))).body as {
      check_runs: Array<{ name: string; conclusion: string | null }>;
    };
    assert.ok(
      runs.check_runs.some((r) => r.name === "test" && r.conclusion === "success"),
      `CI passed on ${sha}`,
    );
  }
  const groups = (await api(forge, "GET", repoPath(forge, "/git/matching-refs/heads/gh-readonly-queue/"))).body as unknown[];
  assert.deepEqual(groups, [], "no merge group left behind");
}

describe("the fleet on a base that requires a merge queue", () => {
  it("enqueues gated PRs, lands them through the queue, and retries a removal with the queue's reason", async () => {
    const { forge, host, dir, briefs } = await setUp(2, CI_TEST);
    await host.start({
      repo: REPO,
      worker_command: `sh ${join(dir, "worker.sh")}`,
      target: 2,
      auto_merge: true,
      config: { gate: { ci: "required" }, retry: 2, worker: { env_passthrough: ["AFK_BRIEF_COPY_DIR"] } },
    });

    const supervisor = async (): Promise<Rec[]> => (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[];
    await waitFor("2 issues to land", async () => (await supervisor()).filter((r) => r.event === "merged").length >= 2, {
      deadlineMs: 5 * 60_000,
      intervalMs: 250,
      explain: async () => JSON.stringify((await supervisor()).slice(-15)),
    });

    const recs = await supervisor();
    const retries = recs.filter((r) => r.event === "retry");
    assert.equal(retries.length, 1, `one retry: ${JSON.stringify(retries)}`);
    assert.match(retries[0]!.msg ?? "", /the merge queue removed PR #\d+: The merge group failed required status checks: test/);
    const retried = retries[0]!.issue!;
    const brief = await readFile(join(briefs, `brief-${retried}-2.md`), "utf8");
    assert.match(brief, /The merge group failed required status checks: test/, "the retry's brief carries the queue's reason");

    // Only the queue merged: the fleet used GraphQL and never the REST merge.
    const accounting = (await api(forge, "GET", "/_forge/accounting")).body as { by_route: Record<string, { total: number }> };
    assert.equal(accounting.by_route["PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge"]?.total ?? 0, 0);
    assert.ok((accounting.by_route["POST /graphql"]?.total ?? 0) >= 4, "status reads and enqueues went through GraphQL");

    await assertQueueGroupsOnly(forge, dir, 2);
    assert.deepEqual(forge.violations(), []);
  });

  it("enqueues several green PRs at once (up to landing.train.max): the queue holds them together and merges each", async () => {
    // Each change passes; a second of CI per merge group keeps the queue's entries side by side a while.
    const { forge, host, dir } = await setUp(3, "sleep 1");
    const config = { gate: { ci: "required" as const }, landing: { train: { max: 3 } } };
    const start = (autoMerge: boolean) => host.start({ repo: REPO, worker_command: `sh ${join(dir, "worker.sh")}`, target: 3, auto_merge: autoMerge, config });
    // Merges held until all three PRs are green, then a restart with merges authorized: the
    // landing then starts with three green PRs, whatever the machine's load.
    await start(false);
    const lastTick = async (): Promise<{ merges_held?: number[] }> =>
      ((await host.logs({ repo: REPO, lane: "monitor", tail_lines: 5000 })).records as unknown as Array<{ event: string; data?: { merges_held?: number[] } }>)
        .filter((r) => r.event === "tick")
        .at(-1)?.data ?? {};
    await waitFor("three PRs green and held", async () => ((await lastTick()).merges_held ?? []).length === 3, { deadlineMs: 10 * 60_000, intervalMs: 250 });
    await host.stop({ repo: REPO, stop_workers: false });
    await start(true);
    const [owner, name] = REPO.split("/");
    let most = 0;
    await waitFor(
      "3 issues to land",
      async () => {
        const queue = await gql(
          forge,
          `query($o: String!, $n: String!) { repository(owner: $o, name: $n) { mergeQueue(branch: "main") { entries(first: 10) { totalCount } } } }`,
          { o: owner, n: name },
        );
        const data = queue.body as { data?: { repository?: { mergeQueue?: { entries?: { totalCount?: number } } } } };
        most = Math.max(most, data.data?.repository?.mergeQueue?.entries?.totalCount ?? 0);
        return (
          ((await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[]).filter((r) => r.event === "merged").length >= 3
        );
      },
      { deadlineMs: 10 * 60_000, intervalMs: 100 },
    );
    assert.ok(most >= 2, `the queue held ${most} of the fleet's entries at most: they were enqueued one at a time`);
    const accounting = (await api(forge, "GET", "/_forge/accounting")).body as { by_route: Record<string, { total: number }> };
    assert.equal(accounting.by_route["PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge"]?.total ?? 0, 0, "never the REST merge");
    await assertQueueGroupsOnly(forge, dir, 3);
    assert.deepEqual(forge.violations(), []);
  });
});
