// A tick that hangs is said while it lasts. With every forge answer slowed (1.5 s each) and
// `pacing.slow_tick_seconds` at 1, the supervisor lane gets a `tick_slow` warning naming what
// the tick is doing (the gather reads GitHub), at most once per tick, and the loop still works.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { api, startTestForge, tempDir } from "./support/forge-fixtures.js";
import { cleanupsAfterFile, fleetHost, readyIssues, tasks, workScript } from "./support/fleet-fixtures.js";
import { waitFor } from "./support/wait.js";

const REPO = "afk/demo";
const cleanups = cleanupsAfterFile();

interface Rec {
  event: string;
  level: string;
  msg: string;
  data?: { seconds?: number; doing?: string };
}

describe("a slow tick", () => {
  it("is reported once per tick while it lasts, naming what it waits on", async () => {
    const forge = await startTestForge();
    cleanups.push(() => forge.dispose());
    await readyIssues(forge, tasks(1));
    const dir = await tempDir("afk-slow-");
    const worker = join(dir, "worker.sh");
    await writeFile(worker, workScript());
    const host = fleetHost(forge, dir, cleanups);
    await api(forge, "POST", "/_forge/faults", { latency_ms: 1500 });
    await host.start({ repo: REPO, worker_command: `sh ${worker}`, target: 1, config: { pacing: { slow_tick_seconds: 1 } } });
    const lane = async (name: "supervisor" | "monitor") => (await host.logs({ repo: REPO, lane: name, tail_lines: 5000 })).records as unknown as Rec[];
    const slow = await waitFor("a tick_slow warning", async () => (await lane("supervisor")).filter((r) => r.event === "tick_slow").at(0), {
      deadlineMs: 10 * 60_000,
      intervalMs: 250,
    });
    assert.equal(slow.level, "warn");
    assert.match(slow.msg, /^a tick has been under way for \d+s, now in /);
    assert.ok((slow.data?.seconds ?? 0) >= 1, JSON.stringify(slow.data));
    assert.match(slow.data?.doing ?? "", /the gather|the heartbeat|deciding|reading local facts|dispatch #|the boards/);
    // The loop goes on: its PR opens, slow answers or not.
    await waitFor("the PR", async () => (await lane("supervisor")).some((r) => r.event === "pr_opened"), { deadlineMs: 10 * 60_000, intervalMs: 250 });
    await api(forge, "DELETE", "/_forge/faults");
    const ticks = (await lane("monitor")).filter((r) => r.event === "tick").length;
    const warnings = (await lane("supervisor")).filter((r) => r.event === "tick_slow").length;
    // Once per slow tick at most (the tick under way now may have warned before its record).
    assert.ok(warnings >= 1 && warnings <= ticks + 1, `${warnings} warnings for ${ticks} ticks`);
  });
});
