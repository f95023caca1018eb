// A daemon that lives but cannot be used: its socket removed or opened to others, the process
// stopped (SIGSTOP), or replaced by `daemon restart`. Real processes: the built CLI, the daemon,
// the stdio MCP server, scripted workers, the local forge. Each advice text names a command,
// and the test runs that command and sees it work.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmod, readdir, readFile, readlink, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DaemonClient } from "../server/daemon/client.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { processStartTime } from "../server/runtimes/local/pid-files.js";
import { readProcTable } from "../server/runtimes/local/proc.js";
import { git } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";
import { alive, BASE_CONFIG, pullsFor, cli, daemonPid, daemonWorld, teardown, until, workerPids, type DaemonWorld } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const worlds: DaemonWorld[] = [];
const clients: DaemonClient[] = [];
const stopped: number[] = [];
const samplers: { stop(): Promise<number> }[] = [];

after(async () => {
  for (const sampler of samplers) await sampler.stop();
  for (const pid of stopped) if (alive(pid)) process.kill(pid, "SIGCONT");
  for (const c of clients) await c.close().catch(() => undefined);
  await Promise.all(worlds.map((w) => teardown(w)));
});

async function world(titles: string[]): Promise<DaemonWorld> {
  const w = await daemonWorld(titles);
  worlds.push(w);
  return w;
}

function startInput(w: DaemonWorld, config: Record<string, unknown> = {}, target = w.issues.length) {
  return { repo: REPO, worker_command: `sh ${w.worker}`, target, config: { ...BASE_CONFIG, ...config } };
}

/**
 * Samples, until stopped, the most workers (processes running the world's worker script) seen
 * alive at once in any one directory: "never two workers in one worktree" is that staying 1.
 */
