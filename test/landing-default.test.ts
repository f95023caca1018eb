// The Not Rocket Science Rule by default, on the local forge. With no landing configured, a
// base the token may push to is landed on by fast-forward pushes of gated heads, so a commit
// that lands inside a merge call (the forge's base_moves_before_merge fault) cannot put an
// ungated tree on it: every first-parent commit of the base is a tree the gate ran on. A base
// that refuses direct pushes and does not require up-to-date branches is refused for
// auto-merge with the fix, unless the user accepts the race; one that requires them lands
// through the merge API.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { api, cloneRepo, commitFile, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { waitFor } from "./support/wait.js";

const hosts: FleetHost[] = [];
const forges: TestForge[] = [];

after(async () => {
  for (const host of hosts) await host.close().catch(() => undefined);
  await Promise.all(forges.map((f) => f.dispose()));
});

async function setup(titles: string[]): Promise<{ forge: TestForge; dir: string; host: FleetHost; issues: number[] }> {
  const forge = await startTestForge();
  forges.push(forge);
  assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" })).status, 201);
  const issues: number[] = [];
  for (const title of titles) issues.push((await api(forge, "POST", repoPath(forge, "/issues"), { title, labels: ["ready-for-agent"] })).body.number as number);
  const dir = await tempDir("afk-nrsr-");
  const host = new FleetHost({
    env: {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: join(dir, "state"),
      AFK_USER_DIR: dir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    },
    timeScale: 0.05,
  });
  hosts.push(host);
  return { forge, dir, host, issues };
}

async function ruleset(forge: TestForge, name: string, rules: unknown[]): Promise<void> {
  const r = await api(forge, "POST", repoPath(forge, "/rulesets"), {
    name,
    target: "branch",
    enforcement: "active",
    conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
    rules,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

const landing = (plan: { preconditions: { name: string; ok: boolean; severity: string; message: string }[] } | null) =>
  plan?.preconditions.find((p) => p.name === "landing");

describe("NRSR by default", () => {
  it(
    "lands by fast-forward push where the token may push: every first-parent commit of the base is a gated tree, and a base_moves_before_merge fault finds no merge call to race",
    { timeout: 240_000 },
    async () => {
      const s = await setup(["add alpha", "add bravo"]);
      // The gate records each tree it passes: the trees that may land.
      const worker = join(s.dir, "worker.sh");
      await writeFile(
        worker,
        [
          "cat > /dev/null",
          'echo "$AFK_ISSUE" > "work-$AFK_ISSUE.txt"',
          'git add -A && git -c user.name=w -c user.email=w@example.com -c commit.gpgsign=false commit -qm "work for #$AFK_ISSUE"',
          "",
        ].join("\n"),
      );
      await api(s.forge, "POST", "/_forge/once", { kind: "base_moves_before_merge" });
      const started = await s.host.start({
        repo: s.forge.repo,
        worker_command: `sh ${worker}`,
        target: 2,
        auto_merge: true,
        config: {
          gate: { ci: "local", local_command: `git rev-parse "HEAD^{tree}" >> ${join(s.dir, "gated")}` },
          pacing: { busy_seconds: 10, idle_seconds: 10, long_idle_seconds: 10 },
        },
      });
      assert.match(landing(started.plan)?.message ?? "", /auto: fast-forward push/);
      let states: string[] = [];
      await waitFor(
        "the issues to land",
        async () =>
          (states = await Promise.all(s.issues.map(async (n) => (await api(s.forge, "GET", repoPath(s.forge, `/issues/${n}`))).body.state as string))).every(
            (st) => st === "closed",
          ),
        { deadlineMs: 200_000, intervalMs: 500, explain: () => `issue states: ${states.join(", ")}` },
      );
      await s.host.stop({ repo: s.forge.repo, stop_workers: true });
      const merged = (await s.host.logs({ repo: s.forge.repo, lane: "supervisor", tail_lines: 1000 })).records.filter((r) => r.event === "merged");
      assert.equal(merged.length, 2);
      for (const r of merged) assert.equal((r.data as { method?: string }).method, "push");

      const gated = new Set((await readFile(join(s.dir, "gated"), "utf8")).split("\n").filter(Boolean));
      const clone = await cloneRepo(s.forge);
      const log = (await git(clone, "log", "--first-parent", "--format=%H %T %an", "origin/main")).stdout.split("\n").filter(Boolean);
      assert.equal(log.length, 3, `the seed commit and one fast-forward per issue:\n${log.join("\n")}`);
      for (const line of log.slice(0, -1)) {
        const [sha, tree, author] = line.split(" ");
        assert.ok(
          gated.has(tree!),
          `main's first-parent commit ${sha} (by ${author}) has a tree the gate never ran on (gated: ${[...gated].join(", ")}; main:\n${log.join("\n")}\n${JSON.stringify(merged.map((r) => r.data))})`,
        );
      }
    },
  );

  it(
    "refuses auto-merge, with the fix, on a base that refuses pushes and does not require up-to-date branches; the opt-out accepts it",
    { timeout: 120_000 },
    async () => {
      const s = await setup(["add charlie"]);
      await ruleset(s.forge, "PRs only", [{ type: "pull_request" }]);
      // The forge refuses a plain push to the base, as GitHub does under such a ruleset.
      const human = await cloneRepo(s.forge);
      await commitFile(human, "direct.txt", "direct\n");
      await assert.rejects(git(human, "push", "--quiet", "origin", "HEAD:main"), /Changes must be made through a pull request/);

      const input = { repo: s.forge.repo, worker_command: "true", config: { gate: { ci: "local", local_command: "true" } } };
      await assert.rejects(s.host.start({ ...input, auto_merge: true }), (error: Error) => {
        assert.match(error.message, /project_start refused: landing: no landing keeps "main" on gated trees/);
        assert.match(error.message, /pull_request/);
        assert.match(error.message, /require branches to be up to date before merging on "main"/);
        assert.match(error.message, /landing\.allow_untested_race: true/);
        return true;
      });
      const held = await s.host.start({ ...input, auto_merge: false, dry_run: true });
      assert.equal(landing(held.plan)?.severity, "warn", "merges held: a warning, not a refusal");
      const optedOut = await s.host.start({ ...input, auto_merge: true, dry_run: true, config: { ...input.config, landing: { allow_untested_race: true } } });
      assert.equal(landing(optedOut.plan)?.severity, "warn");
      assert.match(optedOut.message, /a start would be accepted/);
    },
  );

  it("lands through the merge API where the base requires up-to-date branches", { timeout: 120_000 }, async () => {
    const s = await setup(["add delta"]);
    await ruleset(s.forge, "PRs, checked and up to date", [
      { type: "pull_request" },
      { type: "required_status_checks", parameters: { strict_required_status_checks_policy: true, required_status_checks: [{ context: "ci" }] } },
    ]);
    const plan = await s.host.start({ repo: s.forge.repo, worker_command: "true", auto_merge: true, dry_run: true });
    assert.equal(landing(plan.plan)?.severity, "ok");
    assert.match(landing(plan.plan)?.message ?? "", /auto: squash through the merge API; "main" requires up-to-date branches/);
  });
});
