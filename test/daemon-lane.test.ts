// The daemon's lane through the path a user takes: an MCP client over stdio to the built binary,
// whose first call that needs the daemon starts it detached. What the daemon says, what Node
// writes to its stderr, and what Node wrote past JavaScript before a crash all come back through
// `logs {lane: "daemon"}`, paged within the same budget, from the owner-only lane file.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { BIN } from "./support/paths.js";
import { alive, cli, daemonPid, daemonWorld, teardown, until, type DaemonWorld } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const worlds: DaemonWorld[] = [];
const clients: Client[] = [];

after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await Promise.all(worlds.map((w) => teardown(w)));
});

interface LogsAnswer {
  lane: string;
  records: { event?: string; level?: string; msg?: string; lane?: string }[];
  truncated: boolean;
  next_cursor: string | null;
}

async function logs(mcp: Client, args: Record<string, unknown>): Promise<LogsAnswer & { text: string }> {
  const result = await mcp.callTool({ name: "logs", arguments: { lane: "daemon", ...args } });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const text = (result.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
  return { ...(result.structuredContent as unknown as LogsAnswer), text };
}

describe("the daemon's lane", () => {
  it('holds the daemon\'s lines and its stderr, and what Node wrote past it before a crash; logs {lane: "daemon"} pages it over stdio', async () => {
    const w = await daemonWorld([]);
    worlds.push(w);
    // NODE_DEBUG=net: Node itself writes to the daemon's stderr on every socket it opens.
    const env = { ...w.env, NODE_DEBUG: "net" };
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env, stderr: "pipe" });
    // The server gets NODE_DEBUG too: its stderr is drained so that it never blocks on a full pipe.
    (transport.stderr as NodeJS.ReadableStream | null)?.resume();
    const mcp = new Client({ name: "afk-daemon-lane-test", version: "0.0.0" });
    await mcp.connect(transport);
    clients.push(mcp);
    const paths = daemonPaths(w.env);

    // No daemon yet: the lane is read from the state dir, and reading it starts none.
    const empty = await logs(mcp, {});
    assert.deepEqual(empty.records, []);
    assert.equal(empty.text, "no daemon records");
    assert.equal(await daemonPid(w.env), null, "logs started no daemon");

    // The first call that needs the daemon starts it, detached, as a session does.
    const listed = await mcp.callTool({ name: "takeover", arguments: { repo: REPO, list: true } });
    assert.notEqual(listed.isError, true, JSON.stringify(listed.content));
    const pid = await daemonPid(w.env);
    assert.ok(pid !== null && alive(pid));
    const first = await until("the daemon's line and Node's stderr in the lane", async () => {
      const got = await logs(mcp, { tail_lines: 1000 });
      const said = got.records.some(
        (r) => r.event === "daemon" && r.level === "info" && new RegExp(`^listening on .*afk\\.sock \\(pid ${pid}, `).test(r.msg ?? ""),
      );
      const node = got.records.some((r) => r.event === "stderr" && r.level === "warn" && /^NET \d+: /.test(r.msg ?? ""));
      return said && node ? got : null;
    });
    assert.ok(first.records.every((r) => r.lane === "daemon"));
    assert.equal((await stat(join(paths.lanes, "daemon.jsonl"))).mode & 0o777, 0o600, "the lane is owner-only");
    assert.equal((await stat(paths.log)).size, 0, "nothing went past the lane");

    // A warning of the daemon's own: a connection that sends garbage.
    await new Promise<void>((resolve) => {
      const s = connect(paths.socket, () => s.write("not json\n"));
      s.on("data", () => undefined);
      s.on("error", () => undefined);
      s.on("close", () => resolve());
    });
    await until("the daemon's warning", async () =>
      (await logs(mcp, { tail_lines: 1000 })).records.some(
        (r) => r.event === "daemon" && r.level === "warn" && r.msg === "closed a connection that sent a malformed message",
      ),
    );

    // Paged like every lane: a small tail, then the cursor for what came before.
    const page = await logs(mcp, { tail_lines: 2 });
    assert.equal(page.records.length, 2);
    assert.equal(page.truncated, true);
    assert.ok(page.next_cursor);
    assert.match(page.text, /^\(older records: logs \{cursor: "/);
    const older = await logs(mcp, { cursor: page.next_cursor, tail_lines: 2 });
    assert.equal(older.records.length, 2);
    assert.notDeepEqual(older.records, page.records);

    // SIGUSR1 opens Node's inspector, which prints from C++ straight to fd 2: past the lane, into
    // daemon.log. The daemon then dies (kill -9); the next one moves that text into the lane.
    process.kill(pid!, "SIGUSR1");
    await until("Node's own line in daemon.log", async () => (await stat(paths.log)).size > 0);
    process.kill(pid!, "SIGKILL");
    await until("the daemon to die", async () => !alive(pid!));
    // A call that meets the dead daemon's connection answers "went away … call again" (daemon.test.ts covers that): call again.
    await until(
      "a call that restarts the daemon",
      async () => (await mcp.callTool({ name: "takeover", arguments: { repo: REPO, list: true } })).isError !== true,
    );
    const fresh = await daemonPid(w.env);
    assert.ok(fresh !== null && fresh !== pid);
    const moved = await logs(mcp, { tail_lines: 1000 });
    const leftover = moved.records.filter((r) => r.event === "left_on_stderr");
    assert.equal(leftover.length, 1, "what the dead daemon's Node wrote is in the lane once");
    // Node prints "Debugger listening on ws://…" (then a help link that differs by Node line).
    assert.match(leftover[0]!.msg ?? "", /Debugger listening on ws:\/\//);
    assert.equal((await stat(paths.log)).size, 0, "and daemon.log is empty again");

    // Listed as a resource, and readable from the terminal.
    const { resources } = await mcp.listResources();
    assert.ok(resources.some((r) => r.uri === "afk://daemon/lane"));
    const resource = await mcp.readResource({ uri: "afk://daemon/lane" });
    // Its newest records: Node's NET lines outnumber the rest by far.
    assert.match(String((resource.contents[0] as { text?: string }).text), /^\S+ warn NET \d+: /m);
    const terminal = await cli(w.env, "logs", "--lane", "daemon", "--tail", "5");
    assert.equal(terminal.code, 0, terminal.stderr);
    assert.equal(terminal.stdout.trim().split("\n").length, 5);
    assert.ok(
      terminal.stdout
        .trim()
        .split("\n")
        .every((line) => (JSON.parse(line) as { lane?: string }).lane === "daemon"),
    );
  });
});
