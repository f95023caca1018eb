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
import { api, git, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
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
const CI_TEST = 'if [ -f work-1.txt ] && [ -f work-2.txt ] && [ ! -f fixed.txt ]; then echo "work-1.txt and work-2.txt together need fixed.txt" >&2; exit 1; fi';

interface Rec {
  event: string;
  issue?: number;
  msg?: string;
}

const cleanups = cleanupsAfterFile();

describe("the fleet on a base that requires a merge queue", () => {
  it("enqueues gated PRs, lands them through the queue, and retries a removal with the queue's reason", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    await readyIssues(forge, tasks(2));
    const ruleset = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "queue",
      enforcement: "active",
      target: "branch",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        { type: "merge_queue", parameters: { check_response_timeout_minutes: 60, grouping_strategy: "ALLGREEN", max_entries_to_build: 5, max_entries_to_merge: 5, merge_method: "MERGE", min_entries_to_merge: 1, min_entries_to_merge_wait_minutes: 5 } },
        { type: "required_status_checks", parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "test" }] } },
      ],
    });
    assert.equal(ruleset.status, 201);

    const dir = await tempDir("afk-mqueue-");
    const briefs = join(dir, "briefs");
    await git(dir, "init", "--quiet", briefs);
    await writeFile(join(dir, "worker.sh"), WORKER);
    const ci = startCiRunner({ apiUrl: forge.apiUrl, token: forge.token, repo: REPO, gitUrl: forge.gitUrl, workDir: join(dir, "ci"), intervalMs: 200, testCommand: ["sh", "-c", CI_TEST] });
    cleanups.push(() => ci.stop());
    const host = fleetHost(forge, dir, cleanups, { AFK_BRIEF_COPY_DIR: briefs });
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

    // NRSR: every first-parent commit of main (the seed aside) is a merge group — the previous
    // tip merged with a PR head — on which CI passed exactly as it stands.
    const clone = join(dir, "inspect");
    await git(dir, "clone", "--quiet", forge.gitUrl, clone);
    const line = (await git(clone, "log", "--first-parent", "--format=%H %P", "origin/main")).stdout.split("\n").filter(Boolean);
    const landed = line.filter((l) => l.split(" ").length > 1);
    assert.equal(landed.length, 2, "one group commit per landed issue");
    const heads = ((await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Array<{ head: { sha: string }; merged_at: string | null }>)
      .filter((p) => p.merged_at !== null)
      .map((p) => p.head.sha);
    for (const l of landed) {
      const [sha, , second] = l.split(" ");
      assert.ok(heads.includes(second!), `${sha} merges a merged PR's head`);
      const runs = (await api(forge, "GET", repoPath(forge, `/commits/${sha}/check-runs`))).body as { check_runs: Array<{ name: string; conclusion: string | null }> };
      assert.ok(runs.check_runs.some((r) => r.name === "test" && r.conclusion === "success"), `CI passed on ${sha}`);
    }
    const groups = (await api(forge, "GET", repoPath(forge, "/git/matching-refs/heads/gh-readonly-queue/"))).body as unknown[];
    assert.deepEqual(groups, [], "no merge group left behind");
    assert.deepEqual(forge.violations(), []);
  });
});
