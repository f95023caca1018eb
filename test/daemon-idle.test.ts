// The daemon's idle exit, for real: the built binary as stdio MCP server and as daemon, the local
// forge, quiet scripted workers. An idle daemon (no registration, no session connected) exits
// after its stated idle time and says why in its lane; it stays while a session is connected and
// while a registration drains with a worker running; the next call starts a new one. "The idle
// time has passed" is an event here: a control daemon with the same idle time, started after the
// scene is set and never connected to, has exited.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { access } from "node:fs/promises";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DaemonClient } from "../server/daemon/client.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { tempDir } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";
import { alive, BASE_CONFIG, cli, daemonPid, daemonWorld, daemonWritings, teardown, until, workerPids, type DaemonWorld } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const IDLE_SECONDS = "2";
const worlds: DaemonWorld[] = [];
const clients: DaemonClient[] = [];
const servers: Client[] = [];
const controls: Record<string, string>[] = [];

after(async () => {
  for (const m of servers) await m.close().catch(() => undefined);
  for (const c of clients) await c.close().catch(() => undefined);
  for (const env of controls) await cli(env, "daemon", "stop", "--kill-workers");
  await Promise.all(worlds.map((w) => teardown(w)));
});

async function world(titles: string[]): Promise<DaemonWorld> {
  const w = await daemonWorld(titles);
  // Every daemon a session of this world starts gets the short idle time.
  w.env = { ...w.env, AFK_DAEMON_IDLE_SECONDS: IDLE_SECONDS };
  worlds.push(w);
  return w;
}

async function stdioSession(env: Record<string, string>): Promise<Client> {
  const mcp = new Client({ name: "afk-idle-test", version: "0.0.0" });
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" }));
  servers.push(mcp);
  return mcp;
}

async function takeoverList(mcp: Client): Promise<void> {
  const answer = (await mcp.callTool({ name: "takeover", arguments: { repo: REPO, list: true } }, undefined, { timeout: 600_000 })) as {
    isError?: boolean;
    content: { text: string }[];
  };
  assert.notEqual(answer.isError, true, answer.content[0]?.text);
}

/** Resolves once a daemon with the same idle time, started now in its own state dir and never called, has exited on its own. */
async function idleTimePassed(env: Record<string, string>): Promise<void> {
  const control = { ...env, AFK_STATE_DIR: await tempDir("afki-") };
  controls.push(control);
  const started = await cli(control, "daemon", "--idle-exit", IDLE_SECONDS);
  assert.equal(started.code, 0, started.stderr);
  const pid = Number(/pid (\d+)/.exec(started.stdout)?.[1]);
  await until("the control daemon's idle exit", async () => !alive(pid));
}

async function idleLines(env: Record<string, string>): Promise<string[]> {
  return (await daemonWritings(env)).split("\n").filter((line) => /idle for .* exiting; the next call that needs a daemon starts one/.test(line));
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("the daemon's idle exit", () => {
  it("stays while a session is connected; once none is, exits after its idle time saying why; the next call starts a new one", async () => {
    const w = await world([]);
    const mcp = await stdioSession(w.env);
    await takeoverList(mcp);
    const pid = (await daemonPid(w.env))!;
    assert.ok(pid && alive(pid), "the call started a daemon");
    assert.match(await daemonWritings(w.env), /exits after 2 s with no registration and no session connected \(--idle-exit 2\)/, "it states its idle exit");
    const status = await cli(w.env, "daemon", "status");
    assert.match(status.stdout, /it exits after 2 s with no registration and no session connected/);

    // Twice the idle time with the session connected (and nothing else to do): it stays.
    await idleTimePassed(w.env);
    await idleTimePassed(w.env);
    assert.ok(alive(pid), "a connected session keeps the daemon");
    assert.deepEqual(await idleLines(w.env), []);

    // The session goes away: the daemon exits on its own, saying why, and leaves no socket or lock.
    await mcp.close();
    await until("the idle daemon to exit", async () => !alive(pid));
    const lines = await idleLines(w.env);
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /no registration, no worker, no session connected; --idle-exit 2/);
    const paths = daemonPaths(w.env);
    assert.equal(await exists(paths.socket), false, "its socket is removed");
    assert.equal(await daemonPid(w.env), null, "its lock is released");
    assert.equal((await cli(w.env, "daemon", "status")).code, 3, "status: none runs");

    // A later call starts a new daemon, as with none.
    const again = await stdioSession(w.env);
    await takeoverList(again);
    const next = (await daemonPid(w.env))!;
    assert.ok(next !== pid && alive(next), "a new daemon answered");
    await again.close();
    await until("the second idle daemon to exit", async () => !alive(next));
    assert.equal((await idleLines(w.env)).length, 2);
  });

  it("stays while a registration drains with its worker running, with no session connected; exits once the drain ends", async () => {
    const w = await world(["one"]);
    const s = new DaemonClient({ env: w.env });
    clients.push(s);
    await s.start({ repo: REPO, worker_command: `sh ${w.worker}`, target: 1, config: BASE_CONFIG });
    await until("its worker", async () => (await workerPids(w.planDir)).size === 1);
    const pid = s.daemon()!.pid;
    const stopped = await s.stop({ repo: REPO });
    assert.match(stopped.message, /1 worker\(s\) still running/, stopped.message);
    await s.close();
    // No session, but a registration draining and its worker running: the daemon stays.
    await idleTimePassed(w.env);
    await idleTimePassed(w.env);
    assert.ok(alive(pid), "a draining registration keeps the daemon");
    const worker = [...(await workerPids(w.planDir)).values()][0]!;
    assert.ok(alive(worker), "its worker runs");
    assert.deepEqual(await idleLines(w.env), []);
    // The worker finishes, the drain ends, and the daemon, idle, exits.
    await writeFile(join(w.planDir, `${w.issues[0]}.go`), "");
    await until("the daemon to exit once the drain ended", async () => !alive(pid), 300_000);
    assert.equal((await idleLines(w.env)).length, 1);
    assert.match(await daemonWritings(w.env), /stopped/);
  });
});
