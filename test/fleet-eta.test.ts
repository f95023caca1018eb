// The ETA through the real fleet: a local forge over HTTP, real git, scripted workers, one worker
// at a time. Before anything landed the running issue's board and status say "no estimate yet";
// once three issues landed, the next issue's board names when it should land, and status (its
// structured answer and its text, which the fleet board resource shows too) says the same.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FleetHost } from "../server/host/host.js";
import { BOARD_MARKER } from "../server/state/markers.js";
import { renderStatusHead } from "../server/tools/render.js";
import { api, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { ROOT } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

const WORKER = join(ROOT, "test", "support", "workers", "scripted.sh");
const cleanup: (() => Promise<unknown>)[] = [];

after(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
});

describe("ETA", () => {
  it("shows no estimate before three landed, then each running issue's and the queue's", { timeout: 240_000 }, async () => {
    const forge: TestForge = await startTestForge();
    cleanup.push(() => forge.dispose());
    assert.equal((await api(forge, "POST", repoPath(forge, "/labels"), { name: "ready-for-agent" })).status, 201);
    const issues: number[] = [];
    for (const title of ["one", "two", "three", "four", "five"])
      issues.push(((await api(forge, "POST", repoPath(forge, "/issues"), { title, labels: ["ready-for-agent"] })).body as { number: number }).number);
    const planDir = await tempDir("afk-plan-");
    // Every worker waits for the go-ahead, so the test knows which issue runs (one at a time).
    for (const n of issues) await writeFile(join(planDir, String(n)), "await commit\n");
    const env = {
      GITHUB_API_URL: forge.apiUrl,
      GITHUB_TOKEN: forge.token,
      // The suite runs workers unconfined (scripts/test-run.mjs); a process started with this env does too.
      AFK_RUNTIME: process.env.AFK_RUNTIME ?? "local",
      AFK_STATE_DIR: await tempDir("afk-eta-"),
      AFK_USER_PLAN: planDir,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
    };
    const host = new FleetHost({ env, instance: "etahost", timeScale: 0.05 });
    cleanup.push(() => host.close());
    await host.start({
      repo: forge.repo,
      worker_command: `sh ${WORKER}`,
      target: 1,
      auto_merge: true,
      config: { gate: { ci: "local", local_command: "true" }, board: { settle_seconds: 0 } },
    });

    const board = async (n: number) =>
      ((await api(forge, "GET", repoPath(forge, `/issues/${n}/comments`))).body as Array<{ body: string }>).find((c) => c.body.includes(BOARD_MARKER))?.body ??
      "";
    const closed = async (n: number) => ((await api(forge, "GET", repoPath(forge, `/issues/${n}`))).body as { state: string }).state === "closed";
    const started = new Set<number>();
    const next = async (): Promise<number> => {
      let found = 0;
      await waitFor(
        "the next worker",
        async () => {
          found = issues.find((n) => !started.has(n) && existsSync(join(planDir, `${n}.1.pid`))) ?? 0;
          return found !== 0;
        },
        { deadlineMs: 120_000 },
      );
      started.add(found);
      return found;
    };

    // Nothing landed yet: the first issue's worker waits for the go-ahead.
    const first = await next();
    await waitFor("the first issue's live board", async () => /Coding/.test(await board(first)), { deadlineMs: 120_000 });
    assert.match(await board(first), /Estimate: no estimate yet \(0 landed here so far, 3 needed\)\./);
    let status = await host.status({ repo: forge.repo });
    assert.equal(status.eta?.median_ms, null);
    assert.deepEqual(status.eta?.running, [{ issue: first, due_at: null, overdue: false }]);
    assert.equal(status.eta?.queue.remaining, 5, "one in flight, four waiting");
    assert.ok(renderStatusHead(status).includes("ETA: no estimate yet (0 landed here so far, 3 needed)"));

    let running = first;
    for (let landed = 0; landed < 3; landed += 1) {
      await writeFile(join(planDir, `${running}.1.go`), "");
      const n = running;
      await waitFor(`#${n} landed`, () => closed(n), { deadlineMs: 120_000 });
      running = await next();
    }
    const fourth = running;
    // Claimed while the third waited to land, its board gets the estimate once there is one.
    await waitFor("the fourth issue's board names its estimate", async () => /Coding[^]*Estimate: lands around/.test(await board(fourth)), {
      deadlineMs: 120_000,
    });
    const live = await board(fourth);
    const line = /Estimate: lands around (\d{4}-\d\d-\d\d \d\d:\d\d) UTC \(median claim → merged of the last 3 landed here: [^)]+\)\./.exec(live);
    assert.ok(line, live);

    status = await host.status({ repo: forge.repo });
    const eta = status.eta!;
    assert.equal(eta.samples, 3);
    assert.equal(eta.needed, 0);
    assert.ok(eta.median_ms !== null && eta.median_ms > 0);
    assert.equal(eta.running.length, 1);
    assert.equal(eta.running[0]!.issue, fourth);
    assert.equal(eta.queue.remaining, 2, "the fourth in flight, the fifth waiting");
    const due = eta.running[0]!.due_at!;
    assert.equal(`${due.slice(0, 10)} ${due.slice(11, 16)}`, line[1], "the board and status name the same time");
    assert.ok(Date.parse(eta.queue.done_at!) >= Date.parse(due), "the queue ends after its running issue");
    const text = renderStatusHead(status).find((l) => l.startsWith("ETA: "));
    assert.equal(text, eta.text, "the text is the structured answer's");
    assert.match(
      text!,
      new RegExp(`^ETA: median claim → merged .+ over the last 3 landed; queue of 2 \\(1 in flight, 1 waiting\\) done around .+ UTC; in flight: #${fourth} `),
    );
  });
});
