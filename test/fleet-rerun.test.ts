// A flaky check costs no attempt (`gate.rerun_failed`), end to end on the local forge: real HTTP,
// real git, real worker processes, the forge's own Actions runner. A required GitHub Actions
// check that fails on its run's first attempt only is re-run through GitHub's "re-run failed jobs"
// and the issue lands on its first attempt (retry 0: a counted failure would escalate it); with
// the key at 0 the same failure counts at once. A local gate that fails once runs its command
// again and lands. The ledger and the final report count the re-runs and what they saved.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { laneDir } from "../server/lanes/index.js";
import { VALIDATION_MARKER } from "../server/fleet/effects/validation.js";
import { api, cloneRepo, commitFile, git, protectBranch, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();
const PACING = { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5 };

/** Required check `test`: a job of a pull_request workflow that fails on its run's first attempt only. */
const FLAKY_CI = `name: ci
on: pull_request
jobs:
  test:
    steps:
      - run: |
          echo "attempt $GITHUB_RUN_ATTEMPT"
          test "$GITHUB_RUN_ATTEMPT" -gt 1
`;

interface Report {
  totals: { attempts: number; reruns: number; reruns_saved: number };
  issues: Array<{ issue: number; outcome: string; attempts: number; reruns: number; reruns_saved: number }>;
}

/** A forge whose main carries the flaky workflow and requires its check; one ready issue. */
async function flakyWorld(prefix: string): Promise<{ forge: TestForge; dir: string; issue: number }> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  const work = await cloneRepo(forge);
  await commitFile(work, ".github/workflows/ci.yml", FLAKY_CI);
  await git(work, "push", "--quiet", "origin", "HEAD:main");
  await protectBranch(forge, { contexts: ["test"], strict: true });
  const [issue] = (await readyIssues(forge, ["Flaky task"])) as [number];
  return { forge, dir: await tempDir(prefix), issue };
}

type Row = Record<string, unknown>;

/** Starts a fleet with `config` (retry 0), waits for `done`, stops it; its ledger records and its final report. */
async function drain(
  world: { forge: TestForge; dir: string },
  config: Record<string, unknown>,
  what: string,
  done: () => Promise<boolean>,
): Promise<{ records: Row[]; report: Report }> {
  const worker = join(world.dir, "worker.sh");
  await writeFile(worker, workScript());
  const host = fleetHost(world.forge, world.dir, cleanups);
  await host.start({ repo: world.forge.repo, worker_command: `sh ${worker}`, target: 1, auto_merge: true, config: { retry: 0, pacing: PACING, ...config } });
  const ledger = async (): Promise<Row[]> => (await host.logs({ repo: world.forge.repo, lane: "ledger", tail_lines: 1000 })).records as Row[];
  await waitFor(what, done, {
    deadlineMs: 10 * 60_000,
    intervalMs: 250,
    explain: async () => (await ledger()).map((r) => `${String(r.event)} ${String(r.msg)}`).join("\n"),
  });
  await host.stop({ repo: world.forge.repo, stop_workers: true });
  const lanes = laneDir(join(world.dir, "state"), ...(world.forge.repo.split("/") as [string, string]));
  return { records: await ledger(), report: JSON.parse(readFileSync(join(lanes, "report.json"), "utf8")) as Report };
}

async function issueState(forge: TestForge, n: number): Promise<{ state: string; labels: Array<{ name: string }> }> {
  return (await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string; labels: Array<{ name: string }> };
}

/** The pull_request workflow runs of the forge, as [run_attempt, conclusion]. */
async function ciRuns(forge: TestForge): Promise<Array<[number, string | null]>> {
  const runs = (await api(forge, "GET", repoPath(forge, "/actions/runs?event=pull_request"))).body.workflow_runs as Array<{
    run_attempt: number;
    conclusion: string | null;
  }>;
  return runs.map((r) => [r.run_attempt, r.conclusion]);
}

