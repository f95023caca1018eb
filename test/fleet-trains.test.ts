// Landing trains through the whole fleet: a FleetHost with `landing.train.max` 8, four workers
// that finish together (a barrier), under the local gate and under required CI (the demo's CI
// runner, which tests the train's draft PR). decide sends the green PRs as one train, the
// land_train effect lands them, the boards name the train, every issue closes, and every commit
// on the base's first-parent line has a tree the gate passed.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startCiRunner } from "../server/demo/ci-runner.js";
import { api, git, protectBranch, repoPath, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { gateScript } from "./support/train-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";
import { VALIDATION_MARKER } from "../server/fleet/effects/validation.js";

const REPO = "afk/demo";
const ISSUES = 4;

interface Rec {
  event: string;
  issue?: number;
  data?: { landings?: Array<{ train: string; issues: number[] }> };
}

const cleanups = cleanupsAfterFile();

describe("landing trains through the fleet", { concurrency: true }, () => {
  for (const mode of ["local", "required"] as const) {
    it(`${mode === "local" ? "local gate" : "required CI (the demo's CI runner)"}: four green PRs land in trains; boards name the train, issues close, the base holds gated trees only`, () =>
      fleetTrains(mode));
  }
});

async function fleetTrains(mode: "local" | "required"): Promise<void> {
  const forge = await startTestForge();
  cleanups.push(() => forge.dispose());
  await readyIssues(forge, tasks(ISSUES));
  const dir = await tempDir("afk-fleet-trains-");
  const barrier = join(dir, "barrier");
  await mkdir(barrier);
  // Each worker commits, then waits until all four have: their PRs turn green together.
  const worker = join(dir, "worker.sh");
  await writeFile(worker, workScript(`touch "${barrier}/$AFK_ISSUE"`, `while [ "$(ls "${barrier}" | wc -l)" -lt ${ISSUES} ]; do sleep 0.1; done`));
  const gate = await gateScript();
  if (mode === "required") {
    await protectBranch(forge, { contexts: ["test"], enforceAdmins: true });
    const ci = startCiRunner({
      apiUrl: forge.apiUrl,
      token: forge.token,
      repo: REPO,
      gitUrl: forge.gitUrl,
      workDir: join(dir, "ci"),
      intervalMs: 200,
      testCommand: gate.argv,
    });
    cleanups.push(() => ci.stop());
  }
  const gateConfig = mode === "local" ? { ci: "local", local_command: gate.command } : { ci: "required" };
  const host = fleetHost(forge, dir, cleanups);
  const seed = (await git(forge.bareRepo, "rev-parse", "refs/heads/main")).stdout;
  await host.start({
    repo: REPO,
    worker_command: `sh ${worker}`,
    target: ISSUES,
    auto_merge: true,
    config: {
      gate: gateConfig,
      landing: { strategy: "push", train: { max: 8 } },
      pacing: { busy_seconds: 5, idle_seconds: 5, long_idle_seconds: 5, watch_seconds: 1 },
    },
  });

  const records = async (): Promise<Rec[]> => (await host.logs({ repo: REPO, lane: "supervisor", tail_lines: 5000 })).records as unknown as Rec[];
  let merged: Rec[] = [];
  await waitFor(`${ISSUES} landings`, async () => (merged = (await records()).filter((r) => r.event === "merged")).length >= ISSUES, {
    deadlineMs: 8 * 60_000,
    intervalMs: 250,
    explain: () => `only ${merged.length} of ${ISSUES} landed`,
  });
  assert.deepEqual(merged.map((r) => r.issue).sort(), [1, 2, 3, 4]);

  const trains = (await records()).filter((r) => r.event === "train").flatMap((r) => r.data?.landings ?? []);
  const rode = trains.filter((t) => t.issues.length >= 2);
  assert.ok(rode.length >= 1, `at least one train carried two or more PRs: ${JSON.stringify(trains)}`);
  for (const n of rode[0]!.issues) {
    const comments = (await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as Array<{ body: string }>;
    assert.ok(
      comments.some((c) => c.body.includes(`Landed in train ${rode[0]!.train}`)),
      `#${n}'s board names its train`,
    );
    assert.equal((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body.state, "closed");
  }
  const pulls = (await api(forge, "GET", repoPath(forge, "/pulls?state=all&per_page=100"))).body as Array<{
    number: number;
    body: string;
    merged_at: string | null;
    head: { ref: string };
  }>;
  for (const p of pulls.filter((p) => !p.head.ref.startsWith("afk/train/"))) assert.ok(p.merged_at, `${p.head.ref} is merged`);
  // A train's riders each get the validation note a lone landing gets: its own commit and file,
  // read from the base the train moved on from.
  for (const n of rode[0]!.issues) {
    const pull = pulls.find((p) => !p.head.ref.startsWith("afk/train/") && p.body.includes(`Closes #${n}`))!;
    const note = await waitFor(
      `PR #${pull.number}'s validation note`,
      async () => {
        const comments = (await api(forge, "GET", repoPath(forge, `/issues/${pull.number}/comments`))).body as Array<{ body: string }>;
        return comments.find((c) => c.body.includes(VALIDATION_MARKER))?.body ?? null;
      },
      { deadlineMs: 60_000, intervalMs: 250 },
    );
    assert.match(note, new RegExp(`Commits \\(1\\):\\n- \`[0-9a-f]{12}\` work for #${n}`), note);
    assert.match(note, new RegExp(`Files touched \\(1\\):\\n- \`work-${n}.txt\``), note);
  }

  // NRSR: every first-parent commit since the seed has a tree the local gate passed.
  const passed = new Set((await readFile(gate.trees, "utf8")).split("\n").filter(Boolean));
  const line = (await git(forge.bareRepo, "log", "--first-parent", "--format=%H %T", `${seed}..main`)).stdout.split("\n").filter(Boolean);
  assert.ok(line.length >= 1 && line.length < ISSUES, `${line.length} first-parent commits for ${ISSUES} PRs: trains share one`);
  for (const entry of line) {
    const [sha, tree] = entry.split(" ");
    assert.ok(passed.has(tree!), `commit ${sha} on main has a tree no gate passed`);
  }
}
