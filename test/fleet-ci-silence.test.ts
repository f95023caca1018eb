// CI that never reports is said, not waited on in silence: a fleet PR whose head no check has
// reported on (no CI at all), or whose required check never reports under that name, gets one
// `ci_silent` warning per head naming the likely fix, and status's text says what the PR waits
// for. Time scale 0.01: CI_SILENT_SECONDS (600) is 6 s here.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FleetHost } from "../server/host/host.js";
import { renderPlan } from "../server/host/api.js";
import { api, postCheck, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

interface Rec {
  event: string;
  level: string;
  msg: string;
  issue?: number;
  data?: { pr?: number; head?: string; unreported?: string[] };
}

async function fleet(forge: TestForge): Promise<{ host: FleetHost; start: () => Promise<unknown>; lane: () => Promise<Rec[]> }> {
  await readyIssues(forge, tasks(1));
  const dir = await tempDir("afk-silent-");
  const worker = join(dir, "worker.sh");
  await writeFile(worker, workScript());
  const host = fleetHost(forge, dir, cleanups, {}, { timeScale: 0.01 });
  return {
    host,
    start: () => host.start({ repo: forge.repo, worker_command: `sh ${worker}`, target: 1, auto_merge: true, config: { gate: { ci: "required" } } }),
    lane: async () => (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[],
  };
}

const silent = (records: Rec[]): Rec[] => records.filter((r) => r.event === "ci_silent");

describe("CI that never reports", () => {
  it("with no CI at all: one warning per head pointing at gate.ci local, and status says what the PR waits for", { timeout: 10 * 60_000 }, async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const f = await fleet(forge);
    await f.start();
    const warned = await waitFor("a ci_silent warning", async () => silent(await f.lane()).at(0), { deadlineMs: 5 * 60_000, intervalMs: 250 });
    assert.equal(warned.level, "warn");
    assert.match(warned.msg, /no CI has reported on PR #\d+'s head [0-9a-f]{12} in \d+ min/);
    assert.match(warned.msg, /gate\.ci to "local" with gate\.local_command/);
    assert.deepEqual(warned.data?.unreported, ["any check"]);
    const pr = warned.data!.pr!;
    // The plan's text, as the status tool renders it, from the fleet's last tick.
    const status = await f.host.status({ repo: forge.repo });
    assert.ok(status.plan);
    assert.match(renderPlan(status.plan, true), new RegExp(`awaiting_ci {2}PR #${pr} {2}waiting for: \\(no check has reported on this head yet\\)`));
    const issue = await f.host.status({ repo: forge.repo, scope: "issue", issue: warned.issue! });
    assert.match(issue.issue?.detail ?? "", /awaiting_ci \(PR #\d+\); waiting for: \(no check has reported on this head yet\)/);
    // Several silent periods later, still one warning for this head.
    const ticks = async (): Promise<number> =>
      ((await f.host.logs({ repo: forge.repo, lane: "monitor", tail_lines: 5000 })).records as unknown as Rec[]).filter((r) => r.event === "tick").length;
    const from = await ticks();
    await waitFor("more ticks", async () => (await ticks()) >= from + 10, { deadlineMs: 5 * 60_000, intervalMs: 250 });
    assert.equal(silent(await f.lane()).length, 1);
    // Nothing landed: the fleet never merges a head no check has looked at.
    const pull = (await api(forge, "GET", repoPath(forge, `/pulls/${pr}`))).body as { merged: boolean; state: string };
    assert.equal(pull.merged, false);
    assert.equal(pull.state, "open");
  });

  it("with a required check CI never reports under that name: the warning names it", { timeout: 10 * 60_000 }, async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    const rules = [
      { type: "required_status_checks", parameters: { strict_required_status_checks_policy: false, required_status_checks: [{ context: "ci" }] } },
    ];
    const r = await api(forge, "POST", repoPath(forge, "/rulesets"), {
      name: "CI",
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const f = await fleet(forge);
    await f.start();
    // CI reports, but under another name than the one the base requires.
    const opened = await waitFor(
      "the fleet's PR",
      async () => {
        const pulls = (await api(forge, "GET", repoPath(forge, "/pulls"))).body as Array<{ number: number; head: { sha: string } }>;
        return pulls.at(0);
      },
      { deadlineMs: 5 * 60_000, intervalMs: 250 },
    );
    await postCheck(forge, opened.head.sha, "success", "build");
    const warned = await waitFor("a ci_silent warning", async () => silent(await f.lane()).at(0), { deadlineMs: 5 * 60_000, intervalMs: 250 });
    assert.equal(warned.data?.pr, opened.number);
    assert.deepEqual(warned.data?.unreported, ["ci"]);
    assert.match(warned.msg, /the required check\(s\) ci have not reported on PR #\d+'s head/);
    assert.match(warned.msg, /required check names are the names CI reports/);
    // Once the required name reports, the PR lands and nothing more is said.
    await postCheck(forge, opened.head.sha, "success", "ci");
    await waitFor("the PR merged", async () => ((await api(forge, "GET", repoPath(forge, `/pulls/${opened.number}`))).body as { merged: boolean }).merged, {
      deadlineMs: 5 * 60_000,
      intervalMs: 250,
    });
    assert.equal(silent(await f.lane()).length, 1);
  });
});
