// What the server pushes, through a real MCP client: the board as a subscribable resource
// updated by the running fleet, list changes when a repository starts or stops, supervisor
// warnings and errors as logging notifications honouring logging/setLevel, progress for
// project_start, and the prompts and completions.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { createServer } from "../server/server.js";
import { FleetHost } from "../server/host/host.js";
import { api, startTestForge, tempDir, type TestForge } from "./support/forge-fixtures.js";

const REPO = "afk/demo";
let forge: TestForge;
let host: FleetHost;
let client: Client;
const logs: LoggingMessageNotification["params"][] = [];
const updated: string[] = [];
let listChanges = 0;

/** Waits for `check` to hold, polling; the deadline is generous because the machine is shared. */
async function until<T>(what: string, check: () => T | undefined | null | false, seconds = 120): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  forge = await startTestForge({ users: ["alice"] });
  await api(forge, "POST", "/repos/afk/demo/labels", { name: "ready-for-agent", color: "0e8a16" });
  for (const title of ["one", "two", "three"]) await api(forge, "POST", "/repos/afk/demo/issues", { title, labels: ["ready-for-agent"] });
  const env = { GITHUB_API_URL: forge.apiUrl, GITHUB_TOKEN: forge.token, AFK_STATE_DIR: await tempDir("afk-push-state-"), PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" };
  host = new FleetHost({ env, instance: "pushtest", timeScale: 0.05 });
  const server = createServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "claude-code", version: "0.0.0" });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (listChanges += 1));
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});

after(async () => {
  await host?.close();
  await client?.close();
  await forge?.dispose();
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
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), ["afk://{owner}/{repo}/board", "afk://{owner}/{repo}/issue/{number}", "afk://{owner}/{repo}/lanes/{lane}"]);
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
    const monitor = await client.getPrompt({ name: "monitor", arguments: { repo: REPO } });
    assert.match((monitor.messages[0]!.content as { text: string }).text, /read-only/);
  });

  it("a running fleet: list changed on start, board updates to subscribers, supervisor errors as log messages at the level asked, progress for project_start", async () => {
    await client.setLoggingLevel("error");
    await client.subscribeResource({ uri: `afk://${REPO}/board` });
    const progress: string[] = [];
    const started = await client.callTool(
      // Workers that die at once: fast deaths trip the circuit breaker, an error on the supervisor lane.
      { name: "project_start", arguments: { repo: REPO, worker_command: "exit 3", target: 3, config: { circuit: { k: 3, fast_death_seconds: 600, window_seconds: 3600 } } } },
      undefined,
      { onprogress: (p) => void progress.push(p.message ?? "") },
    );
    assert.notEqual(started.isError, true, JSON.stringify(started.content));
    assert.equal(progress.length, 2);
    assert.match(progress[0]!, /preflight/);
    await until("the list change of the start", () => listChanges > 0);
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === `afk://${REPO}/board`));
    await until("a board update", () => updated.includes(`afk://${REPO}/board`));
    const error = await until("the breaker's error as a log message", () => logs.find((l) => /circuit breaker tripped/.test(String(l.data))));
    assert.equal(error.level, "error");
    assert.equal(error.logger, `afk/${REPO}/supervisor`);
    assert.deepEqual(
      logs.filter((l) => l.level !== "error"),
      [],
      "logging/setLevel error: no warnings pushed",
    );
    const board = await client.readResource({ uri: `afk://${REPO}/board` });
    const boardText = (board.contents[0] as { text: string }).text;
    assert.match(boardText, /births: PAUSED: circuit breaker tripped/);
    assert.match(boardText, /merges: HELD/);
    const story = await client.readResource({ uri: `afk://${REPO}/issue/1` });
    assert.match((story.contents[0] as { text: string }).text, /^#1: /);
    const lane = await client.readResource({ uri: `afk://${REPO}/lanes/supervisor` });
    assert.match((lane.contents[0] as { text: string }).text, /project started/);

    const before = listChanges;
    await client.callTool({ name: "project_stop", arguments: { repo: REPO, stop_workers: true } });
    await until("the list change of the stop", () => listChanges > before);
  });
});
