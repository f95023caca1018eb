// The terminal's equivalents of the tools that act on a running fleet — afk-mcp stop, reset,
// resize, logs and takeover — as child processes against the real daemon a session started,
// on the local forge with quiet scripted workers. What they print names commands, never tools.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { DaemonClient } from "../server/daemon/client.js";
import { alive, BASE_CONFIG, cli, daemonWorld, teardown, until, workerPids, type DaemonWorld } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const TOOL_WORDS = /\bproject_(?:start|stop|reset|resize)\b|\b(?:takeover|logs|status) \{|\bstop_workers\b|\bworker_command\b/;

let world: DaemonWorld | null = null;
let session: DaemonClient | null = null;

after(async () => {
  await session?.close().catch(() => undefined);
  if (world) await teardown(world);
});

describe("afk-mcp stop, reset, resize, logs, takeover on the daemon's fleet", () => {
  it("act on what a session registered, and word every answer for a terminal", { timeout: 300_000 }, async () => {
    world = await daemonWorld(["one", "two"]);
    const w = world;

    // No daemon yet: a stop says so and does not fail; a reset names the command that starts one.
    const idleStop = await cli(w.env, "stop", "--repo", REPO);
    assert.equal(idleStop.code, 0, idleStop.stderr);
    assert.match(idleStop.stdout, /no afk-mcp daemon is running .*nothing to stop/);
    const idle = await cli(w.env, "reset", "--repo", REPO);
    assert.equal(idle.code, 2, idle.stderr);
    assert.match(idle.stderr, /^afk-mcp reset: no afk-mcp daemon is running .*start one with afk-mcp run\n$/);

    session = new DaemonClient({ env: w.env });
    await session.start({ repo: REPO, worker_command: `sh ${w.worker}`, target: 2, config: BASE_CONFIG });
    await until("two workers", async () => (await workerPids(w.planDir)).size === 2);

    const resized = await cli(w.env, "resize", "--repo", REPO, "--target", "1");
    assert.equal(resized.code, 0, resized.stderr);
    assert.equal((await session.status({ repo: REPO, scope: "worker" })).registration?.target, 1);

    const reset = await cli(w.env, "reset", "--repo", REPO, "--json");
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal((JSON.parse(reset.stdout) as { registration: { repo: string } }).registration.repo, REPO);

    const logs = await cli(w.env, "logs", "--repo", REPO, "--lane", "supervisor", "--tail", "5");
    assert.equal(logs.code, 0, logs.stderr);
    const records = logs.stdout.trim().split("\n");
    assert.ok(records.length >= 1 && records.length <= 5, logs.stdout);
    for (const line of records) assert.equal(typeof JSON.parse(line), "object");
    const badLane = await cli(w.env, "logs", "--repo", REPO, "--lane", "everything");
    assert.equal(badLane.code, 2);
    assert.match(badLane.stderr, /--lane is required: one of supervisor, worker, monitor, liveness, ledger, daemon \(got "everything"\)/);

    const list = await cli(w.env, "takeover", "--repo", REPO, "--list", "--json");
    assert.equal(list.code, 0, list.stderr);
    const rows = (JSON.parse(list.stdout) as { instances: { this_daemon: boolean; claim_count: number }[] }).instances;
    assert.ok(
      rows.some((r) => r.this_daemon && r.claim_count === 2),
      list.stdout,
    );

    const pids = [...(await workerPids(w.planDir)).values()];
    const stopped = await cli(w.env, "stop", "--repo", REPO, "--stop-workers");
    assert.equal(stopped.code, 0, stopped.stderr);
    for (const out of [resized.stdout, stopped.stdout, idle.stderr]) assert.doesNotMatch(out, TOOL_WORDS);
    await until("the workers ended", async () => pids.every((pid) => !alive(pid)));
  });
});
