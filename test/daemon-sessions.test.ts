// Sessions on one daemon: two stdio MCP server processes sharing its fleet, and calls without a
// repository resolved the same way by every tool (the session's directory's origin). Real
// processes: the built binary as daemon and as stdio servers, the local forge, scripted workers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DaemonClient } from "../server/daemon/client.js";
import { git, tempDir } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";
import { BASE_CONFIG, daemonWorld, until, workerPids, type DaemonWorld, daemonTestScope } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const OTHER = "afk/other";
const { worlds, clients, servers } = daemonTestScope();

function startInput(w: DaemonWorld, repo: string, target: number) {
  return { repo, worker_command: `sh ${w.worker}`, target, config: BASE_CONFIG };
}

/** A directory whose git origin is `repo` on GitHub (a session started there means that repository). */
async function checkout(repo: string): Promise<string> {
  const dir = await tempDir("afk-cwd-");
  await git(dir, "init", "-q");
  await git(dir, "remote", "add", "origin", `https://github.com/${repo}.git`);
  return dir;
}

async function stdioSession(w: DaemonWorld): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: w.env, stderr: "pipe" });
  const mcp = new Client({ name: "afk-sessions-test", version: "0.0.0" });
  await mcp.connect(transport);
  servers.push(mcp);
  return mcp;
}

type ToolAnswer = { isError?: boolean; content?: unknown; structuredContent?: Record<string, unknown> };

async function call(mcp: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  return (await mcp.callTool({ name, arguments: args }, undefined, { timeout: 600_000 })) as ToolAnswer;
}

function textOf(answer: ToolAnswer): string {
  return ((answer.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
}

describe("sessions on one daemon", () => {
  it("two MCP server processes on one daemon: one starts, the other adopts, resizes and reads status; both see the same workers", async () => {
    const w = await daemonWorld(["one", "two", "three"]);
    worlds.push(w);
    const a = await stdioSession(w);
    const b = await stdioSession(w);
    const started = await call(a, "project_start", startInput(w, REPO, 1));
    assert.notEqual(started.isError, true, textOf(started));
    await until("one worker", async () => (await workerPids(w.planDir)).size === 1);
    const adopted = await call(b, "project_start", startInput(w, REPO, 1));
    assert.notEqual(adopted.isError, true, textOf(adopted));
    assert.match(textOf(adopted), /already registered.*this session now renews it too/);
    const resized = await call(b, "project_resize", { repo: REPO, target: 3 });
    assert.notEqual(resized.isError, true, textOf(resized));
    await until("three workers", async () => (await workerPids(w.planDir)).size === 3);
    const pidsOf = async (mcp: Client) =>
      ((await call(mcp, "status", { repo: REPO, scope: "worker" })).structuredContent?.workers as { pid: number }[]).map((r) => r.pid).sort();
    const fromA = await pidsOf(a);
    assert.equal(fromA.length, 3);
    assert.deepEqual(await pidsOf(b), fromA, "both sessions see the same workers");
    const project = await call(b, "status", { repo: REPO });
    const rows = project.structuredContent?.registrations as { repo: string; sessions: string[]; target: number; selectors: unknown[] }[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.sessions.length, 2, "renewed by both sessions");
    assert.equal(rows[0]!.target, 3);
    // The text says what the rows say: target and free slots, workers, selectors, sessions.
    assert.match(
      textOf(project),
      /registration afk\/demo: running, target 3 \(0 slot\(s\) free\), 3 worker\(s\), [^,]+ in flight, [^,]+ landed today, [^,]+ needing a human, selectors \[label ready-for-agent\], renewed by 2 live session\(s\)/,
    );
    // A third session of another version hears the skew; events reach it.
    const c = new DaemonClient({ env: w.env, version: "0.0.0-other" });
    clients.push(c);
    assert.match((await c.status({ repo: REPO })).daemon?.skew ?? "", /afk-mcp daemon restart/);
    // project_start's answer says it too (here adopting the registration).
    const skewed = await c.start(startInput(w, REPO, 1));
    assert.match(
      skewed.message,
      /already registered.*; version skew: this session is afk-mcp 0\.0\.0-other but the daemon \(pid \d+\) is \S+: run "afk-mcp daemon restart"/,
    );
    const heard: string[] = [];
    c.subscribe((event) => heard.push(event.kind));
    await c.status({ repo: REPO, scope: "worker" });
    const stopped = await call(a, "project_stop", { repo: REPO, stop_workers: true });
    assert.notEqual(stopped.isError, true, textOf(stopped));
    await until("the repos event at the third session", async () => heard.includes("repos"));
  });

  it("calls without a repository mean the session's directory's origin, for every tool", async () => {
    const w = await daemonWorld([], "await", [OTHER]);
    worlds.push(w);
    const inDemo = new DaemonClient({ env: w.env, cwd: await checkout(REPO) });
    const nowhere = new DaemonClient({ env: w.env, cwd: await tempDir("afk-nogit-") });
    clients.push(inDemo, nowhere);
    await inDemo.start(startInput(w, REPO, 1));
    await inDemo.start(startInput(w, OTHER, 1));
    const targets = async () => Object.fromEntries((await inDemo.status({ repo: REPO })).registrations.map((r) => [r.repo, r.target]));
    // Two registrations: resize and reset act on this directory's origin, as status does.
    const resized = await inDemo.resize({ target: 2 });
    assert.equal(resized.registration?.repo, REPO, resized.message);
    assert.deepEqual(await targets(), { [REPO]: 2, [OTHER]: 1 });
    assert.equal((await inDemo.reset({})).registration?.repo, REPO);
    assert.equal((await inDemo.status({})).registration?.repo, REPO);
    // From a directory with no origin, two registrations: status lists both (the daemon's rows), and
    // a call that must name one repository is told which there are, through the session and the daemon alike.
    const all = await nowhere.status({});
    assert.deepEqual(all.registrations.map((r) => r.repo).sort(), [REPO, OTHER].sort());
    assert.equal(all.plan, null);
    assert.ok(all.daemon !== null && all.registrations.every((r) => r.sessions.length === 1), "the daemon's rows, with their sessions");
    await assert.rejects(nowhere.resize({ target: 2 }), /project_resize: pass repo .* and this host runs afk\/demo, afk\/other/);
    await assert.rejects(
      nowhere.logs({ lane: "supervisor" }),
      /logs: pass repo \("owner\/name"\): the calling session's directory has no GitHub "origin" remote, and this host runs afk\/demo, afk\/other/,
    );
    // stop {} stops this directory's origin and says so.
    const stopped = await inDemo.stop({});
    assert.match(stopped.message, /^afk\/demo \(this directory's origin\): stopped/);
    assert.deepEqual(await targets(), { [OTHER]: 1 });
    // One registration left, of another repository: stop {} from here does not stop it.
    const refused = await inDemo.stop({});
    assert.equal(refused.registration, null);
    assert.match(refused.message, /no project is running for afk\/demo.*this machine's daemon runs afk\/other: pass repo to stop one/);
    assert.deepEqual(await targets(), { [OTHER]: 1 }, "the other repository's fleet runs on");
    // From a directory with no origin, the daemon's only project is meant, and named.
    const only = await nowhere.stop({});
    assert.match(only.message, /^afk\/other \(the daemon's only project\): stopped/);
    assert.deepEqual(await targets(), {});
  });
});