describe("a red check is re-run before it counts (gate.rerun_failed)", () => {
  it("a flaky required Actions check is re-run through GitHub and the issue lands on its first attempt", async () => {
    const world = await flakyWorld("afk-rerun-actions-");
    const { records, report } = await drain(
      world,
      { gate: { ci: "required" }, landing: { strategy: "squash" } },
      `#${world.issue} landed`,
      async () => (await issueState(world.forge, world.issue)).state === "closed",
    );
    const events = records.filter((r) => r.issue === world.issue).map((r) => String(r.event));
    assert.equal(events.filter((e) => e === "rerun").length, 1, events.join(" "));
    assert.ok(!events.includes("retry") && !events.includes("escalation"), events.join(" "));
    assert.ok(events.indexOf("rerun") < events.indexOf("landing"), events.join(" "));
    const rerun = records.find((r) => r.event === "rerun")!.data as Row;
    assert.equal(rerun.checks, "test");
    assert.deepEqual(await ciRuns(world.forge), [[2, "success"]], "one workflow run, re-run once, passing on its second attempt");
    const mine = report.issues.find((i) => i.issue === world.issue)!;
    assert.deepEqual([mine.outcome, mine.attempts, mine.reruns, mine.reruns_saved], ["merged", 1, 1, 1]);
    assert.deepEqual([report.totals.reruns, report.totals.reruns_saved], [1, 1]);
    // The landed PR's validation note names the run that passed, not the attempt it replaced.
    const pr = Number((records.find((r) => r.event === "landing")!.data as Row).pr);
    const notes = ((await api(world.forge, "GET", repoPath(world.forge, `/issues/${pr}/comments`))).body as Array<{ body: string }>).map((c) => c.body);
    const note = notes.find((b) => b.includes(VALIDATION_MARKER)) ?? "";
    assert.match(note, /test: success/);
    assert.doesNotMatch(note, /test: failure/);
    // The issue's board says the flaky check was re-run at no attempt's cost.
    const boards = ((await api(world.forge, "GET", repoPath(world.forge, `/issues/${world.issue}/comments`))).body as Array<{ body: string }>).map(
      (c) => c.body,
    );
    assert.ok(
      boards.some((b) => /Note: test failed on [0-9a-f]{12} and was re-run \(1 of 1\); a flaky check costs no attempt/.test(b)),
      boards.join("\n---\n"),
    );
  });

  it("with gate.rerun_failed 0 the flaky check's first failure counts at once: nothing is re-run, the issue is escalated", async () => {
    const world = await flakyWorld("afk-rerun-off-");
    const { records, report } = await drain(
      world,
      { gate: { ci: "required", rerun_failed: 0 }, landing: { strategy: "squash" } },
      `#${world.issue} escalated`,
      async () => (await issueState(world.forge, world.issue)).labels.some((l) => l.name === "ready-for-human"),
    );
    assert.equal(records.filter((r) => r.event === "rerun").length, 0);
    assert.deepEqual(await ciRuns(world.forge), [[1, "failure"]], "the run was never re-run");
    const mine = report.issues.find((i) => i.issue === world.issue)!;
    assert.deepEqual([mine.outcome, mine.attempts, mine.reruns, mine.reruns_saved], ["escalated", 1, 0, 0]);
  });

  it("a local gate that fails once runs its command again and lands; the re-run is counted as saved", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const [issue] = (await readyIssues(forge, ["Flaky local gate"])) as [number];
    const dir = await tempDir("afk-rerun-local-");
    const runs = join(dir, "gate-runs");
    // Red on its first run only (a marker outside the tree counts the runs).
    const command = `echo run >> '${runs}'; test "$(wc -l < '${runs}')" -gt 1`;
    const { records, report } = await drain(
      { forge, dir },
      { gate: { ci: "local", local_command: command }, landing: { strategy: "push" } },
      `#${issue} landed`,
      async () => (await issueState(forge, issue)).state === "closed",
    );
    assert.equal(readFileSync(runs, "utf8").trim().split("\n").length, 2, "the gate ran twice: red, then its re-run green");
    const events = records.filter((r) => r.issue === issue).map((r) => String(r.event));
    assert.equal(events.filter((e) => e === "rerun").length, 1, events.join(" "));
    assert.ok(!events.includes("retry"), events.join(" "));
    const mine = report.issues.find((i) => i.issue === issue)!;
    assert.deepEqual([mine.outcome, mine.attempts, mine.reruns, mine.reruns_saved], ["merged", 1, 1, 1]);
  });
});
