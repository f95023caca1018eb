// What the server pushes, through a real MCP client over stdio (the built binary, and the
// daemon it starts): the board as a subscribable resource updated by the running fleet, list
// changes when a repository starts or stops, supervisor warnings and errors as logging
// notifications honouring logging/setLevel, progress steps for project_start's preflight and
// project_stop's drain, and the prompts and completions.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ProgressNotificationSchema,
  type LoggingMessageNotification,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { BASE_CONFIG, cli, daemonWorld, teardown, type DaemonWorld } from "./support/daemon-fixtures.js";
import { BIN } from "./support/paths.js";
import { waitFor } from "./support/wait.js";

let world: DaemonWorld;
let REPO: string;
let client: Client;
const logs: LoggingMessageNotification["params"][] = [];
const updated: string[] = [];
let listChanges = 0;
/** Every progress notification, read off the wire (see `withProgress`). */
const progressSeen: Progress[] = [];

/**
 * Calls a tool with a progress token and returns what progress the server sent for it. Read
 * off the wire, not through callTool's onprogress: the SDK's client runs notification handlers a
 * microtask after reading them but a response at once, and drops its progress handler then,
 * so steps read together with the result (likely on a loaded machine) would be lost to it.
 */
async function withProgress(name: string, args: Record<string, unknown>): Promise<{ result: Awaited<ReturnType<Client["callTool"]>>; progress: Progress[] }> {
  progressSeen.length = 0;
  const result = await client.callTool({ name, arguments: args }, undefined, { onprogress: () => undefined });
  await new Promise((resolve) => setImmediate(resolve));
  return { result, progress: [...progressSeen] };
}

/** Waits for `check` to hold, polling; the deadline is generous because the machine is shared. */
function until<T>(what: string, check: () => T | undefined | null | false | Promise<T | undefined | null | false>): Promise<T> {
  return waitFor(what, check, { deadlineMs: 180_000, intervalMs: 100 });
}

before(async () => {
  assert.ok(existsSync(BIN), `build first: ${BIN} is missing`);
  world = await daemonWorld(["one", "two", "three"], "await");
  REPO = world.forge.repo;
  client = new Client({ name: "claude-code", version: "0.0.0" });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (listChanges += 1));
  client.setNotificationHandler(ProgressNotificationSchema, (n) => void progressSeen.push(n.params));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env: world.env, stderr: "pipe" }));
});

after(async () => {
  await client?.close();
  if (world) await teardown(world);
});