function sampleWorktrees(w: DaemonWorld): { stop(): Promise<number> } {
  let most = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const byDir = new Map<string, number>();
      for (const name of await readdir("/proc").catch(() => [])) {
        if (!/^\d+$/.test(name)) continue;
        const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
        if (!cmdline.split("\0").includes(w.worker)) continue;
        const cwd = await readlink(`/proc/${name}/cwd`).catch(() => null);
        if (cwd) byDir.set(cwd, (byDir.get(cwd) ?? 0) + 1);
      }
      most = Math.max(most, ...byDir.values(), 0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const sampler = {
    stop: async () => {
      running = false;
      await loop;
      return most;
    },
  };
  samplers.push(sampler);
  return sampler;
}

function textOf(result: Record<string, unknown>): string {
  return ((result.content ?? []) as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
}

describe("a daemon that lives but cannot be used", () => {
  it("its socket removed: status names its pid, a start fails at once naming it, and daemon stop ends it by pid", async () => {
    const w = await world([]);
    assert.equal((await cli(w.env, "daemon")).code, 0);
    const pid = (await daemonPid(w.env))!;
    await rm(daemonPaths(w.env).socket);
    const status = await cli(w.env, "daemon", "status");
    assert.equal(status.code, 2, status.stdout);
    assert.match(status.stderr, new RegExp(`daemon pid ${pid} .*holds this state dir but cannot be reached: its socket .* is gone`));
    assert.match(status.stderr, /Run "afk-mcp daemon restart".*or "afk-mcp daemon stop"/);
    // A start does not wait out its whole deadline for a socket that will never come: the new
    // daemon finds the state dir held and exits, and the starter says so, naming the live one.
    const start = await cli(w.env, "daemon");
    assert.notEqual(start.code, 0);
    assert.match(start.stderr, new RegExp(`daemon pid ${pid} .*cannot be reached`));
    assert.doesNotMatch(start.stderr, /did not open/);
    assert.equal(await daemonPid(w.env), pid, "no second daemon took the state dir");
    // The advised command works: the daemon is signalled by its pid and drains.
    const stop = await cli(w.env, "daemon", "stop");
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`pid ${pid} cannot be reached .*sent it SIGUSR2`));
    assert.match(stop.stdout, /stopped/);
    assert.equal(await processStartTime(pid), null, "the daemon exited");
    assert.equal((await cli(w.env, "daemon", "status")).code, 3, "and none runs");
  });

  it("its socket opened to others: the messages name a fix, and the fix (daemon restart) works", async () => {
    const w = await world([]);
    assert.equal((await cli(w.env, "daemon")).code, 0);
    const pid = (await daemonPid(w.env))!;
    const paths = daemonPaths(w.env);
    await chmod(paths.socket, 0o666);
    const answer = await cli(w.env, "daemon", "status");
    assert.equal(answer.code, 2);
    assert.match(answer.stderr, new RegExp(`daemon pid ${pid} .*cannot be reached: .*mode 666, open to other users: refusing it`));
    assert.match(answer.stderr, /"afk-mcp daemon restart"/);
    assert.doesNotMatch(answer.stderr, /remove the file/);
    const session = new DaemonClient({ env: w.env });
    clients.push(session);
    await assert.rejects(session.status({ repo: REPO, scope: "worker" }), new RegExp(`daemon pid ${pid} .*mode 666.*afk-mcp daemon restart`));
    const restart = await cli(w.env, "daemon", "restart");
    assert.equal(restart.code, 0, restart.stderr);
    assert.match(restart.stdout, new RegExp(`pid ${pid}.*could not hand over .*ended it with SIGKILL`));
    assert.equal(await processStartTime(pid), null, "the old daemon is gone");
    const fresh = (await daemonPid(w.env))!;
    assert.ok(fresh !== pid && alive(fresh));
    assert.equal((await stat(paths.socket)).mode & 0o777, 0o600, "the new daemon's socket is owner-only");
    assert.equal((await session.status({ repo: REPO, scope: "worker" })).daemon?.pid, fresh, "and sessions reach it");
  });

  it("a stopped daemon (SIGSTOP): calls fail with its pid and the fix instead of hanging; status and logs read locally; SIGCONT and it serves again", async () => {
    const w = await world(["one"]);
    const env = { ...w.env, AFK_DAEMON_REPLY_SECONDS: "2" };
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" });
    const mcp = new Client({ name: "afk-faults-test", version: "0.0.0" });
    await mcp.connect(transport);
    const started = await mcp.callTool({ name: "project_start", arguments: startInput(w) }, undefined, { timeout: 600_000 });
    assert.notEqual(started.isError, true, textOf(started));
    await until("a worker", async () => (await workerPids(w.planDir)).size === 1);
    const pid = (await daemonPid(w.env))!;
    process.kill(pid, "SIGSTOP");
    stopped.push(pid);
    try {
      const status = await cli(env, "daemon", "status");
      assert.equal(status.code, 2);
      assert.match(
        status.stderr,
        new RegExp(`daemon \\(pid ${pid}\\) did not answer hello within 2s \\(it is stopped: "kill -CONT ${pid}" resumes it\\): run "afk-mcp daemon restart"`),
      );
      const resize = await mcp.callTool({ name: "project_resize", arguments: { repo: REPO, target: 2 } }, undefined, { timeout: 600_000 });
      assert.equal(resize.isError, true);
      assert.match(textOf(resize), new RegExp(`pid ${pid}.*did not answer .*afk-mcp daemon restart`));
      const read = await mcp.callTool({ name: "status", arguments: { repo: REPO } }, undefined, { timeout: 600_000 });
      assert.notEqual(read.isError, true, textOf(read));
      assert.match(textOf(read), /daemon: none running \(this answer was read from GitHub directly\)/);
      const logs = await mcp.callTool({ name: "logs", arguments: { repo: REPO, lane: "supervisor" } }, undefined, { timeout: 600_000 });
      assert.notEqual(logs.isError, true, textOf(logs));
      assert.match(textOf(logs), /project started/);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // The same session goes on working once the daemon runs again.
    const again = await until("the daemon to answer again", async () => {
      const r = await mcp.callTool({ name: "status", arguments: { repo: REPO } }, undefined, { timeout: 600_000 });
      return r.isError !== true && new RegExp(`daemon: pid ${pid}`).test(textOf(r)) ? r : null;
    });
    assert.ok(again);
    await mcp.close().catch(() => undefined);
  });

  it("daemon restart hands over: the worker is not killed, its result lands, the registration lives on and is renewed", async () => {
    const w = await world(["one"]);
    const s = new DaemonClient({ env: w.env });
    clients.push(s);
    // Renewed every 10 s: the new daemon may take a while to start on a loaded machine.
    await s.start(startInput(w, { registration: { ttl_seconds: 20 } }));
    await until("a worker", async () => (await workerPids(w.planDir)).size === 1);
    const [worker] = [...(await workerPids(w.planDir)).values()];
    const pid = (await daemonPid(w.env))!;
    const before = (await s.status({ repo: REPO })).registrations[0]!;
    assert.deepEqual(before.sessions, [s.session]);
    const restart = await cli(w.env, "daemon", "restart");
    assert.equal(restart.code, 0, restart.stderr);
    assert.match(restart.stdout, new RegExp(`the daemon \\(pid ${pid}\\) hands over 1 registration\\(s\\) and 1 running worker\\(s\\)`));
    assert.equal(await processStartTime(pid), null, "the old daemon exited");
    const fresh = (await daemonPid(w.env))!;
    assert.ok(fresh !== pid && alive(fresh));
    assert.ok(alive(worker!), "the worker was not killed");
    const row = await until("the registration on the new daemon, renewed by the same session past its old deadline", async () => {
      const r = (await s.status({ repo: REPO })).registrations[0];
      return r && r.sessions.includes(s.session) && Date.parse(r.renew_by ?? "0") > Date.parse(before.renew_by!) ? r : null;
    });
    assert.equal(row.state, "running");
    assert.equal((await s.status({ repo: REPO, scope: "worker" })).daemon?.pid, fresh);
    // Not a row with state "orphan": that one status found by its pid file, before any adoption.
    await until(
      "the new daemon to adopt the worker",
      async () => (await s.status({ repo: REPO, scope: "worker" })).workers.filter((r) => r.state !== "orphan").length === 1,
    );
    await writeFile(join(w.planDir, `${w.issues[0]}.go`), "");
    await until("a PR", async () => (await pullsFor(w)).length === 1);
    assert.deepEqual([...(await workerPids(w.planDir)).keys()], [`${w.issues[0]}.1`], "one worker, one attempt");
    const lane = (await s.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 })).records;
    assert.equal(lane.filter((r) => r.event === "handed_over").length, 1);
    assert.equal(lane.filter((r) => r.event === "worker_adopted").length, 1);
    assert.equal(lane.filter((r) => r.event === "orphan_ended").length, 0);
    assert.equal(lane.filter((r) => r.event === "registration_lapsed").length, 0);
  });

  it("a worker the next daemon cannot adopt (its claim was deleted while no daemon ran) is ended before its worktree is reused: never two", async () => {
    const w = await world(["one"]);
    const n = w.issues[0]!;
    const s = new DaemonClient({ env: w.env });
    clients.push(s);
    await s.start(startInput(w));
    await until("a worker", async () => (await workerPids(w.planDir)).size === 1);
    const [orphan] = [...(await workerPids(w.planDir)).values()];
    const group = ((await readProcTable()) ?? []).find((e) => e.pid === orphan)?.pgrp;
    assert.ok(group !== undefined);
    const sampler = sampleWorktrees(w);
    const pid = (await daemonPid(w.env))!;
    process.kill(pid, "SIGKILL");
    await until("the daemon to die", async () => !alive(pid));
    // While no daemon runs, the claim goes (a peer took it over and let it go, or a person
    // deleted it): the worker left running is no longer under a claim of this instance.
    await git(w.planDir, "-C", w.forge.bareRepo, "update-ref", "-d", `refs/afk/claim/${n}`);
    assert.ok(alive(orphan!), "the worker outlived its daemon");
    // The next call restarts the daemon; it resumes the registration, finds the issue ready
    // again, claims it, and reuses its worktree: the orphan is ended first.
    const t = new DaemonClient({ env: w.env });
    clients.push(t);
    await t.status({ repo: REPO });
    await until("the orphan ended", async () => !alive(orphan!));
    await until("a new worker", async () => [...(await workerPids(w.planDir)).values()].some((p) => p !== orphan && alive(p)));
    const lane = (await t.logs({ repo: REPO, lane: "supervisor", tail_lines: 1000 })).records;
    const ended = lane.filter((r) => r.event === "orphan_ended");
    assert.equal(ended.length, 1, JSON.stringify(ended));
    assert.equal((ended[0] as { pid?: number }).pid, group, "the orphan's process group was ended");
    assert.equal(lane.filter((r) => r.event === "worker_adopted").length, 0, "it could not be adopted");
    await writeFile(join(w.planDir, `${n}.go`), "");
    await until("a PR", async () => (await pullsFor(w)).length === 1);
    assert.equal(await sampler.stop(), 1, "never two workers in one worktree");
  });
});
