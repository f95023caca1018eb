// A dispatch acting on a snapshot a peer overtook (found by the chaos run's two-host drain: a tick
// slowed by a landing claimed #9 some 25 s after its snapshot, after the other host had closed it,
// and started a worker on a closed issue; the next full run saw it within 10 s, with 2 s workers).
// Here the issue closes right after the fleet's listing showed it open, and the fleet's clock then
// runs 20 s ahead, as a slow tick's would, or a peer's lease is live: the claim's compare-and-swap
// succeeds (nobody holds it), so only a fresh read of the issue can stop the worker. The issue
// beside it, unchanged, is dispatched as usual. Real client, local forge, a scripted worker.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GitRefStore } from "../server/gh/gitrefs.js";
import { formatHeartbeatMessage } from "../server/state/snapshot.js";
import { api, cloneRepo, git, repoPath, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, markingWorkScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const cleanups = cleanupsAfterFile();

/**
 * The peer closes one issue right after the fleet's first tick listed it open. `slow`: the fleet's
 * clock then runs 20 s ahead, as a slow tick's would; else a live peer's lease is in the snapshot
 * and the dispatch comes at once.
 */
async function overtaken(mode: "slow" | "live_peer"): Promise<void> {
  let skew = 0;
  let listings = 0;
  let closeAfterListing: (() => void) | null = null;
  const forge: TestForge = await startTestForge({
    onResponse: (r) => {
      // The fleet's first tick's open-issue listing (the second: project_start's plan reads the
      // first): the "peer" closes the issue just after it.
      if (closeAfterListing && r.method === "GET" && /\/issues$/.test(r.path) && r.login === "afk-bot" && ++listings === 2) {
        const close = closeAfterListing;
        closeAfterListing = null;
        close();
      }
    },
  });
  cleanups.push(() => forge.dispose());
  const [gone, kept] = (await readyIssues(forge, ["closed by a peer", "still open"])) as [number, number];
  const dir = await tempDir("afk-stale-dispatch-");
  const marks = join(dir, "marks");
  await mkdir(marks);
  const worker = join(dir, "worker.sh");
  await writeFile(worker, markingWorkScript(marks, "sleep 30"));
  let closed: Promise<unknown> = Promise.resolve();
  closeAfterListing = () => {
    closed = api(forge, "PATCH", repoPath(forge, `/issues/${gone}`), { state: "closed" });
    if (mode === "slow") skew = 20_000;
  };
  if (mode === "live_peer") {
    // Another host's lease, fresh: it holds no claim, and may take any issue of the frontier.
    const refs = new GitRefStore({ controlDir: join(dir, "peer"), remoteUrl: forge.gitUrl, token: forge.token });
    assert.equal(
      (await refs.create("refs/afk/heartbeat/peer0001", formatHeartbeatMessage({ instance: "peer0001", host: "elsewhere", at: new Date() }))).won,
      true,
    );
  }
  // The peer's close must land before the fleet reads the issue again: that read waits 1 s.
  await api(forge, "POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/issues/{issue_number}", latency_ms: 1000 });

  const host = fleetHost(forge, dir, cleanups, {}, { clock: () => new Date(Date.now() + skew) });
  await host.start({
    repo: forge.repo,
    worker_command: `sh ${worker}`,
    target: 2,
    auto_merge: false,
    config: { gate: { ci: "local", local_command: "true" } },
  });

  const supervisor = async (): Promise<Array<{ event?: unknown; issue?: unknown; msg?: unknown }>> =>
    (await host.logs({ repo: forge.repo, lane: "supervisor", tail_lines: 500 })).records;
  const stale = await waitFor(
    `#${gone} let go as changed since the snapshot, and #${kept}'s worker started`,
    async () => {
      const records = await supervisor();
      const let_go = records.find((r) => r.event === "dispatch_stale" && r.issue === gone);
      return let_go && (await readdir(marks)).includes(`spawned-${kept}`) ? let_go : null;
    },
    { deadlineMs: 3 * 60_000, intervalMs: 250, explain: async () => (await supervisor()).map((r) => `${String(r.event)} ${String(r.msg)}`).join("\n") },
  );
  await closed;
  assert.match(String(stale.msg), /the issue was closed since this tick's snapshot; claim let go/);
  assert.deepEqual((await readdir(marks)).sort(), [`spawned-${kept}`], `no worker ever started for the closed #${gone}`);
  const claims = (await git(await cloneRepo(forge), "ls-remote", "origin", "refs/afk/claim/*")).stdout;
  assert.doesNotMatch(claims, new RegExp(`claim/${gone}$`, "m"), "the closed issue's claim is gone");
  assert.match(claims, new RegExp(`claim/${kept}$`, "m"), "the unchanged issue is claimed and worked");
}

describe("a dispatch on a snapshot a peer overtook", () => {
  it("reads the issue again on a slow tick, lets a closed one go with no worker, and dispatches an unchanged one", { timeout: 300_000 }, () =>
    overtaken("slow"),
  );
  it("reads the issue again whenever a peer's lease is live, however quick the dispatch", { timeout: 300_000 }, () => overtaken("live_peer"));
});