describe("what the server pushes", () => {
  it("declares resources with subscriptions, logging, prompts and completions", () => {
    const caps = client.getServerCapabilities();
    assert.equal(caps?.resources?.subscribe, true);
    assert.equal(caps?.resources?.listChanged, true);
    assert.ok(caps?.logging);
    assert.ok(caps?.prompts);
    assert.ok(caps?.completions);
  });

  it("offers the board, issue and lane templates, completes lanes, and the launch prompt names this client's worker command", async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [
      "afk://{owner}/{repo}/board",
      "afk://{owner}/{repo}/issue/{number}",
      "afk://{owner}/{repo}/issue/{number}/timeline",
      "afk://{owner}/{repo}/lanes/{lane}",
      "afk://{owner}/{repo}/report",
    ]);
    const lanes = await client.complete({ ref: { type: "ref/resource", uri: "afk://{owner}/{repo}/lanes/{lane}" }, argument: { name: "lane", value: "s" } });
    assert.deepEqual(lanes.completion.values, ["supervisor"]);
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name).sort(), ["launch", "monitor"]);
    const launch = await client.getPrompt({ name: "launch", arguments: { repo: REPO } });
    const text = (launch.messages[0]!.content as { text: string }).text;
    assert.match(text, /claude -p/);
    assert.match(text, /afk:\/\/afk\/demo\/board/);
    const codex = await client.getPrompt({ name: "launch", arguments: { repo: REPO, runtime: "codex" } });
    assert.match((codex.messages[0]!.content as { text: string }).text, /codex exec/);
    const notANumber = await client.readResource({ uri: `afk://${REPO}/issue/abc` });
    assert.match(
      (notANumber.contents[0] as { text: string }).text,
      /^cannot read afk:\/\/afk\/demo\/issue\/abc: no issue "abc": the URI ends in an issue number/,
    );
    const monitor = await client.getPrompt({ name: "monitor", arguments: { repo: REPO } });
    assert.match((monitor.messages[0]!.content as { text: string }).text, /read-only/);
  });

  it("a running fleet: list changed on start, board updates to subscribers, supervisor errors as log messages at the level asked, progress steps for project_start", async () => {
    await client.setLoggingLevel("error");
    await client.subscribeResource({ uri: `afk://${REPO}/board` });
    // Workers that die at once: fast deaths trip the circuit breaker, an error on the supervisor lane.
    const { result: started, progress } = await withProgress("project_start", {
      repo: REPO,
      worker_command: "exit 3",
      target: 3,
      config: { ...BASE_CONFIG, circuit: { k: 3, fast_death_seconds: 600, window_seconds: 3600 } },
    });
    assert.notEqual(started.isError, true, JSON.stringify(started.content));
    // Each preflight stage as it passed, through the daemon, counting up.
    const said = progress.map((p) => p.message ?? "");
    assert.deepEqual(
      progress.map((p) => p.progress),
      said.map((_, i) => i),
      said.join("\n"),
    );
    assert.match(said[0]!, /^preflight: /);
    assert.match(said[1]!, new RegExp(`^connected to ${REPO} as \\S+: base main, config from .*claims under refs/afk`));
    assert.match(said[2]!, /^preconditions: (\d+) of \1 pass/);
    assert.match(said[3]!, /^backlog read: 3 dispatchable, 0 excluded/);
    // Which runtime the workers run in (the suite's: local, unconfined; the sandbox's own tests see "runtime sandbox").
    assert.match(said[4]!, /^runtime local: workers run as this user, unconfined/);
    assert.match(said[5]!, /^registered as instance \S+: the fleet's loop is running, up to 3 worker\(s\)/);
    // No step closes the call (the result does: server/tools/define.ts says why).
    assert.equal(progress.length, 6, said.join("\n"));
    await until("the list change of the start", () => listChanges > 0);
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === `afk://${REPO}/board`));
    await until("a board update", () => updated.includes(`afk://${REPO}/board`));
    const error = await until("the breaker's error as a log message", () => logs.find((l) => /circuit breaker tripped/.test(String(l.data))));
    assert.equal(error.level, "error");
    assert.equal(error.logger, `afk/${REPO}/supervisor`);
    // A warning the fleet wrote (the sweep after the breaker): the daemon answers the logs call
    // that finds it after the record's event went out on the same socket, so a warning pushed to
    // this session would be here by the time that answer is.
    await until("a warning in the supervisor lane", async () => {
      const page = await client.callTool({ name: "logs", arguments: { repo: REPO, lane: "supervisor" } });
      return (page.structuredContent as { records: { level?: string }[] }).records.some((r) => r.level === "warn");
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      logs.filter((l) => l.level !== "error"),
      [],
      "logging/setLevel error: no warnings pushed",
    );
    const board = await client.readResource({ uri: `afk://${REPO}/board` });
    const boardText = (board.contents[0] as { text: string }).text;
    assert.match(boardText, /births: PAUSED: circuit breaker tripped/);
    assert.match(boardText, /merges: HELD/);
    // The status tool's text says the same as its structured content (some clients show only the text).
    const status = await client.callTool({ name: "status", arguments: { repo: REPO } });
    const statusText = (status.content as { text: string }[])[0]!.text;
    const births = (status.structuredContent as { births: { paused: boolean; reason: string } }).births;
    assert.equal(births.paused, true);
    assert.ok(statusText.includes(`births: PAUSED: ${births.reason}`), statusText);
    assert.match(statusText, /merges: HELD/);
    // The prompts' repo argument completes from the fleets the daemon runs.
    const repos = await client.complete({ ref: { type: "ref/prompt", name: "monitor" }, argument: { name: "repo", value: REPO.slice(0, 2) } });
    assert.ok(repos.completion.values.includes(REPO), JSON.stringify(repos.completion.values));
    const story = await client.readResource({ uri: `afk://${REPO}/issue/1` });
    assert.match((story.contents[0] as { text: string }).text, /^#1: /);
    const lane = await client.readResource({ uri: `afk://${REPO}/lanes/supervisor` });
    assert.match((lane.contents[0] as { text: string }).text, /project started/);

    const before = listChanges;
    const stopped = await client.callTool({ name: "project_stop", arguments: { repo: REPO, stop_workers: true } });
    assert.notEqual(stopped.isError, true, JSON.stringify(stopped.content));
    await until("the list change of the stop", () => listChanges > before);

    // At most one board update per tick: count the ticks the monitor lane recorded, every page.
    const boardUpdates = updated.filter((u) => u === `afk://${REPO}/board`).length;
    let ticks = 0;
    let cursor: string | undefined;
    do {
      const page = await client.callTool({ name: "logs", arguments: { repo: REPO, lane: "monitor", tail_lines: 5000, ...(cursor ? { cursor } : {}) } });
      const content = page.structuredContent as { records: { event?: string }[]; next_cursor: string | null };
      ticks += content.records.filter((r) => r.event === "tick").length;
      cursor = content.next_cursor ?? undefined;
    } while (cursor);
    assert.ok(boardUpdates >= 1 && boardUpdates <= ticks, `${boardUpdates} board update(s) for ${ticks} tick(s)`);
  });

  it("progress steps for project_stop's drain: each worker stopped and each claim released, in order, through the daemon", async () => {
    const started = await client.callTool({ name: "project_start", arguments: { repo: REPO, worker_command: world.worker, target: 2, config: BASE_CONFIG } });
    assert.notEqual(started.isError, true, JSON.stringify(started.content));
    // Two workers that wait for a go that never comes: the stop has to end them.
    const running = await until("two running workers", async () => {
      const status = await client.callTool({ name: "status", arguments: { repo: REPO, scope: "worker" } });
      const workers = (status.structuredContent as { workers: { issue: number; state: string }[] }).workers.filter((w) => w.state === "running");
      return workers.length === 2 ? workers.map((w) => w.issue).sort((a, b) => a - b) : null;
    });
    const { result: stopped, progress } = await withProgress("project_stop", { repo: REPO, stop_workers: true });
    assert.notEqual(stopped.isError, true, JSON.stringify(stopped.content));
    const said = progress.map((p) => p.message ?? "");
    const story = said.join("\n");
    assert.deepEqual(
      progress.map((p) => p.progress),
      said.map((_, i) => i),
      story,
    );
    assert.match(said[0]!, new RegExp(`^stopping ${REPO}: no new workers; ending 2 running worker\\(s\\)`), story);
    for (const n of running) {
      const exited = said.findIndex((m) => new RegExp(`^#${n}: worker exited .*`).test(m));
      const released = said.findIndex((m) => m.startsWith(`#${n}: claim released`));
      assert.ok(exited > 0, `the exit of #${n}'s worker is a step:\n${story}`);
      assert.ok(released > exited, `#${n}'s claim is released after its worker stopped:\n${story}`);
    }
    assert.equal(said.length, 6, story);
    assert.match(said[5]!, /^stopped; 0 claim\(s\) with a PR kept/, story);
  });

  it("the board lists the running worker and the fleet's PR in flight; a monitor session whose only request is resources/subscribe gets the board's updates, across a daemon restart", async () => {
    const uri = `afk://${REPO}/board`;
    const board = async () => ((await client.readResource({ uri })).contents[0] as { text: string }).text;
    const started = await client.callTool({ name: "project_start", arguments: { repo: REPO, worker_command: world.worker, target: 1, config: BASE_CONFIG } });
    assert.notEqual(started.isError, true, JSON.stringify(started.content));
    const issue = await until(
      "a running worker on the board",
      async () => /^workers \(1\):\n {2}#(\d+) {2}running {2}pid \d+ {2}attempt \d+$/m.exec(await board())?.[1],
    );
    // A second session, opened once the fleet runs, as a monitor would be: it subscribes and asks nothing else.
    const monitor = new Client({ name: "monitor", version: "0.0.0" });
    const seen: string[] = [];
    let monitorListChanges = 0;
    monitor.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.push(n.params.uri));
    monitor.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (monitorListChanges += 1));
    await monitor.connect(new StdioClientTransport({ command: process.execPath, args: [BIN], env: world.env, stderr: "pipe" }));
    try {
      await monitor.subscribeResource({ uri });
      // The worker commits and exits; the fleet opens its PR, the local gate passes, the merge is
      // held (and the freed worker slot may take the next issue meanwhile).
      await writeFile(join(world.planDir, `${issue}.go`), "");
      let last = "";
      const text = await waitFor(
        "the PR in flight on the board",
        async () => {
          last = await board();
          return new RegExp(`^mine \\(\\d+\\):\\n(?: {2}.*\\n)*? {2}#${issue} {2}\\S+ {2}PR #\\d+`, "m").test(last) ? last : null;
        },
        { deadlineMs: 180_000, intervalMs: 200, explain: () => `the board:\n${last}` },
      );
      assert.match(text, /^merges: HELD/m);
      await until("the monitor's board update", () => seen.includes(uri));
      // A daemon restart hands the fleet to a new daemon and drops every session's connection;
      // the monitor, which asks for nothing, reaches the new one by itself (server/daemon/rejoin.ts).
      const before = monitorListChanges;
      const restarted = await cli(world.env, "daemon", "restart");
      assert.equal(restarted.code, 0, restarted.stderr);
      // The monitor may reach the new daemon after a change it would have heard: stop and start the
      // project again until it hears one (each stop and each start changes the resource list).
      let running = true;
      await until("a list change for the monitor after the restart", async () => {
        if (monitorListChanges > before) return true;
        const toggled = running
          ? await client.callTool({ name: "project_stop", arguments: { repo: REPO, stop_workers: true } })
          : await client.callTool({ name: "project_start", arguments: { repo: REPO, worker_command: world.worker, target: 1, config: BASE_CONFIG } });
        // A start while the stop's worker still exits is refused ("still stopping"): try it again.
        if (toggled.isError !== true) running = !running;
        else assert.match(JSON.stringify(toggled.content), /still stopping/);
        return false;
      });
      if (running) {
        const stopped = await client.callTool({ name: "project_stop", arguments: { repo: REPO, stop_workers: true } });
        assert.notEqual(stopped.isError, true, JSON.stringify(stopped.content));
      }
    } finally {
      await monitor.close();
    }
  });
});
