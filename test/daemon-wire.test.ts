// The daemon as a session meets it: started detached by the first call that needs it (its own
// session and process group), its socket checking every message against the tools' schemas,
// and a daemon that dies while an MCP tool call is in it (the tool answers isError with the fix,
// the same session's next call starts a new daemon). Real processes: the built binary as daemon
// and as stdio MCP server, the local forge.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { DaemonClient } from "../server/daemon/client.js";
import { daemonPaths } from "../server/daemon/paths.js";
import { api } from "./support/forge-fixtures.js";
import { BIN } from "./support/paths.js";
import { alive, BASE_CONFIG, daemonPid, daemonWorld, until, workerPids, daemonTestScope } from "./support/daemon-fixtures.js";

const REPO = "afk/demo";
const { worlds, clients, servers } = daemonTestScope();

/** Session id and process group of a process, from /proc (fields 5 and 6 after the command). */
function sessionAndGroup(pid: number): { pgrp: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgrp: Number(fields[2]), sid: Number(fields[3]) };
}

/** Sends lines on one connection and collects one answer line per request line. */
function exchange(socket: string, lines: string[]): Promise<{ answers: Record<string, unknown>[]; closed: boolean }> {
  return new Promise((resolve) => {
    const answers: Record<string, unknown>[] = [];
    let buffer = "";
    const s = connect(socket, () => s.write(lines.map((l) => l + "\n").join("")));
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      buffer += d;
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        answers.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
        buffer = buffer.slice(nl + 1);
      }
      if (answers.length === lines.length) {
        s.destroy();
        resolve({ answers, closed: false });
      }
    });
    s.on("error", () => undefined);
    s.on("close", () => resolve({ answers, closed: true }));
  });
}

describe("the daemon as a session meets it", () => {
  it("the first call that needs it starts it detached, in its own session and process group; its socket checks each message with the tools' schemas", async () => {
    const w = await daemonWorld(["one"]);
    worlds.push(w);
    const s = new DaemonClient({ env: w.env });
    clients.push(s);
    assert.equal(await daemonPid(w.env), null);
    await s.takeover({ repo: REPO, list: true });
    const pid = (await daemonPid(w.env))!;
    assert.ok(pid !== null && alive(pid), "the call started a daemon");
    const daemon = sessionAndGroup(pid);
    assert.deepEqual(daemon, { pgrp: pid, sid: pid }, "it leads its own session and process group");
    assert.notEqual(daemon.sid, sessionAndGroup(process.pid).sid, "no signal to the starter's session or terminal reaches it");
    // Well-formed lines whose arguments the tools' schemas refuse: each answered with the problem, on the same connection.
    const { answers, closed } = await exchange(daemonPaths(w.env).socket, [
      JSON.stringify({ id: 1, method: "start", params: { repo: REPO, worker_command: "true", target: "two" } }),
      JSON.stringify({ id: 2, method: "start", params: { repo: REPO, worker_command: "true", autoMerge: true } }),
      JSON.stringify({ id: 3, method: "status", params: { repo: REPO, scope: "everything" } }),
      JSON.stringify({ id: 4, method: "resize", params: { repo: REPO, target: 0 } }),
      JSON.stringify({ id: 5, method: "hello" }),
    ]);
    assert.equal(closed, false, `the connection stays open: ${JSON.stringify(answers)}`);
    const error = (id: number) => answers.find((a) => a.id === id)?.error as { type: string; message: string } | undefined;
    assert.match(error(1)?.message ?? "", /^bad input: .*target/);
    assert.match(error(2)?.message ?? "", /^bad input: .*autoMerge/);
    assert.match(error(3)?.message ?? "", /^bad input: .*scope/);
    assert.match(error(4)?.message ?? "", /^bad input: .*target/);
    assert.ok(
      [1, 2, 3, 4].every((id) => error(id)?.type === "usage"),
      JSON.stringify(answers),
    );
    assert.equal((answers.find((a) => a.id === 5)?.result as { pid?: number } | undefined)?.pid, pid, "and it keeps serving");
    assert.deepEqual(await s.daemonCall("registrations"), [], "nothing was registered");
  });

  it("a daemon that dies during an MCP tool call: the tool answers isError with the fix, and the same session's next call starts a new daemon", async () => {
    const w = await daemonWorld(["one"]);
    worlds.push(w);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], env: w.env, stderr: "pipe" });
    let stderr = "";
    (transport.stderr as NodeJS.ReadableStream | null)?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const mcp = new Client({ name: "afk-daemon-wire-test", version: "0.0.0" });
    const steps: string[] = [];
    mcp.setNotificationHandler(ProgressNotificationSchema, (n) => void steps.push(String(n.params.message)));
    await mcp.connect(transport);
    servers.push(mcp);
    // The start's backlog read is slowed, so the call is still in the daemon when it dies.
    await api(w.forge, "POST", "/_forge/faults", { route: "GET /repos/{owner}/{repo}/issues", latency_ms: 20_000 });
    const args = { repo: REPO, worker_command: `sh ${w.worker}`, target: 1, config: BASE_CONFIG };
    const call = mcp.callTool({ name: "project_start", arguments: args }, undefined, { timeout: 600_000, onprogress: () => undefined });
    // "connected to …" is said by the daemon itself: from then on the call is in it.
    await until("the daemon to be working on the start", async () => steps.some((s) => s.startsWith("connected to ")));
    const pid = (await daemonPid(w.env))!;
    process.kill(pid, "SIGKILL");
    const answer = (await call) as { isError?: boolean; content: { text?: string }[] };
    const text = answer.content.map((c) => c.text ?? "").join("\n");
    assert.equal(answer.isError, true, text);
    assert.match(text, /the afk-mcp daemon went away during start .*: call again, the next call starts it again; its workers keep running and are adopted/);
    await api(w.forge, "DELETE", "/_forge/faults");
    // The same session goes on: the next call starts a new daemon, which takes the start.
    const again = (await mcp.callTool({ name: "project_start", arguments: args }, undefined, { timeout: 600_000 })) as {
      isError?: boolean;
      content: { text?: string }[];
    };
    assert.notEqual(again.isError, true, again.content.map((c) => c.text ?? "").join("\n"));
    const fresh = (await daemonPid(w.env))!;
    assert.ok(fresh !== pid && alive(fresh), "a new daemon answered");
    await until("its worker", async () => (await workerPids(w.planDir)).size === 1);
    // The client goes: the server says what that means (it holds no fleet, so nothing drains), and no worker is touched.
    const [worker] = [...(await workerPids(w.planDir)).values()];
    await mcp.close();
    await until("the server's last line", async () =>
      /stopping \(.*\): this session stops renewing its registrations; the daemon's fleets and workers run on/.test(stderr),
    );
    assert.doesNotMatch(stderr, /draining…/, stderr);
    assert.ok(alive(worker!) && alive(fresh), "the worker and the daemon run on");
  });
});
